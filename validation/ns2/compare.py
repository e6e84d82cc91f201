#!/usr/bin/env python3
"""Put dcfair's and ns-2's long-flow results side by side (markdown table on stdout).

For each discipline and metric: ns-2 mean ± std [min, max], dcfair mean ± std [min, max],
and whether dcfair is inside ns-2's spread: its mean within ns-2's mean ± 2 std, or the two
[min, max] ranges overlapping (the project's acceptance test). ns-2 has no HCF.

Usage: compare.py [--ns2 validation/results/ns2_longflows.json]
                  [--dcfair validation/results/dcfair_longflows.json] [--doc docs/validation.md]

With --doc, the table also replaces the part of that file between <!-- longflows:begin --> and
<!-- longflows:end -->.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "validation"))
import docsection  # noqa: E402
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
    ap.add_argument("--doc", help="also write the table into this markdown file, between the markers")
    a = ap.parse_args(argv)
    with open(a.ns2) as f:
        ns2 = json.load(f)
    with open(a.dcfair) as f:
        dcf = json.load(f)
    ns, dc = ns2["aggregate"], dcf["aggregate"]
    seeds = lambda doc: len(doc.get("parameters", {}).get("seeds") or doc.get("seeds") or [])  # noqa: E731
    lines = [f"| qdisc | metric | ns-2 ({seeds(ns2) or '?'} seeds) | dcfair ({seeds(dcf) or '?'} seeds) | inside ns-2's spread |",
             "|---|---|---|---|---|"]
    for q in dc:
        for key, name, fmt in METRICS:
            n, d = ns.get(q, {}).get(key), dc[q].get(key)
            lines.append(f"| {q} | {name} | {cell(n, fmt)} | {cell(d, fmt)} | {inside(n, d)} |")
    table = "\n".join(lines)
    print(table)
    if a.doc:
        note = ("Each cell: mean ± sample std [min, max] over seeds. Inside the spread: dcfair's mean within "
                "ns-2's mean ± 2 std, or the two [min, max] ranges overlapping. Made by "
                "`python validation/ns2/compare.py --doc docs/validation.md`.")
        if docsection.write(a.doc, "longflows", table + "\n\n" + note, "compare.py"):
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
