"""NDP (Handley et al., "Re-architecting datacenter networks and stacks for low latency and
high performance", SIGCOMM 2017): a permutation near line rate, an incast without timeouts, and
NDP beside TCP, DCTCP and MPTCP.

The paper's text is not in this repository (``../shared/papers``); its authors keep it in their
repository (``github.com/nets-cs-pub-ro/NDP``, ``doc/ndp.pdf``), and the sentences the claims
quote are copied from it onto ``docs/papers/abstracts.md`` (the abstract, and body text of
section 6.1 and 6.2, each with its page). The fabric is a k = 8 fat-tree (128 hosts) at
10 Gbit/s with 1 us links, where the paper's Figure 14 and 16 run a 432-node one; NDP's
packets, switch queues and window are the paper's (9,000-byte payloads, 64-byte headers, data
queues trimmed above 8 packets, an initial window of 30).

- ``ndp-permutation`` (``scenarios/papers/ndp/permutation.toml``): every host sends one long
  flow to another; NDP's mean and worst goodput.
- ``ndp-incast`` (``scenarios/papers/ndp/incast.toml``: 8, 32 and 64 senders in other pods
  sending 450 kB each to h0): the last flow's completion against the receiver link's
  limit, the spread between the first and the last, and timeouts.
- ``ndp-transports``: the permutation under NDP, TCP (NewReno), DCTCP and MPTCP (8 subflows),
  the TCPs over ECMP with the paper's 200-packet queues (DCTCP marking at 30 packets).

Full forms: 3 seeds; quick forms: 1 seed and shorter runs.
"""

from __future__ import annotations

from typing import Dict, List

from dcfair.data import PAPERS
from dcfair.reproduce import Claim, Reading, Reproduction, Study, mean, pyplot, register, save_figure
from dcfair.runner import Point

PAPER = "NDP (Handley et al., SIGCOMM 2017; text not in the repository)"
PERMUTATION = str(PAPERS / "ndp/permutation.toml")
INCAST = str(PAPERS / "ndp/incast.toml")
LINE_BPS = 10e9
MSS = 9000
Q_NDP_UTIL = "NDP has an utilization of 92% and offers much better fairness across the flows: even the slowest flow gets 9Gb/s."
Q_DCTCP = ("DCTCP and DCQCN use a single path and suffer from collisions resulting from ECMP: mean utilization is around "
           "40%, and there are some flows that achieve less than 1Gb/s")
Q_MPTCP = "Multipath TCP does much better: utilization is 89%, and the worst flow achieves 6Gb/s."
Q_OPTIMAL = "DCQCN and NDP do even better, with a completion time just 1% slower than optimal."
Q_BALANCED = "NDP has a very balanced allocation, with the slowest flow taking at most 20% longer to finish than the fastest one"
Q_GRACEFUL = "can deal gracefully with massive incast events"

HTSIM_LIKE = (("ndp.pull_rate", 1 / 0.99), ("ndp.header_weight", 0))
READINGS_PERM = (
    Reading("iw-23", "an initial window of 23 packets, what the authors' script for Figure 14 runs",
            (("ndp.initial_window_pkts", 23),)),
    Reading("htsim-switch", "headers strictly first and PULLs paced 1 % faster than a packet's time, as htsim's "
            "main_ndp runs", HTSIM_LIKE),
    Reading("random-paths", "a random next hop at every switch instead of each sender's path permutation",
            (("ndp.paths", "random"),)),
    Reading("k12", "a k = 12 fat-tree: 432 hosts, the size of the paper's Figure 14", (("topology.k", 12),)),
)


def _window(quick: bool):
    return (0.004, 0.003) if quick else (0.01, 0.008)


def _goodputs(st: Study, **labels) -> List[List[float]]:
    """Per run (seed), every flow's goodput over the window as a fraction of line rate: its
    packets in the window times the payload of its packets (a TCP's ``tcp.mss_bytes`` where a
    point sets it, NDP's 9,000 bytes)."""
    import pandas as pd

    out = []
    for r in st.rows(**labels):
        w = r["summary"]["window_s"]
        ov = dict(r["point"].overrides)
        tcp = dict(r["point"].labels).get("transport", "ndp") != "ndp"
        mss = int(float(ov["tcp.mss_bytes"])) if tcp and "tcp.mss_bytes" in ov else MSS
        df = pd.read_csv(f"{r['dir']}/flows.csv")
        out.append(list(df["pkts_in_window"] * mss * 8 / w / LINE_BPS))
    return out


def plan_permutation(quick: bool) -> List[Point]:
    dur, win = _window(quick)
    seeds = range(1, 2) if quick else range(1, 4)
    return [Point.make(PERMUTATION, [("sim.duration_s", dur), ("measure.window_s", win)], seed, transport="ndp")
            for seed in seeds]


def _cdf_figure(st: Study, series: Dict[str, List[float]], title: str) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    for name, xs in series.items():
        xs = sorted(xs)
        ax.plot(range(len(xs)), [x * 10 for x in xs], label=name, lw=1.2)
    ax.set_xlabel("flow (sorted by goodput)")
    ax.set_ylabel("goodput, Gbit/s")
    ax.set_ylim(0, 10.5)
    ax.set_title(title)
    ax.legend(fontsize=7)
    save_figure(fig, st)


def analyze_permutation(st: Study) -> List[Claim]:
    g = _goodputs(st, transport="ndp")
    _cdf_figure(st, {"NDP": g[0] if g else []}, "k = 8 fat-tree permutation, NDP (first seed)")
    means = [mean(x) for x in g]
    worst = [min(x) for x in g]
    st.table = [{"seed": r["point"].seed, "mean_of_line": round(mean(x), 4), "worst_of_line": round(min(x), 4),
                 "trims": r["summary"]["metrics"].get("trims"), "ndp_timeouts": r["summary"]["metrics"].get("ndp_timeouts"),
                 "reordered_fraction": round(r["summary"]["metrics"].get("reordered_fraction") or 0, 4)}
                for r, x in zip(st.rows(transport="ndp"), g)]
    util = Claim("utilization", "NDP runs a permutation on a fat-tree at 92 % of line rate", "92 % (Figure 14, 432 nodes)",
                 means, bool(means) and min(means) >= 0.90,
                 "mean per-flow goodput over the window >= 0.90 of line rate (92 % less two points) in every seed",
                 "fraction of line rate", quote=Q_NDP_UTIL)
    util.tried("128-node", "section 6.2's figure for a 128-node fat-tree, the size run here (\"from 98% (128 node "
               "FatTree)\"): 98 %, less two points", means, bool(means) and min(means) >= 0.96)
    slow = Claim("slowest-flow", "Even NDP's slowest flow gets 9 Gbit/s of the 10", "9 Gbit/s (Figure 14)", worst,
                 bool(worst) and min(worst) >= 0.9, "the worst flow's goodput >= 0.9 of line rate in every seed",
                 "fraction of line rate", quote=Q_NDP_UTIL)
    return [util, slow]


INCAST_SIZES = (8, 32, 64)
INCAST_BYTES = 450_000


def plan_incast(quick: bool) -> List[Point]:
    seeds = range(1, 2) if quick else range(1, 4)
    sizes = (8, 32) if quick else INCAST_SIZES
    return [Point.make(INCAST, [("flows.count", n)], seed, senders=n) for n in sizes for seed in seeds]


def _optimal(n: int) -> float:
    """The receiver link's time for every packet on the wire (payload and headers), seconds."""
    pkts = -(-INCAST_BYTES // MSS)
    return n * pkts * (MSS + 64) * 8 / LINE_BPS


def analyze_incast(st: Study) -> List[Claim]:
    sizes = sorted({dict(r["point"].labels)["senders"] for r in st.records if r.get("ok")})
    over, spread, graceful = [], [], []
    st.table = []
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    for n in sizes:
        df = st.flows(senders=n)
        lasts, firsts = [], []
        for seed, d in df.groupby("seed"):
            fct = d["fct_s"]
            done = fct.notna().all()
            lasts.append(fct.max() / _optimal(n))
            firsts.append(fct.min() / _optimal(n))
            over.append(fct.max() / _optimal(n))
            spread.append(fct.max() / fct.min())
            graceful.append(float(done and d["timeouts"].sum() == 0))
        st.table.append({"senders": n, "seeds": len(lasts), "optimal_ms": round(_optimal(n) * 1e3, 3),
                         "last_over_optimal": round(mean(lasts), 4), "first_over_optimal": round(mean(firsts), 4),
                         "timeouts": int(mean(st.metric("ndp_timeouts", senders=n))),
                         "trims": int(mean(st.metric("trims", senders=n)))})
        ax.plot([n] * 2, [mean(firsts), mean(lasts)], marker="o", color="C0")
    ax.set_xscale("log", base=2)
    ax.axhline(1.0, color="grey", lw=0.6)
    ax.set_xlabel("senders (450 kB each)")
    ax.set_ylabel("FCT / receiver link's limit")
    ax.set_title("NDP incast to one host, first and last flow")
    save_figure(fig, st)
    c1 = Claim("near-optimal", "NDP's incast completes within 1 % of the optimal time", "1 % slower than optimal "
               "(Figure 16)", over, bool(over) and max(over) <= 1.02,
               "the last flow's FCT / the receiver link's time for every packet on the wire (9,064 bytes each) <= 1.02 "
               "(1 %, and one point for the base RTT the ideal leaves out) for every sender count and seed", "ratio",
               quote=Q_OPTIMAL)
    c2 = Claim("balanced", "The slowest flow of an NDP incast takes at most 20 % longer than the fastest",
               "at most 20 % longer (Figure 16)", spread, bool(spread) and max(spread) <= 1.2,
               "slowest FCT / fastest FCT <= 1.2 for every sender count and seed", "ratio", quote=Q_BALANCED)
    c3 = Claim("no-timeouts", "NDP deals gracefully with incast: every flow finishes without a timeout",
               "gracefully (abstract)", graceful, bool(graceful) and min(graceful) == 1.0,
               "every flow completes and no sender times out, for every sender count and seed (1 per run that does)",
               "runs", quote=Q_GRACEFUL)
    return [c1, c2, c3]


READINGS_INCAST = (
    Reading("iw-10", "an initial window of 10 packets: \"For incast workloads, a smaller IW is preferable\" (section 6.2)",
            (("ndp.initial_window_pkts", 10),), claims=("near-optimal", "balanced", "no-timeouts")),
    Reading("htsim-switch", "headers strictly first and PULLs paced 1 % faster than a packet's time, as htsim's "
            "main_ndp runs", HTSIM_LIKE, claims=("near-optimal", "balanced", "no-timeouts")),
    Reading("header-queue-4218", "header queues of 4,218 headers (htsim's 270,000 bytes) instead of the paper's 1,125",
            (("ndp.header_queue_pkts", 4218),), claims=("near-optimal", "balanced", "no-timeouts")),
)

TCP_COMMON = (("flows.transport", "tcp"), ("tcp.mss_bytes", MSS), ("tcp.header_bytes", 64), ("tcp.sack", True),
              ("tcp.min_rto_ms", 1.0), ("tcp.rcv_buf_bytes", 4_000_000), ("tcp.handshake", True),
              ("queue.limit_pkts", 200))
TRANSPORTS = {
    "ndp": (),
    "tcp": TCP_COMMON,
    "dctcp": TCP_COMMON + (("tcp.cc", "dctcp"), ("queue.droptail.mark_threshold_pkts", 30)),
    "mptcp": TCP_COMMON + (("flows.tcp.mptcp.subflows", 8), ("flows.tcp.mptcp.coupling", "lia")),
}
NAMES = {"ndp": "NDP", "tcp": "TCP (NewReno)", "dctcp": "DCTCP", "mptcp": "MPTCP (8 subflows)"}


def plan_transports(quick: bool) -> List[Point]:
    dur, win = (0.006, 0.004) if quick else (0.02, 0.015)
    seeds = range(1, 2) if quick else range(1, 4)
    return [Point.make(PERMUTATION, [("sim.duration_s", dur), ("measure.window_s", win), *ov], seed, transport=t)
            for t, ov in TRANSPORTS.items() for seed in seeds]


def analyze_transports(st: Study) -> List[Claim]:
    g = {t: _goodputs(st, transport=t) for t in TRANSPORTS}
    _cdf_figure(st, {NAMES[t]: g[t][0] for t in TRANSPORTS if g[t]}, "k = 8 fat-tree permutation (first seed)")
    st.table = [{"transport": t, "seeds": len(g[t]), "mean_of_line": round(mean([mean(x) for x in g[t]]), 4),
                 "worst_of_line": round(mean([min(x) for x in g[t]]), 4),
                 "timeouts": round(mean(st.metric("timeouts", transport=t)))} for t in TRANSPORTS]
    dm = [mean(x) for x in g["dctcp"]]
    dw = [min(x) for x in g["dctcp"]]
    mm = [mean(x) for x in g["mptcp"]]
    mw = [min(x) for x in g["mptcp"]]
    nw = [min(x) for x in g["ndp"]]
    dctcp = Claim("dctcp-collisions", "Over ECMP, DCTCP's flows collide: about 40 % of line rate on average, some flows "
                  "below 1 Gbit/s", "around 40 %; some flows < 1 Gbit/s (Figure 14)", dm,
                  bool(dm) and all(0.3 <= m <= 0.5 for m in dm) and all(w < 0.1 for w in dw),
                  "DCTCP's mean goodput within 0.30-0.50 of line rate and its worst flow below 0.1, in every seed",
                  "fraction of line rate", quote=Q_DCTCP)
    dctcp.tried("worst-flow", "DCTCP's worst flow, against 1 Gbit/s (0.1)", dw, bool(dw) and all(w < 0.1 for w in dw))
    mptcp = Claim("mptcp", "MPTCP reaches 89 % of line rate and its worst flow 6 Gbit/s", "89 %; worst flow 6 Gbit/s "
                  "(Figure 14)", mm, bool(mm) and all(m >= 0.84 for m in mm) and all(w >= 0.55 for w in mw),
                  "MPTCP's mean goodput >= 0.84 (89 % less five points) and its worst flow >= 0.55 (6 Gbit/s less a "
                  "half) in every seed", "fraction of line rate", quote=Q_MPTCP)
    mptcp.tried("worst-flow", "MPTCP's worst flow, against 0.55", mw, bool(mw) and all(w >= 0.55 for w in mw))
    pairs = list(zip(nw, mw, dw))
    fair = Claim("ndp-fairest", "NDP's worst flow does better than MPTCP's and DCTCP's", "much better fairness "
                 "(Figure 14)", [n - max(m, d) for n, m, d in pairs],
                 bool(pairs) and all(n > max(m, d) for n, m, d in pairs),
                 "NDP's worst flow above MPTCP's and DCTCP's, same seed, in every seed (value: the margin over the "
                 "better of the two)", "fraction of line rate", quote=Q_NDP_UTIL)
    return [dctcp, mptcp, fair]


register(Reproduction("ndp-permutation", PAPER, "Figure 14; section 6.2", "A permutation on a k = 8 fat-tree: NDP's "
                      "mean and worst goodput", plan_permutation, analyze_permutation, READINGS_PERM))
register(Reproduction("ndp-incast", PAPER, "Figure 16; abstract", "8 to 64 senders of 450 kB into one host: NDP's last "
                      "and first flow against the receiver link's limit", plan_incast, analyze_incast, READINGS_INCAST))
READINGS_TRANSPORTS = (
    Reading("tcp-1500", "the TCPs with 1,500-byte packets (1,460-byte segments) instead of NDP's 9,000-byte payloads",
            (("tcp.mss_bytes", 1460), ("tcp.header_bytes", 40)), claims=("dctcp-collisions", "mptcp")),
    Reading("longer-run", "50 ms measured over the last 40 ms instead of 20 ms over the last 15: more time for MPTCP's "
            "subflows to settle", (("sim.duration_s", 0.05), ("measure.window_s", 0.04)), claims=("dctcp-collisions", "mptcp")),
    Reading("queue-100", "100-packet switch queues for the TCPs instead of the paper's 200", (("queue.limit_pkts", 100),),
            claims=("dctcp-collisions", "mptcp")),
    Reading("k12", "a k = 12 fat-tree: 432 hosts, the size of the paper's Figure 14", (("topology.k", 12),)),
)

register(Reproduction("ndp-transports", PAPER, "Figure 14", "The permutation under NDP, TCP, DCTCP and MPTCP",
                      plan_transports, analyze_transports, READINGS_TRANSPORTS))
