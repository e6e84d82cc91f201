"""What the ns-2 and dcfair sides of the Outcast validation share: the variants (each with its
dcfair overrides of scenarios/papers/outcast/fattree.toml and its outcast.tcl options), the seeds,
and the per-run measures and their aggregation.

A run's measures, both simulators:
  two_hop_mbps   goodput of the 2-hop flow (in-order payload delivered over the whole run)
  six_hop_mbps   mean goodput of the 6-hop flows
  share          two_hop_mbps / six_hop_mbps (1 = fair; the paper's "7x worse" = 1/7)
  timeouts_two   retransmission timeouts of the 2-hop flow
  timeouts_six   mean retransmission timeouts of a 6-hop flow
"""

from __future__ import annotations

import math
import statistics
from typing import Dict, List, Sequence

SCENARIO = "scenarios/papers/outcast/fattree.toml"
SEEDS = (1, 2, 3, 4, 5)
DURATION_S = 0.5
# Section 5's queue (python/dcfair/reproduce/outcast.py NS2_QUEUE): 30 packets of 1500 bytes.
NS2_QUEUE = [("queue.limit_pkts", 30), ("queue.limit_bytes", 45000)]

# name -> (what, dcfair overrides, outcast.tcl options)
VARIANTS: Dict[str, dict] = {}
for n in (2, 6, 12):
    VARIANTS[f"droptail-16KB-six{n}"] = {
        "what": f"case I (fig. 3): DropTail, 16 KB buffers, 1 vs {n}",
        "dcfair": [("queue.kind", "droptail"), ("groups.six_hop.count", n)],
        "ns2": {"qdisc": "droptail", "six": n},
    }
for q in ("droptail", "red", "sfq"):
    VARIANTS[f"{q}-30pkt-six12"] = {
        "what": f"section 5: {q}, 30-packet queues, 1 vs 12",
        "dcfair": [("queue.kind", q)] + NS2_QUEUE + [("groups.six_hop.count", 12)],
        "ns2": {"qdisc": q, "six": 12, "limit_pkts": 30},
    }

MEASURES = ("share", "two_hop_mbps", "six_hop_mbps", "timeouts_two", "timeouts_six")


def measures(flows: Sequence[dict], duration_s: float = DURATION_S) -> dict:
    """flows: dicts with group ('two_hop' / 'six_hop'), payload_bytes, timeouts."""
    two = [f for f in flows if f["group"] == "two_hop"]
    six = [f for f in flows if f["group"] == "six_hop"]
    mbps = lambda fs: statistics.fmean(f["payload_bytes"] * 8 / duration_s / 1e6 for f in fs)
    t, s = mbps(two), mbps(six)
    return {"share": t / s if s else float("nan"), "two_hop_mbps": t, "six_hop_mbps": s,
            "timeouts_two": statistics.fmean(f["timeouts"] for f in two),
            "timeouts_six": statistics.fmean(f["timeouts"] for f in six)}


def aggregate(runs: List[dict]) -> Dict[str, Dict[str, dict]]:
    """variant -> measure -> {mean, std (sample), min, max, n}."""
    out: Dict[str, Dict[str, dict]] = {}
    for v in VARIANTS:
        rs = [r for r in runs if r["variant"] == v]
        if not rs:
            continue
        out[v] = {}
        for m in MEASURES:
            xs = [r[m] for r in rs if not math.isnan(r[m])]
            if xs:
                out[v][m] = {"mean": statistics.fmean(xs), "std": statistics.stdev(xs) if len(xs) > 1 else 0.0,
                             "min": min(xs), "max": max(xs), "n": len(xs), "values": xs}
    return out
