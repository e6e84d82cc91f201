#!/usr/bin/env python3
"""Whole-run speed on pFabric's fabric with the web-search workload: dcfair alone at full size,
and dcfair beside ns-3 on a scaled-down run that ns-3 finishes, in the same session.

    python bench/pfabric.py [--flows 100000] [--mechs fq_codel,dctcp,pfabric] [--ns3-flows 1000]
                            [--reps 1] [--no-doc]
    python bench/pfabric.py --print-cmd FLOWS [--mechs M] [--simrun PATH] [--cmd-out DIR]

The network is ``scenarios/workloads/pfabric_websearch.toml`` (144 hosts = 9 leaves x 16,
4 spines, 10 Gbit/s host links, 40 Gbit/s fabric links, Poisson arrivals at load 0.6, web-search
sizes) with the overrides of :data:`COMMON`: FQ-CoDel with the data-center scaling at every
switch port, NewReno with SACK, per-packet spraying (ns-3 3.37's only ECMP), and the TCP
settings ``bench/ns3/leafspine.cc`` sets in ns-3.

1. **Full size** (the issue's target: under 5 minutes and 4 GB on one core), once per mechanism
   of ``--mechs``: dcfair draws ``--flows`` flows (``poisson.max_flows``) and runs until they
   have all arrived and had time to finish; CPU time (user + sys), wall clock and peak RSS of
   ``simrun``. FQ-CoDel runs with :data:`COMMON` as it stands (the settings of the ns-3 run);
   DCTCP and pFabric with their queue and transport keys from the FQ-CoDel reproduction
   (``dcfair.reproduce.fqcodel.MECHANISMS``: DropTail 100 packets marking at K = 65 with
   DCTCP; pFabric's 24-packet priority queues at switches and NICs with its transport and
   ``tcp.profile = "pfabric"``) in place of FQ-CoDel's and NewReno's, the other :data:`COMMON`
   keys unchanged.
2. **Beside ns-3** (``--ns3-mechs``: FQ-CoDel and DCTCP, the two ns-3 has): dcfair runs the first ``--ns3-flows`` flows of the same process
   (same seed, so the same flows) and writes its flows.csv; ``bench/ns3/leafspine.cc`` (built
   against the Debian libns3-dev) replays exactly those flows (pairs, start times, sizes). Both
   are timed ``--reps`` times, interleaved; the ratio is of CPU times. Completed flows and mean
   FCT are printed beside each other as a check that both moved the same work, not as
   validation.

Writes ``bench/results/pfabric.json`` and the section ``pfabric-bench`` of
``docs/performance.md``.

``--print-cmd FLOWS`` prints the ``simrun`` command of a reduced run (the first ``FLOWS``
flows, the first mechanism of ``--mechs``, output directory ``--cmd-out``, by default ``{out}``)
and exits: the form ``bench/ab.py`` compares two builds with, or one to run under a profiler.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench/ns2"))
sys.path.insert(0, str(REPO / "validation"))
sys.path.insert(0, str(REPO / "validation/ns3"))
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "python"))
import docsection  # noqa: E402
from dcfair.reproduce.fqcodel import MECHANISMS, NAMES  # noqa: E402  (pure Python: no engine needed)
from fattree import cpu, timed  # noqa: E402  (CPU, wall and peak RSS of one child)
from time_ns2 import describe, machine  # noqa: E402

SCENARIO = REPO / "scenarios/workloads/pfabric_websearch.toml"
SIMRUN = REPO / "target/release/examples/simrun"
NS3_SRC = REPO / "bench/ns3/leafspine.cc"
NS3_BIN = REPO / "out/ns3/leafspine"
DOC = REPO / "docs/performance.md"
OUT = REPO / "bench/results/pfabric.json"
TARGET_CPU_S = 300.0
TARGET_RSS_MIB = 4096.0

#: dcfair's side of what bench/ns3/leafspine.cc sets in ns-3.
COMMON = {
    "queue.kind": "fq_codel",
    "queue.limit_pkts": 240,
    "queue.fq_codel.target_us": 5.0,
    "queue.fq_codel.interval_us": 100.0,
    "routing.mode": "spray",
    "tcp.cc": "newreno",
    "tcp.sack": "true",
    "tcp.init_cwnd_pkts": 2,
    "tcp.rcv_buf_bytes": 131072,
    "tcp.min_rto_ms": 1.0,
}
NS3_ARGS = ["--leaves=9", "--spines=4", "--hostsPerLeaf=16", "--hostRate=10Gbps", "--fabricRate=40Gbps",
            "--delay=1.5us", "--qdisc=fq_codel", "--limit=240", "--hostLimit=1000", "--target=5e-06",
            "--interval=0.0001", "--tcp=newreno", "--minRto=0.001", "--initCwnd=2", "--rcvBuf=131072",
            "--sack=true", "--spray=true"]
#: The mechanisms ns-3 3.37 has, with what replaces NS3_ARGS' FQ-CoDel and NewReno: DCTCP's
#: marking as RED with QW 1 and MinTh = MaxTh = K (bench/ns3/leafspine.cc), as dcfair's
#: ``dctcp`` overrides (DropTail of 100 packets marking above K = 65, tcp.cc = dctcp).
NS3_MECH_ARGS = {"fq_codel": [], "dctcp": ["--qdisc=dctcp", "--limit=100", "--markK=65", "--tcp=dctcp"]}


def ns3_args(mech: str) -> list[str]:
    """NS3_ARGS with the mechanism's own arguments in place of FQ-CoDel's and NewReno's."""
    if mech not in NS3_MECH_ARGS:
        sys.exit(f"--ns3-mechs: ns-3 runs {', '.join(NS3_MECH_ARGS)}, not {mech!r}")
    own = NS3_MECH_ARGS[mech]
    names = {a.split("=")[0] for a in own}
    return [a for a in NS3_ARGS if a.split("=")[0] not in names] + own


def names(csv: str) -> list[str]:
    """The non-empty names of a comma-separated option value."""
    return [m.strip() for m in csv.split(",") if m.strip()]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def build_ns3() -> None:
    import run_ns3

    cmd = run_ns3.build_command()
    flags = cmd[7:]
    if NS3_BIN.exists() and NS3_BIN.stat().st_mtime >= NS3_SRC.stat().st_mtime:
        return
    NS3_BIN.parent.mkdir(parents=True, exist_ok=True)
    log(f"building {NS3_BIN.relative_to(REPO)}")
    tmp = str(NS3_BIN) + ".tmp"
    r = subprocess.run([run_ns3.CXX, "-O2", "-std=c++17", "-Wall", "-o", tmp, str(NS3_SRC), *flags],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"compiling {NS3_SRC.name} failed:\n{r.stderr[-4000:]}")
    os.replace(tmp, NS3_BIN)



#: Keys a mechanism sets in place of FQ-CoDel's (queue disciplines and the congestion control).
MECH_KEYS = ("queue.", "host_queue.", "tcp.cc", "tcp.priority")
MECHS = ("fq_codel", "dctcp", "pfabric")
#: pFabric's transport runs with its own settings (``tcp.profile = "pfabric"``: initial window
#: 12, minimum RTO 45 us, ...; docs/mechanisms/pfabric.md) in place of these COMMON keys.
PFABRIC_TCP_KEYS = ("tcp.init_cwnd_pkts", "tcp.min_rto_ms", "tcp.rcv_buf_bytes")


def overrides(mech: str) -> dict:
    """:data:`COMMON` for FQ-CoDel; for another mechanism, COMMON without its queue and
    congestion-control keys, plus the mechanism's own from the FQ-CoDel reproduction."""
    if mech == "fq_codel":
        return dict(COMMON)
    if mech not in MECHANISMS:
        sys.exit(f"--mechs: unknown mechanism {mech!r} (known: {', '.join(MECHANISMS)})")
    own = MECH_KEYS + (PFABRIC_TCP_KEYS if mech == "pfabric" else ())
    base = {k: v for k, v in COMMON.items() if not k.startswith(own)}
    extra = {"tcp.profile": "pfabric"} if mech == "pfabric" else {}
    return {**base, **dict(MECHANISMS[mech]), **extra}


def dcfair_cmd(flows: int, out: str, stop_s: float, mech: str = "fq_codel", simrun: str | None = None) -> list[str]:
    ov = {**overrides(mech), "poisson.max_flows": flows, "poisson.stop_s": stop_s, "sim.duration_s": stop_s + 0.05}
    return [simrun or str(SIMRUN), str(SCENARIO), *(f"{k}={v}" for k, v in ov.items()), "--out", out]


def arrival_window(flows: int) -> float:
    """Seconds within which ``flows`` Poisson arrivals fall with a wide margin (the run stops
    drawing at ``max_flows``; the window only has to be long enough)."""
    rate = 64_800.0  # flows/s at load 0.6 here: 0.6 x 1440 Gbit/s / (8 x 1,666,451 B)
    return round(max(0.01, 1.3 * flows / rate + 0.005), 3)


def summary(out: str) -> dict:
    s = json.loads(Path(out, "summary.json").read_text())
    m = s["metrics"]
    return {"events": s["events"], "flows": m["poisson_flows"], "completed": m["flows_completed_size_all"],
            "fct_mean_s": m.get("fct_mean_s_size_all")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flows", type=int, default=100_000, help="flows of the full-size runs (0: skip them)")
    ap.add_argument("--mechs", default=",".join(MECHS), help="mechanisms of the full-size runs, comma-separated")
    ap.add_argument("--ns3-flows", type=int, default=1000,
                    help="flows of the runs beside ns-3 (0: skip them; fewer than about 1,000 measure start-up more than simulation)")
    ap.add_argument("--ns3-mechs", default=",".join(NS3_MECH_ARGS), help="mechanisms run beside ns-3, comma-separated")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--no-doc", action="store_true",
                    help="print only: write neither docs/performance.md nor bench/results/pfabric.json")
    ap.add_argument("--print-cmd", type=int, metavar="FLOWS",
                    help="print the simrun command of a FLOWS-flow run of the first of --mechs (output "
                         "directory {out}, for bench/ab.py) and exit")
    ap.add_argument("--simrun", help="with --print-cmd: the simrun binary to name (default: the release build)")
    ap.add_argument("--cmd-out", default="{out}", help="with --print-cmd: the output directory to name (default {out})")
    a = ap.parse_args(argv)
    if a.print_cmd is not None:
        if a.print_cmd < 1:
            ap.error("--print-cmd takes a number of flows of at least 1")
        mech = names(a.mechs)[0] if names(a.mechs) else "fq_codel"
        print(shlex.join(dcfair_cmd(a.print_cmd, a.cmd_out, arrival_window(a.print_cmd), mech, a.simrun)))
        return 0
    if not SIMRUN.exists():
        sys.exit(f"{SIMRUN.relative_to(REPO)} not found: cargo build --release -p dcfair-sim --example simrun")
    tmp = tempfile.mkdtemp(prefix="dcfair-pfabric-")
    doc = {"benchmark": "pFabric fabric (144 hosts), web search at load 0.6: dcfair per mechanism, and beside ns-3 (FQ-CoDel)",
           "scenario": str(SCENARIO.relative_to(REPO)), "overrides": COMMON,
           "command": "python bench/pfabric.py " + " ".join(argv if argv is not None else sys.argv[1:]),
           "machine": machine(),
           "generated_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}

    if a.flows:
        stop = arrival_window(a.flows)
        doc["full"] = {}
        for mech in names(a.mechs):
            log(f"full size, {mech}: {a.flows} flows (arrivals within {stop} s)")
            out = os.path.join(tmp, "full-" + mech)
            s = timed(dcfair_cmd(a.flows, out, stop, mech), tmp)
            f = {"flows_requested": a.flows, "sim_time_s": stop + 0.05, "overrides": overrides(mech), "cpu_s": cpu(s),
                 "wall_s": s["wall_s"], "peak_rss_mib": s["peak_rss_kib"] / 1024,
                 "loadavg_1min_before": s["loadavg_1min_before"], **summary(out)}
            f["events_per_cpu_s"] = f["events"] / f["cpu_s"]
            doc["full"][mech] = f
            log(f"  cpu {f['cpu_s']:.1f} s, wall {f['wall_s']:.1f} s, rss {f['peak_rss_mib']:.0f} MiB, "
                f"{f['completed']} of {f['flows']} flows completed, {f['events'] / 1e6:.0f} M events")

    if a.ns3_flows:
        if shutil.which("pkg-config") is None or not Path("/usr/include/ns3").exists():
            sys.exit("ns-3 not found: `make peers` installs it (Debian packages ns3, libns3-dev)")
        build_ns3()
        stop = arrival_window(a.ns3_flows)
        dur = stop + 0.05
        doc["beside_ns3"] = {}
        for mech in names(a.ns3_mechs):
            nargs = ns3_args(mech)
            samples = {"dcfair": [], "ns3": []}
            res = {}
            for rep in range(a.reps):
                out = os.path.join(tmp, "small-" + mech)
                s = timed(dcfair_cmd(a.ns3_flows, out, stop, mech), tmp)
                samples["dcfair"].append(s)
                res["dcfair"] = summary(out)
                res_file = os.path.join(tmp, "ns3.json")
                cmd = [str(NS3_BIN), *nargs, f"--flows={out}/flows.csv", f"--duration={dur!r}", f"--result={res_file}"]
                s3 = timed(cmd, tmp)
                samples["ns3"].append(s3)
                res["ns3"] = json.loads(Path(res_file).read_text())
                log(f"{mech} rep {rep + 1}/{a.reps}: dcfair cpu {cpu(s):.2f} s, ns-3 cpu {cpu(s3):.1f} s")
            side = {}
            for name, ss in samples.items():
                side[name] = {"cpu_s": statistics.median(cpu(s) for s in ss),
                              "wall_s": statistics.median(s["wall_s"] for s in ss),
                              "peak_rss_mib": statistics.median(s["peak_rss_kib"] for s in ss) / 1024, **res[name]}
            doc["beside_ns3"][mech] = {"flows": a.ns3_flows, "sim_time_s": dur, "reps": a.reps, "ns3_args": nargs,
                                       **side, "ratio_cpu": side["ns3"]["cpu_s"] / side["dcfair"]["cpu_s"]}
    shutil.rmtree(tmp, ignore_errors=True)
    text = render(doc)
    print(text)
    if not a.no_doc:  # a trial run keeps the recorded results
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(json.dumps(doc, indent=1) + "\n")
        docsection.replace(DOC, "pfabric-bench", text)
    return 0


def render(doc: dict) -> str:
    m = doc["machine"]
    t = [f"Machine: {describe(m)}, {m['logical_cpus']} logical CPUs, shared; `{doc['command']}` on "
         f"{doc['generated_utc']}.", ""]
    if "full" in doc:
        runs = doc["full"]
        any_f = next(iter(runs.values()))
        t += [f"Full size: {any_f['flows_requested']:,} flows, {any_f['sim_time_s']:g} s simulated, one run per "
              "mechanism. Target: under 5 minutes (300 s CPU) and 4 GB on one core.", "",
              "| mechanism | CPU | wall | 1-min load before | peak RSS | events | events per CPU s | flows completed "
              "| mean FCT | target |", "|---|---|---|---|---|---|---|---|---|---|"]
        for mech, f in runs.items():
            ok = f["cpu_s"] <= TARGET_CPU_S and f["peak_rss_mib"] <= TARGET_RSS_MIB
            t.append(f"| {NAMES.get(mech, mech)} | **{f['cpu_s']:.0f} s** | {f['wall_s']:.0f} s | "
                     f"{f['loadavg_1min_before']:.1f} | {f['peak_rss_mib']:.0f} MiB | {f['events'] / 1e6:,.0f} M | "
                     f"{f['events_per_cpu_s'] / 1e6:.1f} M | {f['completed']:,} of {f['flows']:,} | "
                     f"{f['fct_mean_s'] * 1e6:.0f} us | {'met' if ok else '**not met**'} |")
        t.append("")
    if doc.get("beside_ns3"):
        any_b = next(iter(doc["beside_ns3"].values()))
        t += [f"Beside ns-3 3.37, the first {any_b['flows']} flows ({any_b['sim_time_s']:g} s simulated, medians of "
              f"{any_b['reps']}), each mechanism in both simulators:", "",
              "| mechanism | simulator | CPU | wall | peak RSS | events | flows completed | mean FCT | ratio (CPU) |",
              "|---|---|---|---|---|---|---|---|---|"]
        for mech, b in doc["beside_ns3"].items():
            d, n = b["dcfair"], b["ns3"]
            t += [f"| {NAMES.get(mech, mech)} | ns-3 | {n['cpu_s']:.1f} s | {n['wall_s']:.1f} s | {n['peak_rss_mib']:.0f} MiB "
                  f"| {n['events'] / 1e6:.1f} M | {n['completed']} of {n['flows']} | {n['fct_mean_s'] * 1e6:.0f} us | |",
                  f"| | dcfair | {d['cpu_s']:.2f} s | {d['wall_s']:.2f} s | {d['peak_rss_mib']:.0f} MiB "
                  f"| {d['events'] / 1e6:.1f} M | {d['completed']} of {d['flows']} | {d['fct_mean_s'] * 1e6:.0f} us "
                  f"| **{b['ratio_cpu']:.0f}x** |"]
    return "\n".join(t)


if __name__ == "__main__":
    sys.exit(main())
