#!/usr/bin/env python3
"""Cache misses per event of the engine's hot path, counted, not timed: where the cost grows.

    python bench/misses.py [--ks 8,32] [--scenario scenarios/scale/permutation.toml]
                           [--short 0.001] [--long 0.002] [--l2-kib N] [--top 8]
                           [--simrun target/release/examples/simrun]

For each ``k``, ``simrun`` runs the scenario (``topology.k=K`` set on the command line) twice
under valgrind's cachegrind with its cache model on: once for ``--short`` and once for
``--long`` simulated seconds. Cachegrind models a first-level data cache and one last level;
the last level is given the size of this machine's *second*-level cache (``--l2-kib``, read
from ``/sys`` by default), so its misses are the loads and stores that leave a core's private
caches. The difference of the two runs is the hot path alone (building and routing cancel
out), divided by the events the engine popped in between (``simrun``'s own count).

Printed per ``k``: instructions, first-level misses and second-level misses per event, then the
functions with the most second-level misses per event. The counts do not depend on the
machine's load (a run on a shared machine times the same build 30 % apart from one run to the
next), so they compare sizes and builds exactly. They count the program's own loads and
stores: the processor's prefetchers and the engine's prefetch hints (``hint.rs``) are not
modelled, so a miss counted here may be one the hints hide. Needs ``valgrind``
(``make bench-deps``).
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "bench/ns2"))
from instructions import cachegrind  # noqa: E402
from time_ns2 import caches  # noqa: E402

SCENARIO = REPO / "scenarios" / "scale" / "permutation.toml"
SIMRUN = REPO / "target" / "release" / "examples" / "simrun"


def l2_kib() -> int:
    """This machine's second-level cache per core, KiB (``time_ns2.caches``; 1024 if unknown)."""
    m = re.search(r"\bL2 (\d+)K\b", caches() or "")
    return int(m.group(1)) if m else 1024


def counted_run(simrun: str, scenario: Path, k: int, seconds: float, l2: int, tmp: Path) -> tuple[int, list[str], dict]:
    """One run under cachegrind: (events popped, event names, {function: counts})."""
    out = tmp / f"cg_{k}_{seconds:g}.out"
    m = cachegrind(["--cache-sim=yes", "--I1=32768,8,64", "--D1=49152,12,64", f"--LL={l2 * 1024},16,64",
                    f"--cachegrind-out-file={out}"],
                   [simrun, str(scenario), f"topology.k={k}", f"sim.duration_s={seconds:g}", "--out", str(tmp / "run")],
                   r"simrun: (\d+) events")
    names: list[str] = []
    per_fn: dict[str, list[int]] = collections.defaultdict(lambda: [0] * len(names))
    fn = None
    for line in out.read_text().splitlines():
        if line.startswith("events:"):
            names = line.split()[1:]
        elif line.startswith("fn="):
            fn = line[3:].strip()
        elif fn and line[:1].isdigit():
            row = per_fn[fn]
            for i, v in enumerate(line.split()[1:]):
                row[i] += int(v)
    return int(m.group(1)), names, dict(per_fn)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ks", default="8,32", help="fat-tree sizes, comma-separated (default 8,32)")
    ap.add_argument("--scenario", type=Path, default=SCENARIO)
    ap.add_argument("--short", type=float, default=0.001, help="simulated seconds of the short run (default 0.001)")
    ap.add_argument("--long", type=float, default=0.002, help="simulated seconds of the long run (default 0.002)")
    ap.add_argument("--l2-kib", type=int, default=None, help="modelled last level, KiB (default: this machine's L2)")
    ap.add_argument("--top", type=int, default=8, help="functions listed per k (default 8)")
    ap.add_argument("--simrun", default=str(SIMRUN))
    a = ap.parse_args(argv)
    if not 0 < a.short < a.long:
        sys.exit(f"--short ({a.short}) must be above 0 and below --long ({a.long})")
    try:
        ks = [int(k) for k in a.ks.split(",") if k.strip()]
    except ValueError:
        sys.exit(f"--ks: '{a.ks}' is not a comma-separated list of whole numbers")
    if shutil.which("valgrind") is None:
        sys.exit("valgrind not found: `make bench-deps` (Debian package valgrind)")
    if not Path(a.simrun).exists():
        sys.exit(f"{a.simrun} not found: cargo build --release -p dcfair-sim --example simrun")
    l2 = a.l2_kib or l2_kib()
    print(f"{a.scenario.name}, {a.short:g} s to {a.long:g} s simulated; first level 48 KiB, last level {l2} KiB (modelled)")
    print("| k | events | instructions per event | first-level misses per event | second-level misses per event |")
    print("|---|---|---|---|---|")
    details = []
    with tempfile.TemporaryDirectory(prefix="dcfair-misses-") as tmp:
        for k in ks:
            ev_s, names, short = counted_run(a.simrun, a.scenario, k, a.short, l2, Path(tmp))
            ev_l, _, long = counted_run(a.simrun, a.scenario, k, a.long, l2, Path(tmp))
            events = ev_l - ev_s
            if events <= 0:
                sys.exit(f"k = {k}: the long run popped no more events than the short one")
            col = {n: i for i, n in enumerate(names)}
            hot = {f: [b - s for b, s in zip(v, short.get(f, [0] * len(v)))] for f, v in long.items()}
            total = [sum(v[i] for v in hot.values()) for i in range(len(names))]
            l1 = total[col["D1mr"]] + total[col["D1mw"]]
            ll = total[col["DLmr"]] + total[col["DLmw"]]
            print(f"| {k} | {events:,} | {total[col['Ir']] / events:.0f} | {l1 / events:.2f} | {ll / events:.2f} |", flush=True)
            by_fn = sorted(hot.items(), key=lambda kv: -(kv[1][col["DLmr"]] + kv[1][col["DLmw"]]))
            details.append((k, [(f, (v[col["DLmr"]] + v[col["DLmw"]]) / events) for f, v in by_fn[: a.top]]))
    for k, rows in details:
        print(f"\nk = {k}: second-level misses per event by function")
        for f, per in rows:
            print(f"  {per:6.2f}  {f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
