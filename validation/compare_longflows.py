#!/usr/bin/env python3
"""dcfair beside ns-2 on the HCF paper's long-flow setting; writes the table in docs/validation.md.

    python validation/compare_longflows.py [--seeds 5] [--duration 180] [--jobs N] [--ns2-json FILE]

1. Runs dcfair on ``scenarios/papers/hcf/longflows.toml`` for every discipline x seed (a process
   pool over the cores) and writes ``validation/results/dcfair_longflows.json`` (every run and the
   aggregate: mean, sample std, min, max per metric).
2. Reads ns-2's results from ``validation/results/ns2_longflows.json`` (made by
   ``validation/ns2/run_ns2.py``; rerun that first to refresh them).
3. Rewrites the part of ``docs/validation.md`` between ``<!-- longflows:begin -->`` and
   ``<!-- longflows:end -->`` with the side-by-side table and the verdict per discipline: dcfair's
   mean is *within ns-2's spread* when it lies inside ns-2's mean +- 2 sample standard deviations
   or inside ns-2's [min, max] over seeds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCENARIO = REPO / "scenarios/papers/hcf/longflows.toml"
DOC = REPO / "docs/validation.md"
OUT = REPO / "validation/results/dcfair_longflows.json"
NS2 = REPO / "validation/results/ns2_longflows.json"
DISCIPLINES = ["droptail", "red", "sfq", "drr", "hcf"]
METRICS = [
    ("starved_fraction", "starved fraction", "{:.3f}"),
    ("throughput_variance_pkts", "variance (pkts^2)", "{:.3g}"),
    ("jain_index", "Jain", "{:.3f}"),
    ("utilization", "utilization", "{:.4f}"),
    ("max_starvation_s", "max starvation (s)", "{:.0f}"),
]
BEGIN, END = "<!-- longflows:begin -->", "<!-- longflows:end -->"


def run_one(args):
    qdisc, seed, duration = args
    from dcfair import api

    t0 = time.perf_counter()
    s = api.run(SCENARIO, overrides=[("queue.kind", qdisc), ("sim.duration_s", duration)], seed=seed)
    return {"qdisc": qdisc, "seed": seed, "wall_s": time.perf_counter() - t0, "events": s["events"], "metrics": s["metrics"]}


def aggregate(runs):
    out = {}
    for key, _, _ in METRICS:
        xs = [r["metrics"][key] for r in runs if r["metrics"].get(key) is not None]
        if xs:
            out[key] = {
                "mean": statistics.fmean(xs),
                "std": statistics.stdev(xs) if len(xs) > 1 else 0.0,
                "min": min(xs),
                "max": max(xs),
                "n": len(xs),
            }
    return out


def within(d, n):
    """dcfair's mean inside ns-2's mean +- 2 std or inside ns-2's [min, max]."""
    m = d["mean"]
    return abs(m - n["mean"]) <= 2 * n["std"] + 1e-12 or n["min"] <= m <= n["max"]


def cell(a, fmt):
    if a is None:
        return "-"
    return f"{fmt.format(a['mean'])} +- {fmt.format(a['std'])} [{fmt.format(a['min'])}, {fmt.format(a['max'])}]"


def table(dc, ns2, seeds, duration):
    lines = [
        f"Runs: {seeds} seeds per discipline, {duration:g} s simulated, window = last 10 s. "
        "Each cell: mean +- sample std [min, max] over seeds. `ok` = dcfair's mean inside ns-2's "
        "mean +- 2 std or inside ns-2's range; `DIFF` = outside (explained below).",
        "",
        "| discipline | simulator | " + " | ".join(label for _, label, _ in METRICS) + " |",
        "|---|---|" + "---|" * len(METRICS),
    ]
    for q in DISCIPLINES:
        n = ns2.get(q)
        d = dc.get(q, {})
        if n:
            lines.append(f"| {q} | ns-2 | " + " | ".join(cell(n.get(k), f) for k, _, f in METRICS) + " |")
        verdicts = []
        for k, _, f in METRICS:
            c = cell(d.get(k), f)
            if n and k in n and k in d:
                c += " ok" if within(d[k], n[k]) else " **DIFF**"
            verdicts.append(c)
        lines.append(f"| {q} | dcfair | " + " | ".join(verdicts) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--duration", type=float, default=180.0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--ns2-json", type=Path, default=NS2)
    ap.add_argument("--no-doc", action="store_true", help="do not rewrite docs/validation.md")
    a = ap.parse_args(argv)

    jobs = [(q, s, a.duration) for q in DISCIPLINES for s in range(1, a.seeds + 1)]
    runs = []
    with ProcessPoolExecutor(max_workers=a.jobs) as ex:
        for i, r in enumerate(ex.map(run_one, jobs), 1):
            runs.append(r)
            print(f"[{i}/{len(jobs)}] {r['qdisc']} seed {r['seed']}: starved {r['metrics']['starved_fraction']:.3f} "
                  f"({r['wall_s']:.2f} s)", file=sys.stderr)
    dc = {q: aggregate([r for r in runs if r["qdisc"] == q]) for q in DISCIPLINES}
    from dcfair import _engine

    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({
        "scenario": str(SCENARIO.relative_to(REPO)),
        "engine_version": _engine.version(),
        "seeds": list(range(1, a.seeds + 1)),
        "duration_s": a.duration,
        "command": "python validation/compare_longflows.py " + " ".join(argv or sys.argv[1:]),
        "aggregate": dc,
        "runs": runs,
    }, indent=1) + "\n")
    ns2 = json.loads(a.ns2_json.read_text())["aggregate"] if a.ns2_json.exists() else {}
    t = table(dc, ns2, a.seeds, a.duration)
    print(t)
    if not a.no_doc:
        doc = DOC.read_text()
        if BEGIN not in doc or END not in doc:
            sys.exit(f"{DOC}: markers {BEGIN} / {END} not found")
        head, rest = doc.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        DOC.write_text(head + BEGIN + "\n" + t + "\n" + END + tail)
        print(f"updated {DOC.relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
