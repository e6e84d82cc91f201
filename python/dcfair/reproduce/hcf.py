"""The HCF paper's section V (paper 000): figures 4 to 10 (figures 2 and 3, incast, in
``hcf_incast.py``).

Each reproduction compares FIFO (DropTail) and HCF on the paper's settings, over 5 seeds in the
full form (180 s runs, measured over the last 10 s) and 2 seeds of 20 s runs in the quick form.
The paper's numbers come from its text (the figures themselves are missing from the extraction);
where the text gives no number, the claim is the qualitative statement it makes, checked by a
stated criterion. ``docs/mechanisms/hcf.md`` holds the resulting claims table.

The paper's two measures count packets **sent**: starvation is "the percentage of all flows
that have not sent any packet during the measuring time T", unfairness "the variance of the
cumulative number of packets sent by each flow during some time T". The claims use them
(``sent_starved_fraction``, ``sent_variance_pkts``: every data packet a flow sends in the window,
retransmissions included) and record the packets-delivered reading beside each
(``starved_fraction``, ``throughput_variance_pkts``) as an ``explored`` entry.

Beyond the paper, figures 4 and 5 also run FairQ and ExpressPass (``LONG_VARIANTS``) and write
every variant's starvation and fairness side by side (``table.csv``); the paper's claims compare
FIFO and HCF only, and ExpressPass's own claim is marked ``scope = "beyond"``.

``LONG_READINGS`` are the other readings every long-flow claim is tried under (``dcfair reproduce
NAME --explore``): the HCF rule sets the paper's versions describe, and settings the text leaves
open.
"""

from __future__ import annotations

from pathlib import Path
from typing import List

from dcfair.data import PAPERS
from dcfair.reproduce import (Claim, Reading, Reproduction, Study, clearly_lower, mean, pyplot, register, save_figure,
                               within_factor)
from dcfair.runner import Point

PAPER = "HCF (paper 000)"
LONG = str(PAPERS / "hcf/longflows.toml")
MIX = str(PAPERS / "hcf/short_over_long.toml")
QDISCS = ("droptail", "hcf")
NAMES = {"droptail": "FIFO", "hcf": "HCF", "fairq": "FairQ", "droptail-handshake": "FIFO, handshake", "xpass": "ExpressPass",
         "afd": "AFD"}
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
#: "afd" is AFD (docs/mechanisms/afd.md, not in the HCF paper) with its defaults.
HANDSHAKE = [("tcp.handshake", True), ("tcp.headerless_first_segment", False), ("tcp.first_ack_resets_cwnd", False)]
LONG_VARIANTS = {
    "droptail": [("queue.kind", "droptail")],
    "hcf": [("queue.kind", "hcf")],
    "fairq": [("queue.kind", "droptail")] + HANDSHAKE + [("fairq.target_fraction", 0.25)],
    "droptail-handshake": [("queue.kind", "droptail")] + HANDSHAKE,
    "xpass": [("queue.kind", "droptail"), ("flows.transport", "xpass")],
    "afd": [("queue.kind", "afd")],
}


HCF_ONLY = (("qdisc", "hcf"),)
#: The HCF rule sets of the paper's versions (section III-D's swap, Algorithm 1's LP rule,
#: which its footnote says the conference version lacked).
RULE_READINGS = (
    Reading("conference-rules", "Algorithm 1 as in the conference version: no LP zeroing rule (the paper's footnote); "
            "queues swapped (the conference abstract already proves there is no reordering)",
            (("queue.hcf.zero_on_lp", False),), HCF_ONLY),
    Reading("no-swap", "section III-B's algorithm without III-D's queue swap and without the LP zeroing rule "
            "(with the roles fixed the LP rule never applies: the same runs as with it)",
            (("queue.hcf.swap", False), ("queue.hcf.zero_on_lp", False)), HCF_ONLY),
)
#: Settings the long-flow text leaves open, each tried on FIFO and HCF alike (not on the
#: variants beyond the paper, whose claims these readings do not bear on).
PAPERS_VARIANTS = (("qdisc", ("droptail", "hcf")),)
SETTING_READINGS = (
    Reading("ns2-window", "ns-2's default receive window of 20 packets (window_) instead of 44",
            (("tcp.rcv_buf_bytes", 20 * 1460),), PAPERS_VARIANTS),
    Reading("access-10g", "access links at 10 Gbit/s ('a much higher capacity') instead of 1 Gbit/s",
            (("topology.access_rate_mbps", 10000.0),), PAPERS_VARIANTS),
    Reading("delayed-ack", "delayed ACKs at the receivers (ns-2's DelAck sink) instead of one ACK per packet",
            (("tcp.delayed_ack", True),), PAPERS_VARIANTS),
)
UDP_READING = Reading("udp-cbr", "constant-rate UDP background instead of Poisson arrivals", (("udp.pattern", "cbr"),),
                      PAPERS_VARIANTS)
LONG_READINGS = RULE_READINGS + SETTING_READINGS + (UDP_READING,)
MIX_READINGS = RULE_READINGS + SETTING_READINGS

#: The paper's two measures (packets sent) and the packets-delivered reading of each.
SENT = {"starved": "sent_starved_fraction", "variance": "sent_variance_pkts"}
DELIVERED = {"starved": "starved_fraction", "variance": "throughput_variance_pkts"}
DELIVERED_WHAT = "packets delivered to the receiver in the window instead of packets sent"


def measured(st: Study, cid: str, text: str, quote: str, paper: str, criterion: str, unit: str, fn) -> Claim:
    """A claim about the paper's measures: ``fn(get)`` returns ``(values, holds)``, where
    ``get(measure, **labels)`` gives per-seed values of ``"starved"`` or ``"variance"``; the
    claim uses packets sent, and its ``explored`` list the packets-delivered reading."""
    def getter(names):
        return lambda measure, **labels: st.metric(names[measure], **labels)

    vals, holds = fn(getter(SENT))
    alt_vals, alt_holds = fn(getter(DELIVERED))
    return Claim(cid, text, paper, vals, holds, criterion, unit, quote=quote).tried(
        "delivered", DELIVERED_WHAT, alt_vals, alt_holds, st.command)


def _seeds(quick: bool) -> range:
    return range(1, 3) if quick else range(1, 6)


def _dur(quick: bool, full: float = 180.0) -> List[tuple]:
    return [("sim.duration_s", 20.0)] if quick else [("sim.duration_s", full)]


def _long(quick: bool, qdisc: str, seed: int, extra=(), **labels) -> Point:
    ov = LONG_VARIANTS[qdisc][:1] + _dur(quick) + LONG_VARIANTS[qdisc][1:] + list(extra)
    return Point.make(LONG, ov, seed, qdisc=qdisc, **labels)


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
        rows.append({"variant": q, "starved_sent": round(m("sent_starved_fraction"), 4),
                     "variance_sent_pkts2": round(m("sent_variance_pkts"), 1),
                     "starved_fraction": round(m("starved_fraction"), 4),
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
    hi = max(1, int(tcp["pkts_sent_in_window"].max()))
    bins = list(range(0, hi + 20, max(1, hi // 40)))
    for q in _variants(st):
        ax.hist(tcp[tcp["qdisc"] == q]["pkts_sent_in_window"], bins=bins, alpha=0.45, label=NAMES[q])
    ax.set_xlabel("packets sent per flow in the last 10 s")
    ax.set_ylabel("flows (all seeds)")
    ax.set_title("HCF paper fig. 4: per-flow throughput distribution, 400 long flows")
    ax.legend()
    save_figure(fig, st)
    st.table = long_table(st)

    uf, uh = st.metric("utilization", qdisc="droptail"), st.metric("utilization", qdisc="hcf")
    ux = st.metric("utilization", qdisc="xpass")
    xpass = [Claim("xpass-utilization", "ExpressPass (not in the HCF paper) keeps the bottleneck busy with 400 flows at "
                   "0.0025 credits per flow per 100 us", "-", ux, min(ux) >= 0.95, "every run >= 0.95", "fraction",
                   scope="beyond", subject="expresspass")] if ux else []
    ja, jf = st.metric("jain_index", qdisc="afd"), st.metric("jain_index", qdisc="droptail")
    gain = [a - b for a, b in zip(ja, jf)]
    afd = [Claim("afd-fairer", "AFD (not in the HCF paper) is fairer than FIFO among the 400 long flows", "-", gain,
                 min(gain) > 0, "AFD's Jain index minus FIFO's, same seed: above 0 in every seed", "Jain index",
                 scope="beyond", subject="afd")] if gain else []

    def variance_ratio(get):
        r = [a / b for a, b in zip(get("variance", qdisc="droptail"), get("variance", qdisc="hcf")) if b]
        return r, mean(r) >= 8.2 / 2

    return [
        measured(st, "fifo-starved", "FIFO fully starves about a third of the flows during the last 10 s",
                 "More precisely, 32% of flows in FIFO are fully starved during this period of 10 seconds", "0.32",
                 "mean within a factor 2 of 0.32", "fraction",
                 lambda get: (get("starved", qdisc="droptail"), within_factor(mean(get("starved", qdisc="droptail")), 0.32))),
        measured(st, "hcf-starved", "HCF fully starves about 1.5 % of the flows",
                 "while only 1.5% of HCF are fully starved", "0.015", "mean within a factor 2 of 0.015", "fraction",
                 lambda get: (get("starved", qdisc="hcf"), within_factor(mean(get("starved", qdisc="hcf")), 0.015))),
        measured(st, "hcf-less-starvation", "HCF starves fewer flows than FIFO",
                 "fewer flows are significantly impacted by sending nearly no packets", "0.32 vs 0.015",
                 "FIFO minus HCF starved fraction: clearly positive (mean difference > 2 standard errors)", "fraction",
                 lambda get: ([a - b for a, b in zip(get("starved", qdisc="droptail"), get("starved", qdisc="hcf"))],
                              clearly_lower(get("starved", qdisc="hcf"), get("starved", qdisc="droptail")))),
        measured(st, "fifo-variance", "FIFO's per-flow variance of packets sent in 10 s",
                 "while the FIFO switch has a computed variance of 5.55 [x 10^?, the exponent lost in the extraction]",
                 "5.55e4 (exponent unreadable: 4 read)",
                 "mean within a factor 2 of 5.55e4", "packets^2",
                 lambda get: (get("variance", qdisc="droptail"), within_factor(mean(get("variance", qdisc="droptail")), 5.55e4))),
        measured(st, "hcf-variance", "HCF's per-flow variance",
                 "the HCF switch has a lower variance of 6.74 [x 10^3, extracted as '6.74 - 103']", "6.74e3", "mean within a factor 2 of 6.74e3",
                 "packets^2", lambda get: (get("variance", qdisc="hcf"), within_factor(mean(get("variance", qdisc="hcf")), 6.74e3))),
        measured(st, "variance-ratio", "HCF's variance is about 8 times lower than FIFO's (the two numbers above)",
                 "This lower unfairness is reflected by the lower distribution variance", "8.2 (5.55e4 / 6.74e3)",
                 "per-seed FIFO / HCF variance: mean >= 4.1 (half of 8.2)", "ratio", variance_ratio),
        Claim("utilization", "Both keep the bottleneck utilization extremely close to 100 %", "~1.0",
              uf + uh, min(uf + uh) >= 0.99, "every run >= 0.99", "fraction",
              quote="we found that both for HCF and FIFO, the bottleneck link utilization was extremely close to 100%"),
    ] + xpass + afd


register(Reproduction("hcf-throughput", PAPER, "fig. 4", "per-flow throughput distribution of 400 long flows, FIFO vs HCF",
                      plan_throughput, analyze_throughput, LONG_READINGS))


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
              over20, mean(over20) > 0.5, "fraction of flows with max gap > 20 s above 0.5", "fraction",
              quote="the starvation time of most flows exceeds 20 seconds"),
        Claim("fifo-some-over-1min", f"FIFO: several flows starve for more than a minute{q}", "several (>= 3)",
              over60, mean(over60) >= 3, "flows with max gap > 60 s per run: mean >= 3", "flows",
              quote="several flows have a starvation time that exceeds a minute"),
        Claim("hcf-most-under-20s", f"HCF: most longest-starvation times are under 20 s{q}", "most flows (> 0.5)",
              hcf_under20, mean(hcf_under20) > 0.5, "fraction of flows with max gap < 20 s above 0.5", "fraction",
              quote="when using HCF in the switch, it can be seen that most starvation times are under 20 seconds"),
    ]


register(Reproduction("hcf-starvation", PAPER, "fig. 5", "distribution of each flow's longest starvation time, FIFO vs HCF",
                      plan_starvation, analyze_starvation, LONG_READINGS))


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
#: "Low starvation": twice the 1.5 % the paper reports for HCF at B = 20 (fig. 4).
LOW_STARVATION = 0.03
BUFFERS_QUICK = [10, 20, 200]


def plan_buffer(quick: bool) -> List[Point]:
    bs = BUFFERS_QUICK if quick else BUFFERS_FULL
    return [_long(quick, q, s, [("queue.limit_pkts", b)], buffer=b) for b in bs for q in QDISCS for s in _seeds(quick)]


def analyze_buffer(st: Study) -> List[Claim]:
    bs = BUFFERS_QUICK if st.quick else BUFFERS_FULL
    _sweep_plot(st, "buffer", bs, "buffer B (packets)", "HCF paper fig. 6: influence of the buffer size", True)
    shallow = [b for b in bs if b <= 20]
    large = [b for b in bs if b >= 500] or [bs[-1]]
    big = bs[-1]
    below_big = [b for b in bs if b < big]

    def shallow_lower(measure):
        def fn(get):
            gaps = [mean(get(measure, qdisc="droptail", buffer=b)) - mean(get(measure, qdisc="hcf", buffer=b)) for b in shallow]
            ok = all(clearly_lower(get(measure, qdisc="hcf", buffer=b), get(measure, qdisc="droptail", buffer=b)) for b in shallow)
            return gaps, ok
        return fn

    def fifo_needs_big(get):
        per_b = [mean(get("starved", qdisc="droptail", buffer=b)) for b in bs]
        return per_b, per_b[-1] <= LOW_STARVATION and all(x > LOW_STARVATION for x in per_b[:-1])

    def hcf_low_with_few(get):
        per_b = [mean(get("starved", qdisc="hcf", buffer=b)) for b in shallow]
        return per_b, any(x <= LOW_STARVATION for x in per_b)

    def similar_large(get):
        d = [mean(get("starved", qdisc="droptail", buffer=b)) - mean(get("starved", qdisc="hcf", buffer=b)) for b in large]
        return d, all(abs(x) <= 0.02 for x in d)

    def fifo_a_bit_fairer(get):
        r = [mean(get("variance", qdisc="hcf", buffer=b)) / mean(get("variance", qdisc="droptail", buffer=b)) for b in large]
        return r, all(1.0 < x <= 2.0 for x in r)

    return [
        measured(st, "shallow-variance", "With shallow buffers (B <= 20) HCF's unfairness is significantly lower than FIFO's",
                 "for low buffer sizes, the unfairness and starvation with HCF are significantly lower than with FIFO",
                 "lower", "at every B <= 20: HCF's variance below FIFO's by more than 2 standard errors (values: FIFO - HCF)",
                 "packets^2", shallow_lower("variance")),
        measured(st, "shallow-starvation", "With shallow buffers HCF's starvation is significantly lower than FIFO's",
                 "for low buffer sizes, the unfairness and starvation with HCF are significantly lower than with FIFO",
                 "lower", "at every B <= 20: HCF's starved fraction below FIFO's by more than 2 standard errors "
                 "(values: FIFO - HCF)", "fraction", shallow_lower("starved")),
        measured(st, "fifo-needs-big-buffer", f"FIFO reaches low starvation (<= {LOW_STARVATION:g}) only with some 1000 packets",
                 "FIFO needs buffers of some 1000 packets", "low only near B = 1000",
                 f"FIFO's starved fraction <= {LOW_STARVATION:g} at B = {big} and above it at every smaller B "
                 "(values: per B)", "fraction", fifo_needs_big),
        measured(st, "hcf-low-with-few-packets", f"A few packets of buffer are enough for HCF's starvation to be low "
                 f"(<= {LOW_STARVATION:g}, twice the 1.5 % of fig. 4)",
                 "buffers with a few packets are enough with HCF to provide low starvation", "low at B <= 20",
                 f"HCF's starved fraction <= {LOW_STARVATION:g} at some B <= 20 (values: per B)", "fraction", hcf_low_with_few),
        measured(st, "similar-at-large-buffers", f"At large buffers (B >= {large[0]}) FIFO and HCF starve about as many flows",
                 "for higher buffer sizes, the unfairness and starvation are about similar", "similar",
                 f"|FIFO - HCF| starved fraction <= 0.02 at every B >= {large[0]} (values: FIFO - HCF)", "fraction",
                 similar_large),
        measured(st, "unfairness-rises-at-large-buffers", f"FIFO's unfairness starts increasing at large buffers (B = {big})",
                 "the unfairness is a bit lower with FIFO and starts increasing with large buffer sizes", "increases",
                 f"FIFO's variance at B = {big} above its lowest over B >= 100 (values: per B >= 100)", "packets^2",
                 lambda get: ([mean(get("variance", qdisc="droptail", buffer=b)) for b in bs if b >= 100],
                              mean(get("variance", qdisc="droptail", buffer=big)) >
                              min(mean(get("variance", qdisc="droptail", buffer=b)) for b in bs if b >= 100))),
        measured(st, "fifo-a-bit-fairer-at-large-buffers", f"At large buffers (B >= {large[0]}) FIFO's unfairness is a bit lower",
                 "In particular, the unfairness is a bit lower with FIFO", "a bit lower",
                 f"HCF / FIFO variance in (1, 2] at every B >= {large[0]} (values: per B)", "ratio", fifo_a_bit_fairer),
    ]


register(Reproduction("hcf-buffer", PAPER, "fig. 6", "unfairness and starvation against the buffer size",
                      plan_buffer, analyze_buffer, LONG_READINGS))

CREDITS_FULL = [1, 2, 4, 8, 16, 32]
CREDITS_QUICK = [1, 32]


def plan_credits(quick: bool) -> List[Point]:
    cs = CREDITS_QUICK if quick else CREDITS_FULL
    return [_long(quick, "hcf", s, [("queue.hcf.credits", c)], credits=c) for c in cs for s in _seeds(quick)]


def analyze_credits(st: Study) -> List[Claim]:
    cs = CREDITS_QUICK if st.quick else CREDITS_FULL
    _sweep_plot(st, "credits", cs, "initial credits per bin c0", "HCF paper fig. 7: influence of the initial credits", True)
    quote = "It can be seen that a large number of initial credits decreases the performance of the system"

    def worse(measure):
        return lambda get: ([b - a for a, b in zip(get(measure, credits=cs[0]), get(measure, credits=cs[-1]))],
                            mean(get(measure, credits=cs[-1])) > mean(get(measure, credits=cs[0])))

    return [
        measured(st, "more-credits-more-unfair", f"A large number of initial credits decreases performance (c0 = {cs[-1]} vs 1): "
                 "unfairness", quote, "higher with more credits", f"variance at c0 = {cs[-1]} above c0 = 1 (values: the "
                 "difference per seed)", "packets^2", worse("variance")),
        measured(st, "more-credits-more-starved", f"... and starvation (c0 = {cs[-1]} vs 1)", quote, "higher with more credits",
                 f"starved fraction at c0 = {cs[-1]} above c0 = 1 (values: the difference per seed)", "fraction",
                 worse("starved")),
    ]


register(Reproduction("hcf-credits", PAPER, "fig. 7", "unfairness and starvation against the initial credits c0",
                      plan_credits, analyze_credits, LONG_READINGS))

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
    few = min(k for k in ks if k >= 20)
    quote = "Of course, a smaller number of bins increases unfairness and starvation"
    enough = "The plots show that a few dozen bins seem enough to provide a reasonable fairness and starvation"

    def fewer_worse(measure):
        return lambda get: (get(measure, qdisc="hcf", bins=1),
                            mean(get(measure, qdisc="hcf", bins=1)) > mean(get(measure, qdisc="hcf", bins=few)))

    def rel_variance(get):
        v20, vmax = mean(get("variance", qdisc="hcf", bins=few)), mean(get("variance", qdisc="hcf", bins=ks[-1]))
        rel = (v20 - vmax) / max(vmax, 1e-9)
        return [rel], rel <= 0.25

    def starved_gap(get):
        d = mean(get("starved", qdisc="hcf", bins=few)) - mean(get("starved", qdisc="hcf", bins=ks[-1]))
        return [d], d <= 0.02

    return [
        measured(st, "few-bins-worse", f"Fewer bins increase unfairness (K = 1 vs K = {few})", quote, "higher with fewer bins",
                 f"mean variance at K = 1 above K = {few} (values: K = 1 per seed)", "packets^2", fewer_worse("variance")),
        measured(st, "few-bins-more-starved", f"... and starvation (K = 1 vs K = {few})", quote, "higher with fewer bins",
                 f"mean starved fraction at K = 1 above K = {few} (values: K = 1 per seed)", "fraction", fewer_worse("starved")),
        measured(st, "dozen-bins-enough", f"A few dozen bins are enough: K = {few} within 25 % of K = {ks[-1]}", enough, "enough",
                 f"(var(K={few}) - var(K={ks[-1]})) / var(K={ks[-1]}) <= 0.25", "relative difference", rel_variance),
        measured(st, "dozen-bins-starvation", f"... and for starvation: K = {few} within 0.02 of K = {ks[-1]}", enough, "enough",
                 "difference of starved fractions <= 0.02", "fraction", starved_gap),
    ]


register(Reproduction("hcf-bins", PAPER, "fig. 8", "unfairness and starvation against the number of bins K",
                      plan_bins, analyze_bins, LONG_READINGS))

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
    quote = "Simulations show that the dynamic priority period fares better than any of the fixed period values"

    def better(measure):
        def fn(get):
            dyn = mean(get(measure, period_us="baseline"))
            best = min(mean(get(measure, period_us=p)) for p in ps)
            return [dyn - best], dyn < best
        return fn

    return [
        measured(st, "dynamic-beats-fixed-variance", "The dynamic period has lower unfairness than any fixed period", quote,
                 "better", "dynamic variance below the best fixed period's (values: dynamic - best fixed)", "packets^2",
                 better("variance")),
        measured(st, "dynamic-beats-fixed-starvation", "... and lower starvation than any fixed period", quote, "better",
                 "dynamic starved fraction below the best fixed period's (values: dynamic - best fixed)", "fraction",
                 better("starved")),
    ]


register(Reproduction("hcf-period", PAPER, "fig. 9", "fixed priority periods against the dynamic period",
                      plan_period, analyze_period, LONG_READINGS))


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
        def quantile(q, level):
            per_seed = []
            for s in sorted(set(flows["seed"])):
                g = flows[(flows["group"] == c) & (flows["qdisc"] == q) & (flows["seed"] == s)]["fct_s"].fillna(np.inf)
                per_seed.append(float(np.quantile(g, level)) if len(g) else float("nan"))
            return per_seed

        for level, cid, what, quote in (
                (0.5, "median", "often lower transfer latencies (median)",
                 "The plots show that HCF switches often provide a lower transfer latency than the FIFO switch"),
                (0.95, "tail", "lower odds of long transfer latencies (95th percentile)",
                 "More significantly, they have lower odds of having long transfer latencies")):
            f, h = quantile("droptail", level), quantile("hcf", level)
            claims.append(Claim(f"{cid}-{c}", f"HCF: {what}, {c[5:]}-packet flows", "lower with HCF",
                                [a - b for a, b in zip(f, h)], mean(h) < mean(f),
                                f"{level:.0%} quantile of the latency under HCF below FIFO's (mean over seeds; "
                                "values: FIFO - HCF per seed)", "s", quote=quote))
    axes[0].set_ylabel("CDF")
    fig.suptitle("HCF paper fig. 10: short flows over 100 long flows, B = 10")
    save_figure(fig, st)
    return claims


register(Reproduction("hcf-shortflows", PAPER, "fig. 10", "transfer latency CDFs of short flows over long flows",
                      plan_shortflows, analyze_shortflows, MIX_READINGS))
