"""`dcfair sweep SCENARIO --vary KEY=V1,V2,... [--vary ...] [--seeds N] [--jobs N] [--ray ADDRESS]
[--out DIR] [--set KEY=VALUE ...] [--quiet]`."""

from __future__ import annotations

import argparse
import sys

from dcfair.commands import _options

HELP = "run a scenario over the product of varied keys and seeds; write sweep.parquet and sweep.csv"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "sweep",
        help=HELP,
        description=HELP + ". Every point is validated before any runs; finished points are kept "
        "under OUT/runs and skipped when the same sweep runs again, so a killed sweep resumes.",
    )
    _options.add_scenario(p)
    p.add_argument(
        "--vary",
        metavar="KEY=V1,V2,...",
        action="append",
        default=[],
        help="a scenario key (dotted path) and its values; repeatable: the sweep is the product "
        "(values are TOML literals, bare words are strings)",
    )
    p.add_argument("--seeds", metavar="N", type=int, default=1, help="seeds 1..N for every point (default 1)")
    p.add_argument("--jobs", metavar="N", type=int, help="parallel runs (default: all local cores; with --ray, "
                   "the points in flight on a cluster)")
    p.add_argument("--ray", metavar="ADDRESS", help="run on a Ray cluster: its address (e.g. auto, "
                   "ray://head:10001), or 'local' for a private Ray instance on this machine")
    p.add_argument("--out", metavar="DIR", help="output directory (default: out/<scenario name>-sweep)")
    _options.add_set(p)
    p.add_argument("--quiet", "-q", action="store_true", help="no progress line and no table")
    p.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    from dcfair import display
    from dcfair import sweeps as sw
    from dcfair.api import InvalidInput, as_scenario

    if not args.vary:
        raise InvalidInput("--vary", "give at least one --vary KEY=V1,V2,... (e.g. --vary queue.kind=droptail,hcf)")
    vary = sw.parse_vary(args.vary)
    if args.seeds < 1:
        raise InvalidInput("--seeds", f"must be at least 1, got {args.seeds}")
    if args.jobs is not None and args.jobs < 1:
        raise InvalidInput("--jobs", f"must be at least 1, got {args.jobs}")
    if args.ray is not None and not args.ray.strip():
        raise InvalidInput("--ray", "empty address (use 'local', 'auto' or host:port)")
    sc = as_scenario(args.scenario, args.overrides)
    progress = None if display.live_progress_wanted(args.quiet) else False
    try:
        df = sw.sweep(sc, vary, args.seeds, jobs=args.jobs, ray=args.ray, out=args.out, progress=progress,
                      meta={"command": _options.command_line()})
        failed = None
    except RuntimeError as e:
        if not hasattr(e, "table"):
            raise
        df, failed = e.table, e  # type: ignore[attr-defined]
    out = df.attrs.get("dir") or args.out
    keys = [k for k, _ in vary]
    if not args.quiet and not df.empty:
        header, rows = sw.summarize(df, keys)
        name = df.attrs.get("name", "sweep")
        display.print_table(
            f"{name}: mean ± std over {args.seeds} seed(s)",
            header,
            rows,
            footer=f"{out}/sweep.parquet, {out}/sweep.csv; `dcfair report {out}` draws them",
        )
    tally = df.attrs.get("tally")
    if tally is not None and not args.quiet:
        print(tally.line())
    if failed is not None:
        print(f"dcfair: {failed}", file=sys.stderr)
        return 1
    return 0
