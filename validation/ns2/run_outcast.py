#!/usr/bin/env python3
"""Run the ns-2 mirror of the Outcast fat-tree (outcast.tcl) for every variant x seed.

Variants (outcast_common.VARIANTS): case I with 16 KB DropTail buffers and 2, 6, 12 six-hop
flows; section 5's 30-packet DropTail, RED and SFQ with 12. Seeds 1..5, 0.5 s each.

Writes validation/results/ns2_outcast.json: per run the per-flow counters outcast.tcl prints
(ack_, timeouts, ...), the drops of the two busy ports, the measures of outcast_common, and per
variant their mean / std / min / max; plus the ns-2 version and every command line.

Usage: run_outcast.py [--variants a,b] [--seeds 1,2,3] [--out PATH] [--ns ns]
                      [--set key=value ...]   (extra outcast.tcl options, e.g. --set tcp_tick_s=0.01)
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import outcast_common as C  # noqa: E402

TCL = os.path.join(HERE, "outcast.tcl")


def parse(text: str) -> dict:
    """outcast.tcl's stdout -> header, flows, ports."""
    head, flows, ports, end = {}, [], {}, None
    for line in text.splitlines():
        p = line.split()
        if not p:
            continue
        if p[0] == "#" and len(p) >= 3:
            head[p[1]] = " ".join(p[2:])
        elif p[0] == "F":
            flows.append({"fid": int(p[1]), "group": p[2], "src": p[3], "ack": int(p[4]),
                          "ndatapack": int(p[5]), "nrexmitpack": int(p[6]), "timeouts": int(p[7]),
                          "sink_bytes": int(p[8]), "cwnd": float(p[9]), "ssthresh": int(p[10]),
                          "backoff": int(p[11])})
        elif p[0] == "Q":
            ports[f"{p[1]}->{p[2]}"] = {"drops": int(p[3]), "arrivals": int(p[4])}
        elif p[0] == "E":
            end = float(p[1])
    if end is None:
        raise RuntimeError("no E record: the run did not finish")
    syn = float(head.get("syn", 1)) != 0
    mss = int(float(head.get("mss_bytes", 1460)))
    for f in flows:
        # ack_ = highest in-order segment acknowledged; with syn_ segment 0 is the SYN.
        f["payload_bytes"] = (f["ack"] if syn else f["ack"] + 1) * mss
    return {"header": head, "flows": flows, "ports": ports, "end": end}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", default=",".join(C.VARIANTS))
    ap.add_argument("--seeds", default=",".join(map(str, C.SEEDS)))
    ap.add_argument("--out", default=os.path.join(REPO, "validation/results/ns2_outcast.json"))
    ap.add_argument("--ns", default="ns")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    a = ap.parse_args(argv)
    if not shutil.which(a.ns):
        print("run_outcast.py: ns not found (make peers)", file=sys.stderr)
        return 2
    variants = [v for v in a.variants.split(",") if v]
    for v in variants:
        if v not in C.VARIANTS:
            print(f"run_outcast.py: unknown variant {v}; known: {', '.join(C.VARIANTS)}", file=sys.stderr)
            return 2
    extra = []
    for kv in a.set:
        k, _, val = kv.partition("=")
        extra += [f"--{k}", val]
    runs = []
    for v in variants:
        for seed in [int(s) for s in a.seeds.split(",")]:
            opts = dict(C.VARIANTS[v]["ns2"], seed=seed, duration=C.DURATION_S)
            cmd = [a.ns, TCL] + [x for k, val in opts.items() for x in (f"--{k}", str(val))] + extra
            t0 = time.time()
            r = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
            if r.returncode != 0:
                print(r.stderr[-2000:], file=sys.stderr)
                return 1
            res = parse(r.stdout)
            m = C.measures(res["flows"], C.DURATION_S)
            busy = {k: p for k, p in res["ports"].items() if p["drops"] > 0}
            runs.append({"variant": v, "seed": seed, **m, "flows": res["flows"], "ports_with_drops": busy,
                         "command": " ".join(os.path.relpath(c, REPO) if c == TCL else c for c in cmd),
                         "wall_s": round(time.time() - t0, 2)})
            print(f"[run_outcast] {v} seed {seed}: share {m['share']:.3f}, 2-hop {m['two_hop_mbps']:.1f} Mb/s, "
                  f"6-hop {m['six_hop_mbps']:.1f} Mb/s, timeouts 2-hop {m['timeouts_two']:.0f}", file=sys.stderr)
    out = {"tool": "ns-2", "scenario": C.SCENARIO, "tcl": os.path.relpath(TCL, REPO),
           "tcl_sha256": hashlib.sha256(open(TCL, "rb").read()).hexdigest(),
           "ns_version": parse_version(a.ns), "extra_options": a.set,
           "date": datetime.date.today().isoformat(), "runs": runs, "aggregate": C.aggregate(runs)}
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
    print(f"[run_outcast] wrote {os.path.relpath(a.out, REPO)}", file=sys.stderr)
    return 0


def parse_version(ns: str) -> str:
    r = subprocess.run([ns, TCL, "--duration", "0.000001", "--six", "1"], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("# ns_version"):
            return line.split(None, 2)[2]
    return "?"


if __name__ == "__main__":
    sys.exit(main())
