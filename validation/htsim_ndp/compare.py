#!/usr/bin/env python3
"""dcfair's side of the htsim NDP comparison: the same runs as ``run.py``, in dcfair.

Reads htsim's results (``run.py --out``), runs dcfair's ``simrun`` on the same k = 8 fat-tree
(100 Gbit/s, 1 us per hop, 9,000 + 64-byte packets, data queues trimmed above 135,000 bytes,
header queues of 4,218 headers served strictly first, PULLs paced 1 % faster than a data
packet's time, the same initial windows) with htsim's own flow pairs for each seed, and prints
the side by side as Markdown: scenario A's mean and worst goodput, scenario B's FCT percentiles.

    cargo build --release -p dcfair-sim --example simrun
    python3 validation/htsim_ndp/compare.py [--htsim /work/scratch/htsim_ndp/results.json]
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SIMRUN = REPO / "target/release/examples/simrun"

BASE = """
seed = {seed}
[sim]
duration_s = {duration}
{measure}
[topology]
kind = "fat_tree"
k = 8
host_rate_mbps = 100000.0
fabric_rate_mbps = 100000.0
link_delay_us = 1.0
host_buffer_pkts = 100000
[queue]
kind = "droptail"
limit_bytes = 135000
[ndp]
mss_bytes = 9000
header_bytes = 64
initial_window_pkts = {cwnd}
trim_threshold_pkts = 15
header_queue_pkts = 4218
header_weight = 0
pull_rate = {pull_rate}
[flows]
count = {count}
src = {src}
dst = {dst}
transport = "ndp"
{size}
"""


def run(text: str) -> tuple[list[dict], float]:
    with tempfile.TemporaryDirectory() as d:
        scen = Path(d) / "s.toml"
        scen.write_text(text)
        t0 = time.process_time()
        r0 = __import__("resource").getrusage(__import__("resource").RUSAGE_CHILDREN)
        subprocess.run([str(SIMRUN), str(scen), "--out", d], check=True, capture_output=True)
        r1 = __import__("resource").getrusage(__import__("resource").RUSAGE_CHILDREN)
        cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
        return list(csv.DictReader(open(Path(d) / "flows.csv"))), cpu


def names(xs) -> str:
    return "[" + ", ".join(f'"h{x}"' for x in xs) + "]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--htsim", default="/work/scratch/htsim_ndp/results.json")
    ap.add_argument("--pull-rate", default=str(1 / 0.99))
    args = ap.parse_args()
    h = json.loads(Path(args.htsim).read_text())
    print("### Scenario A: k = 8 permutation, goodput as a fraction of 100 Gbit/s (mean / worst flow)\n")
    print("| IW (pkts) | seed | htsim | dcfair | dcfair CPU s (10 ms) | htsim CPU s (20 ms) |")
    print("|---|---|---|---|---|---|")
    for a in h["a"]:
        src = [f["src"] for f in a["flows"]]
        dst = [f["dst"] for f in a["flows"]]
        text = BASE.format(seed=a["seed"], duration=0.01, measure="[measure]\nwindow_s = 0.008", cwnd=a["cwnd_pkts"],
                           pull_rate=args.pull_rate, count=len(src), src=names(src), dst=names(dst), size="")
        rows, cpu = run(text)
        g = [int(r["pkts_in_window"]) * 9000 * 8 / 0.008 / 1e11 for r in rows]
        print(f"| {a['cwnd_pkts']} | {a['seed']} | {a['mean_frac_line']:.3f} / {a['min_frac_line']:.3f} | "
              f"{sum(g) / len(g):.3f} / {min(g):.3f} | {cpu:.2f} | {a['resources']['cpu_s']:.1f} |")
    print("\n### Scenario B: 64 senders, 450,000 bytes each, to h0 (FCT, microseconds: p50 / p90 / p99 / max)\n")
    print("| IW (pkts) | seed | htsim | dcfair | dcfair timeouts |")
    print("|---|---|---|---|---|")
    for b in h["b"]:
        senders = list(range(1, b["senders"] + 1))
        text = BASE.format(seed=b["seed"], duration=0.02, measure="", cwnd=b["cwnd_pkts"], pull_rate=args.pull_rate,
                           count=len(senders), src=names(senders), dst='"h0"', size=f"size_bytes = {b['flow_bytes']}")
        rows, _ = run(text)
        f = sorted(float(r["fct_s"]) * 1e6 for r in rows)
        pct = lambda p: f[max(0, -(-len(f) * p // 100) - 1)]  # nearest rank
        hs = " / ".join(f"{b[k] * 1e6:.0f}" for k in ("fct_p50_s", "fct_p90_s", "fct_p99_s", "fct_max_s"))
        ds = " / ".join(f"{pct(p):.0f}" for p in (50, 90, 99, 100))
        print(f"| {b['cwnd_pkts']} | {b['seed']} | {hs} | {ds} | {sum(int(r['timeouts']) for r in rows)} |")


if __name__ == "__main__":
    main()
