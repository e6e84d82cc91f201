"""`dcfair validate SCENARIO [--set KEY=VALUE ...]`: check a scenario without running it."""

from __future__ import annotations

import argparse

from dcfair.commands import _options

HELP = "check a scenario (and overrides) without running it"


def add_parser(sub) -> None:
    p = sub.add_parser("validate", help=HELP, description=HELP + "; prints 'ok: NAME (...)' or exits 2.")
    _options.add_scenario(p)
    _options.add_set(p)
    p.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    from dcfair import api
    from dcfair.display import format_value

    info = api.load_scenario(args.scenario, overrides=args.overrides, build=True)
    print(f"ok: {info['name']} (duration {format_value(float(info['duration_s']))} s, seed {info['seed']})")
    return 0
