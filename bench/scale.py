#!/usr/bin/env python3
"""Scale: building time, memory and CPU per packet of a k-ary fat-tree, k = 4 to 64.

    python bench/scale.py [--ks 4,8,16,32] [--ns2-ks 4,8,16] [--duration 0.005] [--reps 3]
                          [--scenario FILE | --senders N,N,...] [--section scale-bench]
                          [--no-doc] [--results FILE]
    python bench/scale.py --render [--section scale-bench] [--results FILE] [--no-doc]

The workload is ``bench/fattree_k8.toml``'s (one long-lived TCP NewReno flow per host along a
random permutation, every link 10 Gbit/s and 1 us, DropTail ports of 100 packets,
``routing.mode = "dst_bits"``) on a fat-tree of each ``k``: the script writes the scenario of
each ``k`` into a temporary TOML, with the permutation (seed ``--perm-seed``, as
``bench/fattree.py`` draws it) spelled out as ``[flows] src = [...] dst = [...]``.
``--scenario FILE`` runs a scenario file instead, with ``topology.k=K`` set on the command line
(a file whose flows follow ``k``, such as a permutation pattern). ``--senders N,...`` runs each
``k`` once per count ``N`` (those that divide the ``k^3 / 4`` hosts): only every
``hosts / N``-th host takes part, sending one flow to a permutation of the same hosts, so that
the fabric stays the same while the flows, and the state they keep hot, grow; the table then
has a ``flows`` column.

For every ``k``, with ``target/release/examples/simrun``:

1. a counting run (untimed, deterministic): ``duration`` simulated with every port measured;
   *hops* are the packets serialized onto any link, *delivered* packets those serialized onto a
   switch -> host link (data and ACKs), *events* those the engine popped (``summary.json``);
2. timed runs, ``reps`` times, interleaved: a *build* run (``sim.duration_s`` of 1 ns: loading,
   building, routing and checking the scenario, one event) and a *traffic* run (``duration``),
   each one's CPU time (user + sys) and peak resident memory (GNU time's ``%M``).

CPU per delivered packet and per hop, and events per CPU second, are those of the traffic run
less the build run (medians); a column compares CPU per delivered packet with k = 8's (when
k = 8 is among ``--ks``).

For every ``k`` of ``--ns2-ks`` (generated scenarios only; none with ``--ns2-ks ""``), ns-2.35
runs the same network, flows and duration through ``bench/ns2/fattree.tcl`` (the mirror
``bench/fattree.py`` checks link for link at k = 8): a counting run with a monitor on every link
(its hops), then build and traffic runs interleaved with dcfair's. Its CPU per hop is computed
the same way, and the last column is ns-2's CPU per hop over dcfair's. Writes ``bench/results/<section>.json`` and the section
``<section>`` of ``docs/performance.md`` (not with ``--no-doc``); ``--render`` runs nothing and
writes the section from its results file, as the run that made it would have. k = 64 (65,536 hosts, 19
million hops in the first simulated millisecond) is for a separate, shorter run:
``--ks 64 --duration 0.001 --reps 1 --section scale-bench-k64``.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "bench/ns2"))
sys.path.insert(0, str(REPO / "validation"))
import docsection  # noqa: E402
from fattree import all_ports, count_ns2, ns_args, permutation, timed  # noqa: E402
from time_ns2 import describe, machine  # noqa: E402

BASE = REPO / "bench/fattree_k8.toml"
SIMRUN = REPO / "target/release/examples/simrun"
DOC = REPO / "docs/performance.md"
BUILD_ONLY = ["sim.duration_s=1e-9"]


def generated(k: int, seed: int, senders: int | None = None) -> str:
    """``bench/fattree_k8.toml`` on a fat-tree of ``k``, with its own permutation of hosts; with
    ``senders``, only every ``hosts / senders``-th host takes part (it sends one flow, to a
    permutation of the same hosts, and receives one)."""
    n = k ** 3 // 4
    hosts = list(range(0, n, n // senders if senders else 1))
    p = permutation(len(hosts), seed)
    text = BASE.read_text()
    text = re.sub(r"^name = .*$", f'name = "fattree-k{k}-permutation"', text, count=1, flags=re.M)
    text = re.sub(r"^k = \d+", f"k = {k}", text, count=1, flags=re.M)
    text = re.sub(r"^count = \d+", f"count = {len(hosts)}", text, count=1, flags=re.M)
    text = re.sub(r"^src = \[.*?\]", lambda _: "src = [" + ", ".join(f'"h{h}"' for h in hosts) + "]", text, flags=re.M | re.S)
    text = re.sub(r"^dst = \[.*?\]", lambda _: "dst = [" + ", ".join(f'"h{hosts[x]}"' for x in p) + "]", text, flags=re.M | re.S)
    return text


def every_port_measured(text: str, k: int) -> str:
    """The scenario with ``measure.ports`` = every port (too long for a command line at k = 64)."""
    ports = "ports = [" + ", ".join(f'"{p}"' for p in all_ports(k)) + "]"
    if "measure" in tomllib.loads(text):
        return re.sub(r"^\[measure\][^\n]*\n", lambda m: m.group(0) + ports + "\n", text, count=1, flags=re.M)
    return text.rstrip("\n") + "\n\n[measure]\n" + ports + "\n"


def count(scenario: Path, k_args: list[str], duration: float, tmp: Path) -> dict:
    out = tmp / "count"
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([str(SIMRUN), str(scenario), *k_args, f"sim.duration_s={duration!r}", "--out", str(out)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out / "ports.csv") as fh:
        rows = [(r["port"], int(r["packets_out"])) for r in csv.DictReader(fh)]
    summary = json.loads((out / "summary.json").read_text())
    to_host = re.compile(r"->h\d+$")
    return {"events": summary["events"], "hops": sum(n for _, n in rows),
            "delivered": sum(n for p, n in rows if to_host.search(p)), "engine_build": summary["engine_build"]}


def cpu(s: dict) -> float:
    return s["user_s"] + s["sys_s"]


def render(doc: dict) -> str:
    """The section of ``docs/performance.md`` for a results document (what a run writes to
    ``bench/results/<section>.json``): the machine line and the table, with a ``flows`` column
    for a ``--senders`` run and ns-2's columns only when some row ran ns-2."""
    rows = doc["rows"]
    m = doc["machine"]
    loads = [x for r in rows for x in r["loads"]]
    args = shlex.split(doc["command"])
    # the k = 8 reference is the generated permutation's (a --scenario file's flows are its own)
    ref = None if "--scenario" in args else next(
        (r for r in rows if r["k"] == 8 and r["flows"] == r["hosts"] and r["cpu_ns_per_delivered"]), None)
    flows_col = "--senders" in args
    ns2_cols = any(r["ns2"] for r in rows)  # the ns-2 columns only where some row ran ns-2
    head = (["k", "hosts"] + (["flows"] if flows_col else [])
            + ["switches", "build wall", "build CPU", "build peak RSS", "traffic peak RSS", "delivered packets", "hops",
               "events", "CPU per delivered packet", "CPU per hop", "events per CPU s", "per packet vs k = 8"]
            + (["ns-2 build CPU", "ns-2 traffic peak RSS", "ns-2 hops", "ns-2 CPU per hop", "ns-2 / dcfair per hop"] if ns2_cols else []))
    t = [f"Machine: {describe(m)}, {m['logical_cpus']} logical CPUs, shared (1-minute load average "
         f"{min(loads):.1f} to {max(loads):.1f} during the runs); {doc['reps']} interleaved repetitions, medians; "
         f"{doc['duration_s'] * 1e3:g} ms simulated; engine build `{doc['engine_build']}`; `{doc['command']}` on {doc['generated_utc']}.", "",
         "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    f = lambda x, fmt, unit="": "n/a" if x is None else format(x, fmt) + unit  # noqa: E731
    for r in rows:
        rel = r["cpu_ns_per_delivered"] / ref["cpu_ns_per_delivered"] if ref and r["cpu_ns_per_delivered"] else None
        cells = [str(r["k"]), f"{r['hosts']:,}"] + ([f"{r['flows']:,}"] if flows_col else []) + [
            f"{r['switches']:,}", f"{r['build_wall_s']:.2f} s", f"{r['build_cpu_s']:.2f} s", f"{r['build_peak_rss_mib']:.0f} MiB",
            f"{r['traffic_peak_rss_mib']:.0f} MiB", f"{r['delivered'] / 1e6:.2f} M", f"{r['hops'] / 1e6:.2f} M",
            f"{r['events'] / 1e6:.2f} M", f(r["cpu_ns_per_delivered"], ".0f", " ns"), f(r["cpu_ns_per_hop"], ".0f", " ns"),
            f(r["events_per_cpu_s"] and r["events_per_cpu_s"] / 1e6, ".1f", " M"), f(rel, ".2f", "x")]
        if ns2_cols:
            ns2 = r["ns2"] or {}
            ns2_rel = ns2["cpu_ns_per_hop"] / r["cpu_ns_per_hop"] if ns2.get("cpu_ns_per_hop") and r["cpu_ns_per_hop"] else None
            cells += [f(ns2.get("build_cpu_s"), ".2f", " s"), f(ns2.get("traffic_peak_rss_mib"), ".0f", " MiB"),
                      f(ns2.get("hops") and ns2["hops"] / 1e6, ".2f", " M"), f(ns2.get("cpu_ns_per_hop"), ".0f", " ns"),
                      f(ns2_rel, ".1f", "x")]
        t.append("| " + " | ".join(cells) + " |")
    return "\n".join(t)


def measure(a: argparse.Namespace, ap: argparse.ArgumentParser, argv) -> dict:
    """The runs ``a`` asks for, as the results document ``render`` reads."""
    ks = [int(x) for x in a.ks.split(",")]
    if a.senders and a.scenario:
        ap.error("--senders needs the generated scenario: leave out --scenario")
    senders = [int(x) for x in a.senders.split(",")] if a.senders else [None]
    if any(n is not None and n < 2 for n in senders):
        ap.error("--senders takes counts of at least 2 (a permutation needs two hosts)")
    configs = [(k, n) for k in ks for n in senders if n is None or (k ** 3 // 4) % n == 0]  # a count above the hosts leaves a remainder too
    ns2_ks = set() if a.scenario else {int(x) for x in a.ns2_ks.split(",") if x.strip()}
    if ns2_ks and not shutil.which("ns"):
        sys.exit("ns-2 (`ns`) not found: apt-get install ns2, or --ns2-ks \"\"")
    if any(k < 2 or k % 2 for k in ks):
        ap.error("--ks takes even numbers of at least 2")
    if not SIMRUN.exists():
        sys.exit(f"{SIMRUN.relative_to(REPO)} not found: cargo build --release -p dcfair-sim --example simrun")
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    tmp = Path(tempfile.mkdtemp(prefix="dcfair-scale-"))
    rows = []
    try:
        for k, n in configs:
            if a.scenario:
                text, k_args = a.scenario.read_text(), [f"topology.k={k}"]
            else:
                text, k_args = generated(k, a.perm_seed, n), []
            # the build run's 1 ns must hold the scenario's measurement window, if it sets one
            build_only = BUILD_ONLY + (["measure.window_s=1e-9"] if "window_s" in tomllib.loads(text).get("measure", {}) else [])
            scenario, counting = tmp / f"k{k}-n{n}.toml", tmp / f"k{k}-n{n}-every-port.toml"
            scenario.write_text(text)
            counting.write_text(every_port_measured(text, k))
            log(f"k = {k}: counting run, {a.duration:g} s simulated, every port measured")
            c = count(counting, k_args, a.duration, tmp)
            runs = [("build", [str(SIMRUN), str(scenario), *k_args, *build_only]),
                    ("traffic", [str(SIMRUN), str(scenario), *k_args, f"sim.duration_s={a.duration!r}"])]
            ns2 = None
            if k in ns2_ks:
                sc = tomllib.loads(text)
                log(f"k = {k}: ns-2 counting run, every link monitored")
                ns2 = {"hops": count_ns2(sc, a.duration, str(tmp))["hops"]}
                runs += [("ns2-build", ns_args(sc, 1e-9)), ("ns2-traffic", ns_args(sc, a.duration))]
            samples = {name: [] for name, _ in runs}
            for rep in range(a.reps):
                for name, cmd in runs:
                    s = timed(cmd, str(tmp))
                    samples[name].append(s)
                    log(f"  rep {rep + 1}/{a.reps} {name:11s}: wall {s['wall_s']:.2f} s cpu {cpu(s):.2f} s "
                        f"rss {s['peak_rss_kib'] / 1024:.0f} MiB load {s['loadavg_1min_before']}")
            build, traffic = samples["build"], samples["traffic"]
            med = lambda ss, f: statistics.median(f(s) for s in ss)  # noqa: E731
            b_cpu, t_cpu = med(build, cpu), med(traffic, cpu)
            work = t_cpu - b_cpu
            if ns2 is not None:
                ns2_work = med(samples["ns2-traffic"], cpu) - med(samples["ns2-build"], cpu)
                ns2.update({"build_cpu_s": med(samples["ns2-build"], cpu), "traffic_cpu_s": med(samples["ns2-traffic"], cpu),
                            "traffic_peak_rss_mib": med(samples["ns2-traffic"], lambda s: s["peak_rss_kib"]) / 1024,
                            "cpu_ns_per_hop": ns2_work / ns2["hops"] * 1e9 if ns2["hops"] and ns2_work > 0 else None,
                            "samples": {"build": samples["ns2-build"], "traffic": samples["ns2-traffic"]}})
            rows.append({
                "k": k, "hosts": k ** 3 // 4, "switches": 5 * k * k // 4, "flows": n or k ** 3 // 4,
                "build_wall_s": med(build, lambda s: s["wall_s"]), "build_cpu_s": b_cpu,
                "build_peak_rss_mib": med(build, lambda s: s["peak_rss_kib"]) / 1024,
                "traffic_cpu_s": t_cpu, "traffic_peak_rss_mib": med(traffic, lambda s: s["peak_rss_kib"]) / 1024,
                **c,
                # None where the traffic run took no more CPU than building (too short a run)
                "cpu_ns_per_delivered": work / c["delivered"] * 1e9 if c["delivered"] and work > 0 else None,
                "cpu_ns_per_hop": work / c["hops"] * 1e9 if c["hops"] and work > 0 else None,
                "events_per_cpu_s": c["events"] / work if work > 0 else None,
                "loads": [s["loadavg_1min_before"] for ss in samples.values() for s in ss],
                "samples": {"build": build, "traffic": traffic},
                "ns2": ns2,
            })
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    command = "python bench/scale.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    doc = {
        "benchmark": "k-ary fat-tree, permutation of long TCP flows: building, memory, CPU per packet",
        "scenario": str(a.scenario) if a.scenario else f"{BASE.relative_to(REPO)} at each k, permutation seed {a.perm_seed}",
        "duration_s": a.duration, "reps": a.reps, "command": command.strip(), "machine": machine(),
        "engine_build": ", ".join(sorted({r["engine_build"] for r in rows})),
        "generated_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "rows": rows,
    }
    return doc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ks", default="4,8,16,32", help="fat-tree sizes (even; default 4,8,16,32)")
    ap.add_argument("--ns2-ks", default="4,8,16", help="the sizes also run in ns-2 (default 4,8,16; \"\" for none)")
    ap.add_argument("--duration", type=float, default=0.005, help="simulated seconds of the traffic run")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--perm-seed", type=int, default=1)
    ap.add_argument("--scenario", type=Path, help="a scenario file to run with topology.k=K instead")
    ap.add_argument("--senders", help="flow counts to run at each k (every hosts/N-th host takes part; "
                    "counts above k^3/4 or not dividing it are skipped); default: every host")
    docsection.add_bench_args(ap, "scale-bench")
    a = ap.parse_args(argv)
    return docsection.bench_section(ap, a, REPO, DOC, lambda: measure(a, ap, argv), render)

if __name__ == "__main__":
    sys.exit(main())
