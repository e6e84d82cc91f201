#!/usr/bin/env python3
"""The engine's comparison runs: does a change leave every output byte-identical?

Runs a fixed set of short scenarios with one ``simrun`` binary (every discipline, the FIFO
tie order, the fat-tree, the three fabric mechanisms, Outcast, ExpressPass, FairQ, a drop-heavy run
and a packet trace) and prints one line per run: its name and the SHA-256 of each result file.
``summary.json`` is hashed without its ``wall_time_s`` and ``engine_build`` fields, the only ones
that may differ between two builds that compute the same thing.

Compare two builds by their printouts::

    cargo build --release -p dcfair-sim --example simrun
    python bench/same_output.py > /tmp/a.txt          # build A
    ... change, rebuild ...
    python bench/same_output.py --against /tmp/a.txt  # build B; exit 1 on any difference

``--simrun PATH`` picks another binary (default ``target/release/examples/simrun``). The 17 runs
take a few seconds on this machine.

``--parts N`` checks the other promise, within one build: every run, with
``sim.tie_break=origin``, gives the same bytes whole and split into 2 to ``N`` parts
(``simrun --parts``). It prints one line per run and part count, ``identical``, ``DIFFERS`` or
``refused`` with the engine's reason (an incast's requests cannot be split), and exits 1 on any
difference.

``--threads N`` checks the same promise on threads: every run, with ``sim.tie_break=origin``, on
one thread and with ``sim.threads`` from 2 to ``N`` (``summary.json`` hashed without its
``threads`` record too). A line says ``identical`` (on that many threads), ``identical, on K
threads:`` with the engine's reason when it used fewer (a dumbbell's one switch, an incast, the
machine's cores), or ``DIFFERS``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
P = "scenarios/papers"
LONG = f"{P}/hcf/longflows.toml"
SHORT_LONG = ["sim.duration_s=20", "measure.window_s=10"]

#: name -> (scenario, overrides)
RUNS = {
    **{f"longflows-{k}": (LONG, [f"queue.kind={k}", *SHORT_LONG])
       for k in ("droptail", "red", "sfq", "drr", "hcf", "codel", "fq_codel", "pfabric")},
    "longflows-fifo-ties": (LONG, ["sim.tie_break=fifo", *SHORT_LONG]),
    "fattree-k8": ("bench/fattree_k8.toml", ["sim.duration_s=0.02"]),
    "fqcodel-leafspine": (f"{P}/fqcodel/leafspine.toml", ["sim.duration_s=0.01", "poisson.stop_s=0.008", "queue.kind=fq_codel"]),
    "dctcp-leafspine": (f"{P}/fqcodel/leafspine.toml", ["sim.duration_s=0.01", "poisson.stop_s=0.008", "tcp.cc=dctcp",
                                                          "queue.droptail.mark_threshold_pkts=65"]),
    "outcast-fattree": (f"{P}/outcast/fattree.toml", ["sim.duration_s=0.1"]),
    "blackout-trace": (f"{P}/outcast/blackout_runs_fattree.toml", ["sim.duration_s=1.01", "measure.window_s=0.5"]),
    "xpass-fairness": (f"{P}/xpass/credit_fairness.toml", ["sim.duration_s=0.005", "measure.window_s=0.002"]),
    "droptail-incast": (f"{P}/fairq/testbed_incast.toml", ["incast.rounds=20"]),
    "fairq-incast": (f"{P}/fairq/testbed_incast.toml", ["incast.rounds=20", 'fairq.switches=["core"]']),
}


def digest(path: Path) -> str:
    data = path.read_bytes()
    if path.name == "summary.json":
        s = json.loads(data)
        for k in ("wall_time_s", "engine_build", "threads"):
            s.pop(k, None)
        data = json.dumps(s, sort_keys=True).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def run(simrun: Path, name: str, scenario: str, overrides: list, tmp: Path, extra: tuple = ()) -> str:
    out = tmp / name
    p = subprocess.run([str(simrun), str(REPO / scenario), *overrides, "--out", str(out), *extra],
                       capture_output=True, text=True, cwd=REPO)
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or [""])[-1]
        return f"{name} FAILED (exit {p.returncode}): {last}"
    files = sorted(f for f in out.iterdir() if f.is_file())
    return name + " " + " ".join(f"{f.name}={digest(f)}" for f in files)


def split_runs(simrun: Path, name: str, scenario: str, overrides: list, tmp: Path, count: int, mode: str) -> list[str]:
    """One line per count from 2 to ``count``: the run split into that many parts (``mode``
    ``"parts"``: ``simrun --parts``) or on that many threads (``"threads"``: ``sim.threads``),
    against the run whole on one thread, both with ``sim.tie_break=origin``."""
    ov = [*overrides, "sim.tie_break=origin"]
    whole = run(simrun, f"{name}@1", scenario, ov, tmp)
    if " FAILED " in whole:
        return [whole]
    whole = whole.split(" ", 1)[1]
    lines = []
    for n in range(2, count + 1):
        tag = f"{name}@{mode}{n}"
        if mode == "parts":
            split = run(simrun, tag, scenario, ov, tmp, ("--parts", str(n)))
        else:
            split = run(simrun, tag, scenario, [*ov, f"sim.threads={n}"], tmp)
        if " FAILED " in split:
            verdict = "refused: " + split.split(": ", 1)[1] if mode == "parts" and "exit 2" in split else split
        else:
            verdict = "identical" if split.split(" ", 1)[1] == whole else "DIFFERS"
            how = json.loads((tmp / tag / "summary.json").read_text()).get("threads")
            if how and how["used"] < n and verdict == "identical":
                verdict += f", on {how['used']} thread{'s' if how['used'] > 1 else ''}: {how['why']}"
        lines.append(f"{name} {mode} {n}: {verdict}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simrun", type=Path, default=REPO / "target/release/examples/simrun")
    ap.add_argument("--against", type=Path, help="an earlier printout: exit 1 where a line differs")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--parts", type=int, help="compare each run whole and in 2 to N parts (tie order by origin)")
    ap.add_argument("--threads", type=int, help="compare each run on one thread and on 2 to N (tie order by origin)")
    a = ap.parse_args()
    if not a.simrun.exists():
        sys.exit(f"{a.simrun} not found: cargo build --release -p dcfair-sim --example simrun")
    for count, mode in ((a.parts, "parts"), (a.threads, "threads")):
        if count is None:
            continue
        if count < 2:
            sys.exit("--parts and --threads take a count of at least 2")
        with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(a.jobs) as pool:
            lines = [x for ls in pool.map(lambda kv: split_runs(a.simrun, kv[0], *kv[1], Path(tmp), count, mode), RUNS.items())
                     for x in ls]
        print("\n".join(lines))
        return 1 if any("DIFFERS" in x or " FAILED " in x for x in lines) else 0
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(a.jobs) as pool:
        lines = list(pool.map(lambda kv: run(a.simrun, kv[0], *kv[1], Path(tmp)), RUNS.items()))
    print("\n".join(lines))
    if a.against is None:
        return 1 if any(" FAILED " in x for x in lines) else 0
    before = dict(x.split(" ", 1) for x in a.against.read_text().splitlines() if x.strip())
    diff = [x for x in lines if before.get(x.split(" ", 1)[0]) != x.split(" ", 1)[1]]
    for x in diff:
        print(f"DIFFERS: {x.split(' ', 1)[0]}", file=sys.stderr)
    print(f"{len(lines) - len(diff)} of {len(lines)} runs identical", file=sys.stderr)
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
