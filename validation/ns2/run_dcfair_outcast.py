#!/usr/bin/env python3
"""Run dcfair's Outcast fat-tree for every variant x seed, like run_outcast.py does ns-2.

Each run is target/release/examples/simrun on scenarios/papers/outcast/fattree.toml with the
variant's overrides (outcast_common.VARIANTS: the same as `dcfair reproduce outcast-case1` and
`outcast-mitigations` use) and seed=<s>; the per-flow goodput and timeouts come from the run's
flows.csv (bytes_delivered = in-order payload at the receiver, timeouts = the sender's RTO
expiries). Writes validation/results/dcfair_outcast.json in run_outcast.py's layout.

Usage: run_dcfair_outcast.py [--variants a,b] [--seeds 1,2,3] [--out PATH]
                             [--set KEY=VALUE ...]   (extra scenario overrides, every variant)
Build first: cargo build --release -p dcfair-sim --example simrun
"""

from __future__ import annotations

import argparse
import csv
import datetime
import hashlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import outcast_common as C  # noqa: E402

SIMRUN = os.path.join(REPO, "target/release/examples/simrun")


def run_one(overrides: list[str], seed: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        cmd = [SIMRUN, C.SCENARIO, *overrides, f"seed={seed}", "--out", d]
        r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()[-1000:]}")
        summ = json.loads(r.stdout)
        with open(os.path.join(d, "flows.csv")) as f:
            flows = [{"fid": int(x["flow_id"]), "group": x["group"], "src": x["src"],
                      "payload_bytes": int(x["bytes_delivered"]), "timeouts": int(x["timeouts"]),
                      "retransmits": int(x["retransmits"])} for x in csv.DictReader(f) if x["kind"] == "tcp"]
        with open(os.path.join(d, "ports.csv")) as f:
            ports = {x["port"]: {"drops": int(x["drops"]), "packets_out": int(x["packets_out"])}
                     for x in csv.DictReader(f)}
    return {"flows": flows, "ports": ports, "engine_version": summ.get("engine_version"),
            "command": "simrun " + " ".join(cmd[1:-2])}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", default=",".join(C.VARIANTS))
    ap.add_argument("--seeds", default=",".join(map(str, C.SEEDS)))
    ap.add_argument("--out", default=os.path.join(REPO, "validation/results/dcfair_outcast.json"))
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    a = ap.parse_args(argv)
    if not os.path.exists(SIMRUN):
        print(f"run_dcfair_outcast.py: {SIMRUN} missing; cargo build --release -p dcfair-sim --example simrun",
              file=sys.stderr)
        return 2
    runs = []
    for v in [v for v in a.variants.split(",") if v]:
        if v not in C.VARIANTS:
            print(f"run_dcfair_outcast.py: unknown variant {v}", file=sys.stderr)
            return 2
        ov = [f"{k}={val}" for k, val in C.VARIANTS[v]["dcfair"]] + a.set
        for seed in [int(s) for s in a.seeds.split(",")]:
            res = run_one(ov, seed)
            m = C.measures(res["flows"], C.DURATION_S)
            runs.append({"variant": v, "seed": seed, **m, **res})
            print(f"[dcfair] {v} seed {seed}: share {m['share']:.3f}, 2-hop {m['two_hop_mbps']:.1f} Mb/s, "
                  f"6-hop {m['six_hop_mbps']:.1f} Mb/s, timeouts 2-hop {m['timeouts_two']:.0f}", file=sys.stderr)
    git = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True)
    with open(os.path.join(REPO, C.SCENARIO), "rb") as fh:
        sha = hashlib.sha256(fh.read()).hexdigest()
    out = {"tool": "dcfair", "scenario": C.SCENARIO, "scenario_sha256": sha, "git_commit": git.stdout.strip(),
           "extra_overrides": a.set, "date": datetime.date.today().isoformat(),
           "runs": runs, "aggregate": C.aggregate(runs)}
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
    print(f"[dcfair] wrote {os.path.relpath(a.out, REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
