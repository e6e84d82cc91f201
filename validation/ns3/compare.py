#!/usr/bin/env python3
"""Put dcfair's and ns-3's dumbbell results side by side (markdown on stdout, and with --doc
into docs/validation.md between <!-- ns3:begin --> and <!-- ns3:end -->).

For each case and metric: ns-3 mean ± sample std [min, max], the same for dcfair, the relative
difference of the means, and whether they agree:

* both sides with two or more values (seeds, or epochs for the per-epoch metrics) and some
  spread on the ns-3 side: dcfair's mean within ns-3's mean ± 2 std, or the two [min, max]
  ranges overlapping (the ns-2 comparison's rule);
* otherwise (one deterministic run, or epochs that all repeat the same value): within 5 % of
  ns-3's mean, or within the metric's absolute slack (one event for counts, 0.005 for
  fractions, half a packet for queues and windows).

A case whose dcfair runs are pending (a key today's dcfair does not have) shows the loader's
message instead.

Usage: compare.py [--ns3 PATH] [--dcfair PATH] [--doc docs/validation.md]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import cases as C  # noqa: E402
import common  # noqa: E402
import docsection  # noqa: E402
import metrics as M  # noqa: E402

REL_TOL = 0.05
SLACK = {"drops": 1, "drops_in_window": 1, "retransmits": 1, "timeouts": 1, "spurious": 1,
         "dup_arrivals": 1, "loss_events": 1, "utilization": 0.005, "jain": 0.005,
         "queue_empty": 0.005, "burst_frac": 0.005, "queue_mean": 0.5, "queue_std": 0.5,
         "queue_p99": 0.5, "reduction": 0.005, "wmax_pkts": 0.5}


def cell(a: dict | None, fmt: str) -> str:
    if not a:
        return "-"
    f = fmt.format
    if a["n"] == 1:
        return f(a["mean"])
    return f"{f(a['mean'])} ± {f(a['std'])} [{f(a['min'])}, {f(a['max'])}] ({a['n']})"


def agree(key: str, n: dict | None, d: dict | None) -> str:
    if not n or not d:
        return ""
    spread = n["max"] - n["min"] > 1e-9 * max(1.0, abs(n["mean"]))
    if n["n"] >= 2 and d["n"] >= 2 and spread:
        within = abs(d["mean"] - n["mean"]) <= 2 * n["std"] + 1e-12
        overlap = d["min"] <= n["max"] and n["min"] <= d["max"]
        return "yes" if within or overlap else "**no**"
    diff = abs(d["mean"] - n["mean"])
    ok = diff <= REL_TOL * abs(n["mean"]) + 1e-12 or diff <= SLACK.get(key, 0.0) + 1e-12
    return "yes" if ok else "**no**"


def rel(n: dict | None, d: dict | None) -> str:
    if not n or not d:
        return ""
    if n["mean"] == 0:
        return "" if d["mean"] == 0 else "n/a"
    return f"{(d['mean'] - n['mean']) / abs(n['mean']) * 100:+.1f} %"


def table(ns3: dict, dcf: dict) -> str:
    na, da = ns3.get("aggregate", {}), dcf.get("aggregate", {})
    pending = {p["case"]: p for p in dcf.get("pending", [])}
    lines = ["| case | metric | ns-3 | dcfair | dcfair - ns-3 | agree |",
             "|---|---|---|---|---|---|"]
    for c in C.CASES:
        if c.name not in na and c.name not in da and c.name not in pending:
            continue
        first = True
        for key in c.metrics:
            label, fmt, _ = M.METRICS[key]
            n = na.get(c.name, {}).get(key)
            if c.name in pending:
                msg = pending[c.name]["error"].replace("simrun: ", "").replace("invalid scenario: ", "")
                msg = msg.split(", expected")[0].replace("|", "\\|").replace("`", "'")
                d_cell = f"pending: `{msg}`" if first else "pending"
                d = None
            else:
                d = da.get(c.name, {}).get(key)
                d_cell = cell(d, fmt)
            name = f"**{c.name}**: {c.title}" if first else ""
            lines.append(f"| {name} | {label} | {cell(n, fmt)} | {d_cell} | {rel(n, d)} | "
                         f"{agree(key, n, d)} |")
            first = False
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ns3", default=os.path.join(common.RESULTS, "ns3_dumbbell_ns3.json"))
    ap.add_argument("--dcfair", default=os.path.join(common.RESULTS, "ns3_dumbbell_dcfair.json"))
    ap.add_argument("--doc", help="also write the table into this markdown file, between the markers")
    a = ap.parse_args(argv)
    with open(a.ns3) as fh:
        ns3 = json.load(fh)
    with open(a.dcfair) as fh:
        dcf = json.load(fh)
    t = table(ns3, dcf)
    print(t)
    if a.doc:
        v = ns3.get("versions", {})
        note = (f"ns-3 {v.get('ns3', '?')} (Debian), dcfair at {(dcf.get('git_commit') or '?')[:7]}. "
                "Each cell: mean ± sample std [min, max] (n) over seeds, or over the loss epochs "
                "of all seeds for the epoch metrics; a lone number is one deterministic run. "
                "Agree: both with n >= 2 and ns-3 with some spread, dcfair's mean within ns-3's mean "
                "± 2 std or the ranges overlapping; otherwise within 5 % of ns-3 or the metric's "
                "absolute slack (1 for counts, 0.005 for fractions, 0.5 packet). "
                "Made by `python3 validation/ns3/compare.py --doc docs/validation.md`.")
        if docsection.write(a.doc, "ns3", t + "\n\n" + note, "compare.py"):
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
