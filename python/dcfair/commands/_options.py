"""Options shared by several commands, checked by argparse (bad syntax exits 2 with usage)."""

from __future__ import annotations

import argparse

from dcfair.overrides import split_assignment


def assignment(item: str):
    try:
        return split_assignment(item)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def seed(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"must be in [0, 2^64), got {text}")
    return value


def megabytes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of mebibytes, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of mebibytes, got {text}")
    return value


def add_scenario(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (TOML)")


def add_set(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--set",
        dest="overrides",
        metavar="KEY=VALUE",
        type=assignment,
        action="append",
        default=[],
        help="override a scenario key by its dotted path, e.g. queue.kind=hcf or "
        "sim.duration_s=20 (repeatable; values are TOML literals, bare words are strings)",
    )


def command_line() -> str:
    """This process's command line as a user would type it again (``dcfair run ...``): what
    the results record as the command that made them."""
    import shlex
    import sys

    return shlex.join(["dcfair", *sys.argv[1:]])
