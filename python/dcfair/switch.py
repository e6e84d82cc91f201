"""``python -m dcfair.switch --config switch.toml --stats stats.json [--seed N]``: the real-packet
switch of ``dcfair testbed`` (``crates/switch``), run from the Python extension, so that an
installed wheel has it without a separate binary. The arguments, the exit statuses and the
``ready`` line are ``dcfair-switch``'s (``docs/testbed.md``, "Switch")."""

from __future__ import annotations

import sys


def main() -> None:
    from dcfair import _engine

    if not hasattr(_engine, "switch_main"):
        print("dcfair.switch: the real-packet switch needs Linux", file=sys.stderr)
        raise SystemExit(1)
    _engine.switch_main(["dcfair-switch"] + sys.argv[1:])


if __name__ == "__main__":
    main()
