"""`dcfair kinds`: the queue disciplines this engine knows, one per line with its summary."""

from __future__ import annotations

import argparse

HELP = "list the queue disciplines (queue.kind values), one per line with a one-line summary"


def add_parser(sub) -> None:
    p = sub.add_parser("kinds", help=HELP, description=HELP + "; the list comes from the engine's registry.")
    p.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    from dcfair import api

    kinds = api.queue_kind_summaries()
    width = max(len(name) for name, _ in kinds)
    for name, summary in kinds:
        print(f"{name:<{width}}  {summary}")
    return 0
