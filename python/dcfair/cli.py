"""The `dcfair` command (see docs/cli.md).

Each subcommand is a module in ``dcfair.commands`` with ``add_parser(subparsers)`` and a handler
``main(args) -> int``, listed in ``COMMANDS``; a new command (sweep, reproduce, report) is a new
module and one line here. This file owns what all commands share: the exit status and the one
line printed for an error.

Exit status: 0 success; 2 invalid input (argparse usage errors too), printed as
``dcfair: invalid input: KEY: REASON`` with no traceback; 1 any other failure, one short
line (set ``DCFAIR_TRACEBACK=1`` to see the traceback); 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from importlib import import_module
from typing import List, Optional

import dcfair
from dcfair.commands import _options

#: subcommand name -> module in dcfair.commands, in the order `--help` lists them.
COMMANDS = {
    "run": "dcfair.commands.run",
    "sweep": "dcfair.commands.sweep",
    "report": "dcfair.commands.report",
    "validate": "dcfair.commands.validate",
    "kinds": "dcfair.commands.kinds",
    "reproduce": "dcfair.commands.reproduce",
    "testbed": "dcfair.commands.testbed",
}

EXIT_OK, EXIT_ERROR, EXIT_INVALID, EXIT_INTERRUPTED = 0, 1, 2, 130


def _version() -> str:
    try:
        from dcfair._engine import version

        engine = version()
    except ImportError:
        engine = "not built"
    return f"dcfair {dcfair.__version__} (engine {engine})"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dcfair",
        description="dcfair: a lab for fairness in data-center switches (packet-level simulator).",
        epilog="Exit status: 0 ok, 2 invalid input, 1 internal error. See docs/cli.md.",
    )
    parser.add_argument("--version", action="version", version=_version())
    parser.add_argument("--max-memory", metavar="MB", type=_options.megabytes,
                        help="refuse (exit 2) a scenario whose estimated memory exceeds MB mebibytes (default: the "
                        "memory this machine has available)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMANDS.values():
        import_module(module).add_parser(sub)
    return parser


def _say(msg: str) -> None:
    print(f"dcfair: {msg}", file=sys.stderr, flush=True)


def report_error(e: BaseException) -> int:
    """One line on stderr for an error; returns the exit status."""
    if isinstance(e, KeyboardInterrupt):
        _say("interrupted")
        return EXIT_INTERRUPTED
    if isinstance(e, ModuleNotFoundError) and (e.name or "").startswith("dcfair._engine"):
        _say("the engine extension dcfair._engine is not built; run `make install` (or `pip install -e .`)")
        return EXIT_ERROR
    from dcfair.errors import InvalidInput  # the engine's class, or its stand-in without the extension

    if isinstance(e, InvalidInput):
        _say(f"invalid input: {e}")
        return EXIT_INVALID
    if isinstance(e, OSError):
        _say(f"error: {e}")
    elif isinstance(e, RuntimeError):
        _say(f"internal error: {e}")
    else:
        _say(f"internal error: {type(e).__name__}: {e}")
    if os.environ.get("DCFAIR_TRACEBACK"):
        traceback.print_exception(type(e), e, e.__traceback__)
    return EXIT_ERROR


def main(argv: Optional[List[str]] = None) -> int:
    try:
        parser = build_parser()  # imports every command's module: Ctrl-C may come here too
        args = parser.parse_args(argv)  # usage errors exit 2 here
        if args.max_memory is not None:  # read by the engine, here and in every worker
            os.environ["DCFAIR_MAX_MEMORY_MB"] = repr(args.max_memory)
        return int(args.handler(args) or EXIT_OK)
    except BrokenPipeError:
        # stdout closed early (`dcfair run ... | head`): not an error of ours, and say nothing.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_ERROR
    except (Exception, KeyboardInterrupt) as e:
        return report_error(e)


if __name__ == "__main__":
    raise SystemExit(main())
