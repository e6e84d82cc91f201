#!/usr/bin/env python3
"""Differential test: the same small dumbbell in ns-2 (dumbbell.tcl) and dcfair (simtrace).

Runs both and compares, flow by flow, the data segments each sender puts on the wire
(segment number and time), the bottleneck's queue events (+ stored, d dropped, - sent) and,
around the first place where the two disagree, the sender state of both. Segment numbers
are ns-2's seqno and dcfair's byte seq / 1460.

By default dcfair runs with the TCP and engine options that mirror ns-2's defaults (those of
scenarios/papers/hcf/longflows.toml) and ns-2 with its own defaults (segment 0 without
header, delay_growth_); --plain turns the mirror options off on both sides (dcfair's RFC
defaults against an ns-2 without its start-up quirks).

Usage:
  diff.py [--flows N] [--starts "0 0.0003 ..."] [--limit W] [--duration S]
          [--dc KEY=VALUE ...] [--ns KEY=VALUE ...] [--plain] [--context K] [--full] [--tmp DIR]
  diff.py --cases N [--first-case C] [--duration S] [--plain ...]
      N random cases (2 to 8 flows, 2 to 8 waiting packets, starts in [0, 5 ms]); one line
      each: IDENTICAL, or where the bottleneck events first differ and the ns-2 cwnd_ of the
      flows involved just before (a value next to a whole number means rounding, see below).
  --limit is the number of *waiting* packets (dcfair's queue.limit_pkts); ns-2 gets W + 1.

Exit status: 0 if every compared run is identical, 1 otherwise, 2 on bad input.
Needs `ns` on PATH and target/release/examples/simtrace
(cargo build --release -p dcfair-sim --features trace --example simtrace).

Why runs part: (1) ns-2's cwnd_ is a double in packets, dcfair's cwnd integer bytes; when
cwnd crosses a whole number of segments the two may see it one ACK apart; (2) exact ties
between events (see sim.tie_break) are ordered by ns-2's floating-point rounding, which
dcfair imitates only with tie_break = "float_clock".
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
SIMTRACE = os.path.join(REPO, "target/release/examples/simtrace")
MSS = 1460

# dcfair options that mirror ns-2.35's defaults (as scenarios/papers/hcf/longflows.toml)
MIRROR_DC = [
    "tcp.limited_transmit=true", "tcp.max_backoff=1024", "tcp.ssthresh_from=cwnd",
    "tcp.recovery_cwnd=half_window", "tcp.recovery_exit=deflated", "tcp.recovery_max_burst=2",
    "tcp.headerless_first_segment=true", "tcp.first_ack_resets_cwnd=true",
    "sim.tie_break=float_clock",
]
MIRROR_NS = ["headers=1", "delay_growth=true"]
PLAIN_NS = ["singledup=0"]  # ns-2 without limited transmit, closest to dcfair's RFC defaults

SCENARIO = """
name = "ns2diff"
seed = 1
[sim]
duration_s = {duration}
[topology]
kind = "dumbbell"
senders = {flows}
receivers = 1
access_rate_mbps = 1000.0
access_delay_us = 25.0
bottleneck_rate_mbps = 100.0
bottleneck_delay_us = 25.0
[queue]
kind = "droptail"
limit_pkts = {limit}
[tcp]
cc = "newreno"
mss_bytes = 1460
header_bytes = 40
init_cwnd_pkts = 2
rcv_buf_bytes = 64240
handshake = false
min_rto_ms = 200.0
max_rto_s = 60.0
initial_rto_s = 3.0
{groups}
"""


def dc_scenario(flows: int, starts: list[float], limit: int, duration: float) -> str:
    groups = []
    for i in range(flows):
        st = starts[i] if i < len(starts) else 0.0
        tbl = "[flows]" if i == 0 else f"[groups.g{i:03d}]"
        groups.append(f"{tbl}\ncount = 1\nstart_min_s = {st}\nstart_max_s = {st}\n")
    return SCENARIO.format(duration=duration, flows=flows, limit=limit, groups="\n".join(groups))


def parse_ns(path: str):
    """Per-flow sends [(t, seg)], drops, state [(t, var, value)]; bottleneck queue events."""
    sends, drops, state, queue = defaultdict(list), defaultdict(list), defaultdict(list), []
    for line in open(path):
        f = line.split()
        if not f:
            continue
        c = f[0]
        if c in "+-rd" and len(f) >= 12:
            t, frm, to, typ, fid, seq = float(f[1]), int(f[2]), int(f[3]), f[4], int(f[7]), int(f[10])
            if typ != "tcp":
                continue
            if c == "+" and frm == fid + 2:
                sends[fid].append((t, seq))
            if frm == 0 and to == 1 and c in "+-d":
                queue.append((c, round(t, 6), fid, seq))
                if c == "d":
                    drops[fid].append((t, seq))
        elif len(f) == 7:
            state[int(f[1]) - 2].append((float(f[0]), f[5], f[6]))
    # ns-2 traces '+' before the queue decides: an arrival it drops shows '+' then 'd'
    q = []
    for i, e in enumerate(queue):
        if e[0] == "+" and any(x[0] == "d" and x[1:] == e[1:] for x in queue[i + 1:i + 4]):
            continue
        q.append(e)
    return sends, drops, state, q


def parse_dc(path: str):
    sends, drops, state, queue = defaultdict(list), defaultdict(list), defaultdict(list), []
    for line in open(path):
        f = line.split()
        c = f[0]
        if c == "x":
            sends[int(f[2])].append((float(f[1]), int(f[3]) // MSS))
        elif c in "+-d":
            queue.append((c, round(float(f[1]), 6), int(f[3]), int(f[4]) // MSS))
            if c == "d":
                drops[int(f[3])].append((float(f[1]), int(f[4]) // MSS))
        elif c == "s":
            t, fid, why = float(f[1]), int(f[2]), f[3]
            cwnd, ssth, una, nxt, mx, dup, rec, rto, bo, to = f[4:14]
            ssth = "inf" if int(ssth) >= 2**63 else f"{int(ssth) / MSS:.2f}"
            state[fid].append((t, why, f"cwnd={int(cwnd) / MSS:.3f} ssth={ssth} una={int(una) // MSS} "
                                        f"nxt={int(nxt) // MSS} max={int(mx) // MSS} dup={dup} rec={rec} "
                                        f"rto={float(rto):.3f} bo={bo} to={to}"))
    return sends, drops, state, queue


def run_pair(tmp, flows, starts, limit, duration, dc_extra, ns_extra):
    os.makedirs(tmp, exist_ok=True)
    toml = os.path.join(tmp, "dc.toml")
    with open(toml, "w") as fh:
        fh.write(dc_scenario(flows, starts, limit, duration))
    dct = os.path.join(tmp, "dc.tr")
    with open(os.path.join(tmp, "dc.json"), "w") as out:
        subprocess.run([SIMTRACE, dct, toml] + dc_extra, check=True, stdout=out)
    nsargs = ["--out", os.path.join(tmp, "ns"), "--flows", str(flows), "--starts",
              " ".join(str(s) for s in (starts + [0.0] * flows)[:flows]),
              "--duration", str(duration), "--limit", str(limit + 1)]
    for kv in ns_extra:
        k, v = kv.split("=", 1)
        nsargs += [f"--{k}", v]
    subprocess.run(["ns", os.path.join(HERE, "dumbbell.tcl")] + nsargs, check=True)
    return parse_ns(os.path.join(tmp, "ns.tr")), parse_dc(dct)


def first_queue_difference(nq, dq):
    k = 0
    while k < min(len(nq), len(dq)) and nq[k] == dq[k]:
        k += 1
    return None if k == len(nq) == len(dq) else k


def ns_cwnd_before(state, fid, t):
    last = None
    for tt, var, val in state[fid]:
        if tt > t + 1e-5:
            break
        if var == "cwnd_":
            last = float(val)
    return last


def report(ns, dc, flows, context, full) -> bool:
    ns_s, ns_d, ns_st, _ = ns
    dc_s, dc_d, dc_st, _ = dc
    same = True
    for fid in range(flows):
        n, d = ns_s[fid], dc_s[fid]
        nrt = len(n) - len({s for _, s in n})
        drt = len(d) - len({s for _, s in d})
        print(f"flow {fid}: sends ns {len(n)} dc {len(d)}; retransmissions ns {nrt} dc {drt}; "
              f"drops ns {len(ns_d[fid])} dc {len(dc_d[fid])}")
        k = 0
        while k < min(len(n), len(d)) and n[k][1] == d[k][1] and abs(n[k][0] - d[k][0]) < 2e-6:
            k += 1
        if full:
            for i in range(max(len(n), len(d))):
                left = f"{n[i][0]:.6f} {n[i][1]:5d}" if i < len(n) else " " * 18
                right = f"{d[i][0]:.6f} {d[i][1]:5d}" if i < len(d) else ""
                print(f"  {i:5d}  {left}   {right}{'   <--' if i == k else ''}")
        if k == len(n) == len(d):
            print("  identical send sequences")
            continue
        same = False
        print(f"  first difference at send #{k}:")
        for i in range(max(0, k - context), min(max(len(n), len(d)), k + context)):
            left = f"{n[i][0]:.6f} {n[i][1]:5d}" if i < len(n) else " " * 18
            right = f"{d[i][0]:.6f} {d[i][1]:5d}" if i < len(d) else ""
            print(f"  {i:5d}  ns {left}   dc {right}{'   <--' if i == k else ''}")
        t0 = min(n[k][0] if k < len(n) else 1e9, d[k][0] if k < len(d) else 1e9)
        lo = t0 - 0.0015
        print("  ns-2 state changes around it:")
        for t, var, val in ns_st[fid]:
            if lo <= t <= t0 + 0.0003:
                print(f"    {t:.5f} {var} {val}")
        print("  ns-2 drops around it:", [x for x in ns_d[fid] if lo - 0.002 <= x[0] <= t0 + 0.0003])
        print("  dcfair state around it:")
        for t, why, s in dc_st[fid]:
            if lo <= t <= t0 + 0.0003:
                print(f"    {t:.6f} {why:5s} {s}")
        print("  dcfair drops around it:", [x for x in dc_d[fid] if lo - 0.002 <= x[0] <= t0 + 0.0003])
    return same


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", type=int, default=1)
    ap.add_argument("--starts", default="0")
    ap.add_argument("--limit", type=int, default=5)
    ap.add_argument("--duration", type=float, default=1.0)
    ap.add_argument("--dc", action="append", default=[])
    ap.add_argument("--ns", action="append", default=[])
    ap.add_argument("--plain", action="store_true")
    ap.add_argument("--context", type=int, default=8)
    ap.add_argument("--tmp", default=None)
    ap.add_argument("--full", action="store_true", help="print every send side by side")
    ap.add_argument("--cases", type=int, default=0)
    ap.add_argument("--first-case", type=int, default=100)
    a = ap.parse_args(argv)
    if not os.path.exists(SIMTRACE):
        print(f"diff.py: {SIMTRACE} missing; build it with cargo build --release -p dcfair-sim "
              "--features trace --example simtrace", file=sys.stderr)
        return 2
    dc_extra = ([] if a.plain else MIRROR_DC) + a.dc
    ns_extra = (PLAIN_NS if a.plain else MIRROR_NS) + a.ns
    tmp = a.tmp or tempfile.mkdtemp(prefix="ns2diff")

    if a.cases:
        identical = 0
        for case in range(a.first_case, a.first_case + a.cases):
            r = random.Random(case)
            flows, limit = r.randint(2, 8), r.randint(2, 8)
            starts = [round(r.uniform(0, 0.005), 9) for _ in range(flows)]
            ns, dc = run_pair(os.path.join(tmp, f"case{case}"), flows, starts, limit, a.duration,
                              dc_extra, ns_extra)
            k = first_queue_difference(ns[3], dc[3])
            if k is None:
                identical += 1
                print(f"case {case}: {flows} flows, {limit} waiting: IDENTICAL for {a.duration:g} s "
                      f"({len(ns[3])} queue events)")
                continue
            e_ns, e_dc = ns[3][k], dc[3][k]
            cw = {f: ns_cwnd_before(ns[2], f, e_dc[1]) for f in {e_ns[2], e_dc[2]}}
            print(f"case {case}: {flows} flows, {limit} waiting: first difference at queue event "
                  f"{k}/{len(ns[3])}, t = {e_dc[1]:.6f}: ns {e_ns} dc {e_dc}; ns-2 cwnd_ before: {cw}")
        print(f"{identical}/{a.cases} identical; traces in {tmp}")
        return 0 if identical == a.cases else 1

    starts = [float(x) for x in a.starts.split()]
    ns, dc = run_pair(tmp, a.flows, starts, a.limit, a.duration, dc_extra, ns_extra)
    print(f"traces in {tmp}")
    same = report(ns, dc, a.flows, a.context, a.full)
    k = first_queue_difference(ns[3], dc[3])
    print("bottleneck queue events:", "identical" if k is None else
          f"first difference at event {k}: ns {ns[3][k] if k < len(ns[3]) else None} "
          f"dc {dc[3][k] if k < len(dc[3]) else None}")
    return 0 if same and k is None else 1


if __name__ == "__main__":
    sys.exit(main())
