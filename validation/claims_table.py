#!/usr/bin/env python3
"""Claims tables for the docs, from the reproductions' claims.json files.

    python validation/claims_table.py DOC.md DIR [DIR ...]

Each DIR is the output directory of ``dcfair reproduce NAME`` (it holds claims.json). The table
(one row per claim: reproduction, claim, paper's value, dcfair's mean +- std [min, max] over
seeds, holds or not, and the criterion) replaces the part of DOC.md between
``<!-- claims:begin -->`` and ``<!-- claims:end -->``, with the command that made it.
Reproductions that also write a side-by-side table (``"table"`` in claims.json: e.g. every
discipline on the paper's scenarios) get it rendered between ``<!-- tables:begin -->`` and
``<!-- tables:end -->`` when DOC.md has those markers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import docsection



def fmt(x):
    if x is None:
        return "-"
    a = abs(x)
    if a != 0 and (a >= 1e4 or a < 1e-2):
        return f"{x:.3g}"
    return f"{x:.3f}".rstrip("0").rstrip(".") if "." in f"{x:.3f}" else f"{x}"


def table(dirs):
    rows = ["| reproduction | claim | paper | dcfair (mean +- std [min, max], n) | holds | criterion |", "|---|---|---|---|---|---|"]
    held = total = 0
    for d in dirs:
        doc = json.loads((Path(d) / "claims.json").read_text())
        for c in doc["claims"]:
            s = c["dcfair"]
            val = f"{fmt(s['mean'])} +- {fmt(s['std'])} [{fmt(s['min'])}, {fmt(s['max'])}], n={s['n']}"
            rows.append(f"| {doc['reproduction']} ({doc['figure']}{', quick' if doc['quick'] else ''}) | {c['claim']} | "
                        f"{c['paper_value']} | {val} {c['unit']} | {'yes' if c['holds'] else '**no**'} | {c['criterion']} |")
            held += bool(c["holds"])
            total += 1
    rows.append("")
    rows.append(f"{held} of {total} claims hold.")
    return "\n".join(rows)


def side_tables(dirs):
    out = []
    for d in dirs:
        doc = json.loads((Path(d) / "claims.json").read_text())
        rows = doc.get("table")
        if not rows:
            continue
        cols = list(rows[0])
        out.append(f"**{doc['reproduction']}** ({doc['figure']}{', quick' if doc['quick'] else ''}): {doc['title']}\n")
        out.append("| " + " | ".join(cols) + " |")
        out.append("|" + "---|" * len(cols))
        for r in rows:
            out.append("| " + " | ".join(fmt(r.get(c)) if isinstance(r.get(c), float) else str(r.get(c)) for c in cols) + " |")
        out.append("")
    return "\n".join(out)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    doc_path, dirs = Path(argv[0]), argv[1:]
    t = table(dirs)
    cmd = "python validation/claims_table.py " + " ".join(argv)
    try:
        docsection.replace(doc_path, "claims", t + "\n\nMade by `" + cmd + "`.")
        side = side_tables(dirs)
        if side and "<!-- tables:begin -->" in doc_path.read_text():
            docsection.replace(doc_path, "tables", side + "\nMade by `" + cmd + "`.")
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    print(t)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
