"""The TCP Outcast paper (paper 004): cases I to VI of section 3, the port-blackout analysis of
section 4 and the mitigations of section 5, on a k = 4 fat-tree.

Every run is ``scenarios/papers/outcast/fattree.toml`` plus the overrides below; each figure's
overrides are in its ``plan_*`` function. Throughputs are per-flow goodputs (in-order payload),
averaged over the flows of a group; the paper's "N x worse" is the ratio of the 6-hop group's
mean to the 2-hop group's, here reported the other way up, as the **share** ``two / six`` (the
2-hop flow's throughput over the mean 6-hop flow's: 1 is fair, 1/7 is the paper's case I), so
that a starved 2-hop flow gives 0 rather than infinity.

Beyond the paper, every scenario also runs under the other dcfair disciplines (``ALL_QDISCS``),
and the reproduction's ``table.csv`` lists the share under each one side by side. FairQ is one
of them although it is not a queue discipline: its label ``fairq`` stands for DropTail at every
port plus a ``[fairq]`` table at every switch (``FAIRQ``), with the case's own routing (see
``FAIRQ``). Full form: 5 seeds; quick form: 2 seeds and DropTail + HCF + FairQ (+ what a claim
needs).
``docs/mechanisms/outcast.md`` holds the claims table and explains each disagreement.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Sequence

from dcfair.data import PAPERS, WORKLOADS
from dcfair.reproduce import Claim, Reading, Reproduction, Study, mean, pyplot, register, save_figure, within_factor
from dcfair.runner import Point

PAPER = "TCP Outcast (paper 004)"
BASE = str(PAPERS / "outcast/fattree.toml")
ALL_QDISCS = ("droptail", "red", "sfq", "drr", "hcf", "afd", "fairq")
QUICK_QDISCS = ("droptail", "hcf", "fairq")
NAMES = {"droptail": "DropTail", "red": "RED", "sfq": "SFQ (ns-2, 4 buckets)", "drr": "DRR", "hcf": "HCF", "afd": "AFD",
         "fairq": "FairQ (DropTail + [fairq])"}
#: FairQ (docs/mechanisms/fairq.md): DropTail everywhere, a ``[fairq]`` table (every switch, the
#: paper's defaults: target a quarter of each port's buffer, reserved-bits scaling). The routing
#: stays the case's own (``dst_bits``, or the groups' waypoints): FairQ governs an ACK by the port
#: it enters a switch through, and at every bottleneck of these cases that is the port the flow's
#: data leaves through whatever the routing, because the ACKs start at the receiver right behind
#: it (``e0_0->h0``), or are pinned to the waypoint whose port it is (case IV, ``a0_0->e0_1``).
#: Symmetric routing would change the paths, and so the Outcast condition itself. The exception is
#: case VI's equal-RTT layout, whose bottleneck is the uplink ``e0_1->a0_0``: there the lone
#: flow's ACKs come back down through a0_1 (routing by h3's address bits) and enter e0_1 through
#: another port, so FairQ cannot govern that flow, and the case has no FairQ row.
FAIRQ = [("queue.kind", "droptail"), ("fairq.target_fraction", 0.25)]
SIX_HOP_HOSTS = [f"h{i}" for i in range(4, 16)]
#: Section 5's ns-2 queue (figure 12 shows it full at 30 packets): 30 packets of 1500 bytes.
NS2_QUEUE = [("queue.limit_pkts", 30), ("queue.limit_bytes", 45000)]


def _seeds(quick: bool) -> range:
    return range(1, 3) if quick else range(1, 6)


def _qdiscs(quick: bool) -> Sequence[str]:
    return QUICK_QDISCS if quick else ALL_QDISCS


def _kind(qdisc: str) -> list:
    """The overrides that select a discipline (FairQ: DropTail + ``[fairq]``)."""
    return list(FAIRQ) if qdisc == "fairq" else [("queue.kind", qdisc)]


def _pt(qdisc: str, seed: int, extra=(), **labels) -> Point:
    return Point.make(BASE, _kind(qdisc) + list(extra), seed, qdisc=qdisc, **labels)


def share(st: Study, **labels) -> List[float]:
    """Per seed: mean 2-hop flow throughput / mean 6-hop flow throughput."""
    a = st.metric("throughput_bps_two_hop", **labels)
    b = st.metric("throughput_bps_six_hop", **labels)
    return [x / y if y else float("nan") for x, y in zip(a, b)]


def group_throughput(st: Study, t_end: float, **labels) -> Dict[str, List[float]]:
    """Per group, per seed: mean per-flow goodput (bits/s) from the start to ``t_end`` s."""
    return group_throughput_between(st, 0.0, t_end, **labels)


def group_throughput_between(st: Study, t0: float, t1: float, **labels) -> Dict[str, List[float]]:
    """Per group, per seed: mean per-flow goodput (bits/s) over ``[t0, t1]`` (from the sampled
    delivered bytes)."""
    import pandas as pd

    out: Dict[str, List[float]] = {}
    for r in st.rows(**labels):
        d = Path(r["dir"])
        flows = pd.read_csv(d / "flows.csv")
        ts = pd.read_csv(d / "timeseries.csv")
        ts = ts[ts["metric"] == "delivered_bytes"]
        a = ts["time_s"][ts["time_s"] <= t0 + 1e-12].max()
        b = ts["time_s"][ts["time_s"] <= t1 + 1e-12].max()
        if pd.isna(a):  # no sample at or before t0: nothing was delivered yet
            a = 0.0
        va = ts[ts["time_s"] == a].set_index("flow_id")["value"]
        vb = ts[ts["time_s"] == b].set_index("flow_id")["value"]
        for g, sub in flows[flows["kind"] == "tcp"].groupby("group"):
            got = (vb.reindex(sub["flow_id"]).fillna(0) - va.reindex(sub["flow_id"]).fillna(0)).mean()
            out.setdefault(g, []).append(float(got) * 8 / (b - a))
    return out


def _shares(g: Dict[str, List[float]], group: str = "two_hop") -> List[float]:
    return [x / y if y else float("nan") for x, y in zip(g[group], g["six_hop"])]


def instantaneous(run_dir: Path):
    """Per flow: goodput (Mbit/s) over each sample interval, as a DataFrame (time x flow)."""
    import pandas as pd

    ts = pd.read_csv(Path(run_dir) / "timeseries.csv")
    d = ts[ts["metric"] == "delivered_bytes"].pivot(index="time_s", columns="flow_id", values="value")
    dt = d.index.to_series().diff()
    return d.diff().div(dt, axis=0).mul(8 / 1e6).iloc[1:]


def _share_table(st: Study, key: str, values, **fixed) -> List[dict]:
    rows = []
    for v in values:
        for q in sorted({dict(r["point"].labels)["qdisc"] for r in st.records}):
            s = share(st, qdisc=q, **{key: v}, **fixed)
            if s:
                rows.append({key: v, "qdisc": q, "share_two_over_six": round(mean(s), 4),
                             "two_hop_mbps": round(mean(st.metric("throughput_bps_two_hop", qdisc=q, **{key: v}, **fixed)) / 1e6, 2),
                             "six_hop_mbps": round(mean(st.metric("throughput_bps_six_hop", qdisc=q, **{key: v}, **fixed)) / 1e6, 2),
                             "utilization": round(mean(st.metric("utilization", qdisc=q, **{key: v}, **fixed)), 4),
                             "timeouts": mean(st.metric("timeouts", qdisc=q, **{key: v}, **fixed)), "seeds": len(s)})
    return rows


def _bars(ax, st: Study, key: str, values, title: str, fmt=str, **fixed):
    qs = [q for q in ALL_QDISCS if st.rows(qdisc=q, **fixed)]
    w = 0.8 / max(1, len(qs))
    for i, q in enumerate(qs):
        ys = [mean(share(st, qdisc=q, **{key: v}, **fixed)) for v in values]
        ax.bar([j + i * w for j in range(len(values))], ys, width=w, label=NAMES.get(q, q))
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle=":")
    ax.set_xticks([j + w * (len(qs) - 1) / 2 for j in range(len(values))], [fmt(v) for v in values])
    ax.set_ylabel("2-hop / mean 6-hop throughput")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)


#: "About N times less": a share within this factor of 1/N. (A factor 2 would count a fair
#: share, 1, as "about 2x less".)
ABOUT = 1.5


def about_times_less(cid: str, text: str, quote: str, n: float, vals) -> Claim:
    """The 2-hop flow gets "about ``n`` x" less than a 6-hop flow: the mean share within a
    factor :data:`ABOUT` of 1/n."""
    return Claim(cid, text, f"1/{n:g} = {1 / n:.3g}", vals, within_factor(mean(vals), 1 / n, ABOUT),
                 f"mean share within a factor {ABOUT:g} of 1/{n:g}: [{1 / (ABOUT * n):.3g}, {ABOUT / n:.3g}]", "share",
                 quote=quote)


def clearly_below(vals, level: float) -> bool:
    """The mean of ``vals`` is below ``level`` by more than twice its standard error (an
    unfairness the seeds agree on, not one seed's luck)."""
    from dcfair.reproduce import clearly_lower

    return clearly_lower(vals, [level])


def unfair(cid: str, text: str, quote: str, vals, paper: str = "below 1") -> Claim:
    """The Outcast unfairness "persists" or "occurs": the 2-hop flow's share is clearly below 1."""
    return Claim(cid, text, paper, vals, clearly_below(vals, 1.0),
                 "mean share below 1 by more than 2 standard errors over the seeds", "share", quote=quote)


def fair(cid: str, text: str, quote: str, vals, paper: str = "about 1") -> Claim:
    """An "almost equal" / "fair" share: the mean share within a factor 1.25 of 1."""
    return Claim(cid, text, paper, vals, within_factor(mean(vals), 1.0, 1.25), "mean share in [0.8, 1.25]", "share",
                 quote=quote)


#: Readings the testbed cases are tried under.
TESTBED_TCP = Reading("testbed-tcp", "the testbed's Linux TCP: CUBIC with SACK (its testbed ran BIC and CUBIC; "
                      "its ns-2 runs NewReno)", (("tcp.cc", "cubic"), ("tcp.sack", True)))
NS2_RTO = Reading("ns2-min-rto", "ns-2's default minimum RTO of 200 ms instead of the 2 ms the paper set",
                  (("tcp.min_rto_ms", 200.0),))
DELAYED_ACK = Reading("delayed-ack", "delayed ACKs at the receiver, as Linux: 5 quick ACKs, then one ACK per two "
                      "segments or 40 ms", (("tcp.delayed_ack", True), ("tcp.quickack_segments", 5)))
LINUX_2_6_18 = Reading("linux-2.6.18", "the testbed kernel's defaults together (CentOS 5.5, Linux 2.6.18: 'We used the "
                      "default values for all TCP parameters except the minimum round-trip timeout'): CUBIC for its BIC "
                      "(dcfair has no BIC), SACK, timestamps, delayed ACKs after quick ACKs, an initial window of 3",
                      (("tcp.cc", "cubic"), ("tcp.sack", True), ("tcp.timestamps", True), ("tcp.delayed_ack", True),
                       ("tcp.quickack_segments", 5), ("tcp.init_cwnd_pkts", 3)))
CASE_READINGS = (TESTBED_TCP, NS2_RTO, DELAYED_ACK, LINUX_2_6_18)


# --- case I: one 2-hop flow against 2, 6, 12 six-hop flows (figure 3) ---------------------------

CASE1_N = (2, 6, 12)


def plan_case1(quick: bool) -> List[Point]:
    return [_pt(q, s, [("groups.six_hop.count", n)], six=n) for n in CASE1_N for q in _qdiscs(quick) for s in _seeds(quick)]


def analyze_case1(st: Study) -> List[Claim]:
    plt = pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(14, 7))
    for ax, n in zip(axes[0], CASE1_N):
        r = st.rows(qdisc="droptail", six=n)[0]
        inst = instantaneous(r["dir"])
        import pandas as pd

        groups = pd.read_csv(Path(r["dir"]) / "flows.csv").set_index("flow_id")["group"]
        for f in inst.columns:
            two = groups[f] == "two_hop"
            ax.plot(inst.index, inst[f], linewidth=2.0 if two else 0.6, color="red" if two else None,
                    label="2-hop flow" if two else None)
        ax.set_title(f"DropTail, 1 vs {n} six-hop flows (seed {r['point'].seed})", fontsize=9)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("goodput per 10 ms (Mbit/s)")
        ax.legend(fontsize=7)
    horizons = (0.1, 0.2, 0.5)
    for ax, n in zip(axes[1], CASE1_N):
        g = {t: group_throughput(st, t, qdisc="droptail", six=n) for t in horizons}
        xs = range(len(horizons))
        ax.bar([x - 0.2 for x in xs], [mean(g[t]["two_hop"]) / 1e6 for t in horizons], width=0.4, label="2-hop flow")
        ax.bar([x + 0.2 for x in xs], [mean(g[t]["six_hop"]) / 1e6 for t in horizons], width=0.4, label="mean 6-hop flow")
        ax.set_xticks(list(xs), [f"first {t} s" for t in horizons])
        ax.set_ylabel("mean goodput (Mbit/s)")
        ax.set_title(f"DropTail, 1 vs {n}: aggregate throughput", fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle("TCP Outcast fig. 3: one 2-hop flow against N six-hop flows, k=4 fat-tree, 16 KB taildrop")
    save_figure(fig, st)
    st.table = _share_table(st, "six", CASE1_N)

    s2, s6, s12 = (share(st, qdisc="droptail", six=n) for n in CASE1_N)
    g01 = group_throughput(st, 0.1, qdisc="droptail", six=2)
    early2 = [a / b for a, b in zip(g01["two_hop"], g01["six_hop"])]
    overall = "Overall, the aggregate throughput of flow 1 is 2x and 7x worse than the average throughput of the six " \
              "and twelve 6-hop flows, respectively"
    return [
        about_times_less("twelve-about-7x", "DropTail, 1 vs 12: the 2-hop flow gets about 7x less than a 6-hop flow",
                         overall, 7, s12),
        about_times_less("six-about-2x", "DropTail, 1 vs 6: about 2x less", overall, 2, s6),
        Claim("two-early-advantage", "DropTail, 1 vs 2: the 2-hop flow gets more than an average share in the first 0.1 s",
              "higher than average in the beginning", early2, mean(early2) > 1.0, "mean share over [0, 0.1 s] above 1", "share",
              quote="with two 6-hop flows, flow 1 gets higher than average share in the beginning"),
        Claim("worse-with-more", "The 2-hop flow's share falls as 6-hop flows are added (2, 6, 12)", "falls",
              [mean(s2), mean(s6), mean(s12)], mean(s2) > mean(s6) > mean(s12),
              "mean share with 2 above that with 6, above that with 12 (values: the three means)", "share",
              quote="as we increase the number of long-distance flows to six and twelve, flow 1's throughput becomes "
                    "increasingly worse and practically starves"),
    ]


register(Reproduction("outcast-case1", PAPER, "fig. 3", "case I: one 2-hop flow against 2, 6 and 12 six-hop flows",
                      plan_case1, analyze_case1, CASE_READINGS))


# --- figure 2: fifteen flows, from 2, 4 and 6 hops ---------------------------------------------

#: Flow f1 from h1 (2 hops), f2 and f3 from h2 and h3 (4 hops), f4 .. f15 from the other pods.
FOUR_HOP = [("groups.four_hop.count", 2), ("groups.four_hop.src", '["h2", "h3"]'), ("groups.four_hop.dst", "h0"),
            ("groups.four_hop.start_max_s", 0.001)]


def plan_fig2(quick: bool) -> List[Point]:
    return [_pt(q, s, FOUR_HOP, flows=15) for q in _qdiscs(quick) for s in _seeds(quick)]


def share_of(st: Study, group: str, **labels) -> List[float]:
    """Per seed: mean throughput of ``group``'s flows / mean 6-hop flow throughput."""
    a = st.metric(f"throughput_bps_{group}", **labels)
    b = st.metric("throughput_bps_six_hop", **labels)
    return [x / y if y else float("nan") for x, y in zip(a, b)]


def analyze_fig2(st: Study) -> List[Claim]:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    qs = [q for q in ALL_QDISCS if st.rows(qdisc=q)]
    w = 0.8 / 3
    for i, g in enumerate(("two_hop", "four_hop", "six_hop")):
        ax.bar([j + i * w for j in range(len(qs))], [mean(st.metric(f"throughput_bps_{g}", qdisc=q)) / 1e6 for q in qs],
               width=w, label=f"mean {g.replace('_', '-')} flow")
    ax.set_xticks([j + w for j in range(len(qs))], [NAMES.get(q, q) for q in qs], fontsize=7)
    ax.set_ylabel("mean goodput over 0.5 s (Mbit/s)")
    ax.set_title("TCP Outcast fig. 2: 15 flows to one receiver (1 at 2 hops, 2 at 4, 12 at 6)", fontsize=9)
    ax.legend(fontsize=7)
    save_figure(fig, st)
    st.table = [{"qdisc": q, "two_over_six": round(mean(share_of(st, "two_hop", qdisc=q)), 4),
                 "four_over_six": round(mean(share_of(st, "four_hop", qdisc=q)), 4), "seeds": len(st.rows(qdisc=q))}
                for q in qs]
    return [
        about_times_less("f1-7-8x", "DropTail: flow f1 (2 hops) gets 7 to 8x less than flows f4-f15 (6 hops)",
                         "Flow f1 which has the shortest RTT achieves significantly lesser aggregate throughput than any "
                         "of f4-f15—almost 7-8x lower", 7.5, share_of(st, "two_hop", qdisc="droptail")),
        about_times_less("f2-f3-2x", "DropTail: flows f2 and f3 (4 hops) get about 2x less than f4-f15",
                         "Flows f2 and f3 also achieve lesser throughput (about 2x) than f4-f15", 2,
                         share_of(st, "four_hop", qdisc="droptail")),
    ]


register(Reproduction("outcast-fig2", PAPER, "fig. 2", "fifteen flows to one receiver: 1 at 2 hops, 2 at 4, 12 at 6",
                      plan_fig2, analyze_fig2, CASE_READINGS))


# --- case II: 10, 20, 30 flows per host at 1:12 (figure 4) --------------------------------------

CASE2_M = (10, 20, 30)


def plan_case2(quick: bool) -> List[Point]:
    ms = (10,) if quick else CASE2_M
    return [_pt(q, s, [("groups.two_hop.count", m), ("groups.six_hop.count", 12 * m)], per_host=m)
            for m in ms for q in _qdiscs(quick) for s in _seeds(quick)]


def analyze_case2(st: Study) -> List[Claim]:
    ms = (10,) if st.quick else CASE2_M
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    _bars(ax, st, "per_host", ms, "TCP Outcast fig. 4: flows per host at 1:12 (per-host ratio = per-flow ratio)",
          fmt=lambda m: f"{m} per host")
    save_figure(fig, st)
    st.table = _share_table(st, "per_host", ms)
    s10 = share(st, qdisc="droptail", per_host=10)
    claims = [about_times_less("ten-per-host-3x", "DropTail, 10 flows per host (10 vs 120): the 2-hop flows get about 3x less",
                               "the average throughput of the 2-hop flows is 3x worse than that of the 120 6-hop flows", 3, s10)]
    for m in ms[1:]:
        claims.append(unfair(f"persists-{m}", f"DropTail, {m} flows per host: the unfairness persists",
                             "We see that the similar unfairness persists even in this scenario",
                             share(st, qdisc="droptail", per_host=m)))
    return claims


register(Reproduction("outcast-case2", PAPER, "fig. 4", "case II: 10, 20 and 30 flows per host at 1:12",
                      plan_case2, analyze_case2, CASE_READINGS))


# --- case III: staggered starts (figure 5) ------------------------------------------------------

#: Start of the 2-hop flow relative to the 6-hop flows (which start at 0.2 s), seconds.
CASE3_OFFSETS = (-0.1, 0.1, 0.2)
CASE3_SIX_START = 0.2


def plan_case3(quick: bool) -> List[Point]:
    pts = []
    for off in CASE3_OFFSETS:
        t2 = CASE3_SIX_START + off
        last = max(t2, CASE3_SIX_START)
        ov = [("sim.duration_s", round(last + 0.5, 6)), ("measure.window_s", 0.5),
              ("groups.six_hop.start_min_s", CASE3_SIX_START), ("groups.six_hop.start_max_s", CASE3_SIX_START + 0.001),
              ("groups.two_hop.start_min_s", round(t2, 6)), ("groups.two_hop.start_max_s", round(t2 + 0.001, 6))]
        pts += [_pt(q, s, ov, offset=off) for q in _qdiscs(quick) for s in _seeds(quick)]
    return pts


def analyze_case3(st: Study) -> List[Claim]:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    _bars(ax, st, "offset", CASE3_OFFSETS, "TCP Outcast fig. 5: 2-hop flow starting before/after the 6-hop flows "
          "(0.5 s once all are active)", fmt=lambda o: f"2-hop {'+' if o > 0 else ''}{o * 1000:.0f} ms")
    save_figure(fig, st)
    st.table = _share_table(st, "offset", CASE3_OFFSETS)
    before = share(st, qdisc="droptail", offset=-0.1)
    after = share(st, qdisc="droptail", offset=0.1) + share(st, qdisc="droptail", offset=0.2)
    # the head-start run: all flows are active from 0.2 s; its share over the first and the
    # second half of the 0.5 s that follow
    first = _shares(group_throughput_between(st, CASE3_SIX_START, CASE3_SIX_START + 0.25, qdisc="droptail", offset=-0.1))
    second = _shares(group_throughput_between(st, CASE3_SIX_START + 0.25, CASE3_SIX_START + 0.5, qdisc="droptail",
                                              offset=-0.1))
    return [
        unfair("head-start-no-help", "DropTail: a 100 ms head start does not save the 2-hop flow",
               "we can observe that the 2- ... hop flow obtains significantly lower throughput even if it starts 100ms "
               "before the 6-hop flows",
               before, "significantly lower"),
        unfair("late-start-starves", "DropTail: starting 100 or 200 ms after the 6-hop flows, the 2-hop flow gets less",
               "we stagger the start time of the 2-hop flow to be 100ms before, 100ms after, and 200ms after the 6-hop flows",
               after, "lower"),
        Claim("disparity-grows", "DropTail, 100 ms head start: the disparity grows with time (share lower in the second "
              "half of the 0.5 s than in the first)", "grows", [mean(first), mean(second)], mean(second) < mean(first),
              "mean share over [0.45, 0.7] s below that over [0.2, 0.45] s (values: both)", "share",
              quote="we can clearly observe the throughput disparity between the 2-hop flow and 6-hop flows increases "
                    "with time"),
    ]


register(Reproduction("outcast-case3", PAPER, "fig. 5", "case III: unsynchronized starts",
                      plan_case3, analyze_case3, CASE_READINGS))


# --- case IV: distinct end points, bottleneck aggregation -> ToR (figure 6) --------------------

def plan_case4(quick: bool) -> List[Point]:
    # An in-pod flow h0 -> h2 and twelve flows from the other pods to h3 meet at a0_0's port to
    # e0_1: one input port (from e0_0) carries the one flow, another (from a core) the twelve.
    # Routing by destination bits would send traffic for h2 and h3 through different
    # aggregation switches, so both groups name a0_0 as their waypoint.
    ov = [("groups.two_hop.src", "h0"), ("groups.two_hop.dst", "h2"), ("groups.two_hop.via", "a0_0"),
          ("groups.six_hop.dst", "h3"), ("groups.six_hop.via", "a0_0"), ("measure.ports", '["a0_0->e0_1"]')]
    return [_pt(q, s, ov, case="IV") for q in _qdiscs(quick) for s in _seeds(quick)]


def analyze_case4(st: Study) -> List[Claim]:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    _bars(ax, st, "case", ["IV"], "TCP Outcast fig. 6: distinct end points, bottleneck a0_0 -> e0_1",
          fmt=lambda _: "1 in-pod flow vs 12 from other pods")
    save_figure(fig, st)
    st.table = _share_table(st, "case", ["IV"])
    s = share(st, qdisc="droptail", case="IV")
    util = st.metric("utilization", qdisc="droptail", case="IV")
    return [
        unfair("agg-bottleneck-unfair", "DropTail: the unfairness persists with distinct end points at an aggregation->ToR "
               "bottleneck", "Figure 6(b) shows that unfairness persists", s, "persists"),
        Claim("agg-port-is-bottleneck", "The aggregation->ToR port is the bottleneck (saturated): the setting is the paper's",
              "bottleneck", util, min(util) >= 0.95, "utilization of a0_0->e0_1 >= 0.95 in every run", "fraction",
              quote="Here, the bottleneck link lies between the aggregate switch and the ToR switch", scope="beyond"),
    ]


register(Reproduction("outcast-case4", PAPER, "fig. 6", "case IV: distinct end points, bottleneck between aggregation and ToR",
                      plan_case4, analyze_case4, CASE_READINGS))


# --- case V: background traffic (figure 7) -----------------------------------------------------

CASE5_LOADS = (0.1, 0.2, 0.5)
DATAMINING = str(WORKLOADS / "datamining_cdf.txt")


def plan_case5(quick: bool) -> List[Point]:
    # One 2-hop, two 4-hop (h2, h3) and twelve 6-hop flows to h0, plus background flows between
    # random pairs of all 16 hosts: each host starts Poisson flows with VL2 sizes (the pFabric
    # "data mining" CDF, VL2's distribution) at `load` of its own 1 Gbps link, so about `load`
    # of the bottleneck's capacity arrives at h0 as background.
    base = [("groups.four_hop.count", 2), ("groups.four_hop.src", '["h2", "h3"]'), ("groups.four_hop.dst", "h0"),
            ("groups.four_hop.start_max_s", 0.001)]
    pts = []
    for load in (0.0,) + CASE5_LOADS:
        bg = [] if load == 0 else [("poisson.load", load), ("poisson.cdf_file", DATAMINING), ("poisson.cdf_unit", "packets")]
        pts += [_pt(q, s, base + bg, background=load) for q in _qdiscs(quick) for s in _seeds(quick)]
    return pts


def analyze_case5(st: Study) -> List[Claim]:
    loads = (0.0,) + CASE5_LOADS
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4))
    xs = range(len(loads))
    for off, g, label in ((-0.25, "two_hop", "2-hop"), (0.0, "four_hop", "4-hop"), (0.25, "six_hop", "6-hop")):
        ax.bar([x + off for x in xs], [mean(st.metric(f"throughput_bps_{g}", qdisc="droptail", background=b)) / 1e6 for b in loads],
               width=0.25, label=f"mean {label} flow")
    ax.set_xticks(list(xs), [f"{int(b * 100)} % background" for b in loads])
    ax.set_ylabel("mean goodput over 0.5 s (Mbit/s)")
    ax.set_title("TCP Outcast fig. 7: DropTail under background traffic (VL2 sizes, random pairs)", fontsize=9)
    ax.legend(fontsize=8)
    save_figure(fig, st)
    st.table = _share_table(st, "background", loads)
    s10, s20 = (share(st, qdisc="droptail", background=b) for b in CASE5_LOADS[:2])
    late50 = _shares(group_throughput_between(st, 0.2, 0.5, qdisc="droptail", background=0.5))
    gap = "the gap between the throughput of 2-hop flows and 6-hop flows remain 4x and 2.5x under background traffic " \
          "of 10%, 20% of the bottleneck link capacity (1 Gbps) respectively"
    return [
        about_times_less("bg10-4x", "DropTail, 10 % background: the 2-hop flow still gets about 4x less", gap, 4, s10),
        about_times_less("bg20-2.5x", "DropTail, 20 % background: about 2.5x less", gap, 2.5, s20),
        Claim("bg50-tapers", "DropTail, 50 % background: the unfairness tapers off after 0.2 s", "near 1 (after 0.2 s)",
              late50, within_factor(mean(late50), 1.0, ABOUT),
              f"mean share over [0.2, 0.5] s within a factor {ABOUT:g} of 1", "share",
              quote="Only when the background traffic reaches 50% of the bottleneck link capacity, the unfairness seems to "
                    "taper off, that too after 0.2 seconds"),
    ]


register(Reproduction("outcast-case5", PAPER, "fig. 7", "case V: background traffic at 10, 20 and 50 %",
                      plan_case5, analyze_case5, CASE_READINGS))


# --- case VI: buffer sizes, equal RTTs, more input ports (section 3.2.6) ------------------------

CASE6_BUFFERS_KB = (16, 32, 64, 128, 512)


def plan_case6(quick: bool) -> List[Point]:
    qs, seeds = _qdiscs(quick), _seeds(quick)
    bufs = (16, 128) if quick else CASE6_BUFFERS_KB
    pts = [_pt(q, s, [("queue.limit_bytes", kb * 1024)], variant=f"buffer {kb} KB") for kb in bufs for q in qs for s in seeds]
    # Equal RTTs: 12 flows from h2 and one from h3 (both 4 hops from h0); they meet at e0_1's
    # uplink, where h2's port carries twelve flows and h3's one.
    eq = [("groups.two_hop.src", "h3"), ("groups.six_hop.src", "h2"), ("measure.ports", '["e0_1->a0_0", "e0_1->a0_1"]')]
    # (No FairQ here: the lone flow's ACKs enter e0_1 through its port to a0_1, not through the
    # bottleneck e0_1->a0_0; see ``FAIRQ``.)
    pts += [_pt(q, s, eq, variant="equal RTTs") for q in qs if q != "fairq" for s in seeds]
    # Three input ports: six 6-hop flows come down through a0_0, six through a0_1.
    three = [("groups.six_hop.count", 6), ("groups.six_hop.src", '["h4", "h5", "h6", "h7", "h8", "h9"]'),
             ("groups.six_hop.via", "a0_0"), ("groups.six_b.count", 6),
             ("groups.six_b.src", '["h10", "h11", "h12", "h13", "h14", "h15"]'), ("groups.six_b.dst", "h0"),
             ("groups.six_b.via", "a0_1"), ("groups.six_b.start_max_s", 0.001)]
    pts += [_pt(q, s, three, variant="3 input ports") for q in qs for s in seeds]
    # Figure 8: TCP CUBIC without and with SACK (the testbed's Linux), NewReno with SACK, and
    # MPTCP (see ``CASE6_TCP``).
    for name, ov in CASE6_TCP.items():
        pts += [_pt(q, s, ov, variant=name) for q in qs for s in seeds]
    return pts


CASE6_TCP = {
    "CUBIC": [("tcp.cc", "cubic")],
    "CUBIC + SACK": [("tcp.cc", "cubic"), ("tcp.sack", True)],
    "NewReno + SACK": [("tcp.sack", True)],
    # The paper does not say how many subflows its MPTCP opened ("many different sub-flows");
    # 4 is the number of core paths between two pods of its k = 4 fat-tree. LIA over NewReno
    # with SACK, so "NewReno + SACK" is the same transport on one path. The case's routing
    # (by destination address) puts every subflow of a connection on the same path.
    "MPTCP": [("tcp.sack", True), ("tcp.mptcp.subflows", 4), ("tcp.mptcp.coupling", "lia")],
}


def analyze_case6(st: Study) -> List[Claim]:
    bufs = (16, 128) if st.quick else CASE6_BUFFERS_KB
    variants = [f"buffer {kb} KB" for kb in bufs] + ["equal RTTs", "3 input ports"] + list(CASE6_TCP)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(11, 4))
    _bars(ax, st, "variant", variants, "TCP Outcast section 3.2.6: buffer sizes, equal RTTs, three input ports",
          fmt=lambda v: v.replace("buffer ", ""))
    save_figure(fig, st)
    st.table = _share_table(st, "variant", variants)
    from dcfair.reproduce import clearly_lower

    claims = []
    for kb in bufs:
        claims.append(unfair(f"buffer-{kb}kb", f"DropTail, {kb} KB buffers: the unfairness persists",
                             "we have tried with buffer sizes of 16KB and 512KB and found that the unfairness still persists"
                             if kb in (16, 512) else "we simulated different buffer sizes of 32, 64, 128KB, and found "
                             "similar results", share(st, qdisc="droptail", variant=f"buffer {kb} KB"), "persists"))
    small, big = share(st, qdisc="droptail", variant=f"buffer {bufs[0]} KB"), share(st, qdisc="droptail", variant=f"buffer {bufs[-1]} KB")
    claims.append(Claim("buffer-no-effect", f"DropTail: a larger buffer ({bufs[-1]} KB against {bufs[0]} KB) has no "
                        "significant effect on the share", "no significant effect", [mean(small), mean(big)],
                        not clearly_lower(small, big), f"the mean share at {bufs[-1]} KB is not above the one at {bufs[0]} KB "
                        "by more than 2 standard errors (values: both means)", "share",
                        quote="We found that increasing the buffer size does not have a significant effect on the TCP "
                              "Outcast problem"))
    claims.append(unfair("equal-rtts", "DropTail, equal RTTs (12 flows from one 4-hop host, 1 from the other): the single "
                         "flow is starved", "We observed that the TCP Out ... cast problem still exists and the single flow "
                         "is starved for throughput", share(st, qdisc="droptail", variant="equal RTTs"), "starved"))
    claims.append(unfair("three-ports", "DropTail, three input ports (1 / 6 / 6 flows): the Outcast problem is present",
                         "Even in this case, the TCP Outcast problem is present",
                         share(st, qdisc="droptail", variant="3 input ports"), "present"))
    for name in CASE6_TCP:
        claims.append(unfair("tcp-" + name.lower().replace(" + ", "-").replace(" ", "-"),
                             f"DropTail, TCP {name}: the Outcast problem occurs",
                             "Figure 8 depicts the occurrence of Outcast in all these scenarios",
                             share(st, qdisc="droptail", variant=name), "occurs (fig. 8)"))
    single, multi = share(st, qdisc="droptail", variant="NewReno + SACK"), share(st, qdisc="droptail", variant="MPTCP")
    claims.append(Claim("mptcp-reduces", "DropTail: MPTCP (4 LIA subflows) gives the 2-hop flow a larger share than "
                        "single-path NewReno with SACK", "reduced (fig. 8)", [mean(single), mean(multi)],
                        clearly_lower(single, multi), "the mean share with MPTCP is above the one with single-path "
                        "NewReno + SACK by more than 2 standard errors (values: both means)", "share",
                        quote="Figure 8 depicts the occurrence of Outcast in all these scenarios, although MPTCP seems to "
                              "reduce the extent of unfairness"))
    return claims


register(Reproduction("outcast-case6", PAPER, "section 3.2.6", "case VI: buffer sizes, equal RTTs, more input ports",
                      plan_case6, analyze_case6, (NS2_RTO, DELAYED_ACK)))


# --- section 5: mitigations (figures 15, 16, table 2) -------------------------------------------

MITIGATIONS = {
    "droptail": [("queue.kind", "droptail")],
    "red": [("queue.kind", "red")],
    "sfq": [("queue.kind", "sfq")],
    "equal-length (random core)": [("queue.kind", "droptail"), ("routing.equal_length", True), ("routing.core", "random")],
    "equal-length (core by dst bits)": [("queue.kind", "droptail"), ("routing.equal_length", True), ("routing.core", "dst_bits")],
    "pacing": [("queue.kind", "droptail"), ("tcp.pacing", True)],
    "sfq (Linux, 1024 buckets)": [("queue.kind", "sfq"), ("queue.sfq.buckets", 1024), ("queue.sfq.drop_rule", "push_out"),
                                  ("queue.sfq.hash", "flow")],
    "drr": [("queue.kind", "drr")],
    "hcf": [("queue.kind", "hcf")],
    "fairq": FAIRQ,
}
QUICK_MITIGATIONS = ("droptail", "red", "sfq", "equal-length (random core)", "pacing", "hcf", "fairq")


#: Mitigations the paper evaluated on its testbed, not in ns-2 (section 5.4: "we implemented
#: Equal-length routing in our data center testbed and conducted similar experiments as Figure
#: 3(f). Other than the new routing scheme, all the setup was kept the same"): they keep the
#: testbed's 16 KB ports of the base scenario instead of the simulations' 30-packet queues.
ON_TESTBED = ("equal-length (random core)", "equal-length (core by dst bits)")


def plan_mitigations(quick: bool) -> List[Point]:
    names = QUICK_MITIGATIONS if quick else tuple(MITIGATIONS)
    return [Point.make(BASE, ([] if m in ON_TESTBED else NS2_QUEUE) + MITIGATIONS[m], s, qdisc=m, mitigation=m)
            for m in names for s in _seeds(quick)]


def analyze_mitigations(st: Study) -> List[Claim]:
    names = [m for m in MITIGATIONS if st.rows(mitigation=m)]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(11, 4))
    xs = range(len(names))
    ax.bar([x - 0.2 for x in xs], [mean(st.metric("throughput_bps_two_hop", mitigation=m)) / 1e6 for m in names],
           width=0.4, label="2-hop flow")
    ax.bar([x + 0.2 for x in xs], [mean(st.metric("throughput_bps_six_hop", mitigation=m)) / 1e6 for m in names],
           width=0.4, label="mean 6-hop flow")
    ax.set_xticks(list(xs), names, rotation=20, fontsize=8, ha="right")
    ax.set_ylabel("mean goodput over 0.5 s (Mbit/s)")
    ax.set_title("TCP Outcast figs. 15-16: 1 vs 12 flows, 30-packet queues (equal-length routing: the testbed's 16 KB), under each mitigation", fontsize=9)
    ax.legend()
    save_figure(fig, st)
    st.table = [{"mitigation": m, "share_two_over_six": round(mean(share(st, mitigation=m)), 4),
                 "two_hop_mbps": round(mean(st.metric("throughput_bps_two_hop", mitigation=m)) / 1e6, 2),
                 "six_hop_mbps": round(mean(st.metric("throughput_bps_six_hop", mitigation=m)) / 1e6, 2),
                 "utilization": round(mean(st.metric("utilization", mitigation=m)), 4),
                 "timeouts": mean(st.metric("timeouts", mitigation=m)), "seeds": len(share(st, mitigation=m))}
                for m in names]
    from dcfair.reproduce import clearly_lower

    dt, red, sfq = share(st, mitigation="droptail"), share(st, mitigation="red"), share(st, mitigation="sfq")
    pc = share(st, mitigation="pacing")
    pacing_quote = "TCP pacing reduces throughput unfairness; the throughput gap between the 2-hop flow and 6-hop flows " \
                   "is reduced from 7x (Figure 3(f)) to 2x. However, the Outcast problem remains."
    el_quote = "We can observe that the flows get a fair throughput share which is comparable to what they achieved " \
               "under the SFQ packet scheduling discipline"
    claims = [
        about_times_less("droptail-baseline", "DropTail (30-packet queues): the 2-hop flow gets about 7x less",
                         "the throughput gap between the 2-hop flow and 6-hop flows is reduced from 7x (Figure 3(f))", 7, dt),
        Claim("red-rtt-bias", "RED (5/15 packets, weight 0.002): RTT bias in favour of the 2-hop flow", "above 1",
              red, clearly_lower([1.0], red), "mean share above 1 by more than 2 standard errors", "share",
              quote="RED queuing discipline achieves RTT bias but does not provide the true throughput fairness"),
        fair("sfq-fair", "SFQ (4 buckets): almost equal throughput",
             "We see that SFQ achieves almost equal throughput (true fairness) between the 6-hop flows and the 2-hop flow", sfq),
        about_times_less("pacing-2x", "TCP pacing narrows the gap from 7x to about 2x", pacing_quote, 2, pc),
        unfair("pacing-remains", "With TCP pacing the Outcast problem remains", pacing_quote, pc, "below 1"),
    ]
    if st.rows(mitigation="equal-length (core by dst bits)"):
        claims.append(fair("equal-length-fair", "Equal-length routing, core by destination bits (the testbed's scheme): "
                           "a fair share", el_quote, share(st, mitigation="equal-length (core by dst bits)")))
    claims.append(fair("equal-length-random-fair", "Equal-length routing, a random core per flow: a fair share", el_quote,
                       share(st, mitigation="equal-length (random core)")))
    alleviate = [m for m in ("red", "sfq", "pacing", "equal-length (random core)", "equal-length (core by dst bits)")
                 if st.rows(mitigation=m)]
    claims.append(Claim("all-alleviate", "Every mitigation gives the 2-hop flow a larger share than DropTail",
                        "all alleviate", [mean(share(st, mitigation=m)) for m in alleviate],
                        all(clearly_lower(dt, share(st, mitigation=m)) for m in alleviate),
                        f"for each of {', '.join(alleviate)}: mean share above DropTail's by more than 2 standard errors "
                        "(values: each mitigation's mean share)", "share",
                        quote="We find that although all approaches alleviate the TCP outcast problem"))
    return claims


#: Readings of section 5's settings the paper leaves open.
RED_GENTLE = Reading("red-gentle", "RED with ns-2's defaults besides the paper's three numbers: gentle, and its drop "
                     "probability in byte mode (ns-2: gentle_ true, bytes_ true)",
                     (("queue.red.gentle", True), ("queue.red.byte_mode", True)), (("mitigation", "red"),))
RED_NO_WAIT = Reading("red-no-wait", "RED without the wait between drops (ns-2's wait_ false; its default is true)",
                      (("queue.red.wait", False),), (("mitigation", "red"),))
LINUX_PACING = Reading("linux-pacing", "pacing at Linux's and ns-3's rates (200 % of cwnd/RTT in slow start, 120 % after) "
                       "instead of cwnd/RTT", (("tcp.pacing_ss_ratio", 2.0), ("tcp.pacing_ca_ratio", 1.2)),
                       (("mitigation", "pacing"),))
PACKET_CORE = Reading("random-core-per-packet", "equal-length routing with a random core per packet (the paper's "
                      "'routing each packet to a core switch randomly') instead of per flow",
                      (("routing.core", "random_packet"),), (("mitigation", "equal-length (random core)"),))
MITIGATION_READINGS = (NS2_RTO, TESTBED_TCP, RED_GENTLE, RED_NO_WAIT, LINUX_PACING, PACKET_CORE)


register(Reproduction("outcast-mitigations", PAPER, "figs. 15-16, table 2",
                      "mitigations: RED, SFQ, equal-length routing (and every dcfair discipline)",
                      plan_mitigations, analyze_mitigations, MITIGATION_READINGS))


# --- section 4: consecutive drops (figures 11, 14, 16b) -----------------------------------------

BOTTLENECK = "e0_0->h0"
#: With equal-length routing and the core by destination bits, every flow to h0 comes down
#: from core c0 (h0's number mod 4) to a0_0: that downlink takes the drops.
CORE_DOWNLINK = "c0->a0_0"


def drop_runs(st: Study, port: str = BOTTLENECK, **labels):
    """drop_runs.csv (by group) of the matching runs at ``port``, concatenated, with the seed:
    columns key (group), run_length, episodes, flows."""
    import pandas as pd

    frames = []
    for r in st.rows(**labels):
        df = pd.read_csv(Path(r["dir"]) / "drop_runs.csv")
        df = df[(df["by"] == "group") & (df["port"] == port)].copy()
        df["seed"] = r["point"].seed
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["key", "run_length", "episodes", "flows", "seed"])


def per_flow_episodes(df, group: str, min_len: int = 1) -> List[float]:
    """Per seed: episodes of at least ``min_len`` consecutive drops per flow of ``group``."""
    out = []
    for _, d in df[df["key"] == group].groupby("seed"):
        flows = max(1, int(d["flows"].iloc[0]))
        out.append(float(d[d["run_length"] >= min_len]["episodes"].sum()) / flows)
    return out


def single_drop_fraction(df, group: str) -> List[float]:
    """Per seed: the fraction of a group's drop episodes that are a single drop."""
    out = []
    for _, d in df[df["key"] == group].groupby("seed"):
        tot = float(d["episodes"].sum())
        out.append(float(d[d["run_length"] == 1]["episodes"].sum()) / tot if tot else float("nan"))
    return out


DROPS_SETTINGS = {
    "droptail, 1 flow per host": [("queue.kind", "droptail")],
    "droptail, 20 flows per host": [("queue.kind", "droptail"), ("groups.two_hop.count", 20), ("groups.six_hop.count", 240)],
    "droptail, 30-packet queue": NS2_QUEUE + [("queue.kind", "droptail")],
    "red": NS2_QUEUE + [("queue.kind", "red")],
    "sfq": NS2_QUEUE + [("queue.kind", "sfq")],
    "pacing": NS2_QUEUE + [("queue.kind", "droptail"), ("tcp.pacing", True)],
    "equal-length (core by dst bits)": [("queue.kind", "droptail"), ("routing.equal_length", True), ("routing.core", "dst_bits"),
                                        ("measure.drop_runs_ports", f'["{BOTTLENECK}", "{CORE_DOWNLINK}"]')],
    "equal-length (random core)": [("queue.kind", "droptail"), ("routing.equal_length", True), ("routing.core", "random")],
    "hcf": [("queue.kind", "hcf")],
    "fairq": FAIRQ,
}
QUICK_DROPS = ("droptail, 1 flow per host", "red", "sfq", "pacing", "equal-length (core by dst bits)", "hcf")
#: The input ports of the bottleneck e0_0->h0 (drop_runs.csv, by input): the 2-hop flow's host,
#: and the aggregation switch every 6-hop flow comes down through (routing by destination bits).
TWO_HOP_INPUT = "h1->e0_0"


def plan_drops(quick: bool) -> List[Point]:
    names = QUICK_DROPS if quick else tuple(DROPS_SETTINGS)
    ov = [("measure.drop_runs_ports", f'["{BOTTLENECK}"]')]
    return [Point.make(BASE, ov + DROPS_SETTINGS[n], s, setting=n) for n in names for s in _seeds(quick)]


def analyze_drops(st: Study) -> List[Claim]:
    names = [n for n in DROPS_SETTINGS if st.rows(setting=n)]
    plt = pyplot()
    fig, axes = plt.subplots(1, len(names), figsize=(3.2 * len(names), 3.6), sharey=True)
    rows = []
    for ax, n in zip(axes, names):
        df = drop_runs(st, setting=n)
        for g, color in (("two_hop", "red"), ("six_hop", "tab:blue")):
            d = df[df["key"] == g]
            if d.empty:
                continue
            flows = d.groupby("seed")["flows"].first().sum()
            per_len = d.groupby("run_length")["episodes"].sum() / max(1, flows)
            per_len = per_len[per_len.index <= 10]
            off = -0.2 if g == "two_hop" else 0.2
            ax.bar(per_len.index + off, per_len.values, width=0.4, color=color, label=g.replace("_", "-") + " (per flow)")
            rows.append({"setting": n, "group": g, "episodes_per_flow": round(mean(per_flow_episodes(df, g)), 2),
                         "episodes_3plus_per_flow": round(mean(per_flow_episodes(df, g, 3)), 2),
                         "single_drop_fraction": round(mean(single_drop_fraction(df, g)), 3)})
        ax.set_title(n, fontsize=8)
        ax.set_xlabel("consecutive drops k")
        ax.legend(fontsize=6)
    axes[0].set_ylabel("episodes per flow (all seeds)")
    fig.suptitle("TCP Outcast figs. 11, 14, 16(b): runs of consecutive drops at e0_0 -> h0, 1 vs 12 flows")
    save_figure(fig, st)
    st.table = rows
    import pandas as pd

    def episodes(df, group, lengths):
        """Per seed: episodes of a run length in ``lengths`` per flow of ``group``."""
        out = []
        for _, d in df[df["key"] == group].groupby("seed"):
            flows = max(1, int(d["flows"].iloc[0]))
            out.append(float(d[d["run_length"].isin(lengths)]["episodes"].sum()) / flows)
        return out

    def share_of_length(df, group, length):
        out = []
        for _, d in df[df["key"] == group].groupby("seed"):
            tot = float(d["episodes"].sum())
            out.append(float(d[d["run_length"] == length]["episodes"].sum()) / tot if tot else float("nan"))
        return out

    def many_more(df):
        two, six = episodes(df, "two_hop", (3, 4)), episodes(df, "six_hop", (3, 4))
        return [a - b for a, b in zip(two, six)], mean(two) > 0 and mean(two) >= 2 * mean(six)

    claims = []
    fig11 = "the 2-hop flow experiences many more episodes of 3 and 4 consecutive packet drops than the 6-hop flows"
    vals, ok = many_more(drop_runs(st, setting="droptail, 1 flow per host"))
    claims.append(Claim("two-hop-longer-runs", "DropTail: the 2-hop flow suffers many more episodes of 3 and 4 consecutive "
                        "drops than a 6-hop flow", "many more (fig. 11a)", vals, ok,
                        "per-flow episodes of exactly 3 or 4 drops: 2-hop at least twice the 6-hop flows' (values: "
                        "2-hop minus 6-hop per seed)", "episodes", quote=fig11))
    if st.rows(setting="droptail, 20 flows per host"):
        vals, ok = many_more(drop_runs(st, setting="droptail, 20 flows per host"))
        claims.append(Claim("twenty-per-host-longer-runs", "DropTail, 20 flows per host: the same trend", "unchanged (fig. 11b)",
                            vals, ok, "as above, with 20 flows per host", "episodes",
                            quote="This trend does not seem to change even with a larger number of flows per host"))

    def input_runs(setting, inp_filter):
        """Per seed: runs of >= 3 drops of the bottleneck's input ports that ``inp_filter`` keeps."""
        out = []
        for r in st.rows(setting=setting):
            df = pd.read_csv(Path(r["dir"]) / "drop_runs.csv")
            d = df[(df["by"] == "input") & (df["port"] == BOTTLENECK) & (df["run_length"] >= 3)]
            out.append({k: float(g["episodes"].sum()) for k, g in d.groupby("key") if inp_filter(k)})
        return out

    per_input = input_runs("droptail, 1 flow per host", lambda k: True)
    both = [float(sum(1 for v in x.values() if v > 0) >= 2) for x in per_input]
    claims.append(Claim("blackout-either-port", "DropTail: either input port of the bottleneck suffers blackouts (runs of 3 "
                        "or more consecutive drops)", "both ports (fig. 10)", both, mean(both) > 0.5,
                        "both input ports have a run of >= 3 drops in more than half the seeds (values: 1 if both did, per "
                        "seed)", "seeds", quote="We note that either of the input ports can experience this blackout "
                        "phenomenon; there is no intrinsic bias against any one port"))
    if st.rows(setting="droptail, 30-packet queue"):
        ns2 = [x.get(TWO_HOP_INPUT, 0.0) for x in input_runs("droptail, 30-packet queue", lambda k: k == TWO_HOP_INPUT)]
        claims.append(Claim("blackout-ns2-queue", "DropTail, ns-2's 30-packet queue: the 2-hop flow's input port suffers "
                            "blackouts", "consecutive drops (fig. 12)", ns2, sum(x > 0 for x in ns2) > len(ns2) / 2,
                            "runs of >= 3 drops of input h1->e0_0 in more than half the seeds (values: runs per seed)",
                            "runs", quote="This pattern repeats and in-port1 suffers from consecutive packet drops, leading "
                            "to an episode of port blackout"))
    red = drop_runs(st, setting="red")
    r2, r6 = single_drop_fraction(red, "two_hop"), single_drop_fraction(red, "six_hop")
    claims.append(Claim("red-single-drops", "RED: more than 90 % of drop episodes are single drops, for 2-hop and 6-hop "
                        "flows alike", "> 0.9 (fig. 14a)", r2 + r6, mean(r2) > 0.9 and mean(r6) > 0.9,
                        "mean single-drop fraction above 0.9 for each group (values: 2-hop seeds, then 6-hop)", "fraction",
                        quote="More than 90% of packet drop events consist of a single consecutive packet loss"))
    claims.append(Claim("red-similar", "RED: the consecutive-drop events are similar for 2-hop and 6-hop flows", "similar",
                        [mean(r2) - mean(r6)], abs(mean(r2) - mean(r6)) <= 0.1,
                        "|2-hop - 6-hop| mean single-drop fraction <= 0.1", "fraction",
                        quote="We observe that the consecutive packet drop events are similar for 2-hop and 6-hop flows"))
    if st.rows(setting="sfq"):
        sfq = drop_runs(st, setting="sfq")
        s2, s6 = share_of_length(sfq, "two_hop", 2), share_of_length(sfq, "six_hop", 2)
        claims.append(Claim("sfq-two-drops", "SFQ: 20 % of the 2-hop flow's drop events are 2 consecutive drops, more than "
                            "the 6-hop flows'", "0.2 (fig. 14b)", s2, within_factor(mean(s2), 0.2, ABOUT) and mean(s2) > mean(s6),
                            f"2-hop share of 2-drop episodes within a factor {ABOUT:g} of 0.2 and above the 6-hop flows'",
                            "fraction", quote="the 2-hop flow experiences a higher percentage of consecutive packet drop "
                            "events (20% of the time, it experiences 2 consecutive drops)"))
    if st.rows(setting="pacing"):
        pc = drop_runs(st, setting="pacing")
        two, six = per_flow_episodes(pc, "two_hop", 3), per_flow_episodes(pc, "six_hop", 3)
        claims.append(Claim("pacing-still-runs", "TCP pacing: the 2-hop flow still suffers more runs of consecutive drops",
                            "many (fig. 14c)", [a - b for a, b in zip(two, six)], mean(two) > mean(six),
                            "per-flow episodes of >= 3 drops: 2-hop above 6-hop (values: the difference per seed)", "episodes",
                            quote="the 2-hop flow still experiences many consecutive packet drops"))
    el_setting = "equal-length (core by dst bits)"
    if st.rows(setting=el_setting):
        el = drop_runs(st, CORE_DOWNLINK, setting=el_setting)
        e2, e6 = single_drop_fraction(el, "two_hop"), single_drop_fraction(el, "six_hop")
        longest = [float(d[d["episodes"] > 0]["run_length"].max()) for _, d in el.groupby("seed")]
        claims.append(Claim("equal-length-similar-drops", "Equal-length routing (the testbed's, core by destination bits): "
                            f"similar drops for both groups at the shared downlink {CORE_DOWNLINK}, no long runs",
                            "similar (fig. 16b)", longest,
                            abs(mean(e2) - mean(e6)) <= 0.1 and max(longest) < 5,
                            "|2-hop - 6-hop| single-drop fraction <= 0.1 and no run of 5 or more drops in any seed (values: "
                            "the longest run per seed)", "drops",
                            quote="the flows experience similar packet drops; none of the flows has to suffer a large "
                                  "number of consecutive packet drops"))
    return claims


DROPS_READINGS = (NS2_RTO, TESTBED_TCP,
                  Reading(RED_GENTLE.id, RED_GENTLE.what, RED_GENTLE.sets, (("setting", "red"),)),
                  Reading(RED_NO_WAIT.id, RED_NO_WAIT.what, RED_NO_WAIT.sets, (("setting", "red"),)),
                  Reading(LINUX_PACING.id, LINUX_PACING.what, LINUX_PACING.sets, (("setting", "pacing"),)))
register(Reproduction("outcast-drops", PAPER, "figs. 10, 11, 12, 14, 16(b)", "runs of consecutive drops per flow and per "
                      "input port, 2-hop vs 6-hop", plan_drops, analyze_drops, DROPS_READINGS))


# --- section 4.3: the ON/OFF blackout drop model (figure 13) -----------------------------------

BLACKOUT = str(PAPERS / "outcast/blackout_model.toml")
BLACKOUT_F = (1, 2, 3, 5, 7, 10)
BLACKOUT_M = (0, 1, 2, 4, 6, 8, 10)


def plan_blackout(quick: bool) -> List[Point]:
    fs, ms = ((1, 2, 7), (0, 10)) if quick else (BLACKOUT_F, BLACKOUT_M)
    dur = [("sim.duration_s", 1.0), ("measure.window_s", 0.8)] if quick else []
    return [Point.make(BLACKOUT, dur + [("flows.count", f), ("queue.blackout.drop_pkts", m)], s, qdisc="blackout", f=f, m=m)
            for f in fs for m in ms for s in _seeds(quick)]


def analyze_blackout(st: Study) -> List[Claim]:
    fs = sorted({dict(r["point"].labels)["f"] for r in st.records})
    ms = sorted({dict(r["point"].labels)["m"] for r in st.records})

    def agg(f, m):  # aggregate goodput of the f flows, per seed
        return [x * f for x in st.metric("throughput_bps_tcp", f=f, m=m)]

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for f in fs:
        ax.plot(ms, [mean(agg(f, m)) / 1e6 for m in ms], marker="o", label=f"{f} flow{'s' if f > 1 else ''}")
    ax.set_xlabel("consecutive drops per blackout m")
    ax.set_ylabel("aggregate goodput (Mbit/s)")
    ax.set_title("TCP Outcast fig. 13: ON/OFF blackout model, mean 5 ms between blackouts", fontsize=9)
    ax.legend(fontsize=7)
    save_figure(fig, st)
    st.table = [{"flows": f, "m": m, "aggregate_mbps": round(mean(agg(f, m)) / 1e6, 1),
                 "timeouts": mean(st.metric("timeouts", f=f, m=m))} for f in fs for m in ms]
    mhi = max(ms)
    many_f = [f for f in fs if f >= 7]
    few_f = [f for f in fs if f <= 2]
    rel = lambda f: [a / b for a, b in zip(agg(f, mhi), agg(f, 0))]  # noqa: E731
    many = [x for f in many_f for x in rel(f)]
    few = [x for f in few_f for x in rel(f)]
    return [
        Claim("many-flows-barely-hurt", f"With 7 or more flows ({', '.join(map(str, many_f))}), blackouts of up to {mhi} drops "
              "cost little throughput", "slight effect", many, all(mean(rel(f)) >= 0.8 for f in many_f),
              f"aggregate goodput at m = {mhi} at least 0.8 of m = 0 (no blackout), mean over seeds, for each f >= 7 "
              "(values: the ratio per seed)", "ratio",
              quote="We observe that when there are 7 or more flows, port blackout, i.e. consecutive packets drops during "
                    "the ON state, only affects the throughput of the flows slightly, even as m grows to 10"),
        Claim("few-flows-collapse", f"With few flows ({', '.join(map(str, few_f))}), long blackouts are catastrophic",
              "large drop", few, all(mean(rel(f)) <= 0.5 for f in few_f),
              f"aggregate goodput at m = {mhi} at most half of m = 0, mean over seeds, for each f <= 2 (values: the ratio "
              "per seed)", "ratio",
              quote="However, when there are few flows, the consecutive packet drops have a catastrophic effect on their "
                    "throughput because of timeouts"),
    ]


register(Reproduction("outcast-blackout", PAPER, "fig. 13", "the ON/OFF port-blackout drop model: throughput of f flows against m",
                      plan_blackout, analyze_blackout, (NS2_RTO, DELAYED_ACK)))
