"""DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015):
PFC's unfairness and victim flow, and DCQCN at one bottleneck.

The paper's text is not in this repository (``../shared/papers``): its claims are taken from
its abstract, as the Microsoft Research publication page gives it ("PFC can lead to poor
application performance due to problems like head-of-line blocking and unfairness", "we show
that DCQCN dramatically improves throughput and fairness of RoCEv2 RDMA traffic"). Its own
topologies and figures are not rebuilt; the settings below show the problems the abstract names
at the paper's 40 Gbit/s:

- ``dcqcn-unfairness`` (``scenarios/papers/dcqcn/unfairness.toml``): four flows to one receiver
  behind three ingress ports of its switch (two of them share one port), and a victim flow that
  shares that port's upstream switch but goes elsewhere. PFC alone (``roce.cc = "none"``)
  against DCQCN.
- ``dcqcn-convergence`` (``scenarios/papers/dcqcn/convergence.toml``): eight flows started in
  the first 8 ms into one receiver; fairness once all run, the bottleneck's queue, the pauses.
- ``dcqcn-mixed`` (``scenarios/papers/dcqcn/mixed.toml``): four TCP flows (lossy class) and four
  RoCE flows with DCQCN (lossless class) into one receiver, the switch serving the classes in
  turn or the lossless one first: which class starves which. dcfair's own checks, no paper's.

Full forms: 3 seeds (the seeds move the switches' ECN marking draws); quick forms: 1 seed,
shorter runs. The DCQCN parameters are the defaults of ``[roce.dcqcn]``
(``docs/mechanisms/dcqcn.md``), the marking ``[pfc.ecn]``'s (Kmin 5 kB, Kmax 200 kB, Pmax 1 %).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import List

from dcfair.data import PAPERS
from dcfair.reproduce import Claim, Reading, Reproduction, Study, mean, pyplot, register, save_figure
from dcfair.runner import Point

PAPER = "DCQCN (Zhu et al., SIGCOMM 2015; text not in the repository)"
QUOTE_PFC = "PFC can lead to poor application performance due to problems like head-of-line blocking and unfairness."
QUOTE_DCQCN = "we show that DCQCN dramatically improves throughput and fairness of RoCEv2 RDMA traffic."
UNFAIR = str(PAPERS / "dcqcn/unfairness.toml")
CONV = str(PAPERS / "dcqcn/convergence.toml")
MIXED = str(PAPERS / "dcqcn/mixed.toml")
SCHEDULERS = ("round_robin", "strict")
#: The bottleneck of ``mixed.toml``, Gbit/s.
LINK_GBPS = 40.0
CCS = ("none", "dcqcn")
NAMES = {"none": "PFC alone", "dcqcn": "DCQCN"}
#: Payload bytes of a RoCE data packet (``roce.mtu_bytes``): ``pkts_in_window`` x this = goodput.
PAYLOAD = 1000
#: The victim's max-min fair rate in ``unfairness.toml``: the t -> s link (40 Gbit/s) less the two
#: flows to r at their fair 10 Gbit/s each.
VICTIM_FAIR_GBPS = 20.0

READINGS = (
    Reading("paper-marking-off", "no ECN marking at the switches (pfc.ecn.pmax = 0): DCQCN without its congestion point",
            (("pfc.ecn.pmax", 0.0),), (("cc", "dcqcn"),)),
    Reading("fork-dcqcn", "the HPCC authors' Mellanox DCQCN options: no clamp of the target rate, timer-only increase "
            "stages (1 fast-recovery step, 300 us timer)",
            (("roce.dcqcn.clamp_target_rate", False), ("roce.dcqcn.timer_only", True),
             ("roce.dcqcn.fast_recovery_steps", 1), ("roce.dcqcn.increase_timer_us", 300.0)), (("cc", "dcqcn"),)),
)


def _window(quick: bool, full_s: float, quick_s: float):
    dur = quick_s if quick else full_s
    return dur, dur / 2


def plan_unfairness(quick: bool) -> List[Point]:
    dur, win = _window(quick, 0.02, 0.01)
    seeds = range(1, 2) if quick else range(1, 4)
    return [Point.make(UNFAIR, [("roce.cc", cc), ("sim.duration_s", dur), ("measure.window_s", win)], seed, cc=cc)
            for cc in CCS for seed in seeds]


def _rates(st: Study, cc: str):
    """Per seed: {flow's source host: goodput in Gbit/s over the window}."""
    out = []
    for r in st.rows(cc=cc):
        win = r["summary"]["window_s"]
        with open(Path(r["dir"]) / "flows.csv") as f:
            out.append({row["src"]: int(row["pkts_in_window"]) * PAYLOAD * 8 / win / 1e9 for row in csv.DictReader(f)})
    return out


def analyze_unfairness(st: Study) -> List[Claim]:
    rates = {cc: _rates(st, cc) for cc in CCS}
    to_r = ("h1", "h2", "h3", "h4")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.4))
    hosts = to_r + ("v",)
    for i, cc in enumerate(CCS):
        ys = [mean([s[h] for s in rates[cc]]) for h in hosts]
        ax.bar([x + 0.4 * i for x in range(len(hosts))], ys, width=0.4, label=NAMES[cc])
    ax.axhline(10, color="k", ls=":", lw=1, label="max-min fair: flows to r (10)")
    ax.axhline(VICTIM_FAIR_GBPS, color="grey", ls="--", lw=1, label="max-min fair: victim (20)")
    ax.set_xticks([x + 0.2 for x in range(len(hosts))], ["h1 (via t)", "h2 (via t)", "h3", "h4", "victim v"])
    ax.set_ylabel("goodput, Gbit/s")
    ax.set_title("Four flows to r, and the victim v -> w (40 Gbit/s links)")
    ax.legend(fontsize=7)
    save_figure(fig, st)

    def spread(s):
        xs = [s[h] for h in to_r]
        return max(xs) / min(xs) if min(xs) > 0 else float("inf")

    def jain(s):
        xs = [s[h] for h in to_r]
        return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))

    st.table = [{"cc": cc, "seeds": len(rates[cc]),
                 **{f"{h}_gbps": round(mean([s[h] for s in rates[cc]]), 2) for h in hosts},
                 "jain_to_r": round(mean([jain(s) for s in rates[cc]]), 4),
                 "pause_frames": round(mean(st.metric("pfc_pauses_sent", cc=cc))),
                 "lossless_drops": round(mean(st.metric("lossless_drops", cc=cc)))}
                for cc in CCS]
    pfc_spread = [spread(s) for s in rates["none"]]
    victim_none = [s["v"] for s in rates["none"]]
    gain = [jain(a) - jain(b) for a, b in zip(rates["dcqcn"], rates["none"])]
    victim_gain = [a["v"] / b["v"] for a, b in zip(rates["dcqcn"], rates["none"]) if b["v"] > 0]
    return [
        Claim("pfc-unfair", "With PFC alone, flows to one receiver get shares set by their ingress port: the fastest of "
              "the four gets at least 1.5 times the slowest", "unfairness (abstract)", pfc_spread,
              bool(pfc_spread) and min(pfc_spread) >= 1.5, "largest / smallest goodput of the four flows to r >= 1.5 "
              "in every seed (max-min fair: 1)", "ratio", quote=QUOTE_PFC),
        Claim("pfc-victim", "With PFC alone, the victim flow, whose own path is free, is held below half its max-min fair "
              "rate by the pauses of the port it shares (head-of-line blocking)", "head-of-line blocking (abstract)",
              victim_none, bool(victim_none) and mean(victim_none) < VICTIM_FAIR_GBPS / 2,
              f"mean victim goodput < {VICTIM_FAIR_GBPS / 2:g} Gbit/s (half of its fair {VICTIM_FAIR_GBPS:g})", "Gbit/s",
              quote=QUOTE_PFC),
        Claim("dcqcn-fairer", "DCQCN makes the four flows to one receiver fairer than PFC alone", "improves fairness (abstract)",
              gain, bool(gain) and min(gain) > 0, "Jain's index of the four flows, DCQCN minus PFC alone, same seed: "
              "above 0 in every seed", "Jain index", quote=QUOTE_DCQCN),
        Claim("dcqcn-victim-throughput", "DCQCN gives the victim flow back its throughput: at least 1.5 times what PFC "
              "alone leaves it", "dramatically improves throughput (abstract)", victim_gain,
              bool(victim_gain) and mean(victim_gain) >= 1.5, "victim goodput, DCQCN / PFC alone, same seed: mean >= 1.5",
              "ratio", quote=QUOTE_DCQCN),
    ]


def plan_convergence(quick: bool) -> List[Point]:
    dur = 0.02 if quick else 0.03
    seeds = range(1, 2) if quick else range(1, 4)
    return [Point.make(CONV, [("roce.cc", cc), ("sim.duration_s", dur), ("measure.window_s", dur - 0.01)], seed, cc=cc)
            for cc in CCS for seed in seeds]


def _series(r, metric: str):
    """(time, port or flow, value) rows of one run's timeseries.csv for ``metric``."""
    with open(Path(r["dir"]) / "timeseries.csv") as f:
        for row in csv.DictReader(f):
            if row["metric"] == metric:
                yield float(row["time_s"]), row["port"] or row["flow_id"], float(row["value"])


def _queue_mean(r) -> float:
    start = r["summary"]["sim_time_s"] - r["summary"]["window_s"]
    q = [v for t, port, v in _series(r, "queue_bytes") if port == "sw->r0" and t >= start]
    return sum(q) / len(q) if q else float("nan")


def analyze_convergence(st: Study) -> List[Claim]:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4), sharey=True)
    for ax, cc in zip(axes, CCS):
        rows = st.rows(cc=cc)
        if not rows:
            continue
        by_flow = {}
        for t, f, v in _series(rows[0], "delivered_bytes"):
            by_flow.setdefault(f, []).append((t, v))
        for f, pts in sorted(by_flow.items(), key=lambda kv: int(kv[0])):
            ts = [t for t, _ in pts][1:]
            rate = [(b1 - b0) * 8 / (t1 - t0) / 1e9 for (t0, b0), (t1, b1) in zip(pts, pts[1:])]
            ax.plot([t * 1e3 for t in ts], rate, lw=0.8, label=f"flow {f}")
        ax.set_title(f"{NAMES[cc]}: eight flows into 40 Gbit/s")
        ax.set_xlabel("time, ms")
    axes[0].set_ylabel("goodput, Gbit/s (0.5 ms bins)")
    axes[1].legend(fontsize=6, ncol=2)
    save_figure(fig, st)

    jd = st.metric("jain_index", cc="dcqcn")
    qn = [_queue_mean(r) for r in st.rows(cc="none")]
    qd = [_queue_mean(r) for r in st.rows(cc="dcqcn")]
    pn, pd_ = st.metric("pfc_pauses_sent", cc="none"), st.metric("pfc_pauses_sent", cc="dcqcn")
    st.table = [{"cc": cc, "seeds": len(st.rows(cc=cc)), "jain_index": round(mean(st.metric("jain_index", cc=cc)), 4),
                 "utilization": round(mean(st.metric("utilization", cc=cc)), 4),
                 "queue_mean_kb": round(mean([_queue_mean(r) for r in st.rows(cc=cc)]) / 1e3, 1),
                 "pause_frames": round(mean(st.metric("pfc_pauses_sent", cc=cc))),
                 "paused_ms": round(mean(st.metric("pfc_paused_s", cc=cc)) * 1e3, 3),
                 "lossless_drops": round(mean(st.metric("lossless_drops", cc=cc)))}
                for cc in CCS]
    q_ratio = [a / b for a, b in zip(qd, qn) if b > 0]
    p_ratio = [a / b for a, b in zip(pd_, pn) if b > 0]
    return [
        Claim("dcqcn-fair-share", "DCQCN shares one bottleneck fairly among eight flows once all have started",
              "improves fairness (abstract)", jd, bool(jd) and min(jd) >= 0.95,
              "Jain's index of the eight flows over the window >= 0.95 in every seed", "Jain index", quote=QUOTE_DCQCN),
        Claim("dcqcn-short-queue", "DCQCN keeps the bottleneck's queue below a quarter of what PFC alone holds",
              "-", q_ratio, bool(q_ratio) and max(q_ratio) < 0.25,
              "mean bottleneck queue over the window, DCQCN / PFC alone, same seed: below 0.25 in every seed", "ratio",
              scope="beyond"),
        Claim("dcqcn-rare-pauses", "DCQCN makes pauses rare: fewer than 5 % of the pause frames PFC alone sends",
              "-", p_ratio, bool(p_ratio) and max(p_ratio) < 0.05,
              "pause frames, DCQCN / PFC alone, same seed: below 0.05 in every seed", "ratio", scope="beyond"),
    ]


def plan_mixed(quick: bool) -> List[Point]:
    dur = 0.015 if quick else 0.03
    seeds = range(1, 2) if quick else range(1, 4)
    return [Point.make(MIXED, [("pfc.scheduler", sch), ("sim.duration_s", dur), ("measure.window_s", dur - 0.01)], seed,
                       scheduler=sch) for sch in SCHEDULERS for seed in seeds]


def _share(st: Study, group: str, sch: str) -> List[float]:
    """Per seed: the group's goodput as a fraction of the bottleneck."""
    return [x / (LINK_GBPS * 1e9) for x in st.metric(f"aggregate_throughput_bps_{group}", scheduler=sch)]


def analyze_mixed(st: Study) -> List[Claim]:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.4))
    for i, group in enumerate(("tcp", "rdma")):
        ax.bar([x + 0.4 * i for x in range(len(SCHEDULERS))], [mean(_share(st, group, s)) for s in SCHEDULERS], width=0.4,
               label={"tcp": "TCP (lossy)", "rdma": "RoCE + DCQCN (lossless)"}[group])
    ax.set_xticks([x + 0.2 for x in range(len(SCHEDULERS))], ["one packet each in turn", "lossless first"])
    ax.set_ylabel("share of the 40 Gbit/s bottleneck")
    ax.legend(fontsize=8)
    save_figure(fig, st)
    st.table = [{"scheduler": sch, "seeds": len(st.rows(scheduler=sch)),
                 "tcp_share": round(mean(_share(st, "tcp", sch)), 4), "rdma_share": round(mean(_share(st, "rdma", sch)), 4),
                 "tcp_drops": round(mean(st.metric("drops", scheduler=sch))),
                 "tcp_timeouts": round(mean(st.metric("timeouts", scheduler=sch))),
                 "pause_frames": round(mean(st.metric("pfc_pauses_sent", scheduler=sch))),
                 "lossless_drops": round(mean(st.metric("lossless_drops", scheduler=sch)))}
                for sch in SCHEDULERS]
    rr = [min(a, b) for a, b in zip(_share(st, "tcp", "round_robin"), _share(st, "rdma", "round_robin"))]
    gap_rr = [t - r for t, r in zip(_share(st, "tcp", "round_robin"), _share(st, "rdma", "round_robin"))]
    tcp_strict = _share(st, "tcp", "strict")
    return [
        Claim("turns-neither-starves", "Served one packet each in turn, neither class starves the other: each gets at least "
              "a quarter of the bottleneck", "-", rr, bool(rr) and min(rr) >= 0.25,
              "the smaller class's share of the bottleneck >= 0.25 in every seed", "share", scope="beyond"),
        Claim("turns-rdma-less", "Served one packet each in turn, the lossless class gets less of the link than the lossy "
              "one: the turns count packets, and RoCE's are shorter (1,058 bytes on the wire against TCP's 1,500; with "
              "equal packets, the reading equal-packets, the gap reverses)", "-", gap_rr,
              bool(gap_rr) and min(gap_rr) > 0.1, "TCP's share of the bottleneck minus RoCE's > 0.1 in every seed",
              "share", scope="beyond"),
        Claim("strict-starves-tcp", "With the lossless class served first, RoCE starves TCP: under 5 % of the bottleneck "
              "is left to it", "-", tcp_strict, bool(tcp_strict) and max(tcp_strict) < 0.05,
              "TCP's share of the bottleneck < 0.05 in every seed", "share", scope="beyond"),
    ]


register(Reproduction("dcqcn-unfairness", PAPER, "abstract", "PFC's unfairness and victim flow, PFC alone against DCQCN",
                      plan_unfairness, analyze_unfairness, READINGS))
MIXED_READINGS = (
    Reading("no-marking", "no ECN marking of the lossless class (pfc.ecn.pmax = 0): DCQCN never cuts, so what the "
            "lossless class gets is the scheduler's alone", (("pfc.ecn.pmax", 0.0),), claims=("turns-rdma-less",)),
    Reading("equal-packets", "RoCE packets as long as TCP's on the wire (roce.mtu_bytes = 1442: 1,500 bytes)",
            (("roce.mtu_bytes", 1442),), claims=("turns-rdma-less",)),
)

register(Reproduction("dcqcn-mixed", PAPER, "-", "TCP and RDMA on one fabric: which class starves which, served in "
                      "turn or lossless first", plan_mixed, analyze_mixed, MIXED_READINGS))
register(Reproduction("dcqcn-convergence", PAPER, "abstract", "Eight flows at one bottleneck: fairness, queue and pauses, "
                      "PFC alone against DCQCN", plan_convergence, analyze_convergence, READINGS))
