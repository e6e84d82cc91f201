"""`dcfair run SCENARIO [--out DIR] [--seed N] [--set KEY=VALUE ...] [--quiet]`."""

from __future__ import annotations

import argparse
import os

from dcfair.commands import _options

HELP = "run one scenario; write summary.json, flows.csv and ports.csv"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "run",
        help=HELP,
        description=HELP + ". Results are written only after the run succeeds, so a failed or "
        "interrupted run never touches earlier results.",
    )
    _options.add_scenario(p)
    p.add_argument("--out", metavar="DIR", help="output directory (default: out/<scenario name>)")
    p.add_argument("--seed", metavar="N", type=_options.seed, help="replace the scenario's seed")
    _options.add_set(p)
    p.add_argument("--quiet", "-q", action="store_true", help="no progress line and no summary table")
    p.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    from dcfair import api, display
    from dcfair.outdir import check_out_dir, estimate_bytes

    text = api.read_scenario(args.scenario)
    # Built as the run will build it: its errors come first, and the size of its results.
    info = api.load_scenario(text=text, origin=args.scenario, overrides=args.overrides, build=True)
    out = args.out if args.out else os.path.join("out", info["name"])
    check_out_dir(out, "--out", estimate_bytes(info))
    progress = display.ProgressLine(info["name"]) if display.live_progress_wanted(args.quiet) else None
    try:
        summary = api.run(
            text=text, origin=args.scenario, overrides=args.overrides, seed=args.seed, out=out, progress=progress,
            command=_options.command_line(),
        )
    finally:
        if progress is not None:
            progress.close()
    if not args.quiet:
        display.print_summary(summary, out)
        display.print_jobs(summary, out)
    warn_truncated_trace(summary)
    warn_deadlock(summary)
    return 0


def warn_deadlock(summary) -> None:
    """A PFC deadlock ended the run early: say where and when on stderr (even with --quiet)."""
    import sys

    d = summary.get("pfc_deadlock")
    if d:
        print(
            f"dcfair: PFC deadlock at {d['at_s']:.6f} s: the lossless class of ports {' -> '.join(d['ports'])} "
            f"is paused in a cycle with packets waiting; the run stopped there (summary.json: pfc_deadlock)",
            file=sys.stderr,
        )


def warn_truncated_trace(summary) -> None:
    """A trace that hit ``measure.trace.max_rows`` is incomplete: say so on stderr (even with
    --quiet), with what to change."""
    import sys

    trace = summary.get("trace") or {}
    if trace.get("truncated_at_s") is not None:
        print(
            f"dcfair: warning: trace.csv stopped at {trace['truncated_at_s']} s after {trace['rows']} rows "
            f"(measure.trace.max_rows); narrow measure.trace.start_s/end_s or raise max_rows",
            file=sys.stderr,
        )
