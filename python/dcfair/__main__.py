"""`python -m dcfair` is the `dcfair` command."""

from dcfair.cli import main

raise SystemExit(main())
