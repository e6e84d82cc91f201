#!/usr/bin/env python3
"""Runs in parts: what a parallel run of a fat-tree's parts would synchronise on.

    python bench/parts.py [--ks 8,16,32] [--parts 2,4,8,16] [--delays-us 1,0.1]
                          [--duration 0.001] [--section parts-bench] [--no-doc] [--results FILE]
    python bench/parts.py --render [--section parts-bench] [--results FILE]

``scenarios/scale/permutation.toml`` (one long NewReno flow per host along a permutation, 10 Gbit/s
links, DropTail ports of 100 packets, ``dst_bits`` routing) at each ``k`` and link delay, ordered
by origin (``sim.tie_break = "origin"``), run with ``target/release/examples/simrun --parts N``:
the network in ``N`` parts (``crates/sim/src/engine/windows.rs``), each running its events of a
window of the lookahead (the least delay of a link between parts) alone, on this one thread.
Per run, from the line ``simrun: parts {...}`` (``PartsStats``):

- *windows per simulated ms*: the synchronisations a parallel run would make;
- *events per window*: the work between two of them, over all parts;
- *imbalance*: the busiest part's events over the mean part's;
- *packets between parts per window*: the messages each synchronisation would carry;
- *bound on the speedup*: all events over the busiest part's events summed over the windows,
  the speedup of one thread per part if synchronising and sending cost nothing and every event
  cost the same. It is an upper bound from the schedule alone, measured on one thread, not a
  speedup.

Writes ``bench/results/<section>.json`` and the section of ``docs/performance.md`` (not with
``--no-doc``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "validation"))
import docsection  # noqa: E402

SIMRUN = REPO / "target" / "release" / "examples" / "simrun"
SCENARIO = REPO / "scenarios" / "scale" / "permutation.toml"
DOC = REPO / "docs" / "performance.md"


def run(k: int, delay_us: float, parts: int, duration: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run([str(SIMRUN), str(SCENARIO), f"topology.k={k}", f"topology.link_delay_us={delay_us!r}",
                            'sim.tie_break="origin"', f"sim.duration_s={duration!r}", "--parts", str(parts),
                            "--out", tmp], capture_output=True, text=True, check=True)
        build = json.loads((Path(tmp) / "summary.json").read_text())["engine_build"]
    line = next(x for x in p.stderr.splitlines() if x.startswith("simrun: parts "))
    s = json.loads(line[len("simrun: parts "):])
    total = sum(s["events"])
    return {
        "k": k, "delay_us": delay_us, "parts": parts, "duration_s": duration, "engine_build": build,
        "windows": s["windows"], "events": total, "global_events": s["global_events"], "crossings": s["crossings"],
        "windows_per_ms": s["windows"] / (duration * 1e3),
        "events_per_window": total / max(1, s["windows"]),
        "imbalance": max(s["events"]) / (total / parts) if total else 0.0,
        "crossings_per_window": s["crossings"] / max(1, s["windows"]),
        "speedup_bound": total / max(1, s["critical_events"]),
    }


def render(doc: dict) -> str:
    out = [f"Engine build `{doc['engine_build']}`; {doc['duration_s'] * 1e3:g} ms simulated per run; "
           f"`{doc['command']}` on {doc['generated_utc']}.", "",
           "| k | link delay | parts | windows per simulated ms | events per window | imbalance "
           "| packets between parts per window | bound on the speedup |",
           "|---|---|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        out.append(f"| {r['k']} | {r['delay_us'] * 1e3:g} ns | {r['parts']} | {r['windows_per_ms']:,.0f} | "
                   f"{r['events_per_window']:,.0f} | {r['imbalance']:.3f} | {r['crossings_per_window']:,.1f} | "
                   f"{r['speedup_bound']:.2f} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ks", default="8,16,32")
    ap.add_argument("--parts", default="2,4,8,16")
    ap.add_argument("--delays-us", default="1,0.1")
    ap.add_argument("--duration", type=float, default=0.001)
    docsection.add_bench_args(ap, "parts-bench")
    a = ap.parse_args(argv)
    if not a.render and not SIMRUN.exists():
        print(f"bench/parts.py: build {SIMRUN} first (cargo build --release -p dcfair-sim --example simrun)", file=sys.stderr)
        return 2
    return docsection.bench_section(ap, a, REPO, DOC, lambda: measure(a, argv), render)


def measure(a, argv) -> dict:
    rows = []
    for k in (int(x) for x in a.ks.split(",")):
        for d in (float(x) for x in a.delays_us.split(",")):
            for n in (int(x) for x in a.parts.split(",")):
                r = run(k, d, n, a.duration)
                print(f"k={k} delay={d} us parts={n}: {r['windows']} windows, {r['events_per_window']:.0f} "
                      f"events per window, bound {r['speedup_bound']:.2f}", flush=True)
                rows.append(r)
    cmd = "python bench/parts.py " + " ".join(argv if argv is not None else sys.argv[1:])
    return {"command": cmd.strip(), "duration_s": a.duration, "engine_build": rows[0]["engine_build"],
            "generated_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "rows": rows}

if __name__ == "__main__":
    sys.exit(main())
