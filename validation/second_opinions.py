#!/usr/bin/env python3
"""Every second opinion: each peer runs every reproduction it has a runner for, in full.

    python validation/second_opinions.py [--peers ns2,ns3,...] [--jobs N] [--root out/reproduce]

``make second-opinions`` runs this after ``make claims`` (the reproductions in dcfair) and
before ``validation/claims_table.py`` (which folds the opinions into docs/claims.md and the
mechanism pages).

Rules:
- A peer runs with ``dcfair reproduce all --peer PEER`` (its runs cached under
  ``ROOT/runs@PEER``, so a second call reruns only what changed).
- A peer that is not installed is skipped with one line saying what is missing and the command
  that installs it; the run goes on with the others and exits 0, and the claims it would have
  checked say "not run yet" in docs/claims.md.
- A peer whose runs fail makes the script exit 1 after the others have run.
- ``validation/results/second_opinions.json`` records, per peer, whether it ran, its wall time
  and the reproductions it covers, with the engine build and the command.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))
RESULTS = REPO / "validation" / "results" / "second_opinions.json"


def main(argv=None) -> int:
    from dcfair import peers

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peers", help="comma-separated peers (default: every peer)")
    ap.add_argument("--jobs", type=int, help="parallel runs per peer (default: every core)")
    ap.add_argument("--root", type=Path, default=REPO / "out" / "reproduce")
    args = ap.parse_args(argv)
    registry = peers.load_all()
    names = args.peers.split(",") if args.peers else sorted(registry)
    unknown = [n for n in names if n not in registry]
    if unknown:
        print(f"second_opinions: no peer named {', '.join(unknown)}; the peers are {', '.join(sorted(registry))}",
              file=sys.stderr)
        return 2
    record = {"command": " ".join(["python", "validation/second_opinions.py", *(argv or sys.argv[1:])]), "peers": {}}
    failed = []
    t_all = time.monotonic()
    for name in names:
        p = registry[name]
        why = p.missing()
        entry = {"title": p.title, "reproductions": sorted(p.runners)}
        if why:
            print(f"second_opinions: skipping {name}: {why} (install: {p.install})", flush=True)
            record["peers"][name] = {**entry, "ran": False, "missing": why}
            continue
        cmd = [sys.executable, "-m", "dcfair", "reproduce", "all", "--peer", name, "--out", str(args.root)]
        if args.jobs:
            cmd += ["--jobs", str(args.jobs)]
        print(f"second_opinions: {name}: {' '.join(cmd[2:])}", flush=True)
        t0 = time.monotonic()
        rc = subprocess.call(cmd, cwd=REPO)
        wall = time.monotonic() - t0
        print(f"second_opinions: {name}: exit {rc} after {wall / 60:.1f} min", flush=True)
        record["peers"][name] = {**entry, "ran": True, "exit": rc, "wall_s": round(wall, 1)}
        if rc != 0:
            failed.append(name)
    record["wall_s"] = round(time.monotonic() - t_all, 1)
    from dcfair._engine import build

    record["engine_build"] = build()
    RESULTS.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    print(f"second_opinions: {len(names)} peers in {record['wall_s'] / 60:.1f} min; wrote "
          f"{RESULTS.relative_to(REPO)}" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
