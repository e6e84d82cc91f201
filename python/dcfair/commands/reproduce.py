"""`dcfair reproduce NAME [--quick] [--out DIR] [--jobs N]` and `dcfair reproduce --list`."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

HELP = "reproduce a paper's figure: runs, figure.png and claims.json (paper vs dcfair)"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "reproduce",
        help=HELP,
        description=HELP + ". Finished runs are kept under OUT/runs and skipped when the same "
        "reproduction runs again, so an interrupted reproduction resumes where it stopped.",
    )
    p.add_argument("name", metavar="NAME", nargs="?", help="a name from --list, or 'all'")
    p.add_argument("--list", action="store_true", help="list the reproductions and exit")
    p.add_argument("--quick", action="store_true", help="the small form: shorter runs, fewer points and seeds")
    p.add_argument("--out", metavar="DIR", help="output directory (default: out/reproduce/NAME[-quick])")
    p.add_argument("--jobs", metavar="N", type=int, help="parallel runs (default: all cores)")
    p.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    from dcfair import display, reproduce
    from dcfair.api import InvalidInput

    reps = reproduce.load_all()
    if args.list or not args.name:
        rows = [[r.name, r.paper, r.figure, r.title] for r in reps.values()]
        display.print_table("reproductions", ["name", "paper", "figure", "what"], rows)
        return 0
    names = list(reps) if args.name == "all" else [args.name]
    for n in names:
        if n not in reps:
            raise InvalidInput("NAME", f"no reproduction named {n!r}; `dcfair reproduce --list` lists them")
    if args.jobs is not None and args.jobs < 1:
        raise InvalidInput("--jobs", f"must be at least 1, got {args.jobs}")
    worst = 0
    for n in names:
        out = Path(args.out) / n if (args.out and len(names) > 1) else Path(args.out or os.path.join("out", "reproduce", n + ("-quick" if args.quick else "")))
        doc = reproduce.run(n, out, quick=args.quick, jobs=args.jobs)
        rows = []
        for c in doc["claims"]:
            d = c["dcfair"]
            val = "-" if d["mean"] is None else f"{d['mean']:.4g} +- {d['std']:.2g} (n={d['n']})"
            rows.append([c["id"], c["claim"], c["paper_value"], val, "yes" if c["holds"] else "NO"])
        title = f"{n}: {doc['title']} ({doc['paper']}, {doc['figure']}{', quick' if args.quick else ''})"
        display.print_table(title, ["claim", "statement", "paper", "dcfair", "holds"], rows)
        print(f"wrote {out}/figure.png, {out}/claims.json, {out}/results.csv")
    return worst
