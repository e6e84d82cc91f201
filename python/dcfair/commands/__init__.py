"""One module per `dcfair` subcommand: ``add_parser(subparsers)`` and ``main(args) -> int``.

Modules here import the extension lazily (inside ``main``), so ``dcfair --help`` works without it.
"""
