#!/usr/bin/env python3
"""One run on several threads against the same run on one: wall time, peak memory, same bytes.

    python bench/threads.py [--ks 16,32] [--threads 2] [--delays-us 1] [--reps 5]
                            [--duration 0.001] [--section threads-bench] [--no-doc] [--results FILE]
    python bench/threads.py --render [--section threads-bench] [--results FILE]

``scenarios/scale/permutation.toml`` (one long NewReno flow per host along a permutation, 10 Gbit/s
links, DropTail ports of 100 packets, ``dst_bits`` routing) at each ``k`` and link delay, ordered
by origin (``sim.tie_break = "origin"``), run by ``target/release/examples/simrun`` with
``sim.threads = 1`` and ``sim.threads = N`` in turn, A B A B, ``--reps`` pairs, each under GNU
time: the whole command's wall time (building the run included, one copy per thread) and peak
resident memory. Per pair, the speedup is the one-thread wall time over the N-thread one; the
table gives the median pair and the range. Every run's result files are hashed (``summary.json``
without ``wall_time_s`` and ``threads``): the two runs of every pair must be identical, and the
script fails if not. The load average before each run is kept in the results file.

Writes ``bench/results/<section>.json`` and the section of ``docs/performance.md`` (not with
``--no-doc``).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "validation"))
import docsection  # noqa: E402

SIMRUN = REPO / "target" / "release" / "examples" / "simrun"
SCENARIO = REPO / "scenarios" / "scale" / "permutation.toml"
DOC = REPO / "docs" / "performance.md"


def digest(out: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(out.iterdir()):
        data = f.read_bytes()
        if f.name == "summary.json":
            s = json.loads(data)
            for k in ("wall_time_s", "threads"):
                s.pop(k, None)
            data = json.dumps(s, sort_keys=True).encode()
        h.update(f.name.encode() + b"\0" + data)
    return h.hexdigest()[:16]


def run(k: int, delay_us: float, threads: int, duration: float) -> dict:
    """One timed run; its wall time, peak memory, digest, and how it used threads."""
    with tempfile.TemporaryDirectory() as tmp:
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", str(SIMRUN), str(SCENARIO), f"topology.k={k}",
                            f"topology.link_delay_us={delay_us!r}", 'sim.tie_break="origin"', f"sim.threads={threads}",
                            f"sim.duration_s={duration!r}", "--out", tmp], capture_output=True, text=True, check=True)
        wall = time.perf_counter() - t0
        summary = json.loads((Path(tmp) / "summary.json").read_text())
        return {"wall_s": wall, "peak_rss_kib": int(p.stderr.strip().splitlines()[-1]), "digest": digest(Path(tmp)),
                "events": summary["events"], "engine_build": summary["engine_build"],
                "threads_used": summary.get("threads", {}).get("used", 1), "loadavg_1min_before": load}


def measure(a, argv) -> dict:
    rows = []
    for k in (int(x) for x in a.ks.split(",")):
        for d in (float(x) for x in a.delays_us.split(",")):
            for n in (int(x) for x in a.threads.split(",")):
                pairs = []
                for i in range(a.reps):
                    one, many = run(k, d, 1, a.duration), run(k, d, n, a.duration)
                    if one["digest"] != many["digest"]:
                        raise SystemExit(f"bench/threads.py: k={k} on {n} threads gave other bytes than on one")
                    if many["threads_used"] != n:
                        raise SystemExit(f"bench/threads.py: k={k} ran on {many['threads_used']} threads, not {n}")
                    pairs.append({"one": one, "many": many, "speedup": one["wall_s"] / many["wall_s"],
                                  "memory": many["peak_rss_kib"] / one["peak_rss_kib"]})
                    print(f"k={k} delay={d} us threads={n} pair {i + 1}: {one['wall_s']:.2f} s / {many['wall_s']:.2f} s "
                          f"= {pairs[-1]['speedup']:.2f}x, memory {pairs[-1]['memory']:.2f}x", flush=True)
                sp = [p["speedup"] for p in pairs]
                rows.append({
                    "k": k, "delay_us": d, "threads": n, "events": pairs[0]["one"]["events"],
                    "wall_one_s": statistics.median(p["one"]["wall_s"] for p in pairs),
                    "wall_many_s": statistics.median(p["many"]["wall_s"] for p in pairs),
                    "speedup_median": statistics.median(sp), "speedup_min": min(sp), "speedup_max": max(sp),
                    "rss_one_mib": statistics.median(p["one"]["peak_rss_kib"] for p in pairs) / 1024,
                    "rss_many_mib": statistics.median(p["many"]["peak_rss_kib"] for p in pairs) / 1024,
                    "pairs": pairs,
                })
    cmd = "python3 bench/threads.py " + " ".join(argv if argv is not None else sys.argv[1:])
    return {"command": cmd.strip(), "duration_s": a.duration, "reps": a.reps, "cores": os.cpu_count(),
            "engine_build": rows[0]["pairs"][0]["one"]["engine_build"],
            "generated_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "rows": rows}


def render(doc: dict) -> str:
    out = [f"Engine build `{doc['engine_build']}`; {doc['duration_s'] * 1e3:g} ms simulated per run, "
           f"{doc['reps']} pairs each, on {doc['cores']} cores; `{doc['command']}` on {doc['generated_utc']}. "
           "Wall time and peak memory of the whole command (build included); every pair's result files identical.", "",
           "| k | link delay | threads | events | wall, 1 thread | wall, N threads | speedup (median pair) | range "
           "| peak memory, 1 thread | N threads |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        out.append(f"| {r['k']} | {r['delay_us'] * 1e3:g} ns | {r['threads']} | {r['events'] / 1e6:.2f} M | "
                   f"{r['wall_one_s']:.2f} s | {r['wall_many_s']:.2f} s | {r['speedup_median']:.2f} | "
                   f"{r['speedup_min']:.2f} to {r['speedup_max']:.2f} | {r['rss_one_mib']:.0f} MiB | "
                   f"{r['rss_many_mib']:.0f} MiB (+{(r['rss_many_mib'] / r['rss_one_mib'] - 1) * 100:.0f} %) |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ks", default="16,32")
    ap.add_argument("--threads", default="2")
    ap.add_argument("--delays-us", default="1")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--duration", type=float, default=0.001)
    docsection.add_bench_args(ap, "threads-bench")
    a = ap.parse_args(argv)
    if not a.render and not SIMRUN.exists():
        print(f"bench/threads.py: build {SIMRUN} first (cargo build --release -p dcfair-sim --example simrun)", file=sys.stderr)
        return 2
    return docsection.bench_section(ap, a, REPO, DOC, lambda: measure(a, argv), render)


if __name__ == "__main__":
    sys.exit(main())
