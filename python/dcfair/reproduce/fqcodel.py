"""FQ-CoDel in the data center (paper 003): the parameter breakdown (figures 1-2), the load sweep
(figure 3) and the 1-packet-flow sweep (figure 4), with pFabric, DCTCP and FQ-CoDel, and every
other dcfair discipline beside them (and, in figure 3, ExpressPass: ``poisson.transport = "xpass"``).

Every run is ``scenarios/papers/fqcodel/leafspine.toml`` (32 hosts on a non-blocking leaf-spine,
10/40 Gbit/s, data-mining sizes capped at 10^4 packets, Poisson arrivals) plus the overrides of a
*mechanism* (:data:`MECHANISMS`: queue discipline + transport) and of the figure. Each category
of the paper's Table II (``rtx``, ``rx``, ``cc``) is set to its "default" column
(:data:`TABLE2_DEFAULT`, ns-2's TCP defaults) or to its "pFabric" column
(``tcp.profile = "pfabric"``), as the paper's breakdown study does. Figures 3 and 4 run every mechanism with the whole
profile, as the paper does.

The paper's two measures, over the flows that finished (``docs/metrics.md``):

- ``fct_mean_s_size_1pkt``: mean completion time of the 1-packet flows;
- ``mean_throughput_bps_size_all``: mean size over mean FCT, over all flows.

Full form: 5 seeds; quick form: 2 seeds, shorter arrival windows, fewer points.
``docs/mechanisms/fq_codel.md`` holds the claims table and explains each disagreement.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from dcfair.data import PAPERS
from dcfair.reproduce import Claim, Reading, Reproduction, Study, clearly_lower, mean, pyplot, register, save_figure, within_factor
from dcfair.runner import Point

PAPER = "FQ-CoDel in the data center (paper 003)"
BASE = str(PAPERS / "fqcodel/leafspine.toml")

#: Section IV-B: CoDel's target and interval scaled down 1000x from Linux's 5 ms / 100 ms.
FQ_CODEL_DC = [("queue.fq_codel.target_us", 5.0), ("queue.fq_codel.interval_us", 100.0)]
#: DCTCP's marking threshold at 10 Gbit/s (Alizadeh et al. 2010, section 4: K = 65 packets).
DCTCP_K = 65

def _dctcp(limit: int) -> List[Tuple[str, object]]:
    return [("queue.kind", "droptail"), ("queue.limit_pkts", limit), ("queue.droptail.mark_threshold_pkts", DCTCP_K),
            ("host_queue.kind", "droptail"), ("host_queue.limit_pkts", limit),
            ("host_queue.droptail.mark_threshold_pkts", DCTCP_K), ("tcp.cc", "dctcp")]


#: Queue discipline + transport of each compared design. The paper's three first; then dcfair's
#: other disciplines, all under NewReno.
MECHANISMS: Dict[str, List[Tuple[str, object]]] = {
    # pFabric: 36 KB (24 packets) per port at switches and host NICs alike (pFabric section 5).
    "pfabric": [("queue.kind", "pfabric"), ("queue.limit_pkts", 24), ("host_queue.kind", "pfabric"),
                ("host_queue.limit_pkts", 24), ("tcp.cc", "pfabric"), ("tcp.priority", "remaining")],
    # DCTCP: DropTail FIFOs with DCTCP's marking, 100 or 1000 packets (section IV-B). Every queue,
    # host NICs included, has the same discipline, limit and threshold: pFabric's ns-2 scripts,
    # which the paper reuses, build every link with one queue type ($switchAlg).
    "dctcp": _dctcp(100),
    "dctcp_1000": _dctcp(1000),
    # Section III-A: FQ-CoDel on the server-ToR links in both directions, so at the hosts too.
    "fq_codel": [("queue.kind", "fq_codel"), ("queue.limit_pkts", 1000)] + FQ_CODEL_DC
                + [("host_queue.kind", "fq_codel"), ("host_queue.limit_pkts", 1000)]
                + [("host_" + k, v) for k, v in FQ_CODEL_DC],
    "droptail": [("queue.kind", "droptail"), ("queue.limit_pkts", 100)],
    "red": [("queue.kind", "red"), ("queue.limit_pkts", 100)],
    "sfq": [("queue.kind", "sfq"), ("queue.limit_pkts", 100)],
    "drr": [("queue.kind", "drr"), ("queue.limit_pkts", 100)],
    "hcf": [("queue.kind", "hcf"), ("queue.limit_pkts", 100)],
    # ExpressPass (figure 3 only): credit-scheduled flows over 100-packet DropTail data queues, a
    # credit shaper on every port, credits on their data's path (symmetric ECMP). The TCP
    # profile keys still apply but only its segment size matters (docs/mechanisms/expresspass.md).
    "xpass": [("queue.kind", "droptail"), ("queue.limit_pkts", 100), ("poisson.transport", "xpass"),
              ("routing.mode", "symmetric")],
}
PAPER_MECHS = ("pfabric", "dctcp", "dctcp_1000", "fq_codel")
DCTCPS = ("dctcp", "dctcp_1000")
NAMES = {"pfabric": "pFabric", "dctcp": "DCTCP (100 pkts)", "dctcp_1000": "DCTCP (1000 pkts)", "fq_codel": "FQ-CoDel",
         "droptail": "DropTail",
         "red": "RED", "sfq": "SFQ", "drr": "DRR", "hcf": "HCF", "xpass": "ExpressPass"}
#: Readings of what the FQ-CoDel paper leaves open.
DCTCP_ONLY = (("mech", ("dctcp", "dctcp_1000")),)
READINGS = (
    Reading("switch-marking-only", "DCTCP marks at the switch ports only; host NICs are unmarked 1000-packet DropTails "
            "(marking only at a full 1000-packet queue)",
            (("host_queue.kind", "droptail"), ("host_queue.limit_pkts", 1000),
             ("host_queue.droptail.mark_threshold_pkts", 1000)), DCTCP_ONLY),
    Reading("pfabric-scripts-k", "DCTCP's K = 15 packets, as in pFabric's ns-2 scripts, instead of K = 65 (the DCTCP "
            "paper's value at 10 Gbit/s)", (("queue.droptail.mark_threshold_pkts", 15),
                                            ("host_queue.droptail.mark_threshold_pkts", 15)), DCTCP_ONLY),
)


#: Table II's categories, and the combinations the breakdown study runs.
CATEGORIES = ("rtx", "rx", "cc")
BREAKDOWN = {"none": (), "rtx": ("rtx",), "rx": ("rx",), "cc": ("cc",), "all": CATEGORIES}

FCT_1PKT = "fct_mean_s_size_1pkt"
THROUGHPUT = "mean_throughput_bps_size_all"
FCT_ALL = "fct_mean_s_size_all"


def _seeds(quick: bool) -> range:
    return range(1, 3) if quick else range(1, 6)


def _window(quick: bool, drain_s: float = 0.05) -> List[Tuple[str, object]]:
    """Arrivals in [0, stop_s); the run goes on for ``drain_s`` more so that the flows can
    finish (FCTs count finished flows only: a short drain would hide the slow ones)."""
    stop = 0.01 if quick else 0.05
    return [("poisson.stop_s", stop), ("sim.duration_s", stop + drain_s)]


#: With Table II's default column a lost segment waits 200 ms (a lost SYN 3 s): the breakdown
#: runs drain for 3.5 s, long enough for a flow to survive one SYN loss and a few timeouts.
DEFAULT_DRAIN_S = 3.5


#: Table II's "default" column (ns-2's TCP defaults) by category, as dcfair keys. The pFabric
#: column is ``tcp.profile = "pfabric"`` (docs/mechanisms/pfabric.md maps each row).
TABLE2_DEFAULT: Dict[str, List[Tuple[str, object]]] = {
    "rtx": [("tcp.min_rto_ms", 200.0), ("tcp.max_rto_s", 60.0), ("tcp.initial_rto_s", 3.0),
            ("tcp.clock_granularity_us", 10000.0)],
    "rx": [("tcp.delack_timeout_ms", 100.0), ("tcp.rcv_buf_bytes", 20 * 1460)],
    "cc": [("tcp.init_cwnd_pkts", 2), ("tcp.max_cwnd_pkts", 0)],
}


def profile(categories: Sequence[str]) -> List[Tuple[str, object]]:
    """Overrides that put each category of Table II in its pFabric column if it is in
    ``categories``, else in its default column (explicit keys would win over the profile, so
    the default values are set only for the categories left off)."""
    ov = [kv for c in CATEGORIES if c not in categories for kv in TABLE2_DEFAULT[c]]
    if categories:
        ov += [("tcp.profile", "pfabric"), ("tcp.profile_categories", "[" + ", ".join(f'"{c}"' for c in categories) + "]")]
    return ov


def _pt(mech: str, seed: int, extra=(), cats: Sequence[str] = CATEGORIES, quick: bool = False, **labels) -> Point:
    drain = 0.05 if tuple(cats) == CATEGORIES else DEFAULT_DRAIN_S
    ov = MECHANISMS[mech] + profile(cats) + _window(quick, drain) + list(extra)
    return Point.make(BASE, ov, seed, mech=mech, **labels)


def _mechs(quick: bool) -> Sequence[str]:
    return PAPER_MECHS + (("hcf",) if quick else tuple(m for m in MECHANISMS if m not in PAPER_MECHS + ("xpass",)))


def _row(st: Study, **labels) -> dict:
    n = len(st.rows(**labels))
    return {**labels,
            "fct_1pkt_us": round(mean(st.metric(FCT_1PKT, **labels)) * 1e6, 2),
            "fct_1pkt_p99_us": round(mean(st.metric("fct_p99_s_size_1pkt", **labels)) * 1e6, 2),
            "fct_mean_us": round(mean(st.metric(FCT_ALL, **labels)) * 1e6, 2),
            "mean_throughput_gbps": round(mean(st.metric(THROUGHPUT, **labels)) / 1e9, 4),
            "flows": mean(st.metric("flows_size_all", **labels)),
            "finished": mean(st.metric("flows_completed_size_all", **labels)),
            "timeouts": mean(st.metric("timeouts", **labels)), "seeds": n}


def _ratio(a: List[float], b: List[float]) -> List[float]:
    return [x / y if y else float("nan") for x, y in zip(a, b)]


# --- figures 1-2: Table II's parameters switched on by category ------------------------------------

BREAKDOWN_MECHS = ("dctcp", "fq_codel", "pfabric")


def plan_breakdown(quick: bool) -> List[Point]:
    combos = ("none", "rtx", "all") if quick else tuple(BREAKDOWN)
    return [_pt(m, s, cats=BREAKDOWN[c], quick=quick, setting=c)
            for m in BREAKDOWN_MECHS for c in combos for s in _seeds(quick)]


def analyze_breakdown(st: Study) -> List[Claim]:
    combos = [c for c in BREAKDOWN if st.rows(setting=c)]
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    w = 0.8 / len(BREAKDOWN_MECHS)
    for i, m in enumerate(BREAKDOWN_MECHS):
        xs = [j + i * w for j in range(len(combos))]
        axes[0].bar(xs, [mean(st.metric(FCT_ALL, mech=m, setting=c)) * 1e6 for c in combos], width=w, label=NAMES[m])
        axes[1].bar(xs, [mean(st.metric(THROUGHPUT, mech=m, setting=c)) / 1e9 for c in combos], width=w, label=NAMES[m])
    for ax, lab in zip(axes, ("mean FCT, all flows (us)", "mean throughput (Gbit/s)")):
        ax.set_xticks([j + w * (len(BREAKDOWN_MECHS) - 1) / 2 for j in range(len(combos))], combos)
        ax.set_xlabel("Table II pFabric settings switched on")
        ax.set_ylabel(lab)
        ax.legend(fontsize=8)
    axes[0].set_yscale("log")
    fig.suptitle("FQ-CoDel paper figs. 1-2: pFabric TCP settings by category (load 0.6)", fontsize=9)
    save_figure(fig, st)
    st.table = [_row(st, mech=m, setting=c) for m in BREAKDOWN_MECHS for c in combos]

    def gain(m: str, c: str, metric: str = FCT_1PKT) -> List[float]:
        """Per seed: 1 - FCT(with c) / FCT(defaults): the reduction of the FCT ``metric``."""
        return [1 - r for r in _ratio(st.metric(metric, mech=m, setting=c), st.metric(metric, mech=m, setting="none"))]

    def about(x: float, paper: float) -> bool:
        return within_factor(x, paper, 1.5)

    fig1 = "activating all parameters yields a reduction in mean FCT of 30% for DCTCP and 20% for FQ-CoDel"
    latency = "measure differences in latency (i.e., single packet FCT)"
    claims = []
    for m, paper in (("dctcp", 0.3), ("fq_codel", 0.2)):
        g, g_all = gain(m, "all"), gain(m, "all", FCT_ALL)
        claims.append(Claim(f"{m}-all-helps", f"All pFabric settings reduce {NAMES[m]}'s 1-packet FCT by about "
                            f"{paper:.0%}", f"{paper:.0%}", g, about(mean(g), paper),
                            f"mean reduction of the 1-packet FCT within a factor 1.5 of {paper:g} "
                            f"([{paper / 1.5:.3g}, {paper * 1.5:.3g}])", "fraction", quote=f"{fig1}; {latency}")
                      .tried("mean-fct-all-flows", "the mean FCT of all flows instead of the 1-packet FCT", g_all,
                             about(mean(g_all), paper), st.command))
    pf = _ratio(st.metric(FCT_ALL, mech="pfabric", setting="none"), st.metric(FCT_ALL, mech="pfabric", setting="all"))
    pf1 = _ratio(st.metric(FCT_1PKT, mech="pfabric", setting="none"), st.metric(FCT_1PKT, mech="pfabric", setting="all"))
    claims.append(Claim("pfabric-settings-2x", "pFabric with its settings: mean FCT more than 2x lower than with vanilla TCP "
                        "settings", "> 2x", pf, mean(pf) > 2, "mean FCT(defaults) / FCT(all), all flows: mean > 2", "ratio",
                        quote="Overall, the pFabric settings reduce the mean FCT by a factor of more than 2 compared to that "
                              "provided by pFabric used with vanilla TCP settings")
                  .tried("one-packet-fct", "the 1-packet FCT instead of the mean FCT of all flows", pf1, mean(pf1) > 2,
                         st.command))
    singles = [c for c in ("rtx", "rx", "cc") if st.rows(setting=c)]
    if len(singles) == 3:
        for m in ("dctcp", "fq_codel"):
            g = {c: mean(gain(m, c)) for c in singles}
            ga = {c: mean(gain(m, c, FCT_ALL)) for c in singles}
            claims.append(Claim(f"{m}-rtx-dominates", f"{NAMES[m]}: the time-related (rtx) settings matter most",
                                "rtx largest", [g[c] for c in singles], max(g, key=g.get) == "rtx",
                                "rtx gives the largest mean reduction of the 1-packet FCT of the three categories "
                                "(values: rtx, rx, cc)", "fraction",
                                quote="The breakdown per rtx/rx/cc categories of Tab. II shows that time-related parameters "
                                      "play a paramount role")
                          .tried("mean-fct-all-flows", "the mean FCT of all flows", [ga[c] for c in singles],
                                 max(ga, key=ga.get) == "rtx", st.command))
        cc_quote = "we see that congestion-related parameters have a limited impact on DCTCP and even a negative impact " \
                   "on FQ-CoDel"
        cd, cf = gain("dctcp", "cc"), gain("fq_codel", "cc")
        claims.append(Claim("dctcp-cc-limited", "DCTCP: the congestion-control (cc) settings have a limited impact",
                            "limited", cd, abs(mean(cd)) <= 0.1, "|mean reduction of the 1-packet FCT| with cc <= 0.1",
                            "fraction", quote=cc_quote))
        claims.append(Claim("fq-codel-cc-negative", "FQ-CoDel: the cc settings have a negative impact", "negative", cf,
                            mean(cf) < 0, "mean reduction of the 1-packet FCT with cc below 0 (the FCT grows)", "fraction",
                            quote=cc_quote))
        # figure 2: DCTCP by flow size
        fig2 = "while the FCT of 1-packet flows benefits from the combined settings, the throughput of long DCTCP flows " \
               "suffers slightly with the bulk adoption of pFabric settings"
        large = "mean_throughput_bps_size_large"
        tl = _ratio(st.metric(large, mech="dctcp", setting="all"), st.metric(large, mech="dctcp", setting="none"))
        claims.append(Claim("fig2-dctcp-1pkt-benefits", "DCTCP: the 1-packet FCT benefits from all the settings", "lower FCT",
                            gain("dctcp", "all"), mean(gain("dctcp", "all")) > 0, "mean reduction of the 1-packet FCT "
                            "above 0", "fraction", quote=fig2))
        claims.append(Claim("fig2-dctcp-long-suffer", "DCTCP: the throughput of long flows (>= 10 MB) suffers slightly with "
                            "all the settings", "slightly lower", tl, 0.8 <= mean(tl) < 1.0,
                            "mean throughput of large flows, all / none: mean in [0.8, 1)", "ratio", quote=fig2))
        cc_sizes = "cc parameters have a negative impact for short flows and a positive impact for long flows"
        t_cc = _ratio(st.metric(large, mech="dctcp", setting="cc"), st.metric(large, mech="dctcp", setting="none"))
        claims.append(Claim("fig2-cc-by-size", "DCTCP: the cc settings hurt 1-packet flows and help long flows",
                            "short worse, long better", [mean(gain("dctcp", "cc")), mean(t_cc)],
                            mean(gain("dctcp", "cc")) < 0 and mean(t_cc) > 1.0,
                            "1-packet FCT reduction with cc below 0 and large-flow throughput with cc / none above 1 "
                            "(values: both means)", "ratio", quote=cc_sizes))
    return claims


register(Reproduction("fqcodel-breakdown", PAPER, "figs. 1-2",
                      "Table II's pFabric TCP settings switched on by category for DCTCP, FQ-CoDel (and pFabric)",
                      plan_breakdown, analyze_breakdown, READINGS))


# --- figure 3: load 0.1 to 0.8 -------------------------------------------------------------------

LOADS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
QUICK_LOADS = (0.2, 0.6)


def plan_fig3(quick: bool) -> List[Point]:
    loads = QUICK_LOADS if quick else LOADS
    return [_pt(m, s, [("poisson.load", ld)], quick=quick, load=ld)
            for ld in loads for m in tuple(_mechs(quick)) + ("xpass",) for s in _seeds(quick)]


def _sweep_plot(st: Study, key: str, values, xlabel: str, title: str, logx: bool = False) -> None:
    mechs = [m for m in MECHANISMS if st.rows(mech=m)]
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for m in mechs:
        style = "-o" if m in PAPER_MECHS else "--."
        axes[0].plot(values, [mean(st.metric(THROUGHPUT, mech=m, **{key: v})) / 1e9 for v in values], style, label=NAMES[m])
        axes[1].plot(values, [mean(st.metric(FCT_1PKT, mech=m, **{key: v})) * 1e6 for v in values], style, label=NAMES[m])
    axes[0].set_ylabel("mean throughput (Gbit/s): mean size / mean FCT")
    axes[1].set_ylabel("mean FCT of 1-packet flows (us)")
    axes[1].set_yscale("log")
    for ax in axes:
        ax.set_xlabel(xlabel)
        if logx:
            ax.set_xscale("log")
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    save_figure(fig, st)
    st.table = [_row(st, mech=m, **{key: v}) for v in values for m in mechs]


def _best_everywhere(st: Study, key: str, values, metric: str, better) -> Tuple[List[float], bool]:
    """Per point: pFabric's value over the best other paper design's; and whether pFabric wins at all."""
    rel, wins = [], True
    for v in values:
        p = mean(st.metric(metric, mech="pfabric", **{key: v}))
        others = [mean(st.metric(metric, mech=m, **{key: v})) for m in PAPER_MECHS if m != "pfabric" and st.rows(mech=m)]
        best = min(others) if better == "lower" else max(others)
        rel.append(p / best if best else float("nan"))
        wins &= (p < best) if better == "lower" else (p > best)  # a tie is not "outstanding"
    return rel, wins


def _vs(st: Study, key: str, values, metric: str, a: str, b: str) -> List[float]:
    """Per value of ``key``: mean over seeds of ``a``'s metric over ``b``'s (seeds paired)."""
    return [mean(_ratio(st.metric(metric, mech=a, **{key: v}), st.metric(metric, mech=b, **{key: v}))) for v in values]


def analyze_fig3(st: Study) -> List[Claim]:
    loads = sorted({dict(r["point"].labels)["load"] for r in st.records})
    _sweep_plot(st, "load", loads, "load", "FQ-CoDel paper fig. 3: data mining on the 32-host leaf-spine")
    fct_rel, fct_win = _best_everywhere(st, "load", loads, FCT_1PKT, "lower")
    thr_rel, thr_win = _best_everywhere(st, "load", loads, THROUGHPUT, "higher")
    fq_vs_pf = _vs(st, "load", loads, FCT_1PKT, "fq_codel", "pfabric")
    thr_fq_pf = _vs(st, "load", loads, THROUGHPUT, "fq_codel", "pfabric")
    dctcps = [m for m in DCTCPS if st.rows(mech=m)]
    fq_vs_dc = [min(_vs(st, "load", [ld], THROUGHPUT, "fq_codel", m)[0] for m in dctcps) for ld in loads]
    outstanding = "pFabric indeed exhibits outstanding performance for both metrics"
    second = "FCT for FQ-CoDel is very close to that of pFabric; throughput of long flows is significantly smaller than " \
             "with pFabric but still higher than with DCTCP"
    return [
        Claim("pfabric-best-fct", "pFabric has the lowest 1-packet FCT at every load", "best", fct_rel, fct_win,
              "pFabric's mean below DCTCP's (both buffers) and FQ-CoDel's at every load (values: pFabric / best other)",
              "ratio", quote=outstanding),
        Claim("pfabric-best-throughput", "pFabric has the highest mean throughput at every load", "best", thr_rel, thr_win,
              "pFabric's mean above DCTCP's (both buffers) and FQ-CoDel's at every load (values: pFabric / best other)",
              "ratio", quote=outstanding),
        Claim("fq-codel-fct-close", "FQ-CoDel's 1-packet FCT is very close to pFabric's", "very close", fq_vs_pf,
              max(fq_vs_pf) <= 1.25, "FQ-CoDel / pFabric 1-packet FCT <= 1.25 at every load (values: per load)", "ratio",
              quote=second),
        Claim("fq-codel-below-pfabric", "FQ-CoDel's mean throughput is significantly smaller than pFabric's", "smaller",
              thr_fq_pf, all(clearly_lower(st.metric(THROUGHPUT, mech="fq_codel", load=ld),
                                           st.metric(THROUGHPUT, mech="pfabric", load=ld)) for ld in loads),
              "FQ-CoDel's mean throughput below pFabric's by more than 2 standard errors at every load "
              "(values: FQ-CoDel / pFabric per load)", "ratio", quote=second),
        Claim("fq-codel-beats-dctcp", "FQ-CoDel's mean throughput is higher than DCTCP's", "higher", fq_vs_dc,
              min(fq_vs_dc) > 1.0, "FQ-CoDel / DCTCP > 1 at every load, against DCTCP with 100 and with 1000 packets "
              "(values: per load, the smaller of the two)", "ratio", quote=second),
    ]


register(Reproduction("fqcodel-fig3", PAPER, "fig. 3",
                      "load 0.1 to 0.8: mean throughput and 1-packet FCT, pFabric, DCTCP, FQ-CoDel (and every dcfair discipline)",
                      plan_fig3, analyze_fig3, READINGS + (
                          Reading("uncapped", "the original data-mining sizes, uncapped (the paper caps them in figure 4 "
                                  "only)", (("poisson.max_size_bytes", 10 ** 12),), (("mech", PAPER_MECHS),)),)))


# --- figure 4: share of 1-packet flows at load 0.6 ------------------------------------------------

SHARES = (0.0001, 0.001, 0.01, 0.03, 0.1)
QUICK_SHARES = (0.0001, 0.1)


def plan_fig4(quick: bool) -> List[Point]:
    shares = QUICK_SHARES if quick else SHARES
    return [_pt(m, s, [("poisson.load", 0.6), ("poisson.one_packet_fraction", f)], quick=quick, one_pkt=f)
            for f in shares for m in _mechs(quick) for s in _seeds(quick)]


def analyze_fig4(st: Study) -> List[Claim]:
    shares = sorted({dict(r["point"].labels)["one_pkt"] for r in st.records})
    _sweep_plot(st, "one_pkt", shares, "share of the offered bytes in added 1-packet flows",
                "FQ-CoDel paper fig. 4: load 0.6, more 1-packet flows", logx=True)

    def gap(f, a="pfabric", b="fq_codel"):  # per seed: a's throughput over b's
        return _ratio(st.metric(THROUGHPUT, mech=a, one_pkt=f), st.metric(THROUGHPUT, mech=b, one_pkt=f))

    lo, hi = gap(shares[0]), gap(shares[-1])
    narrows = "it can be easily seen that the difference reduces significantly for increasing intensity of 1-packet flows"
    dctcps = [m for m in DCTCPS if st.rows(mech=m)]
    return [
        Claim("gap-narrows", "The throughput gap between pFabric and FQ-CoDel narrows significantly as 1-packet flows grow",
              "narrows", [mean(lo), mean(hi)], clearly_lower(hi, lo),
              f"pFabric / FQ-CoDel throughput at {shares[-1]:g} below that at {shares[0]:g} by more than 2 standard errors "
              "(values: both means)", "ratio", quote=narrows),
        Claim("dctcp-gap-remains", "The difference between DCTCP and pFabric remains significant at every share",
              "significant", [min(mean(gap(f, "pfabric", m)) for m in dctcps) for f in shares],
              all(clearly_lower(st.metric(THROUGHPUT, mech=m, one_pkt=f), st.metric(THROUGHPUT, mech="pfabric", one_pkt=f))
                  for m in dctcps for f in shares),
              "DCTCP's mean throughput (100 and 1000 packets) below pFabric's by more than 2 standard errors at every share "
              "(values: pFabric / DCTCP per share, the smaller)", "ratio",
              quote="While the difference between DCTCP and pFabric always remains significant, the performance of FQ-CoDel "
                    "approaches that of pFabric"),
    ]


register(Reproduction("fqcodel-fig4", PAPER, "fig. 4",
                      "load 0.6, 1-packet flows from 0.01 % to 10 % of the bytes (and every dcfair discipline)",
                      plan_fig4, analyze_fig4, READINGS))
