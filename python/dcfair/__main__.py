"""`python -m dcfair` is the `dcfair` command."""

import sys

try:
    from dcfair.cli import main

    code = main()
except KeyboardInterrupt:  # Ctrl-C while the command is still importing its modules
    print("dcfair: interrupted", file=sys.stderr, flush=True)
    code = 130
raise SystemExit(code)
