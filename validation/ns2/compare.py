#!/usr/bin/env python3
"""Put dcfair's and ns-2's long-flow results side by side (markdown table on stdout).

For each discipline and metric: ns-2 mean ± std [min, max], dcfair mean ± std [min, max],
and whether dcfair is inside ns-2's spread: its mean within ns-2's mean ± 2 std, or the two
[min, max] ranges overlapping (the project's acceptance test). ns-2 has no HCF.

Usage: compare.py [--ns2 validation/results/ns2_longflows.json]
                  [--dcfair validation/results/dcfair_longflows.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
METRICS = (("starved_fraction", "starved", "{:.3f}"),
           ("throughput_variance_pkts", "variance", "{:.3g}"),
           ("jain_index", "Jain", "{:.3f}"),
           ("utilization", "utilization", "{:.4f}"),
           ("max_starvation_s", "max starvation (s)", "{:.1f}"),
           ("timeouts", "timeouts", "{:.0f}"),
           ("drops", "drops", "{:.0f}"))


def cell(a: dict | None, fmt: str) -> str:
    if not a:
        return "-"
    f = fmt.format
    return f"{f(a['mean'])} ± {f(a['std'])} [{f(a['min'])}, {f(a['max'])}]"


def inside(n: dict | None, d: dict | None) -> str:
    if not n or not d:
        return ""
    within = abs(d["mean"] - n["mean"]) <= 2 * n["std"] + 1e-12
    overlap = d["min"] <= n["max"] and n["min"] <= d["max"]
    return "yes" if within or overlap else "**no**"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ns2", default=os.path.join(REPO, "validation/results/ns2_longflows.json"))
    ap.add_argument("--dcfair", default=os.path.join(REPO, "validation/results/dcfair_longflows.json"))
    a = ap.parse_args(argv)
    ns = json.load(open(a.ns2))["aggregate"]
    dc = json.load(open(a.dcfair))["aggregate"]
    print("| qdisc | metric | ns-2 (5 seeds) | dcfair (5 seeds) | inside ns-2's spread |")
    print("|---|---|---|---|---|")
    for q in dc:
        for key, name, fmt in METRICS:
            n, d = ns.get(q, {}).get(key), dc[q].get(key)
            print(f"| {q} | {name} | {cell(n, fmt)} | {cell(d, fmt)} | {inside(n, d)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
