#!/usr/bin/env python3
"""Whole-run speed: dcfair beside ns-2 on the HCF long-flow setting, in the same session.

    python bench/longflows.py [--reps 3] [--durations 20,180] [--qdisc droptail]

For every simulated duration, runs ``reps`` times, interleaved (ns-2, dcfair, ns-2, dcfair, ...)
so that a change in the machine's load spreads over both:

- ns-2: ``ns validation/ns2/longflows.tcl --qdisc Q --seed 1 --duration D --trace none``
- dcfair: ``dcfair run scenarios/papers/hcf/longflows.toml --set queue.kind=Q --set
  sim.duration_s=D --quiet --out TMP`` (the user-facing command, Python start-up included)

and measures wall clock, CPU and peak RSS of each child (``os.wait4``). Reports medians, the
ratio ns-2 / dcfair (wall and CPU), dcfair's events per second, and the cost per simulated
second of each simulator, ``(t(Dmax) - t(Dmin)) / (Dmax - Dmin)``, which takes out start-up and
network building. Writes ``bench/results/longflows.json`` and the table between the markers in
``docs/performance.md``. Targets: ratio >= 10 at 20 s, >= 3 at 180 s, dcfair peak
memory < 200 MB.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench/ns2"))
sys.path.insert(0, str(REPO / "validation"))
import docsection  # noqa: E402
from time_ns2 import TCL, describe, machine, ns_version, run_timed  # noqa: E402

SCENARIO = "scenarios/papers/hcf/longflows.toml"
DOC = REPO / "docs/performance.md"
OUT = REPO / "bench/results/longflows.json"


def dcfair_exe() -> str:
    venv = REPO / ".venv/bin/dcfair"
    return str(venv) if venv.exists() else (shutil.which("dcfair") or sys.exit("dcfair not found: run `make install`"))


def med(samples, key):
    return statistics.median(s[key] for s in samples)


def cpu(s):
    return s["user_s"] + s["sys_s"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--durations", default="20,180")
    ap.add_argument("--qdisc", default="droptail")
    ap.add_argument("--no-doc", action="store_true")
    a = ap.parse_args(argv)
    durations = sorted(float(x) for x in a.durations.split(","))
    if shutil.which("ns") is None:
        sys.exit("ns-2 not found: `make peers` installs it (Debian package ns2)")
    exe = dcfair_exe()
    tmp = tempfile.mkdtemp(prefix="dcfair-bench-")
    samples = {("ns2", d): [] for d in durations} | {("dcfair", d): [] for d in durations}
    events = {}
    for rep in range(a.reps):
        for d in durations:
            ns_cmd = ["ns", str(TCL), "--qdisc", a.qdisc, "--seed", "1", "--duration", repr(d), "--trace", "none"]
            out = os.path.join(tmp, f"d{d:g}")
            dc_cmd = [exe, "run", SCENARIO, "--set", f"queue.kind={a.qdisc}", "--set", f"sim.duration_s={d:g}",
                      "--quiet", "--out", out]
            for name, cmd in (("ns2", ns_cmd), ("dcfair", dc_cmd)):
                s = run_timed(cmd, 3600)
                samples[(name, d)].append(s)
                print(f"rep {rep + 1} {name:6s} {d:6g} s: wall {s['wall_s']:.3f} s cpu {cpu(s):.3f} s "
                      f"rss {s['peak_rss_kib'] / 1024:.1f} MiB load {s['loadavg_1min_before']}", file=sys.stderr)
            events[d] = json.loads(Path(out, "summary.json").read_text())["events"]
    shutil.rmtree(tmp, ignore_errors=True)

    rows = []
    for d in durations:
        ns, dc = samples[("ns2", d)], samples[("dcfair", d)]
        rows.append({
            "sim_time_s": d,
            "ns2": {"wall_s": med(ns, "wall_s"), "cpu_s": statistics.median(map(cpu, ns)), "peak_rss_mib": med(ns, "peak_rss_kib") / 1024},
            "dcfair": {"wall_s": med(dc, "wall_s"), "cpu_s": statistics.median(map(cpu, dc)), "peak_rss_mib": med(dc, "peak_rss_kib") / 1024,
                       "events": events[d]},
        })
        r = rows[-1]
        r["ratio_wall"] = r["ns2"]["wall_s"] / r["dcfair"]["wall_s"]
        r["ratio_cpu"] = r["ns2"]["cpu_s"] / r["dcfair"]["cpu_s"]
        r["dcfair"]["events_per_wall_s"] = events[d] / r["dcfair"]["wall_s"]
    lo, hi = rows[0], rows[-1]
    span = hi["sim_time_s"] - lo["sim_time_s"]
    per_sim_s = None
    if span > 0:
        per_sim_s = {
            name: {"wall_ms": 1000 * (hi[name]["wall_s"] - lo[name]["wall_s"]) / span,
                   "cpu_ms": 1000 * (hi[name]["cpu_s"] - lo[name]["cpu_s"]) / span}
            for name in ("ns2", "dcfair")
        }
        ev = (hi["dcfair"]["events"] - lo["dcfair"]["events"]) / span
        per_sim_s["dcfair"]["events"] = ev
        per_sim_s["dcfair"]["events_per_cpu_s"] = ev / (per_sim_s["dcfair"]["cpu_ms"] / 1000) if per_sim_s["dcfair"]["cpu_ms"] > 0 else None
    doc = {
        "benchmark": "hcf-longflows whole run, dcfair vs ns-2",
        "qdisc": a.qdisc,
        "reps": a.reps,
        "command": "python bench/longflows.py " + " ".join(argv or sys.argv[1:]),
        "machine": machine(),
        **{f"ns2_{k}": v for k, v in ns_version("ns").items()},
        "generated_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "rows": rows,
        "per_simulated_second": per_sim_s,
        "samples": {f"{k[0]}@{k[1]:g}": v for k, v in samples.items()},
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, indent=1) + "\n")

    t = [f"Machine: {describe(doc['machine'])}, {doc['machine']['logical_cpus']} logical CPUs; "
         f"{a.reps} interleaved repetitions, medians; `{doc['command']}` on {doc['generated_utc']}.", "",
         "| simulated | ns-2 wall | dcfair wall | ratio (wall) | ns-2 CPU | dcfair CPU | ratio (CPU) | dcfair events | dcfair events/s (wall) | ns-2 peak RSS | dcfair peak RSS |",
         "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        t.append(f"| {r['sim_time_s']:g} s | {r['ns2']['wall_s']:.2f} s | {r['dcfair']['wall_s']:.2f} s | **{r['ratio_wall']:.1f}x** | "
                 f"{r['ns2']['cpu_s']:.2f} s | {r['dcfair']['cpu_s']:.2f} s | {r['ratio_cpu']:.1f}x | {r['dcfair']['events']:,} | "
                 f"{r['dcfair']['events_per_wall_s'] / 1e6:.1f} M | {r['ns2']['peak_rss_mib']:.0f} MiB | {r['dcfair']['peak_rss_mib']:.0f} MiB |")
    if per_sim_s:
        p = per_sim_s
        t += ["", f"Cost per simulated second (slope between {lo['sim_time_s']:g} s and {hi['sim_time_s']:g} s): "
              f"ns-2 {p['ns2']['wall_ms']:.1f} ms wall / {p['ns2']['cpu_ms']:.1f} ms CPU; "
              f"dcfair {p['dcfair']['wall_ms']:.1f} ms wall / {p['dcfair']['cpu_ms']:.1f} ms CPU "
              f"({p['dcfair']['events']:,.0f} events per simulated second"
              + (f", {p['dcfair']['events_per_cpu_s'] / 1e6:.1f} M events per CPU second)." if p['dcfair'].get('events_per_cpu_s') else ").")]
    text = "\n".join(t)
    print(text)
    if not a.no_doc:
        docsection.replace(DOC, "longflows-bench", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
