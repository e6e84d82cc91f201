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

from dcfair.reproduce import Claim, Reproduction, Study, mean, pyplot, register, save_figure
from dcfair.runner import Point

PAPER = "TCP Outcast (paper 004)"
ROOT = Path(__file__).resolve().parents[3]
BASE = str(ROOT / "scenarios/papers/outcast/fattree.toml")
ALL_QDISCS = ("droptail", "red", "sfq", "drr", "hcf", "fairq")
QUICK_QDISCS = ("droptail", "hcf", "fairq")
NAMES = {"droptail": "DropTail", "red": "RED", "sfq": "SFQ (ns-2, 4 buckets)", "drr": "DRR", "hcf": "HCF",
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
    import pandas as pd

    out: Dict[str, List[float]] = {}
    for r in st.rows(**labels):
        d = Path(r["dir"])
        flows = pd.read_csv(d / "flows.csv")
        ts = pd.read_csv(d / "timeseries.csv")
        ts = ts[ts["metric"] == "delivered_bytes"]
        t = ts["time_s"][ts["time_s"] <= t_end + 1e-12].max()
        at = ts[ts["time_s"] == t].set_index("flow_id")["value"]
        for g, sub in flows[flows["kind"] == "tcp"].groupby("group"):
            out.setdefault(g, []).append(float(at.reindex(sub["flow_id"]).fillna(0).mean()) * 8 / t)
    return out


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


def _ratio_claim(cid, text, paper, vals, lo, hi, unit="share"):
    m = mean(vals)
    return Claim(cid, text, paper, vals, lo <= m <= hi, f"mean share in [{lo:g}, {hi:g}]", unit)


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

    s12, s6 = share(st, qdisc="droptail", six=12), share(st, qdisc="droptail", six=6)
    early2 = [a / b for a, b in zip(group_throughput(st, 0.1, qdisc="droptail", six=2)["two_hop"],
                                    group_throughput(st, 0.1, qdisc="droptail", six=2)["six_hop"])]
    return [
        Claim("twelve-several-times-less", "DropTail, 1 vs 12: the 2-hop flow gets several times less than a 6-hop flow",
              "1/7 (7x less)", s12, mean(s12) <= 1 / 3, "mean share <= 1/3", "share"),
        _ratio_claim("twelve-about-7x", "DropTail, 1 vs 12: about 7x less", "1/7 = 0.14", s12, 1 / 14, 2 / 7),
        _ratio_claim("six-about-2x", "DropTail, 1 vs 6: about 2x less", "1/2", s6, 1 / 4, 1.0),
        Claim("two-early-advantage", "DropTail, 1 vs 2: the 2-hop flow gets at least an average share in the first 0.1 s",
              "higher than average in the beginning", early2, mean(early2) >= 1.0, "mean share over [0, 0.1 s] >= 1", "share"),
        Claim("worse-with-more", "The 2-hop flow's share falls as 6-hop flows are added (2 -> 12)", "falls",
              share(st, qdisc="droptail", six=2) + s12, mean(s12) < mean(share(st, qdisc="droptail", six=2)),
              "mean share with 12 below mean share with 2", "share"),
    ]


register(Reproduction("outcast-case1", PAPER, "fig. 3", "case I: one 2-hop flow against 2, 6 and 12 six-hop flows",
                      plan_case1, analyze_case1))


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
    claims = [_ratio_claim("ten-per-host-3x", "DropTail, 10 flows per host (10 vs 120): the 2-hop host gets about 3x less",
                           "1/3", s10, 1 / 6, 2 / 3)]
    for m in ms[1:]:
        s = share(st, qdisc="droptail", per_host=m)
        claims.append(Claim(f"persists-{m}", f"DropTail, {m} flows per host: the unfairness persists", "below 1", s,
                            mean(s) <= 2 / 3, "mean share <= 2/3", "share"))
    return claims


register(Reproduction("outcast-case2", PAPER, "fig. 4", "case II: 10, 20 and 30 flows per host at 1:12",
                      plan_case2, analyze_case2))


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
    return [
        Claim("head-start-no-help", "DropTail: a 100 ms head start does not save the 2-hop flow", "significantly lower",
              before, mean(before) <= 0.5, "mean share <= 1/2 over the 0.5 s when all are active", "share"),
        Claim("late-start-starves", "DropTail: starting 100 or 200 ms after the 6-hop flows, the 2-hop flow gets much less",
              "significantly lower", after, mean(after) <= 0.5, "mean share <= 1/2", "share"),
    ]


register(Reproduction("outcast-case3", PAPER, "fig. 5", "case III: unsynchronized starts",
                      plan_case3, analyze_case3))


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
        Claim("agg-bottleneck-unfair", "DropTail: the unfairness persists with distinct end points at an aggregation->ToR bottleneck",
              "persists", s, mean(s) <= 0.5, "mean share <= 1/2", "share"),
        Claim("agg-port-is-bottleneck", "The aggregation->ToR port is the bottleneck (saturated)", "bottleneck", util,
              min(util) >= 0.95, "utilization of a0_0->e0_1 >= 0.95 in every run", "fraction"),
    ]


register(Reproduction("outcast-case4", PAPER, "fig. 6", "case IV: distinct end points, bottleneck between aggregation and ToR",
                      plan_case4, analyze_case4))


# --- case V: background traffic (figure 7) -----------------------------------------------------

CASE5_LOADS = (0.1, 0.2, 0.5)
DATAMINING = str(ROOT / "scenarios/workloads/datamining_cdf.txt")


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
    s10, s20, s50 = (share(st, qdisc="droptail", background=b) for b in CASE5_LOADS)
    return [
        _ratio_claim("bg10-4x", "DropTail, 10 % background: the 2-hop flow still gets about 4x less", "1/4", s10, 1 / 8, 1 / 2),
        _ratio_claim("bg20-2.5x", "DropTail, 20 % background: about 2.5x less", "1/2.5 = 0.4", s20, 0.2, 0.8),
        Claim("bg50-tapers", "DropTail, 50 % background: the unfairness tapers off", "near 1 (after 0.2 s)", s50,
              mean(s50) >= 0.5, "mean share over 0.5 s >= 1/2", "share"),
    ]


register(Reproduction("outcast-case5", PAPER, "fig. 7", "case V: background traffic at 10, 20 and 50 %",
                      plan_case5, analyze_case5))


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
    # Figure 8: TCP CUBIC without and with SACK (the testbed's Linux), NewReno with SACK.
    for name, ov in CASE6_TCP.items():
        pts += [_pt(q, s, ov, variant=name) for q in qs for s in seeds]
    return pts


CASE6_TCP = {
    "CUBIC": [("tcp.cc", "cubic")],
    "CUBIC + SACK": [("tcp.cc", "cubic"), ("tcp.sack", True)],
    "NewReno + SACK": [("tcp.sack", True)],
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
    claims = []
    for kb in bufs:
        s = share(st, qdisc="droptail", variant=f"buffer {kb} KB")
        claims.append(Claim(f"buffer-{kb}kb", f"DropTail, {kb} KB buffers: the unfairness persists", "persists", s,
                            mean(s) <= 0.5, "mean share <= 1/2", "share"))
    s = share(st, qdisc="droptail", variant="equal RTTs")
    claims.append(Claim("equal-rtts", "DropTail, equal RTTs (12 flows from one 4-hop host, 1 from the other): the single flow starves",
                        "starved", s, mean(s) <= 0.5, "mean share <= 1/2", "share"))
    s = share(st, qdisc="droptail", variant="3 input ports")
    claims.append(Claim("three-ports", "DropTail, three input ports (1 / 6 / 6 flows): the Outcast problem is present",
                        "present", s, mean(s) <= 0.5, "mean share (2-hop over the 6-hop flows through a0_0) <= 1/2", "share"))
    for name in CASE6_TCP:
        s = share(st, qdisc="droptail", variant=name)
        claims.append(Claim("tcp-" + name.lower().replace(" + ", "-").replace(" ", "-"),
                            f"DropTail, TCP {name}: the Outcast problem occurs", "occurs (fig. 8)", s, mean(s) <= 0.5,
                            "mean share <= 1/2", "share"))
    return claims


register(Reproduction("outcast-case6", PAPER, "section 3.2.6", "case VI: buffer sizes, equal RTTs, more input ports",
                      plan_case6, analyze_case6))


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


def plan_mitigations(quick: bool) -> List[Point]:
    names = QUICK_MITIGATIONS if quick else tuple(MITIGATIONS)
    return [Point.make(BASE, NS2_QUEUE + MITIGATIONS[m], s, qdisc=m, mitigation=m) for m in names for s in _seeds(quick)]


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
    ax.set_title("TCP Outcast figs. 15-16: 1 vs 12 flows, 30-packet queues, under each mitigation", fontsize=9)
    ax.legend()
    save_figure(fig, st)
    st.table = [{"mitigation": m, "share_two_over_six": round(mean(share(st, mitigation=m)), 4),
                 "two_hop_mbps": round(mean(st.metric("throughput_bps_two_hop", mitigation=m)) / 1e6, 2),
                 "six_hop_mbps": round(mean(st.metric("throughput_bps_six_hop", mitigation=m)) / 1e6, 2),
                 "utilization": round(mean(st.metric("utilization", mitigation=m)), 4),
                 "timeouts": mean(st.metric("timeouts", mitigation=m)), "seeds": len(share(st, mitigation=m))}
                for m in names]
    dt, red, sfq = share(st, mitigation="droptail"), share(st, mitigation="red"), share(st, mitigation="sfq")
    el = share(st, mitigation="equal-length (random core)")
    claims = [
        Claim("droptail-baseline", "DropTail (30-packet queues): the 2-hop flow gets several times less", "1/7",
              dt, mean(dt) <= 1 / 3, "mean share <= 1/3", "share"),
        Claim("red-rtt-bias", "RED (5/15 packets, weight 0.002): RTT bias in favour of the 2-hop flow", "above 1",
              red, mean(red) > 1.0, "mean share > 1", "share"),
        _ratio_claim("sfq-fair", "SFQ (4 buckets): almost equal throughput", "about 1", sfq, 0.75, 1.33),
        _ratio_claim("equal-length-fair", "Equal-length routing (random core): a fair share", "about 1", el, 0.75, 1.33),
    ]
    pc = share(st, mitigation="pacing")
    claims.append(Claim("pacing-narrows", "TCP pacing narrows the gap (7x -> 2x) but the 2-hop flow still gets less",
                        "1/2 (from 1/7)", pc, mean(dt) < mean(pc) < 0.9,
                        "mean share above DropTail's and below 0.9", "share"))
    if st.rows(mitigation="equal-length (core by dst bits)"):
        eb = share(st, mitigation="equal-length (core by dst bits)")
        claims.append(_ratio_claim("equal-length-dst-bits-fair", "Equal-length routing (core by destination bits): a fair share",
                                   "about 1", eb, 0.75, 1.33))
    return claims


register(Reproduction("outcast-mitigations", PAPER, "figs. 15-16, table 2",
                      "mitigations: RED, SFQ, equal-length routing (and every dcfair discipline)",
                      plan_mitigations, analyze_mitigations))


# --- section 4: consecutive drops (figures 11, 14, 16b) -----------------------------------------

BOTTLENECK = "e0_0->h0"


def drop_runs(st: Study, **labels):
    """drop_runs.csv (by group) of the matching runs at the bottleneck, concatenated, with the
    seed: columns key (group), run_length, episodes, flows."""
    import pandas as pd

    frames = []
    for r in st.rows(**labels):
        df = pd.read_csv(Path(r["dir"]) / "drop_runs.csv")
        df = df[(df["by"] == "group") & (df["port"] == BOTTLENECK)].copy()
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
    "red": NS2_QUEUE + [("queue.kind", "red")],
    "sfq": NS2_QUEUE + [("queue.kind", "sfq")],
    "equal-length (random core)": [("queue.kind", "droptail"), ("routing.equal_length", True), ("routing.core", "random")],
    "hcf": [("queue.kind", "hcf")],
    "fairq": FAIRQ,
}
QUICK_DROPS = ("droptail, 1 flow per host", "red", "hcf")


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
    base = drop_runs(st, setting="droptail, 1 flow per host")
    two3, six3 = per_flow_episodes(base, "two_hop", 3), per_flow_episodes(base, "six_hop", 3)
    red = drop_runs(st, setting="red")
    red_single = single_drop_fraction(red, "two_hop") + single_drop_fraction(red, "six_hop")
    claims = [
        Claim("two-hop-longer-runs", "DropTail: the 2-hop flow suffers more episodes of 3 or more consecutive drops than a 6-hop flow",
              "many more (fig. 11a)", [a - b for a, b in zip(two3, six3)], mean(two3) > mean(six3),
              "per-flow episodes of >= 3 drops: 2-hop minus 6-hop > 0", "episodes"),
        Claim("red-single-drops", "RED: more than 90 % of drop episodes are single drops, for 2-hop and 6-hop flows alike",
              "> 0.9 (fig. 14a)", red_single, min(red_single) > 0.9 if red_single else False,
              "every seed and group above 0.9", "fraction"),
    ]
    if st.rows(setting="droptail, 20 flows per host"):
        many = drop_runs(st, setting="droptail, 20 flows per host")
        t20, s20 = per_flow_episodes(many, "two_hop", 3), per_flow_episodes(many, "six_hop", 3)
        claims.append(Claim("twenty-per-host-longer-runs", "DropTail, 20 flows per host: 2-hop flows still see more long runs",
                            "much higher (fig. 11b)", [a - b for a, b in zip(t20, s20)], mean(t20) > mean(s20),
                            "per-flow episodes of >= 3 drops: 2-hop minus 6-hop > 0", "episodes"))
    return claims


register(Reproduction("outcast-drops", PAPER, "figs. 11, 14, 16(b)", "runs of consecutive drops per flow, 2-hop vs 6-hop",
                      plan_drops, analyze_drops))


# --- section 4.3: the ON/OFF blackout drop model (figure 13) -----------------------------------

BLACKOUT = str(ROOT / "scenarios/papers/outcast/blackout_model.toml")
BLACKOUT_F = (1, 2, 3, 5, 7, 10)
BLACKOUT_M = (0, 1, 2, 4, 6, 8, 10)


def plan_blackout(quick: bool) -> List[Point]:
    fs, ms = ((1, 7), (0, 1, 10)) if quick else (BLACKOUT_F, BLACKOUT_M)
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
    fmax, fmin, mhi = max(fs), min(fs), max(ms)
    many = [a / b for a, b in zip(agg(fmax, mhi), agg(fmax, 1))]
    few = [a / b for a, b in zip(agg(fmin, mhi), agg(fmin, 1))]
    return [
        Claim("many-flows-barely-hurt", f"With {fmax} flows (>= 7), blackouts of up to {mhi} drops cost little throughput",
              "slight effect", many, mean(many) >= 0.8, f"aggregate at m = {mhi} over m = 1 >= 0.8", "ratio"),
        Claim("few-flows-collapse", f"With {fmin} flow, long blackouts are catastrophic", "large drop", few,
              mean(few) <= 0.5, f"aggregate at m = {mhi} over m = 1 <= 0.5", "ratio"),
    ]


register(Reproduction("outcast-blackout", PAPER, "fig. 13", "the ON/OFF port-blackout drop model: throughput of f flows against m",
                      plan_blackout, analyze_blackout))
