#!/usr/bin/env python3
"""CPU time of dcfair against the HPCC authors' ns-3 fork on their shared incast setting.

    python3 bench/hpcc_fork.py [--build out/peers/hpcc] [--simrun target/release/examples/simrun]
                               [--reps 5] [--work DIR]

For N = 2 and 16 senders under DCQCN and HPCC (``validation/hpcc/README.md``: one switch,
100 Gbit/s links, 160 MB in all), runs the fork's simulator (its input files written by
``validation/hpcc/run.py``, the packet trace off) and dcfair's engine alone
(``validation/hpcc/incast.toml``, its time series off) in turn, A B A B, ``--reps`` times each,
until every flow has finished (the fork stops by itself; dcfair runs 20 ms of simulated time,
the flows end before 15 ms). It prints each one's median CPU time (user + system, from the
kernel's accounting of the finished process) and the median of the per-pair ratios
dcfair / fork. ``docs/performance.md`` quotes its output.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "validation" / "hpcc"))
import run as fork  # noqa: E402  (validation/hpcc/run.py: the fork's input files)

CASES = [("dcqcn", 2), ("dcqcn", 16), ("hpcc", 2), ("hpcc", 16)]
SCENARIO = REPO / "validation/hpcc/incast.toml"


def cpu_of(cmd, env=None, cwd=None) -> float:
    """User + system CPU seconds of one run of ``cmd`` (its output discarded)."""
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"hpcc_fork.py: {cmd[0]} exited with {os.waitstatus_to_exitcode(status)}")
    return ru.ru_utime + ru.ru_stime


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=str(REPO / "out/peers/hpcc"), help="validation/hpcc/build.sh's output")
    ap.add_argument("--simrun", default=str(REPO / "target/release/examples/simrun"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--work", help="where the fork's input files go (default: a temporary directory)")
    a = ap.parse_args(argv)
    binary = Path(a.build) / "simulation/build/scratch/third"
    if not binary.exists():
        print(f"hpcc_fork.py: no fork build at {binary}: run validation/hpcc/build.sh (validation/hpcc/README.md)", file=sys.stderr)
        return 2
    env = dict(os.environ, LD_LIBRARY_PATH=str(Path(a.build) / "simulation/build"), NS_GLOBAL_VALUE="RngRun=1")
    work = Path(a.work or tempfile.mkdtemp(prefix="hpcc_fork_"))
    print("| cc | N | fork CPU s | dcfair CPU s | dcfair / fork |")
    print("|---|---|---|---|---|")
    for cc, n in CASES:
        d = work / f"{cc}_n{n}"
        fork.write_inputs(str(d), cc, n, trace=False)
        fork_cmd = [str(binary), str(d / "config.txt")]
        out = tempfile.mkdtemp(prefix="hpcc_dcfair_")
        dcf_cmd = [a.simrun, str(SCENARIO), f"roce.cc={cc}", f"topology.senders={n}", f"flows.count={n}",
                   f"flows.size_bytes={160_000_000 // n}", "sim.duration_s=0.02", "measure.window_s=0.018",
                   "measure.sample_interval_s=0.02", "--out", out]
        fork_s, dcf_s = [], []
        for _ in range(a.reps):
            fork_s.append(cpu_of(fork_cmd, env=env, cwd=d))
            dcf_s.append(cpu_of(dcf_cmd))
        ratio = statistics.median(b / f for f, b in zip(fork_s, dcf_s))
        print(f"| {cc} | {n} | {statistics.median(fork_s):.3f} | {statistics.median(dcf_s):.3f} | {ratio:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
