#!/usr/bin/env python3
"""Put dcfair's and ns-2's Outcast runs side by side (markdown table on stdout).

For each variant and measure (share, 2-hop and mean 6-hop goodput, timeouts of the 2-hop flow):
ns-2 mean ± std [min, max], dcfair mean ± std [min, max], and whether dcfair is inside ns-2's
spread (compare.py's test: dcfair's mean within ns-2's mean ± 2 std, or the [min, max] ranges
overlapping).

Usage: compare_outcast.py [--ns2 validation/results/ns2_outcast.json]
                          [--dcfair validation/results/dcfair_outcast.json] [--doc docs/validation.md]
With --doc the table replaces the text between <!-- outcast:begin --> and <!-- outcast:end -->.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "validation"))
sys.path.insert(0, HERE)
import docsection  # noqa: E402
import outcast_common as C  # noqa: E402
from compare import cell, inside  # noqa: E402

ROWS = (("share", "share (2-hop / mean 6-hop)", "{:.3f}"),
        ("two_hop_mbps", "2-hop goodput (Mb/s)", "{:.1f}"),
        ("six_hop_mbps", "mean 6-hop goodput (Mb/s)", "{:.1f}"),
        ("timeouts_two", "timeouts of the 2-hop flow", "{:.0f}"),
        ("timeouts_six", "timeouts per 6-hop flow", "{:.1f}"))


def table(ns: dict, dc: dict) -> str:
    lines = ["| variant | measure | ns-2 (5 seeds) | dcfair (5 seeds) | inside ns-2's spread |",
             "|---|---|---|---|---|"]
    for v, spec in C.VARIANTS.items():
        if v not in ns and v not in dc:
            continue
        for key, label, fmt in ROWS:
            n, d = ns.get(v, {}).get(key), dc.get(v, {}).get(key)
            lines.append(f"| {v} | {label} | {cell(n, fmt)} | {cell(d, fmt)} | {inside(n, d)} |")
    lines.append("")
    lines.append("Each cell: mean ± sample std [min, max] over seeds 1-5, 0.5 s runs, goodput = in-order payload "
                 "over the whole run. Inside the spread: dcfair's mean within ns-2's mean ± 2 std, or the two "
                 "[min, max] ranges overlapping. Made by `python validation/ns2/compare_outcast.py --doc "
                 "docs/validation.md`.")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ns2", default=os.path.join(REPO, "validation/results/ns2_outcast.json"))
    ap.add_argument("--dcfair", default=os.path.join(REPO, "validation/results/dcfair_outcast.json"))
    ap.add_argument("--doc")
    a = ap.parse_args(argv)
    with open(a.ns2) as f:
        ns = json.load(f)["aggregate"]
    with open(a.dcfair) as f:
        dc = json.load(f)["aggregate"]
    text = table(ns, dc)
    sys.stdout.write(text)
    if a.doc:
        docsection.replace(a.doc, "outcast", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
