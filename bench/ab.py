#!/usr/bin/env python3
"""Paired A/B timing of two commands: does a change make a run cheaper?

    python bench/ab.py [--reps 8] [--same-output] [--cpus 0,1] [--alternate] -- "CMD_A" "CMD_B"

Each repetition starts A and B at the same moment, each pinned to its own CPU (``taskset``),
and swaps the CPUs at every repetition. Both runs of a pair then share whatever the machine
is doing (other tenants, the shared last-level cache, the clock), which is what makes the
ratio of the pair trustworthy on a machine whose single-run times drift by 10 to 30 %: the
CPU times of one command over a session spread far more than the ratio of a pair does.

``--alternate``: one run at a time instead, both pinned to the first CPU of ``--cpus``, A then B
in odd repetitions and B then A in even ones. Slower, but neither run shares the last-level
cache with the other: use it for a change to what stays in the caches (a prefetch, a layout),
where two runs at once disturb each other's misses.

Prints, per repetition, the CPU time (user + system, from ``os.wait4``) of A and of B, then the
ratio B / A: mean, median, least and greatest, and in how many repetitions B was cheaper. A
ratio below 1 means B is cheaper.

``--same-output``: the two commands write into ``{out}``, which this script replaces by two
fresh directories; after the last repetition every file of A's directory must be byte-identical
to B's, apart from lines holding ``wall_time_s`` (else exit 1). A change meant to be a pure
speed-up must pass it.

CPU time, not wall time: both children run alone on their CPU, so the two agree to within a
few per cent; CPU time leaves out the moments the scheduler ran something else.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def cpu_of(status_rusage) -> float:
    return status_rusage.ru_utime + status_rusage.ru_stime


def run_pair(cmd_a: list[str], cmd_b: list[str], cpus: tuple[int, int], swap: bool) -> tuple[float, float]:
    """Starts both at once, A on ``cpus[0]`` (``cpus[1]`` when ``swap``); returns their CPU times."""
    ca, cb = (cpus[1], cpus[0]) if swap else cpus
    t = run_at_once([("a", cmd_a, ca), ("b", cmd_b, cb)])
    return t["a"], t["b"]


def run_alternate(cmd_a: list[str], cmd_b: list[str], cpu: int, b_first: bool) -> tuple[float, float]:
    """Runs A and B one after the other on ``cpu`` (B first when ``b_first``); their CPU times."""
    order = [("b", cmd_b), ("a", cmd_a)] if b_first else [("a", cmd_a), ("b", cmd_b)]
    t = {}
    for name, cmd in order:
        t.update(run_at_once([(name, cmd, cpu)]))
    return t["a"], t["b"]


def run_at_once(jobs: list[tuple[str, list[str], int]]) -> dict[str, float]:
    """Starts every ``(name, command, cpu)`` at once, each pinned to its CPU; their CPU times."""
    procs = {}
    for name, cmd, cpu in jobs:
        pin = ["taskset", "-c", str(cpu)] if shutil.which("taskset") else []
        # stderr to a file, not a pipe: a long run's progress lines would fill a pipe nobody reads
        err = tempfile.TemporaryFile()
        p = subprocess.Popen(pin + cmd, stdout=subprocess.DEVNULL, stderr=err)
        # keep the Popen alive until its child is reaped here: a Popen dropped while its child
        # runs polls it on the way out (and later through subprocess's cleanup), which can reap
        # a child that has already exited before wait4 below sees it
        procs[p.pid] = (name, err, p)
    times, errors = {}, []
    while len(times) < len(jobs):
        pid, status, ru = os.wait4(-1, 0)
        if pid not in procs:
            continue
        name, err, p = procs[pid]
        times[name] = cpu_of(ru)
        code = os.waitstatus_to_exitcode(status)
        p.returncode = code  # reaped: the Popen must not wait for it again
        if code != 0:
            err.seek(0)
            errors.append(f"{name} exited {code}: {err.read().decode(errors='replace')[-500:]}")
    for _, err, _ in procs.values():
        err.close()
    if errors:
        raise SystemExit("ab.py: " + "; ".join(errors))
    return times


def differing_files(a: Path, b: Path) -> list[str]:
    """Files whose contents differ (lines holding ``wall_time_s`` left out) or exist on one side."""
    names = {p.relative_to(a) for p in a.rglob("*") if p.is_file()} | {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    bad = []
    for n in sorted(names):
        fa, fb = a / n, b / n
        if not (fa.is_file() and fb.is_file()):
            bad.append(str(n))
            continue
        keep = lambda f: [ln for ln in f.read_bytes().splitlines() if b"wall_time_s" not in ln]  # noqa: E731
        if keep(fa) != keep(fb):
            bad.append(str(n))
    return bad


def summary(ta: list[float], tb: list[float]) -> dict:
    r = [b / a for a, b in zip(ta, tb)]
    return {"mean": statistics.mean(r), "median": statistics.median(r), "min": min(r), "max": max(r),
            "b_cheaper": sum(x < 1 for x in r)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=8, help="pairs to run (default 8)")
    ap.add_argument("--cpus", default="0,1", help="the two CPUs to pin to (default 0,1)")
    ap.add_argument("--same-output", action="store_true",
                    help="replace {out} in each command by a fresh directory; the outputs must agree")
    ap.add_argument("--alternate", action="store_true",
                    help="one run at a time on the first CPU of --cpus, the order swapped every repetition")
    ap.add_argument("cmd_a")
    ap.add_argument("cmd_b")
    a = ap.parse_args(argv)
    if a.reps < 1:
        ap.error("--reps must be at least 1")
    try:
        cpus = tuple(int(c) for c in a.cpus.split(","))
    except ValueError:
        cpus = ()
    if len(cpus) != 2:
        ap.error(f"--cpus takes two CPU numbers, got {a.cpus!r}")
    tmp = Path(tempfile.mkdtemp(prefix="ab-"))
    try:
        cmds = []
        for name, c in (("a", a.cmd_a), ("b", a.cmd_b)):
            if a.same_output and "{out}" not in c:
                ap.error(f"--same-output: command {name.upper()} has no {{out}} to replace")
            cmds.append(shlex.split(c.replace("{out}", str(tmp / name))))
        ta, tb = [], []
        for r in range(a.reps):
            if a.alternate:
                x, y = run_alternate(cmds[0], cmds[1], cpus[0], b_first=r % 2 == 1)
            else:
                x, y = run_pair(cmds[0], cmds[1], cpus, swap=r % 2 == 1)
            ta.append(x)
            tb.append(y)
            print(f"rep {r + 1}: A {x:.2f} s  B {y:.2f} s  B/A {y / x:.3f}", flush=True)
        s = summary(ta, tb)
        print(f"ratio B/A over {a.reps} pairs: mean {s['mean']:.3f}, median {s['median']:.3f}, "
              f"min {s['min']:.3f}, max {s['max']:.3f}; B cheaper in {s['b_cheaper']} of {a.reps}")
        if a.same_output:
            bad = differing_files(tmp / "a", tmp / "b")
            if bad:
                print("outputs differ: " + ", ".join(bad), file=sys.stderr)
                return 1
            print("outputs identical (wall_time_s lines aside)")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
