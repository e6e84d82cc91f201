"""AFD (Pan, Breslau, Prabhakar and Shenker, "Approximate fairness through differential dropping",
ACM SIGCOMM CCR 33(2), 2003): its main fairness result, on two settings of this repository.

The paper's text is not among the papers this repository reproduces (``../shared/papers``), so
its figures' own settings are not rebuilt here. Its claim is taken from its abstract ("the
design provides a reasonable degree of fairness in a wide variety of operating conditions") and
checked where an unfair FIFO is known to fail:

- ``long``: the HCF paper's 400 long TCP flows on a 20-packet buffer
  (``scenarios/papers/hcf/longflows.toml``), DropTail against AFD with its defaults;
- ``udp``: 20 of those TCP flows beside the file's unresponsive UDP source, raised to half the
  link (``udp.rate_fraction = 0.5``): about ten times its fair share of 1/21.

Full form: 5 seeds of 60 s (measured over the last 10 s); quick form: 2 seeds of 20 s. The
readings move AFD's controller period and its sampling, the settings the paper's text would fix.
``docs/mechanisms/afd.md`` holds the model and the claims table.
"""

from __future__ import annotations

from typing import List

from dcfair.data import PAPERS
from dcfair.reproduce import Claim, Reading, Reproduction, Study, mean, pyplot, register, save_figure
from dcfair.runner import Point

PAPER = "AFD (Pan et al., SIGCOMM CCR 2003; text not in the repository)"
LONG = str(PAPERS / "hcf/longflows.toml")
QDISCS = ("droptail", "afd")
NAMES = {"droptail": "DropTail", "afd": "AFD"}
SETTINGS = {"long": [], "udp": [("flows.count", 20), ("udp.rate_fraction", 0.5)]}
#: The bottleneck of ``longflows.toml`` (``topology.bottleneck_rate_mbps``), bits/s.
BOTTLENECK_BPS = 100e6
#: The UDP source's fair share in the ``udp`` setting: one of 21 flows.
FAIR_UDP = 1 / 21
QUOTE = "the design provides a reasonable degree of fairness in a wide variety of operating conditions"
AFD_ONLY = (("qdisc", "afd"),)
READINGS = (
    Reading("interval-100us", "AFD's controller updated every 100 us instead of every 1 ms",
            (("queue.afd.interval_us", 100.0),), AFD_ONLY),
    Reading("interval-10ms", "AFD's controller updated every 10 ms instead of every 1 ms",
            (("queue.afd.interval_us", 10000.0),), AFD_ONLY),
    Reading("sample-10", "one arrival in 10 sampled into a shadow buffer of 100 entries, instead of every arrival "
            "into 1000", (("queue.afd.sample_every", 10), ("queue.afd.shadow_pkts", 100)), AFD_ONLY),
)


def plan(quick: bool) -> List[Point]:
    dur = 20.0 if quick else 60.0
    seeds = range(1, 3) if quick else range(1, 6)
    return [Point.make(LONG, [("queue.kind", q), ("sim.duration_s", dur)] + SETTINGS[s], seed, qdisc=q, setting=s)
            for s in SETTINGS for q in QDISCS for seed in seeds]


def udp_share(st: Study, qdisc: str, setting: str = "udp") -> List[float]:
    """Per seed: the UDP source's goodput as a fraction of the bottleneck rate."""
    return [x / BOTTLENECK_BPS for x in st.metric("throughput_bps_udp", qdisc=qdisc, setting=setting)]


def analyze(st: Study) -> List[Claim]:
    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.6))
    for i, q in enumerate(QDISCS):
        a.bar([i], [mean(st.metric("jain_index", qdisc=q, setting="long"))], label=NAMES[q])
        b.bar([i], [mean(udp_share(st, q))], label=NAMES[q])
    b.axhline(FAIR_UDP, color="k", ls=":", label="fair share (1/21)")
    a.set_title("400 long TCP flows: Jain index")
    b.set_title("UDP at 10x its share: its share of the link")
    for ax in (a, b):
        ax.set_xticks(range(len(QDISCS)), [NAMES[q] for q in QDISCS])
    b.legend(fontsize=8)
    save_figure(fig, st)
    st.table = [{"qdisc": q, "setting": s, "jain_index": round(mean(st.metric("jain_index", qdisc=q, setting=s)), 4),
                 "starved_fraction": round(mean(st.metric("starved_fraction", qdisc=q, setting=s)), 4),
                 "udp_share": round(mean(udp_share(st, q, s)), 4),
                 "utilization": round(mean(st.metric("utilization", qdisc=q, setting=s)), 4),
                 "seeds": len(st.metric("jain_index", qdisc=q, setting=s))}
                for s in SETTINGS for q in QDISCS]

    jd, ja = st.metric("jain_index", qdisc="droptail", setting="long"), st.metric("jain_index", qdisc="afd", setting="long")
    gain = [x - y for x, y in zip(ja, jd)]
    ud, ua = udp_share(st, "droptail"), udp_share(st, "afd")
    return [
        Claim("long-fairer", "AFD is fairer than DropTail among the HCF paper's 400 long TCP flows",
              "a reasonable degree of fairness (read: fairer than FIFO)",
              gain, bool(gain) and min(gain) > 0, "AFD's Jain index minus DropTail's, same seed: above 0 in every seed",
              "Jain index", quote=QUOTE),
        Claim("udp-held", "AFD holds an unresponsive UDP source at ten times its fair share to at most twice that share",
              "a reasonable degree of fairness (read: within twice the fair share)", ua, bool(ua) and mean(ua) <= 2 * FAIR_UDP,
              f"mean UDP share of the link <= {2 * FAIR_UDP:.3f} (twice 1/21)", "fraction of the link", quote=QUOTE),
        Claim("droptail-udp-unfair", "DropTail lets the UDP source keep more than three times its fair share", "-",
              ud, bool(ud) and mean(ud) > 3 * FAIR_UDP, f"mean UDP share of the link > {3 * FAIR_UDP:.3f}",
              "fraction of the link", scope="beyond"),
    ]


register(Reproduction("afd-fairness", PAPER, "abstract", "AFD against DropTail: 400 long flows, and TCP beside "
                      "an unresponsive UDP source", plan, analyze, READINGS))
