"""The HCF paper's section V (paper 000): figures 4 to 10 (figures 2 and 3, incast, in
``hcf_incast.py``).

Each reproduction compares FIFO (DropTail) and HCF on the paper's settings, over 5 seeds in the
full form (180 s runs, measured over the last 10 s) and 2 seeds of 20 s runs in the quick form.
The paper's numbers come from its text (the figures themselves are missing from the extraction);
where the text gives no number, the claim is the qualitative statement it makes, checked by a
stated criterion. ``docs/mechanisms/hcf.md`` holds the resulting claims table.

Beyond the paper, figures 4 and 5 also run FairQ (``LONG_VARIANTS``) and write every variant's
starvation and fairness side by side (``table.csv``); the paper's claims compare FIFO and HCF only.
"""

from __future__ import annotations

from pathlib import Path
from typing import List

from dcfair.reproduce import Claim, Reproduction, Study, mean, pyplot, register, save_figure
from dcfair.runner import Point

PAPER = "HCF (paper 000)"
ROOT = Path(__file__).resolve().parents[3]
LONG = str(ROOT / "scenarios/papers/hcf/longflows.toml")
MIX = str(ROOT / "scenarios/papers/hcf/short_over_long.toml")
QDISCS = ("droptail", "hcf")
NAMES = {"droptail": "FIFO", "hcf": "HCF", "fairq": "FairQ", "droptail-handshake": "FIFO, handshake", "xpass": "ExpressPass"}
#: The long-flow comparisons of figures 4 and 5: FIFO and HCF (the paper's), and FairQ
#: (docs/mechanisms/fairq.md): FIFO at the bottleneck plus a ``[fairq]`` table at the dumbbell's
#: one switch, whose bottleneck port every ACK enters through (single path: no routing needed).
#: FairQ counts flows by their SYN-ACKs, and the ns-2-style agents of longflows.toml open without
#: a handshake, so the FairQ runs turn the handshake on (and with it off the two start-up quirks
#: of ns-2's one-way agents, which only exist without one); "droptail-handshake" is FIFO with the
#: same TCP, the control that shows what FairQ itself changes. FairQ's target is a quarter of the
#: 20-packet buffer (7,500 bytes, five packets), its floor one segment per flow.
#: "xpass" is ExpressPass (not in the HCF paper): ``flows.transport = "xpass"`` over the same
#: DropTail buffer, the UDP background unchanged; full length is affordable because each
#: receiver's credits stay near one per measured RTT per flow (the RTT includes the 20-packet
#: data queue), about 90 k events per simulated second (docs/mechanisms/expresspass.md).
HANDSHAKE = [("tcp.handshake", True), ("tcp.headerless_first_segment", False), ("tcp.first_ack_resets_cwnd", False)]
LONG_VARIANTS = {
    "droptail": [("queue.kind", "droptail")],
    "hcf": [("queue.kind", "hcf")],
    "fairq": [("queue.kind", "droptail")] + HANDSHAKE + [("fairq.target_fraction", 0.25)],
    "droptail-handshake": [("queue.kind", "droptail")] + HANDSHAKE,
    "xpass": [("queue.kind", "droptail"), ("flows.transport", "xpass")],
}


def _seeds(quick: bool) -> range:
    return range(1, 3) if quick else range(1, 6)


def _dur(quick: bool, full: float = 180.0) -> List[tuple]:
    return [("sim.duration_s", 20.0)] if quick else [("sim.duration_s", full)]


def _long(quick: bool, qdisc: str, seed: int, extra=(), **labels) -> Point:
    ov = LONG_VARIANTS[qdisc][:1] + _dur(quick) + LONG_VARIANTS[qdisc][1:] + list(extra)
    return Point.make(LONG, ov, seed, qdisc=qdisc, **labels)


def _within_factor(x: float, paper: float, k: float = 2.0) -> bool:
    return paper / k <= x <= paper * k


# --- figure 4: per-flow throughput distribution -------------------------------------------------

def plan_throughput(quick: bool) -> List[Point]:
    return [_long(quick, q, s) for q in LONG_VARIANTS for s in _seeds(quick)]


def _variants(st: Study) -> List[str]:
    return [q for q in LONG_VARIANTS if st.rows(qdisc=q)]


def long_table(st: Study) -> List[dict]:
    """Per variant, means over seeds: starvation, fairness, utilization, losses."""
    rows = []
    for q in _variants(st):
        m = lambda k: mean(st.metric(k, qdisc=q))  # noqa: E731
        rows.append({"variant": q, "starved_fraction": round(m("starved_fraction"), 4),
                     "variance_pkts2": round(m("throughput_variance_pkts"), 1), "jain_index": round(m("jain_index"), 4),
                     "mean_pkts_in_window": round(m("mean_pkts_in_window"), 1), "utilization": round(m("utilization"), 4),
                     "drops": round(m("drops")), "timeouts": round(m("timeouts")),
                     "seeds": len(st.metric("starved_fraction", qdisc=q))})
    return rows


def analyze_throughput(st: Study) -> List[Claim]:
    plt = pyplot()
    flows = st.flows()
    fig, ax = plt.subplots(figsize=(7, 4))
    tcp = flows[flows["kind"] == "tcp"]
    hi = max(1, int(tcp["pkts_in_window"].max()))
    bins = list(range(0, hi + 20, max(1, hi // 40)))
    for q in _variants(st):
        ax.hist(tcp[tcp["qdisc"] == q]["pkts_in_window"], bins=bins, alpha=0.45, label=NAMES[q])
    ax.set_xlabel("packets delivered per flow in the last 10 s")
    ax.set_ylabel("flows (all seeds)")
    ax.set_title("HCF paper fig. 4: per-flow throughput distribution, 400 long flows")
    ax.legend()
    save_figure(fig, st)
    st.table = long_table(st)

    sf, sh = st.metric("starved_fraction", qdisc="droptail"), st.metric("starved_fraction", qdisc="hcf")
    vf, vh = st.metric("throughput_variance_pkts", qdisc="droptail"), st.metric("throughput_variance_pkts", qdisc="hcf")
    uf, uh = st.metric("utilization", qdisc="droptail"), st.metric("utilization", qdisc="hcf")
    ratio = [a / b for a, b in zip(vf, vh) if b]
    ux = st.metric("utilization", qdisc="xpass")
    xpass = [Claim("xpass-utilization", "ExpressPass (not in the HCF paper) keeps the bottleneck busy with 400 flows at "
                   "0.0025 credits per flow per 100 us", "-", ux, min(ux) >= 0.95, "every run >= 0.95", "fraction")] if ux else []
    return [
        Claim("fifo-starved", "FIFO fully starves about a third of the flows during the last 10 s", "0.32", sf,
              _within_factor(mean(sf), 0.32), "mean within a factor 2 of 0.32", "fraction"),
        Claim("hcf-starved", "HCF fully starves very few flows", "0.015", sh,
              mean(sh) <= 0.03, "mean <= 0.03 (twice the paper's value)", "fraction"),
        Claim("hcf-less-starvation", "HCF starves fewer flows than FIFO", "0.32 vs 0.015",
              [a - b for a, b in zip(sf, sh)], mean(sh) < mean(sf), "FIFO minus HCF starved fraction > 0", "fraction"),
        Claim("fifo-variance", "FIFO per-flow variance of packets sent in 10 s",
              "5.55e4 (exponent unreadable; 10x HCF's)", vf, _within_factor(mean(vf), 5.55e4),
              "mean within a factor 2 of 5.55e4", "packets^2"),
        Claim("hcf-variance", "HCF per-flow variance", "6.74e3", vh, _within_factor(mean(vh), 6.74e3),
              "mean within a factor 2 of 6.74e3", "packets^2"),
        Claim("variance-ratio", "HCF cuts the per-flow variance by about an order of magnitude", "about 8 (5.55e4 / 6.74e3)",
              ratio, mean(ratio) >= 4.0, "FIFO / HCF variance >= 4 (half of 8)", "ratio"),
        Claim("utilization", "Both keep the bottleneck utilization extremely close to 100 %", "~1.0",
              uf + uh, min(uf + uh) >= 0.99, "every run >= 0.99", "fraction"),
    ] + xpass


register(Reproduction("hcf-throughput", PAPER, "fig. 4", "per-flow throughput distribution of 400 long flows, FIFO vs HCF",
                      plan_throughput, analyze_throughput))


# --- figure 5: distribution of the longest starvation time ------------------------------------

def plan_starvation(quick: bool) -> List[Point]:
    return plan_throughput(quick)


def analyze_starvation(st: Study) -> List[Claim]:
    plt = pyplot()
    flows = st.flows()
    tcp = flows[flows["kind"] == "tcp"]
    fig, ax = plt.subplots(figsize=(7, 4))
    for q in _variants(st):
        g = tcp[tcp["qdisc"] == q]["max_gap_s"].sort_values().to_numpy()
        ax.plot(g, [(i + 1) / len(g) for i in range(len(g))], label=NAMES[q])
    ax.set_xlabel("longest starvation time of a flow over the run (s)")
    ax.set_ylabel("CDF of flows")
    ax.set_title("HCF paper fig. 5: longest starvation time per flow")
    ax.legend()
    save_figure(fig, st)
    horizon = 10.0 if st.quick else 20.0
    minute = 10.0 if st.quick else 60.0
    st.table = []
    for q in _variants(st):
        g = [tcp[(tcp["qdisc"] == q) & (tcp["seed"] == s)]["max_gap_s"] for s in sorted(set(tcp["seed"]))]
        g = [x for x in g if len(x)]
        st.table.append({"variant": q, f"frac_max_gap_over_{horizon:g}s": round(mean([float((x > horizon).mean()) for x in g]), 4),
                         f"flows_max_gap_over_{minute:g}s": round(mean([float((x > minute).sum()) for x in g]), 1),
                         "median_max_gap_s": round(mean([float(x.median()) for x in g]), 3), "seeds": len(g)})

    def per_seed(q, f):
        out = []
        for s in sorted(set(tcp["seed"])):
            g = tcp[(tcp["qdisc"] == q) & (tcp["seed"] == s)]["max_gap_s"]
            out.append(f(g))
        return out

    over20 = per_seed("droptail", lambda g: float((g > horizon).mean()))
    over60 = per_seed("droptail", lambda g: float((g > minute).sum()))
    hcf_under20 = per_seed("hcf", lambda g: float((g < horizon).mean()))
    q = " (quick form: 20 s runs, thresholds 10 s)" if st.quick else ""
    return [
        Claim("fifo-most-over-20s", f"FIFO: the longest starvation of most flows exceeds 20 s{q}", "most flows (> 0.5)",
              over20, mean(over20) > 0.5, "fraction of flows with max gap > 20 s above 0.5", "fraction"),
        Claim("fifo-some-over-1min", f"FIFO: several flows starve for more than a minute{q}", "several (>= 2)",
              over60, mean(over60) >= 2, "flows with max gap > 60 s per run >= 2", "flows"),
        Claim("hcf-most-under-20s", f"HCF: most longest-starvation times are under 20 s{q}", "most flows (> 0.5)",
              hcf_under20, mean(hcf_under20) > 0.5, "fraction of flows with max gap < 20 s above 0.5", "fraction"),
    ]


register(Reproduction("hcf-starvation", PAPER, "fig. 5", "distribution of each flow's longest starvation time, FIFO vs HCF",
                      plan_starvation, analyze_starvation))


# --- sweeps of one parameter (figures 6 to 9) --------------------------------------------------

def _sweep_plot(st: Study, key: str, values, xlabel: str, title: str, logx: bool, baselines=()):
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, (metric, label) in zip(axes, [("throughput_variance_pkts", "unfairness (variance, pkts^2)"),
                                          ("starved_fraction", "starved fraction")]):
        for q in st_qdiscs(st):
            ys = [mean(st.metric(metric, qdisc=q, **{key: v})) for v in values]
            if any(y == y for y in ys):
                ax.plot(values, ys, marker="o", label=NAMES.get(q, q))
        for label_b, q in baselines:
            y = mean(st.metric(metric, qdisc=q, **{key: "baseline"}))
            ax.axhline(y, linestyle="--", color="red", label=label_b)
        if logx:
            ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(label)
        ax.legend()
    fig.suptitle(title)
    save_figure(fig, st)


def st_qdiscs(st: Study):
    return sorted({dict(r["point"].labels)["qdisc"] for r in st.records})


BUFFERS_FULL = [6, 10, 20, 50, 100, 200, 500, 1000]
BUFFERS_QUICK = [10, 20, 200]


def plan_buffer(quick: bool) -> List[Point]:
    bs = BUFFERS_QUICK if quick else BUFFERS_FULL
    return [_long(quick, q, s, [("queue.limit_pkts", b)], buffer=b) for b in bs for q in QDISCS for s in _seeds(quick)]


def analyze_buffer(st: Study) -> List[Claim]:
    bs = BUFFERS_QUICK if st.quick else BUFFERS_FULL
    _sweep_plot(st, "buffer", bs, "buffer B (packets)", "HCF paper fig. 6: influence of the buffer size", True)
    shallow = [b for b in bs if b <= 20]
    gaps_v = [mean(st.metric("throughput_variance_pkts", qdisc="droptail", buffer=b)) -
              mean(st.metric("throughput_variance_pkts", qdisc="hcf", buffer=b)) for b in shallow]
    gaps_s = [mean(st.metric("starved_fraction", qdisc="droptail", buffer=b)) -
              mean(st.metric("starved_fraction", qdisc="hcf", buffer=b)) for b in shallow]
    big = bs[-1]
    fifo_big = st.metric("starved_fraction", qdisc="droptail", buffer=big)
    fifo_small = st.metric("starved_fraction", qdisc="droptail", buffer=shallow[0])
    vf_big, vh_big = mean(st.metric("throughput_variance_pkts", qdisc="droptail", buffer=big)), \
        mean(st.metric("throughput_variance_pkts", qdisc="hcf", buffer=big))
    rel = [abs(vf_big - vh_big) / max(vf_big, 1e-9)]
    return [
        Claim("shallow-variance", "With shallow buffers (<= 20 packets) HCF's unfairness is significantly lower than FIFO's",
              "lower", gaps_v, all(g > 0 for g in gaps_v), "FIFO minus HCF variance > 0 at every B <= 20", "packets^2"),
        Claim("shallow-starvation", "With shallow buffers HCF starves fewer flows than FIFO", "lower",
              gaps_s, all(g > 0 for g in gaps_s), "FIFO minus HCF starved fraction > 0 at every B <= 20", "fraction"),
        Claim("fifo-needs-big-buffer", f"FIFO needs buffers of some 1000 packets for low starvation (here B = {big})",
              "low starvation only near B = 1000", fifo_big, mean(fifo_big) <= 0.01 and mean(fifo_small) > mean(fifo_big),
              f"FIFO starved fraction <= 0.01 at B = {big} and higher at B = {shallow[0]}", "fraction"),
        Claim("similar-at-large-buffers", f"At large buffers FIFO and HCF are about similar (B = {big})", "similar",
              rel, rel[0] <= 0.5, "|FIFO - HCF| variance within 50 % of FIFO's", "relative difference"),
    ]


register(Reproduction("hcf-buffer", PAPER, "fig. 6", "unfairness and starvation against the buffer size",
                      plan_buffer, analyze_buffer))

CREDITS_FULL = [1, 2, 4, 8, 16, 32]
CREDITS_QUICK = [1, 32]


def plan_credits(quick: bool) -> List[Point]:
    cs = CREDITS_QUICK if quick else CREDITS_FULL
    return [_long(quick, "hcf", s, [("queue.hcf.credits", c)], credits=c) for c in cs for s in _seeds(quick)]


def analyze_credits(st: Study) -> List[Claim]:
    cs = CREDITS_QUICK if st.quick else CREDITS_FULL
    _sweep_plot(st, "credits", cs, "initial credits per bin c0", "HCF paper fig. 7: influence of the initial credits", True)
    v1, vmax = st.metric("throughput_variance_pkts", credits=cs[0]), st.metric("throughput_variance_pkts", credits=cs[-1])
    s1, smax = st.metric("starved_fraction", credits=cs[0]), st.metric("starved_fraction", credits=cs[-1])
    return [
        Claim("more-credits-more-unfair", f"A large number of initial credits decreases performance (c0 = {cs[-1]} vs 1): unfairness",
              "higher with more credits", [b - a for a, b in zip(v1, vmax)], mean(vmax) > mean(v1),
              f"variance at c0 = {cs[-1]} above c0 = 1", "packets^2"),
        Claim("more-credits-more-starved", f"... and starvation (c0 = {cs[-1]} vs 1)", "higher with more credits",
              [b - a for a, b in zip(s1, smax)], mean(smax) >= mean(s1),
              f"starved fraction at c0 = {cs[-1]} not below c0 = 1", "fraction"),
    ]


register(Reproduction("hcf-credits", PAPER, "fig. 7", "unfairness and starvation against the initial credits c0",
                      plan_credits, analyze_credits))

BINS_FULL = [1, 2, 5, 10, 20, 50, 100, 200]
BINS_QUICK = [1, 20, 200]


def plan_bins(quick: bool) -> List[Point]:
    ks = BINS_QUICK if quick else BINS_FULL
    pts = [_long(quick, "hcf", s, [("queue.hcf.bins", k)], bins=k) for k in ks for s in _seeds(quick)]
    return pts + [_long(quick, "droptail", s, bins="baseline") for s in _seeds(quick)]


def analyze_bins(st: Study) -> List[Claim]:
    ks = BINS_QUICK if st.quick else BINS_FULL
    _sweep_plot(st, "bins", ks, "number of bins K", "HCF paper fig. 8: influence of the number of bins", True,
                baselines=[("FIFO", "droptail")])
    v = {k: mean(st.metric("throughput_variance_pkts", qdisc="hcf", bins=k)) for k in ks}
    s = {k: mean(st.metric("starved_fraction", qdisc="hcf", bins=k)) for k in ks}
    few = min(k for k in ks if k >= 20)
    rel = (v[few] - v[ks[-1]]) / max(v[ks[-1]], 1e-9)
    return [
        Claim("few-bins-worse", "Fewer bins increase unfairness (K = 1 vs K = 20)", "higher with fewer bins",
              st.metric("throughput_variance_pkts", qdisc="hcf", bins=1), v[1] > v[few],
              f"variance at K = 1 above K = {few}", "packets^2"),
        Claim("dozen-bins-enough", f"A few dozen bins are enough: K = {few} within 25 % of K = {ks[-1]}", "enough",
              [rel], rel <= 0.25, f"(var(K={few}) - var(K={ks[-1]})) / var(K={ks[-1]}) <= 0.25", "relative difference"),
        Claim("dozen-bins-starvation", f"... and for starvation: K = {few} within 0.02 of K = {ks[-1]}", "enough",
              [s[few] - s[ks[-1]]], s[few] - s[ks[-1]] <= 0.02, "difference of starved fractions <= 0.02", "fraction"),
    ]


register(Reproduction("hcf-bins", PAPER, "fig. 8", "unfairness and starvation against the number of bins K",
                      plan_bins, analyze_bins))

PERIODS_FULL_US = [100, 1000, 10000, 100000, 1000000]
PERIODS_QUICK_US = [1000, 100000]


def plan_period(quick: bool) -> List[Point]:
    ps = PERIODS_QUICK_US if quick else PERIODS_FULL_US
    pts = [_long(quick, "hcf", s, [("queue.hcf.period", "fixed"), ("queue.hcf.period_us", p)], period_us=p)
           for p in ps for s in _seeds(quick)]
    return pts + [_long(quick, "hcf", s, period_us="baseline") for s in _seeds(quick)]


def analyze_period(st: Study) -> List[Claim]:
    ps = PERIODS_QUICK_US if st.quick else PERIODS_FULL_US
    _sweep_plot(st, "period_us", ps, "fixed priority period (us)", "HCF paper fig. 9: fixed vs dynamic priority period", True,
                baselines=[("dynamic period", "hcf")])
    vd = st.metric("throughput_variance_pkts", period_us="baseline")
    sd = st.metric("starved_fraction", period_us="baseline")
    vbest = min(mean(st.metric("throughput_variance_pkts", period_us=p)) for p in ps)
    sbest = min(mean(st.metric("starved_fraction", period_us=p)) for p in ps)
    return [
        Claim("dynamic-beats-fixed-variance", "The dynamic period has lower unfairness than any fixed period", "better",
              [mean(vd) - vbest], mean(vd) < vbest, "dynamic variance below the best fixed period's", "packets^2"),
        Claim("dynamic-beats-fixed-starvation", "... and no more starvation than any fixed period", "better",
              [mean(sd) - sbest], mean(sd) <= sbest, "dynamic starved fraction not above the best fixed period's", "fraction"),
    ]


register(Reproduction("hcf-period", PAPER, "fig. 9", "fixed priority periods against the dynamic period",
                      plan_period, analyze_period))


# --- figure 10: short flows over long flows ----------------------------------------------------

CLASSES = ("short10", "short30", "short60")


def plan_shortflows(quick: bool) -> List[Point]:
    ov = []
    if quick:
        ov = [("sim.duration_s", 40.0)] + [(f"groups.{c}.start_max_s", 20.0) for c in CLASSES] + \
             [(f"groups.{c}.count", 30) for c in CLASSES]
    return [Point.make(MIX, [("queue.kind", q)] + ov, s, qdisc=q) for q in QDISCS for s in _seeds(quick)]


def analyze_shortflows(st: Study) -> List[Claim]:
    import numpy as np

    plt = pyplot()
    flows = st.flows()
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    claims = []
    for ax, c in zip(axes, CLASSES):
        for q in QDISCS:
            g = flows[(flows["group"] == c) & (flows["qdisc"] == q)]
            # Unfinished flows count as finishing at +inf (they do not reach the CDF's top).
            f = np.sort(g["fct_s"].fillna(np.inf).to_numpy())
            ax.step(f, np.arange(1, len(f) + 1) / max(len(f), 1), where="post", label=NAMES[q])
        ax.set_xscale("log")
        ax.set_xlabel("transfer latency (s)")
        ax.set_title(f"{c[5:]}-packet flows")
        ax.legend()
        p99 = {}
        for q in QDISCS:
            per_seed = []
            for s in sorted(set(flows["seed"])):
                g = flows[(flows["group"] == c) & (flows["qdisc"] == q) & (flows["seed"] == s)]["fct_s"].fillna(np.inf)
                per_seed.append(float(np.quantile(g, 0.95)) if len(g) else float("nan"))
            p99[q] = per_seed
        diff = [a - b for a, b in zip(p99["droptail"], p99["hcf"])]
        claims.append(Claim(f"tail-{c}", f"HCF has lower odds of long transfer latencies ({c[5:]}-packet flows, 95th percentile)",
                            "lower tail with HCF", diff, mean(p99["hcf"]) < mean(p99["droptail"]),
                            "95th-percentile latency under HCF below FIFO's (mean over seeds)", "s"))
    axes[0].set_ylabel("CDF")
    fig.suptitle("HCF paper fig. 10: short flows over 100 long flows, B = 10")
    save_figure(fig, st)
    return claims


register(Reproduction("hcf-shortflows", PAPER, "fig. 10", "transfer latency CDFs of short flows over long flows",
                      plan_shortflows, analyze_shortflows))
