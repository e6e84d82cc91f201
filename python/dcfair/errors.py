"""The error every layer raises for bad input: :class:`InvalidInput`.

Rules:

- ``InvalidInput`` is a ``ValueError`` with ``.key`` (the scenario key, option or file at fault)
  and ``.reason``. It is the engine's own class (``dcfair._engine.InvalidInput``), so an error
  raised in Rust and one raised in Python are caught alike; the command line exits 2 on it.
- This module sits below everything else in the package and imports nothing of it but the
  engine. Without the extension (a source tree never built) it defines a stand-in of the same
  shape, so the parts that need no engine (the testbed's mapping, ``dcfair --help``) still
  raise and catch one class.
- The public spellings stay where users find them: ``dcfair.InvalidInput`` and
  ``dcfair.api.InvalidInput`` are this class.
"""

from __future__ import annotations

__all__ = ["InvalidInput"]

try:
    from dcfair._engine import InvalidInput
except ImportError:  # pragma: no cover - only without the extension

    class InvalidInput(ValueError):  # type: ignore[no-redef]
        def __init__(self, key: str, reason: str):
            super().__init__(f"{key}: {reason}")
            self.key, self.reason = key, reason
