"""`dcfair report DIR [--out FILE]`: one self-contained report.html for a run, a sweep, a
reproduction or a demo directory."""

from __future__ import annotations

import argparse

HELP = "write DIR/report.html: tables and figures of a run, sweep, reproduction or demo directory"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "report",
        help=HELP,
        description=HELP + ". The page is self-contained (figures inlined, no scripts, no network) "
        "and opens offline in any browser.",
    )
    p.add_argument("dir", metavar="DIR", help="a directory written by dcfair run, sweep, reproduce or make demo")
    p.add_argument("--out", metavar="FILE", help="where to write the page (default: DIR/report.html)")
    p.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    from dcfair.reports import write_report

    path = write_report(args.dir, out=args.out)
    print(f"wrote {path}")
    return 0
