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

from dcfair.reproduce import Claim, Reproduction, Study, mean, pyplot, register, save_figure
from dcfair.runner import Point

PAPER = "FQ-CoDel in the data center (paper 003)"
ROOT = Path(__file__).resolve().parents[3]
BASE = str(ROOT / "scenarios/papers/fqcodel/leafspine.toml")

#: Section IV-B: CoDel's target and interval scaled down 1000x from Linux's 5 ms / 100 ms.
FQ_CODEL_DC = [("queue.fq_codel.target_us", 5.0), ("queue.fq_codel.interval_us", 100.0)]
#: DCTCP's marking threshold at 10 Gbit/s (Alizadeh et al. 2010, section 4: K = 65 packets).
DCTCP_K = 65

#: Queue discipline + transport of each compared design. The paper's three first; then dcfair's
#: other disciplines, all under NewReno.
MECHANISMS: Dict[str, List[Tuple[str, object]]] = {
    # pFabric: 36 KB (24 packets) per port at switches and host NICs alike (pFabric section 5).
    "pfabric": [("queue.kind", "pfabric"), ("queue.limit_pkts", 24), ("host_queue.kind", "pfabric"),
                ("host_queue.limit_pkts", 24), ("tcp.cc", "pfabric"), ("tcp.priority", "remaining")],
    "dctcp": [("queue.kind", "droptail"), ("queue.limit_pkts", 100),
              ("queue.droptail.mark_threshold_pkts", DCTCP_K), ("tcp.cc", "dctcp")],
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
PAPER_MECHS = ("pfabric", "dctcp", "fq_codel")
NAMES = {"pfabric": "pFabric", "dctcp": "DCTCP", "fq_codel": "FQ-CoDel", "droptail": "DropTail",
         "red": "RED", "sfq": "SFQ", "drr": "DRR", "hcf": "HCF", "xpass": "ExpressPass"}
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

    def gain(m: str, c: str) -> List[float]:
        """Per seed: 1 - FCT(with c) / FCT(defaults): the reduction of the mean FCT."""
        return [1 - r for r in _ratio(st.metric(FCT_ALL, mech=m, setting=c), st.metric(FCT_ALL, mech=m, setting="none"))]

    pf_gain = _ratio(st.metric(FCT_ALL, mech="pfabric", setting="none"), st.metric(FCT_ALL, mech="pfabric", setting="all"))
    claims = [
        Claim("dctcp-all-helps", "All pFabric settings reduce DCTCP's mean FCT (about 30 %)", "30 %",
              gain("dctcp", "all"), mean(gain("dctcp", "all")) > 0.1, "mean reduction > 10 %", "fraction"),
        Claim("fq-codel-all-helps", "All pFabric settings reduce FQ-CoDel's mean FCT (about 20 %)", "20 %",
              gain("fq_codel", "all"), mean(gain("fq_codel", "all")) > 0.1, "mean reduction > 10 %", "fraction"),
        Claim("pfabric-settings-2x", "pFabric with its settings: mean FCT more than 2x lower than with vanilla TCP settings",
              "> 2x", pf_gain, mean(pf_gain) > 2, "mean FCT(defaults) / FCT(all) > 2", "ratio"),
    ]
    singles = [c for c in ("rtx", "rx", "cc") if st.rows(setting=c)]
    if len(singles) == 3:
        for m in ("dctcp", "fq_codel"):
            g = {c: mean(gain(m, c)) for c in singles}
            claims.append(Claim(f"{m}-rtx-dominates", f"{NAMES[m]}: the time-related (rtx) settings matter most",
                                "rtx largest", gain(m, "rtx"), max(g, key=g.get) == "rtx",
                                "rtx gives the largest mean reduction of the three categories", "fraction"))
    return claims


register(Reproduction("fqcodel-breakdown", PAPER, "figs. 1-2",
                      "Table II's pFabric TCP settings switched on by category for DCTCP, FQ-CoDel (and pFabric)",
                      plan_breakdown, analyze_breakdown))


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
        others = [mean(st.metric(metric, mech=m, **{key: v})) for m in PAPER_MECHS if m != "pfabric"]
        best = min(others) if better == "lower" else max(others)
        rel.append(p / best if best else float("nan"))
        wins &= (p <= best) if better == "lower" else (p >= best)
    return rel, wins


def analyze_fig3(st: Study) -> List[Claim]:
    loads = sorted({dict(r["point"].labels)["load"] for r in st.records})
    _sweep_plot(st, "load", loads, "load", "FQ-CoDel paper fig. 3: data mining on the 32-host leaf-spine")
    fct_rel, fct_win = _best_everywhere(st, "load", loads, FCT_1PKT, "lower")
    thr_rel, thr_win = _best_everywhere(st, "load", loads, THROUGHPUT, "higher")
    fq_vs_pf = [mean(_ratio(st.metric(FCT_1PKT, mech="fq_codel", load=ld), st.metric(FCT_1PKT, mech="pfabric", load=ld)))
                for ld in loads]
    fq_vs_dc = [mean(_ratio(st.metric(THROUGHPUT, mech="fq_codel", load=ld), st.metric(THROUGHPUT, mech="dctcp", load=ld)))
                for ld in loads]
    return [
        Claim("pfabric-best-fct", "pFabric has the lowest 1-packet FCT at every load", "best",
              fct_rel, fct_win, "pFabric's mean <= DCTCP's and FQ-CoDel's at every load (values: pFabric / best other)", "ratio"),
        Claim("pfabric-best-throughput", "pFabric has the highest mean throughput at every load", "best",
              thr_rel, thr_win, "pFabric's mean >= DCTCP's and FQ-CoDel's at every load (values: pFabric / best other)", "ratio"),
        Claim("fq-codel-fct-close", "FQ-CoDel's 1-packet FCT is very close to pFabric's", "close",
              fq_vs_pf, max(fq_vs_pf) <= 2.0, "FQ-CoDel / pFabric <= 2 at every load (values: per load)", "ratio"),
        Claim("fq-codel-beats-dctcp", "FQ-CoDel's mean throughput is higher than DCTCP's", "higher",
              fq_vs_dc, min(fq_vs_dc) > 1.0, "FQ-CoDel / DCTCP > 1 at every load (values: per load)", "ratio"),
    ]


register(Reproduction("fqcodel-fig3", PAPER, "fig. 3",
                      "load 0.1 to 0.8: mean throughput and 1-packet FCT, pFabric, DCTCP, FQ-CoDel (and every dcfair discipline)",
                      plan_fig3, analyze_fig3))


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

    def gap(f):  # per seed: pFabric's throughput over FQ-CoDel's
        return _ratio(st.metric(THROUGHPUT, mech="pfabric", one_pkt=f), st.metric(THROUGHPUT, mech="fq_codel", one_pkt=f))

    lo, hi = gap(shares[0]), gap(shares[-1])
    fct_rel, fct_win = _best_everywhere(st, "one_pkt", shares, FCT_1PKT, "lower")
    return [
        Claim("gap-narrows", "The throughput gap between pFabric and FQ-CoDel narrows as 1-packet flows grow",
              "narrows", [mean(lo), mean(hi)], mean(hi) < mean(lo),
              f"pFabric / FQ-CoDel throughput at {shares[-1]:g} below that at {shares[0]:g} (values: both)", "ratio"),
        Claim("pfabric-best-fct-4", "pFabric keeps the lowest 1-packet FCT at every share", "best",
              fct_rel, fct_win, "pFabric's mean <= DCTCP's and FQ-CoDel's at every share (values: pFabric / best other)", "ratio"),
    ]


register(Reproduction("fqcodel-fig4", PAPER, "fig. 4",
                      "load 0.6, 1-packet flows from 0.01 % to 10 % of the bytes (and every dcfair discipline)",
                      plan_fig4, analyze_fig4))
