#!/usr/bin/env python3
"""CPU time of dcfair against htsim (the NDP authors' simulator) on the NDP permutation.

    python3 bench/htsim_ndp.py [--htsim /work/scratch/htsim_ndp/src/sim/datacenter/htsim_ndp]
                               [--simrun target/release/examples/simrun] [--reps 3] [--ms 5]

The k = 8 fat-tree permutation of ``validation/htsim_ndp/`` (100 Gbit/s, 1 us hops, 9,000 +
64-byte packets, htsim's own flow pairs for seed 1), for initial windows of 23 and 40 packets:
htsim's ``htsim_ndp`` (no logging) and dcfair's engine alone (``compare.py``'s scenario, the
same pairs) run ``--ms`` of simulated time each, in turn, A B A B, ``--reps`` times. It prints
each one's median CPU time (user + system of the finished process) and the median of the
per-pair ratios dcfair / htsim. ``docs/performance.md`` quotes its output.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "validation" / "htsim_ndp"))
import compare  # noqa: E402  (dcfair's side of the comparison: the scenario text)
import run as peer  # noqa: E402  (htsim's side: its connection matrix and options)

sys.modules["htsim_ndp_run"] = sys.modules.pop("run")  # hpcc_fork imports validation/hpcc's own run.py
from hpcc_fork import cpu_of  # noqa: E402  (bench/hpcc_fork.py: one process's CPU seconds)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--htsim", default=peer.DEFAULT_BINARY)
    ap.add_argument("--simrun", default=str(REPO / "target/release/examples/simrun"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--ms", type=float, default=5.0)
    a = ap.parse_args(argv)
    dst = peer.derangement(peer.NODES, 1)
    with tempfile.TemporaryDirectory() as work:
        w = Path(work)
        peer.write_cm(str(w / "perm.cm"), [(s, dst[s], 2_000_000_000) for s in range(peer.NODES)])
        print("| IW | htsim CPU s | dcfair CPU s | dcfair / htsim (median of pairs) |")
        print("|---|---|---|---|")
        for cwnd in (23, 40):
            hcmd = [a.htsim, "-nodes", str(peer.NODES), "-strat", peer.STRAT, "-cwnd", str(cwnd), "-q", str(peer.QUEUE_PKTS),
                    "-mtu", str(peer.MTU), "-linkspeed", str(peer.LINK_MBPS), "-hop_latency", str(peer.HOP_US),
                    "-seed", "1", "-end", str(int(a.ms * 1000)), "-tm", "perm.cm"]
            scen = w / f"dcfair_{cwnd}.toml"
            scen.write_text(compare.BASE.format(seed=1, duration=a.ms / 1000, measure="", cwnd=cwnd, pull_rate=1 / 0.99,
                                                count=peer.NODES, src=compare.names(range(peer.NODES)),
                                                dst=compare.names(dst[s] for s in range(peer.NODES)), size=""))
            dcmd = [a.simrun, str(scen), "--out", str(w / "out")]
            hs, ds = [], []
            for _ in range(a.reps):
                hs.append(cpu_of(hcmd, cwd=work))
                ds.append(cpu_of(dcmd))
            ratios = [d / h for d, h in zip(ds, hs)]
            print(f"| {cwnd} | {statistics.median(hs):.2f} | {statistics.median(ds):.2f} | {statistics.median(ratios):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
