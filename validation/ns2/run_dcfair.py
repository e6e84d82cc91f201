#!/usr/bin/env python3
"""Run dcfair's HCF long-flow scenario for each discipline x seed, like run_ns2.py does ns-2.

Runs target/release/examples/simrun (build: cargo build --release -p dcfair-sim --example
simrun) on scenarios/papers/hcf/longflows.toml with queue.kind=<q> seed=<s>, one run at a
time, and writes validation/results/dcfair_longflows.json: per-run metrics (summary.json's)
and, per discipline, mean / sample std / min / max / n over seeds, in run_ns2.py's layout so
that compare.py can put the two side by side.

Usage:
  run_dcfair.py [--qdiscs droptail,red,sfq,drr,hcf] [--seeds 1,2,3,4,5] [--out PATH]
                [--set KEY=VALUE ...]   (extra scenario overrides)
Exit status: 0 all runs succeeded, 1 some run failed, 2 bad input or simrun missing.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import run_ns2  # noqa: E402

SIMRUN = os.path.join(REPO, "target/release/examples/simrun")
SCENARIO = "scenarios/papers/hcf/longflows.toml"
QDISCS = ("droptail", "red", "sfq", "drr", "hcf")
AGG = ("starved_fraction", "throughput_variance_pkts", "jain_index", "utilization",
       "max_starvation_s", "mean_pkts_in_window", "drops", "timeouts", "retransmits")


def aggregate(runs: list[dict]) -> dict:
    """The same summary as run_ns2.py's, over this script's metrics."""
    return run_ns2.aggregate(runs, AGG)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--qdiscs", default=",".join(QDISCS))
    ap.add_argument("--seeds", default="1,2,3,4,5")
    ap.add_argument("--out", default=os.path.join(REPO, "validation/results/dcfair_longflows.json"))
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    a = ap.parse_args(argv)
    qdiscs = [q for q in a.qdiscs.split(",") if q]
    if any(q not in QDISCS for q in qdiscs):
        print(f"run_dcfair.py: --qdiscs must be among {QDISCS}", file=sys.stderr)
        return 2
    try:
        seeds = [int(s) for s in a.seeds.split(",") if s]
    except ValueError:
        print("run_dcfair.py: --seeds must be integers", file=sys.stderr)
        return 2
    if not os.path.exists(SIMRUN):
        print(f"run_dcfair.py: {SIMRUN} missing; cargo build --release -p dcfair-sim --example simrun",
              file=sys.stderr)
        return 2
    runs, failures = [], []
    for q in qdiscs:
        for s in seeds:
            cmd = [SIMRUN, SCENARIO, f"queue.kind={q}", f"seed={s}"] + a.set
            r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
            if r.returncode != 0:
                failures.append({"qdisc": q, "seed": s, "error": r.stderr.strip()[-2000:]})
                print(f"{q} seed {s}: FAILED: {r.stderr.strip()[-300:]}", file=sys.stderr)
                continue
            summ = json.loads(r.stdout)
            m = summ["metrics"]
            runs.append({"qdisc": q, "seed": s, "command": ["simrun"] + cmd[1:],
                         "engine_version": summ["engine_version"], "events": summ["events"],
                         "wall_time_s": summ["wall_time_s"], "metrics": m})
            print(f"{q} seed {s}: starved {m['starved_fraction']:.3f}, variance "
                  f"{m['throughput_variance_pkts']:.4g}, jain {m['jain_index']:.3f}, "
                  f"max starvation {m['max_starvation_s']:.1f} s, timeouts {m['timeouts']}, "
                  f"drops {m['drops']}", file=sys.stderr)
    if not runs:
        return 1
    with open(os.path.join(REPO, SCENARIO), "rb") as fh:
        sha = hashlib.sha256(fh.read()).hexdigest()
    git = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True)
    doc = {
        "description": "dcfair runs of the HCF paper's long-flow setting; metrics from summary.json "
                       "(docs/metrics.md), aggregated as in ns2_longflows.json",
        "scenario": SCENARIO, "scenario_sha256": sha,
        "git_commit": git.stdout.strip() or None,
        "generated_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "parameters": {"qdiscs": qdiscs, "seeds": seeds, "overrides": a.set},
        "aggregate": aggregate(runs), "runs": runs, "failures": failures,
    }
    tmp = a.out + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(doc, fh, indent=2, allow_nan=False)
        fh.write("\n")
    os.replace(tmp, a.out)
    print(f"wrote {a.out}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
