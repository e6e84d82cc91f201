#!/usr/bin/env python3
"""ns-3's own estimate of flow 0's data in flight against what is really in the network.

Reads an ns-3 run's events.txt (dumbbell.cc; raw outputs are kept in out/ns3/runs/<case>_s<seed>/)
and, at every ACK flow 0 receives after --from seconds, compares

* in the network: flow 0's data segments sent - arrived at the receiver - dropped at the
  bottleneck (exact: all three are traced), and
* ns-3's pipe: TcpSocketBase's BytesInFlight (RFC 6675 "pipe"), which decides what the sender
  may send, in segments,

averaged per congestion state (CongState). Used in differences.md (NewReno without SACK).

Usage: pipe_check.py EVENTS_TXT [--from 10] [--mss 1460]
"""

from __future__ import annotations

import argparse
import statistics
import sys


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("events")
    ap.add_argument("--from", dest="t0", type=float, default=10.0)
    ap.add_argument("--mss", type=int, default=1460)
    a = ap.parse_args(argv)
    net = 0
    pipe = 0.0
    state = "CA_OPEN"
    rows: dict[str, list[tuple[int, float]]] = {}
    with open(a.events) as fh:
        for line in fh:
            f = line.split()
            if len(f) < 4 or f[2] != "0":
                continue
            c = f[0]
            if c == "x":
                net += 1
            elif c in "rd":
                net -= 1
            elif c == "b":
                pipe = int(f[3]) / a.mss
            elif c == "g":
                state = f[3]
            elif c == "a" and float(f[1]) >= a.t0:
                rows.setdefault(state, []).append((net, pipe))
    if not rows:
        print("pipe_check.py: no ACKs of flow 0 after --from", file=sys.stderr)
        return 1
    print(f"{'state':12s} {'ACKs':>7s} {'in network':>11s} {'ns-3 pipe':>10s}   (segments, means)")
    everything = [r for rs in rows.values() for r in rs]
    for st, rs in sorted(rows.items()) + [("all", everything)]:
        print(f"{st:12s} {len(rs):7d} {statistics.mean(n for n, _ in rs):11.1f} "
              f"{statistics.mean(p for _, p in rs):10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
