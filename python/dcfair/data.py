"""Where the data that ships with dcfair lives, in a checkout and in an installed wheel alike.

- ``SCENARIOS``: the scenario files (``papers/<paper>/*.toml``, the reproductions' settings) and
  the workload size distributions (``workloads/``, from ``shared/data/workloads``). They are part
  of the package (``python/dcfair/scenarios``; the checkout's top-level ``scenarios`` is a link
  to it), so ``dcfair reproduce`` and ``python -m dcfair.demo`` run from any directory.
"""

from __future__ import annotations

from pathlib import Path

SCENARIOS = Path(__file__).resolve().parent / "scenarios"
PAPERS = SCENARIOS / "papers"
WORKLOADS = SCENARIOS / "workloads"
