"""The docs' tables of testbed measurements (``outcast.py``, ``fairq_fabric.py``, ``capacity.py``).

Rules:

- A cell is the mean ± sample standard deviation (number of runs) of the runs' values, the one
  value if there is one, ``-`` if none (``None`` values are left out).
- A comparison table has a row per (variant, metric) with a column per source, then a row
  counting the testbed runs whose switch ports carried packets exactly as in the simulation,
  with none off the simulated paths.
- A table is written into its file between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->``;
  a file without both markers stops the script, naming them.
- A results file says how it was made (:func:`provenance`): the command, with the testbed
  switches' environment settings in front of it (``DCFAIR_FABRIC_INPUT_LINE``,
  ``DCFAIR_FABRIC_PROCESS``), the kernel and the commit.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

REPO = Path(__file__).resolve().parents[3]
#: Environment settings that change what a testbed run measures.
ENV = ("DCFAIR_FABRIC_INPUT_LINE", "DCFAIR_FABRIC_PROCESS")


def run_conditions(testbed: Dict[str, Any]) -> Dict[str, Any]:
    """What a testbed run's numbers depend on beyond its command, from its ``summary.json``'s
    ``testbed`` table: the input lines (on, bound, mean wait) and the machine's 1-minute load."""
    r = {k: testbed.get(k) for k in ("input_line", "input_max_wait_us", "input_wait_mean_us")}
    r["load_1m"] = round(os.getloadavg()[0], 2)
    return r


def provenance(module: str, argv: Optional[Sequence[str]]) -> Dict[str, Any]:
    """``made_by`` (the command of ``python -m MODULE``), ``kernel`` and ``git`` of a results file."""
    env = "".join(f"{k}={os.environ[k]} " for k in ENV if k in os.environ)
    args = " ".join(argv if argv is not None else sys.argv[1:])
    return {"made_by": f"sudo {env}python -m {module} {args}".rstrip(), "kernel": os.uname().release,
            "git": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                  cwd=REPO).stdout.strip()}


def cell(vals: List[Optional[float]]) -> str:
    v = [x for x in vals if x is not None]
    if not v:
        return "-"
    if len(v) == 1:
        return f"{v[0]:.3g}"
    return f"{statistics.fmean(v):.3g} ± {statistics.stdev(v):.2g} ({len(v)})"


def comparison(res: Dict[str, Dict[str, List[Dict]]], first: str, columns: Sequence[str], sources: Sequence[str],
               keys: Sequence[str]) -> str:
    """``res[variant][source]``: the runs' records; ``columns``: the sources' headings."""
    lines = [f"| {first} | metric | " + " | ".join(columns) + " |", "|---" * (len(columns) + 2) + "|"]
    for v, by in res.items():
        for k in keys:
            lines.append(f"| {v} | {k} | " + " | ".join(cell([r.get(k) for r in by.get(s, [])]) for s in sources) + " |")
        tb = by.get("testbed", [])
        same = sum(1 for r in tb if r.get("links_same") and not r.get("links_off_paths"))
        lines.append(f"| {v} | switch ports carrying packets as in the simulation, none off the simulated paths | "
                     f"{same} of {len(tb)} runs | " + " | ".join("-" for _ in columns[1:]) + " |")
    return "\n".join(lines)


def write_section(doc: Path, name: str, text: str) -> int:
    body = doc.read_text()
    b, e = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    if b not in body or e not in body:
        raise SystemExit(f"{doc}: no {b} ... {e} markers")
    head, rest = body.split(b, 1)
    doc.write_text(head + b + "\n" + text + "\n" + e + rest.split(e, 1)[1])
    return 0
