#!/usr/bin/env python3
"""Per-packet instructions of two engine builds: an exact, noise-free A/B of the hot path.

    python bench/instructions.py SIMRUN_A SIMRUN_B [--scenario FILE] [--set KEY=VALUE ...]
                                 [--short 30] [--long 60]

Each build's ``simrun`` (``target/release/examples/simrun``, or a copy of an older build's) runs
the scenario twice under valgrind's cachegrind (``--cache-sim=no``: instructions only), once for
``--short`` and once for ``--long`` simulated seconds. The difference of the two instruction
counts (``Ir``) is the cost of the extra simulated time alone: loading, building and routing
cancel out, so it is the per-packet (hot-path) cost. The ratio B / A of those differences says
whether B does more work per packet (above 1) or less.

Instruction counts do not vary from run to run and do not depend on the machine's load, so one
run per build suffices where ``bench/ab.py``'s timings on a shared machine spread by several per
cent; they do not see cache misses or how fast the instructions run, so a change to memory
layout is judged by ``bench/ab.py`` (or ``bench/scale.py``) instead. Needs ``valgrind`` (Debian
package ``valgrind``; ``make bench-deps`` installs it). The default scenario is the HCF paper's
long-flow dumbbell (``scenarios/papers/hcf/longflows.toml``), DropTail as written.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCENARIO = REPO / "scenarios" / "papers" / "hcf" / "longflows.toml"


def cachegrind(options: list[str], cmd: list[str], find: str) -> re.Match:
    """Runs ``cmd`` under valgrind's cachegrind with ``options``; the match of the pattern
    ``find`` in what it printed on stderr (its summary, ``simrun``'s event count). Exits with
    the command's output when it fails or ``find`` is not there."""
    full = ["valgrind", "--tool=cachegrind", *options, *cmd]
    p = subprocess.run(full, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(full)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    m = re.search(find, p.stderr)
    if not m:
        sys.exit(f"no '{find}' in the output of {' '.join(full)}")
    return m


def instructions(simrun: str, scenario: Path, sets: list[str], seconds: float) -> int:
    """Instructions (``Ir``) of one ``simrun`` run under cachegrind."""
    with tempfile.TemporaryDirectory(prefix="dcfair-ir-") as tmp:
        m = cachegrind(["--cache-sim=no", f"--cachegrind-out-file={tmp}/cg.out"],
                       [simrun, str(scenario), *sets, f"sim.duration_s={seconds:g}", "--out", f"{tmp}/out"],
                       r"I\s+refs:\s+([\d,]+)")
        return int(m.group(1).replace(",", ""))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("simrun_a")
    ap.add_argument("simrun_b")
    ap.add_argument("--scenario", type=Path, default=SCENARIO)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="scenario overrides, both builds")
    ap.add_argument("--short", type=float, default=30.0, help="simulated seconds of the short run (default 30)")
    ap.add_argument("--long", type=float, default=60.0, help="simulated seconds of the long run (default 60)")
    a = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        sys.exit("valgrind not found: `make bench-deps` (Debian package valgrind)")
    if not 0 < a.short < a.long:
        sys.exit(f"--short ({a.short}) must be above 0 and below --long ({a.long})")
    hot = {}
    for name, sim in (("A", a.simrun_a), ("B", a.simrun_b)):
        short = instructions(sim, a.scenario, a.set, a.short)
        long = instructions(sim, a.scenario, a.set, a.long)
        hot[name] = long - short
        print(f"{name} {sim}: {short:,} Ir at {a.short:g} s, {long:,} Ir at {a.long:g} s; "
              f"hot path {hot[name]:,} Ir per {a.long - a.short:g} simulated s", flush=True)
    print(f"hot-path instructions B/A: {hot['B'] / hot['A']:.4f} ({a.scenario.name}{' ' if a.set else ''}{' '.join(a.set)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
