#!/usr/bin/env python3
"""MPTCP's cost: CPU per delivered packet of a k = 8 fat-tree permutation, 1 against 8 subflows.

    python bench/mptcp.py [--subflows 1,8] [--duration 0.01] [--reps 3] [--no-doc] [--results FILE]

The workload is ``scenarios/papers/mptcp/permutation.toml`` (k = 8 fat-tree, 10 Gbit/s links
of 1 us, ECMP, one long-lived connection per host along a permutation, LIA), with
``flows.tcp.mptcp.subflows`` set to each value (1 is plain TCP). For each, with
``target/release/examples/simrun``, as ``bench/scale.py`` measures: a counting run (every port
measured: *delivered* packets are those serialized onto a switch -> host link, data and ACKs;
*hops* those serialized onto any link), then interleaved timed runs, a build run (1 ns) and a
traffic run (``--duration``). CPU per delivered packet and per hop are those of the traffic run
less the build run (medians). The last column compares CPU per delivered packet with one
subflow's. Writes ``bench/results/mptcp-bench.json`` and the section ``mptcp-bench`` of
``docs/performance.md`` (not with ``--no-doc``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "bench/ns2"))
sys.path.insert(0, str(REPO / "validation"))
import docsection  # noqa: E402
from fattree import timed  # noqa: E402
from scale import BUILD_ONLY, DOC, SIMRUN, count, cpu, every_port_measured  # noqa: E402
from time_ns2 import describe, machine  # noqa: E402

SCENARIO = REPO / "scenarios/papers/mptcp/permutation.toml"
K = 8


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subflows", default="1,8", help="subflow counts (default 1,8)")
    ap.add_argument("--duration", type=float, default=0.01, help="simulated seconds of the traffic run")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-doc", action="store_true")
    ap.add_argument("--results", type=Path, help="where to write the JSON results (default bench/results/<section>.json)")
    a = ap.parse_args(argv)
    counts = [int(x) for x in a.subflows.split(",")]
    if any(n < 1 for n in counts):
        ap.error("--subflows takes positive numbers")
    if not SIMRUN.exists():
        sys.exit(f"{SIMRUN.relative_to(REPO)} not found: cargo build --release -p dcfair-sim --example simrun")
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    tmp = Path(tempfile.mkdtemp(prefix="dcfair-mptcp-"))
    text = SCENARIO.read_text()
    scenario, counting = tmp / "perm.toml", tmp / "perm-every-port.toml"
    scenario.write_text(text)
    counting.write_text(every_port_measured(text, K))
    # the build run's 1 ns must hold the scenario's measurement window
    build_only = BUILD_ONLY + ["measure.window_s=1e-9"]
    rows = []
    try:
        for n in counts:
            over = [f"flows.tcp.mptcp.subflows={n}"]
            log(f"{n} subflow(s): counting run, {a.duration:g} s simulated, every port measured")
            c = count(counting, over + [f"measure.window_s={a.duration / 2!r}"], a.duration, tmp)
            build, traffic = [], []
            for rep in range(a.reps):
                for name, dur, into in (("build", build_only, build),
                                        ("traffic", [f"sim.duration_s={a.duration!r}", f"measure.window_s={a.duration / 2!r}"], traffic)):
                    s = timed([str(SIMRUN), str(scenario), *over, *dur], str(tmp))
                    into.append(s)
                    log(f"  rep {rep + 1}/{a.reps} {name:7s}: cpu {cpu(s):.2f} s")
            b_cpu = statistics.median(cpu(s) for s in build)
            t_cpu = statistics.median(cpu(s) for s in traffic)
            work = t_cpu - b_cpu
            rows.append({"subflows": n, "build_cpu_s": b_cpu, "traffic_cpu_s": t_cpu, **c,
                         "cpu_ns_per_delivered": work / c["delivered"] * 1e9 if c["delivered"] and work > 0 else None,
                         "cpu_ns_per_hop": work / c["hops"] * 1e9 if c["hops"] and work > 0 else None,
                         "loads": [s["loadavg_1min_before"] for s in build + traffic]})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    command = ("python bench/mptcp.py " + " ".join(argv if argv is not None else sys.argv[1:])).strip()
    doc = {"benchmark": "MPTCP: CPU per delivered packet, k = 8 fat-tree permutation, by subflows",
           "scenario": str(SCENARIO.relative_to(REPO)), "duration_s": a.duration, "reps": a.reps, "command": command,
           "machine": machine(),
           "generated_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "rows": rows}
    out = a.results or REPO / "bench/results/mptcp-bench.json"
    out.write_text(json.dumps(doc, indent=1) + "\n")
    m = doc["machine"]
    loads = [x for r in rows for x in r["loads"]]
    ref = next((r for r in rows if r["subflows"] == 1 and r["cpu_ns_per_delivered"]), None)
    f = lambda x, fmt, unit="": "n/a" if x is None else format(x, fmt) + unit  # noqa: E731
    t = [f"Machine: {describe(m)}, {m['logical_cpus']} logical CPUs, shared (1-minute load average "
         f"{min(loads):.1f} to {max(loads):.1f} during the runs); {a.reps} interleaved repetitions, medians; "
         f"{a.duration * 1e3:g} ms simulated; `{command}` on {doc['generated_utc']}.", "",
         "| subflows | delivered packets | hops | events | traffic CPU | CPU per delivered packet | CPU per hop | per packet vs 1 subflow |",
         "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        rel = r["cpu_ns_per_delivered"] / ref["cpu_ns_per_delivered"] if ref and r["cpu_ns_per_delivered"] else None
        t.append(f"| {r['subflows']} | {r['delivered'] / 1e6:.2f} M | {r['hops'] / 1e6:.2f} M | {r['events'] / 1e6:.2f} M "
                 f"| {r['traffic_cpu_s']:.2f} s | {f(r['cpu_ns_per_delivered'], '.0f', ' ns')} "
                 f"| {f(r['cpu_ns_per_hop'], '.0f', ' ns')} | {f(rel, '.2f', 'x')} |")
    text = "\n".join(t)
    print(text)
    if not a.no_doc:
        docsection.replace(DOC, "mptcp-bench", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
