#!/usr/bin/env python3
"""Whole-run speed on a k = 8 fat-tree at 10 Gbit/s: dcfair beside ns-2, in the same session.

    python bench/fattree.py [--reps 3] [--durations 0.1,1] [--no-doc]
    python bench/fattree.py --write-scenario [--perm-seed 1]

The scenario is ``bench/fattree_k8.toml`` (128 hosts, a random permutation of long TCP flows,
"destination mod k/2" routing); ``bench/ns2/fattree.tcl`` builds the same network in ns-2.35
from the values this script reads out of the TOML (rates, delays, buffers, TCP, the flow
pairs), so the TOML is the one description of the benchmark.

1. Routes agree: a short run of each simulator counts the packets every link carries (dcfair
   with every port measured, ns-2 with a queue monitor on every link); the sets of links
   used must be equal, else the script stops.
2. Counting runs (untimed, once per duration, deterministic): dcfair's events (popped from its
   queue) and both simulators' link traversals ("hops": a packet serialized onto a link).
3. Timed runs: for every duration, ``reps`` times, interleaved (ns-2, dcfair, ns-2, ...):

   - ns-2: ``ns bench/ns2/fattree.tcl --pairs ... --duration D`` (no tracing, no monitors)
   - dcfair: ``target/release/examples/simrun bench/fattree_k8.toml sim.duration_s=D``
     (the engine alone, release build, one thread)

   and measures wall clock and CPU (user + sys) of each child (``os.wait4``) and its peak
   resident memory (GNU time's ``%M``; see ``timed``).

What "events" means on each side: dcfair pops one event per packet arriving over a link, one
per end of serialization with a packet waiting behind it, one per TCP timer expiry or flow
start. ns-2 schedules two per link traversal (``LinkDelay::recv``: the packet's arrival after
serialization plus propagation, and the queue's resume after serialization, whether or not a
packet waits) plus its timers; ns-2 does not count them, so its figure here is ``2 x hops +
retransmission timeouts``, a lower bound. Hops are counted exactly on both sides and are the
comparable unit of work; the headline ratio is CPU time for the same simulated seconds.

Reports medians; writes ``bench/results/fattree.json`` and the section ``fattree-bench`` of
``docs/performance.md``. Target: dcfair at least 10 M events per CPU second.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench/ns2"))
sys.path.insert(0, str(REPO / "validation"))
import docsection  # noqa: E402
from time_ns2 import describe, machine, ns_version, run_timed  # noqa: E402

SCENARIO = REPO / "bench/fattree_k8.toml"
TCL = REPO / "bench/ns2/fattree.tcl"
SIMRUN = REPO / "target/release/examples/simrun"
DOC = REPO / "docs/performance.md"
OUT = REPO / "bench/results/fattree.json"
TARGET_EVENTS_PER_S = 10e6


# ---------------------------------------------------------------- the scenario
def permutation(n: int, seed: int) -> list[int]:
    """A random permutation of 0..n-1 without fixed points (every host sends to another)."""
    rng = random.Random(seed)
    while True:
        p = list(range(n))
        rng.shuffle(p)
        if all(p[i] != i for i in range(n)):
            return p


def toml_list(names: list[str]) -> str:
    lines, cur = [], ""
    for item in (f'"{x}", ' for x in names):
        if len(cur) + len(item) > 94:
            lines.append("  " + cur.rstrip())
            cur = ""
        cur += item
    lines.append("  " + cur.rstrip())
    return "[\n" + "\n".join(lines) + "\n]"


def write_scenario(seed: int) -> None:
    text = SCENARIO.read_text()
    k = tomllib.loads(text)["topology"]["k"]
    n = k ** 3 // 4
    p = permutation(n, seed)
    text = re.sub(r"^src = \[.*?\]", lambda _: "src = " + toml_list([f"h{i}" for i in range(n)]), text, flags=re.M | re.S)
    text = re.sub(r"^dst = \[.*?\]", lambda _: "dst = " + toml_list([f"h{x}" for x in p]), text, flags=re.M | re.S)
    text = re.sub(r"permutation seed \d+", f"permutation seed {seed}", text)
    text = re.sub(r"--perm-seed \d+", f"--perm-seed {seed}", text)
    SCENARIO.write_text(text)
    print(f"wrote {SCENARIO.relative_to(REPO)}: {n} flows, permutation seed {seed}")


def load() -> dict:
    sc = tomllib.loads(SCENARIO.read_text())
    topo, q, tcp, flows = sc["topology"], sc.get("queue", {}), sc.get("tcp", {}), sc["flows"]
    need = {
        "topology.kind = fat_tree": topo.get("kind") == "fat_tree",
        "one rate (host_rate_mbps = fabric_rate_mbps)": topo.get("host_rate_mbps") == topo.get("fabric_rate_mbps"),
        "routing.mode = dst_bits": sc.get("routing", {}).get("mode") == "dst_bits",
        "queue.kind = droptail": q.get("kind", "droptail") == "droptail",
        "tcp.cc = newreno": tcp.get("cc", "newreno") == "newreno",
        "no handshake, no delayed ACKs": tcp.get("handshake") is False and tcp.get("delayed_ack") is False,
        "flows.src and flows.dst lists of equal length": len(flows.get("src", [])) == len(flows.get("dst", [])) > 0,
    }
    bad = [k for k, ok in need.items() if not ok]
    if bad:
        sys.exit(f"{SCENARIO.relative_to(REPO)}: the ns-2 mirror supports only: {'; '.join(bad)}")
    return sc


def ns_args(sc: dict, duration: float, monitor: str = "none") -> list[str]:
    topo, tcp, flows = sc["topology"], sc["tcp"], sc["flows"]
    pairs = ",".join(f"{s[1:]}:{d[1:]}" for s, d in zip(flows["src"], flows["dst"]))
    opts = {
        "k": topo["k"], "rate_mbps": topo["host_rate_mbps"], "delay_us": topo["link_delay_us"],
        "limit_pkts": sc["queue"]["limit_pkts"], "host_limit_pkts": topo.get("host_buffer_pkts", 1000),
        "duration": repr(duration), "seed": sc.get("seed", 1),
        "start_min_s": flows.get("start_min_s", 0.0), "start_max_s": flows.get("start_max_s", 0.0),
        "mss_bytes": tcp["mss_bytes"], "header_bytes": tcp["header_bytes"],
        "rcv_window_pkts": tcp["rcv_buf_bytes"] // tcp["mss_bytes"], "init_cwnd_pkts": tcp["init_cwnd_pkts"],
        "min_rto_s": tcp["min_rto_ms"] / 1000, "max_rto_s": tcp["max_rto_s"], "initial_rto_s": tcp["initial_rto_s"],
        "pairs": pairs, "monitor": monitor,
    }
    return ["ns", str(TCL)] + [x for k, v in opts.items() for x in (f"--{k}", str(v))]


def node_names(k: int) -> list[str]:
    """dcfair's node names in creation order (= ns-2 node ids in fattree.tcl)."""
    h = k // 2
    return ([f"h{i}" for i in range(k ** 3 // 4)] + [f"e{p}_{i}" for p in range(k) for i in range(h)]
            + [f"a{p}_{i}" for p in range(k) for i in range(h)] + [f"c{i}" for i in range(h * h)])


def all_ports(k: int) -> list[str]:
    h = k // 2
    links = []
    for p in range(k):
        for i in range(h):
            links += [(f"e{p}_{i}", f"h{(p * h + i) * h + j}") for j in range(h)]
            links += [(f"e{p}_{i}", f"a{p}_{j}") for j in range(h)]
    links += [(f"c{c}", f"a{p}_{c // h}") for c in range(h * h) for p in range(k)]
    return [f"{a}->{b}" for x, y in links for a, b in ((x, y), (y, x))]


# ---------------------------------------------------------------- counting runs
def count_dcfair(sc: dict, duration: float, tmp: str) -> dict:
    out = os.path.join(tmp, f"count-dcfair-{duration:g}")
    ports = json.dumps(all_ports(sc["topology"]["k"]))
    subprocess.run([str(SIMRUN), str(SCENARIO), f"sim.duration_s={duration!r}", f"measure.ports={ports}", "--out", out],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    summary = json.loads(Path(out, "summary.json").read_text())
    with open(Path(out, "ports.csv")) as fh:
        links = {r["port"]: int(r["packets_out"]) for r in csv.DictReader(fh)}
    return {"events": summary["events"], "hops": sum(links.values()), "timeouts": summary["metrics"]["timeouts"],
            "links": {k: v for k, v in links.items() if v > 0}}


def count_ns2(sc: dict, duration: float, tmp: str) -> dict:
    mon = os.path.join(tmp, f"count-ns2-{duration:g}.txt")
    subprocess.run(ns_args(sc, duration, mon), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    names = node_names(sc["topology"]["k"])
    out = {"links": {}}
    for line in Path(mon).read_text().splitlines():
        f = line.split()
        if f[0] == "link":
            out["links"][f"{names[int(f[1])]}->{names[int(f[2])]}"] = int(f[3])
        else:
            out[f[0]] = int(f[1])
    out["events_estimate"] = 2 * out["hops"] + out["timeouts"]
    return out


# ---------------------------------------------------------------- timing
GNU_TIME = "/usr/bin/time"


def timed(cmd: list[str], tmp: str) -> dict:
    """``run_timed``, with the peak RSS measured by GNU time when it is installed: a child
    forked from this Python process starts with Python's pages resident, and Linux keeps that
    high-water mark across exec, so ``wait4`` reports at least Python's ~20 MiB whatever the
    child uses. GNU time's own child starts from a tiny process. CPU and wall clock include
    GNU time's own (negligible) share."""
    if not os.access(GNU_TIME, os.X_OK):
        s = run_timed(cmd, 7200)
        s["peak_rss_from"] = "wait4 (includes the forking Python's pages)"
        return s
    rss = os.path.join(tmp, "rss.txt")
    s = run_timed([GNU_TIME, "-f", "%M", "-o", rss, *cmd], 7200)
    s["peak_rss_kib"] = int(Path(rss).read_text().split()[-1])
    s["peak_rss_from"] = "GNU time %M"
    return s


# ---------------------------------------------------------------- main
def med(samples, key):
    return statistics.median(key(s) for s in samples)


def cpu(s):
    return s["user_s"] + s["sys_s"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--durations", default="0.1,1")
    ap.add_argument("--no-doc", action="store_true")
    ap.add_argument("--write-scenario", action="store_true", help="rewrite the TOML's flow lists and stop")
    ap.add_argument("--perm-seed", type=int, default=1)
    a = ap.parse_args(argv)
    if a.write_scenario:
        write_scenario(a.perm_seed)
        return 0
    durations = sorted(float(x) for x in a.durations.split(","))
    if shutil.which("ns") is None:
        sys.exit("ns-2 not found: `make peers` installs it (Debian package ns2)")
    if not SIMRUN.exists():
        sys.exit(f"{SIMRUN.relative_to(REPO)} not found: cargo build --release -p dcfair-sim --example simrun")
    sc = load()
    tmp = tempfile.mkdtemp(prefix="dcfair-fattree-")
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731

    log("routes: counting the packets of every link in a 2 ms run of each simulator")
    dc, ns = count_dcfair(sc, 0.002, tmp), count_ns2(sc, 0.002, tmp)
    if set(dc["links"]) != set(ns["links"]):
        only = sorted(set(dc["links"]) ^ set(ns["links"]))
        sys.exit(f"the simulators use different links (first of {len(only)}: {only[:5]}): routes differ")
    log(f"  both use the same {len(dc['links'])} of {len(all_ports(sc['topology']['k']))} ports")

    counts = {}
    for d in durations:
        log(f"counting run, {d:g} s simulated")
        counts[d] = {"dcfair": count_dcfair(sc, d, tmp), "ns2": count_ns2(sc, d, tmp)}
        for side in counts[d].values():
            side.pop("links")
    samples = {(n, d): [] for n in ("ns2", "dcfair") for d in durations}
    for rep in range(a.reps):
        for d in durations:
            cmds = {"ns2": ns_args(sc, d), "dcfair": [str(SIMRUN), str(SCENARIO), f"sim.duration_s={d!r}"]}
            for name, cmd in cmds.items():
                s = timed(cmd, tmp)
                samples[(name, d)].append(s)
                log(f"rep {rep + 1}/{a.reps} {name:6s} {d:6g} s: wall {s['wall_s']:.2f} s cpu {cpu(s):.2f} s "
                    f"rss {s['peak_rss_kib'] / 1024:.1f} MiB load {s['loadavg_1min_before']}")
    shutil.rmtree(tmp, ignore_errors=True)

    rows = []
    for d in durations:
        r = {"sim_time_s": d}
        for name in ("ns2", "dcfair"):
            ss = samples[(name, d)]
            r[name] = {"wall_s": med(ss, lambda s: s["wall_s"]), "cpu_s": med(ss, cpu),
                       "peak_rss_mib": med(ss, lambda s: s["peak_rss_kib"]) / 1024, **counts[d][name]}
        r["ratio_cpu"] = r["ns2"]["cpu_s"] / r["dcfair"]["cpu_s"]
        r["ratio_wall"] = r["ns2"]["wall_s"] / r["dcfair"]["wall_s"]
        r["dcfair"]["events_per_cpu_s"] = r["dcfair"]["events"] / r["dcfair"]["cpu_s"]
        r["dcfair"]["events_per_wall_s"] = r["dcfair"]["events"] / r["dcfair"]["wall_s"]
        for name in ("ns2", "dcfair"):
            r[name]["hops_per_cpu_s"] = r[name]["hops"] / r[name]["cpu_s"]
        r["ns2"]["events_estimate_per_cpu_s"] = r["ns2"]["events_estimate"] / r["ns2"]["cpu_s"]
        rows.append(r)
    lo, hi = rows[0], rows[-1]
    slope = None
    if hi["sim_time_s"] > lo["sim_time_s"]:
        span = hi["sim_time_s"] - lo["sim_time_s"]
        slope = {name: {k: (hi[name][k] - lo[name][k]) / span for k in ("cpu_s", "wall_s", "hops")}
                 for name in ("ns2", "dcfair")}
        slope["dcfair"]["events"] = (hi["dcfair"]["events"] - lo["dcfair"]["events"]) / span
        slope["ratio_cpu"] = slope["ns2"]["cpu_s"] / slope["dcfair"]["cpu_s"]
        slope["dcfair"]["events_per_cpu_s"] = slope["dcfair"]["events"] / slope["dcfair"]["cpu_s"]

    doc = {
        "benchmark": "k=8 fat-tree, 10 Gbit/s, permutation of long TCP flows: dcfair vs ns-2",
        "scenario": str(SCENARIO.relative_to(REPO)),
        "tcl": str(TCL.relative_to(REPO)),
        "reps": a.reps,
        "command": "python bench/fattree.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": machine(),
        **{f"ns2_{k}": v for k, v in ns_version("ns").items()},
        "generated_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "counting": {"dcfair_events": "events popped from the queue (summary.json `events`)",
                     "hops": "packets serialized onto a link (dcfair: sum of packets_out over every port; "
                             "ns-2: sum of pdepartures_ of a queue monitor on every link)",
                     "ns2_events_estimate": "2 x hops + TCP retransmission timeouts (lower bound)"},
        "rows": rows,
        "per_simulated_second": slope,
        "samples": {f"{k[0]}@{k[1]:g}": v for k, v in samples.items()},
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, indent=1) + "\n")

    m = doc["machine"]
    loads = [s["loadavg_1min_before"] for v in samples.values() for s in v]
    t = [f"Machine: {describe(m)}, {m['logical_cpus']} logical CPUs, shared (1-minute load average "
         f"{min(loads):.1f} to {max(loads):.1f} during the runs); {a.reps} interleaved repetitions, medians; "
         f"`{doc['command']}` on {doc['generated_utc']}.", "",
         "| simulated | ns-2 CPU | dcfair CPU | **ratio (CPU)** | ns-2 wall | dcfair wall | ratio (wall) "
         "| hops ns-2 / dcfair | dcfair events | dcfair events per CPU s | ns-2 events (est.) per CPU s "
         "| ns-2 peak RSS | dcfair peak RSS |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        n, c = r["ns2"], r["dcfair"]
        t.append(f"| {r['sim_time_s']:g} s | {n['cpu_s']:.1f} s | {c['cpu_s']:.1f} s | **{r['ratio_cpu']:.1f}x** "
                 f"| {n['wall_s']:.1f} s | {c['wall_s']:.1f} s | {r['ratio_wall']:.1f}x "
                 f"| {n['hops'] / 1e6:.1f} M / {c['hops'] / 1e6:.1f} M | {c['events'] / 1e6:.1f} M "
                 f"| {c['events_per_cpu_s'] / 1e6:.1f} M | {n['events_estimate_per_cpu_s'] / 1e6:.1f} M "
                 f"| {n['peak_rss_mib']:.0f} MiB | {c['peak_rss_mib']:.0f} MiB |")
    if slope:
        t += ["", f"Per simulated second (slope between {lo['sim_time_s']:g} s and {hi['sim_time_s']:g} s, which "
              f"takes out start-up and building): ns-2 {slope['ns2']['cpu_s']:.1f} s CPU for "
              f"{slope['ns2']['hops'] / 1e6:.0f} M hops; dcfair {slope['dcfair']['cpu_s']:.1f} s CPU for "
              f"{slope['dcfair']['hops'] / 1e6:.0f} M hops and {slope['dcfair']['events'] / 1e6:.0f} M events "
              f"(**{slope['dcfair']['events_per_cpu_s'] / 1e6:.1f} M events per CPU second**); "
              f"ratio {slope['ratio_cpu']:.1f}x."]
    best = max(r["dcfair"]["events_per_cpu_s"] for r in rows)
    verdict = "met" if best >= TARGET_EVENTS_PER_S else "not met"
    t += ["", f"Target of 10 M dcfair events per CPU second: {verdict} on this machine (best row "
          f"{best / 1e6:.1f} M)."]
    text = "\n".join(t)
    print(text)
    if not a.no_doc:
        docsection.replace(DOC, "fattree-bench", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
