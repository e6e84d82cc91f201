#!/usr/bin/env python3
"""dcfair beside the HPCC authors' ns-3 fork on the shared incast setting.

    python3 validation/hpcc/compare.py [--fork out/peers/hpcc/runs/results.json]
        [--simrun target/release/examples/simrun] [--out out/peers/hpcc/dcfair]
        [--markdown FILE] [--json FILE]

Runs ``validation/hpcc/incast.toml`` in dcfair for N = 2 and 16 senders under DCQCN and HPCC
(N = 2: 80 MB per flow, N = 16: 10 MB), measures what ``validation/hpcc/run.py`` measures in
the fork over the same window [2 ms, 10 ms] (aggregate goodput, per-flow goodput and Jain's
index, the bottleneck queue's mean and 99th percentile from 1 us samples, PFC pause frames and
pause time), reads the fork's results (``run.py``'s JSON: the mean over its seeds),
and prints the side-by-side table that ``docs/validation.md`` holds. Nothing is typed in: every
number comes from the two runs. ``--buffer-mb`` gives both the fork's results file of the same
buffer (run.py's ``--buffer-mb``) and dcfair's ``buffer.bytes``. The CPU times each side took are
in ``--json``; the speed ratio of ``docs/performance.md`` is measured apart, both simulators
in one session (``bench/hpcc_fork.py``).
"""

from __future__ import annotations

import argparse
import csv
import json
import resource
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCENARIO = REPO / "validation/hpcc/incast.toml"
WINDOW = (0.002, 0.010)
TOTAL = 160_000_000
CASES = [("dcqcn", 2), ("dcqcn", 16), ("hpcc", 2), ("hpcc", 16)]


def jain(xs):
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if xs and any(xs) else None


def pct(xs, q):
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(q / 100 * len(s) + 0.5)) - 1))] if s else None


def run_dcfair(simrun: Path, out: Path, cc: str, n: int, buffer_mb: float | None, extra=()) -> dict:
    d = out / f"{cc}_n{n}"
    sets = [f"roce.cc={cc}", f"topology.senders={n}", f"flows.count={n}", f"flows.size_bytes={TOTAL // n}", *extra]
    if buffer_mb:
        sets.append(f"buffer.bytes={int(buffer_mb * 2**20)}")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([str(simrun), str(SCENARIO), *sets, "--out", str(d)], check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    summary = json.loads((d / "summary.json").read_text())
    m = summary["metrics"]
    window = WINDOW[1] - WINDOW[0]
    with open(d / "flows.csv") as f:
        rows = list(csv.DictReader(f))
    # pkts_in_window counts data packets of 1000 payload bytes delivered in the window
    per_flow = [int(r["pkts_in_window"]) * 1000 * 8 / window / 1e9 for r in rows]
    q = []
    with open(d / "timeseries.csv") as f:
        for r in csv.DictReader(f):
            if r["metric"] == "queue_bytes" and r["port"] == "sw->r0" and WINDOW[0] <= float(r["time_s"]) <= WINDOW[1]:
                q.append(float(r["value"]))
    return {
        "goodput_gbps": sum(per_flow), "jain": jain(per_flow), "min_flow_gbps": min(per_flow), "max_flow_gbps": max(per_flow),
        "queue_mean_kb": statistics.fmean(q) / 1e3, "queue_p99_kb": pct(q, 99) / 1e3,
        "pause_frames": m["pfc_pauses_sent"], "paused_ms": m["pfc_paused_s"] * 1e3,
        "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "engine_build": summary["engine_build"],
    }


def fork_case(fork: dict, cc: str, n: int) -> dict | None:
    runs = [r for r in fork["runs"] if r["cc"] == cc and r["n_senders"] == n]
    if not runs:
        return None

    def mean(f):
        vals = [f(r) for r in runs]
        return statistics.fmean(vals) if all(v is not None for v in vals) else None

    def g(r, *path):
        for k in path:
            r = r.get(k) if isinstance(r, dict) else None
        return r

    return {
        "goodput_gbps": mean(lambda r: g(r, "aggregate_goodput_gbps")),
        "jain": mean(lambda r: g(r, "jain_goodput")),
        "min_flow_gbps": mean(lambda r: min(g(r, "per_flow_goodput_gbps").values())),
        "max_flow_gbps": mean(lambda r: max(g(r, "per_flow_goodput_gbps").values())),
        "queue_mean_kb": mean(lambda r: g(r, "queue_trace", "mean_bytes") / 1e3),
        "queue_p99_kb": mean(lambda r: g(r, "queue_trace", "p99_bytes") / 1e3),
        "pause_frames": mean(lambda r: g(r, "pfc", "pause_frames_total")),
        "paused_ms": mean(lambda r: g(r, "pfc", "pause_time_total_ns") / 1e6),
        "cpu_s": mean(lambda r: g(r, "timing_without_trace", "cpu_user_s") + g(r, "timing_without_trace", "cpu_sys_s")),
        "seeds": len(runs),
    }


COLS = [("goodput_gbps", "goodput Gbit/s", 2), ("jain", "Jain", 4), ("min_flow_gbps", "min flow", 2),
        ("max_flow_gbps", "max flow", 2), ("queue_mean_kb", "queue mean kB", 1), ("queue_p99_kb", "queue p99 kB", 1),
        ("pause_frames", "pauses", 0), ("paused_ms", "paused ms", 3)]


def fmt(v, nd):
    return "-" if v is None else f"{v:.{nd}f}"


def table(rows) -> str:
    head = "| cc | N | simulator | " + " | ".join(c[1] for c in COLS) + " |"
    out = [head, "|" + "---|" * (3 + len(COLS))]
    for (cc, n), dcf, frk in rows:
        for name, r in (("dcfair", dcf), ("HPCC fork", frk)):
            if r is None:
                continue
            out.append(f"| {cc} | {n} | {name} | " + " | ".join(fmt(r.get(k), nd) for k, _, nd in COLS) + " |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fork", default=str(REPO / "out/peers/hpcc/runs/results.json"), help="run.py's results JSON")
    ap.add_argument("--simrun", default=str(REPO / "target/release/examples/simrun"))
    ap.add_argument("--out", default=str(REPO / "out/peers/hpcc/dcfair"))
    ap.add_argument("--markdown", help="write the table here too")
    ap.add_argument("--json", help="write both sides' numbers here")
    ap.add_argument("--buffer-mb", type=float, help="the switch buffer, MiB (default: the scenario's 32)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="an override of dcfair's side (repeatable)")
    a = ap.parse_args(argv)
    fork_path = Path(a.fork)
    if not fork_path.exists():
        print(f"compare.py: no fork results at {fork_path}: run validation/hpcc/run.py first (validation/hpcc/README.md)", file=sys.stderr)
        return 2
    fork = json.loads(fork_path.read_text())
    rows = [((cc, n), run_dcfair(Path(a.simrun), Path(a.out), cc, n, a.buffer_mb, a.set), fork_case(fork, cc, n)) for cc, n in CASES]
    md = table(rows)
    print(md)
    print(f"\nfork commit {fork.get('fork_commit')}; dcfair engine {rows[0][1]['engine_build']}")
    if a.markdown:
        Path(a.markdown).write_text(md + "\n")
    if a.json:
        Path(a.json).write_text(json.dumps({"fork_commit": fork.get("fork_commit"),
                                            "rows": [{"cc": cc, "n": n, "dcfair": d, "fork": f} for (cc, n), d, f in rows]},
                                           indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
