"""ExpressPass (paper 002) on multi-bottleneck fabrics: figure 10 (parking lot, utilization with
and without feedback) and figure 11 (the single-bottleneck flow against the max-min ideal).

Rules:

- Every run is ``scenarios/papers/xpass/parking_lot.toml`` (figure 10) or
  ``multi_bottleneck.toml`` (figure 11), 10 Gbit/s links, plus the overrides of a *law*
  (:data:`LAWS`): the paper's Algorithm 1 (the default), the same with the stale echoes of the
  period after a decrease left out (``xpass.stale_echoes = "skip"``, see
  ``docs/mechanisms/expresspass.md``, "Feedback lag"), the ns-2 code's law, and no feedback
  (the paper's "naive" case, credits always at the maximum rate).
- Utilization is normalized by the data ceiling, ``1500 / (1500 + 84)`` of the link rate (the
  paper normalizes "to the maximum data rate excluding the credit packets"). Figure 10 reports
  the least-used chain link, as the paper does (from each run's ``ports.csv``).
- The claims are checked for the paper's law as written (Algorithm 1, dcfair's default); the
  ns-2 code's law (the simulator the paper's figures came from) and Algorithm 1 with stale echoes
  skipped run beside it, and each claim records its result under them as ``explored`` entries.
- Full form: 5 seeds, 20 ms runs measured over the last 10 ms; quick form: 2 seeds, 6 ms runs
  measured over the last 3 ms, fewer points.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from dcfair.data import PAPERS
from dcfair.reproduce import Claim, Reading, Reproduction, Study, mean, pyplot, register, save_figure, within_factor
from dcfair.reproduce.xpass_credit import AUTHORS_CODE, FLOOR, NS2_CREDITS
from dcfair.runner import Point

PAPER = "ExpressPass (paper 002)"
PARKING = str(PAPERS / "xpass/parking_lot.toml")
MULTI = str(PAPERS / "xpass/multi_bottleneck.toml")

#: Data ceiling of a link: data frames of 1500 B, each paid for by an 84-byte credit.
CEILING = 1500.0 / 1584.0
LINK_BPS = 10e9

#: Feedback laws compared (overrides of ``[xpass]``).
LAWS: Dict[str, List[Tuple[str, object]]] = {
    "paper": [("xpass.feedback_law", "paper")],
    "paper_skip": [("xpass.feedback_law", "paper"), ("xpass.stale_echoes", "skip")],
    "code": [("xpass.feedback_law", "code")],
    "none": [("xpass.feedback_law", "none")],
}
NAMES = {"paper": "Algorithm 1 (paper)", "paper_skip": "Algorithm 1, stale echoes skipped",
         "code": "ns-2 code law", "none": "no feedback (naive)"}
FEEDBACK = ("paper", "paper_skip", "code")
#: The feedback laws besides the paper's that every feedback claim records (``explored``).
ALT_LAWS = ("code", "paper_skip")
#: "About X %" of a utilization: within 5 points.
ABOUT_POINTS = 0.05
#: Readings the claims are also tried under (their own reproductions).
READINGS = (FLOOR, NS2_CREDITS, AUTHORS_CODE)


def _seeds(quick: bool) -> range:
    return range(1, 3) if quick else range(1, 6)


def _dur(quick: bool) -> List[Tuple[str, object]]:
    return [("sim.duration_s", 0.006), ("measure.window_s", 0.003)] if quick else [("sim.duration_s", 0.02), ("measure.window_s", 0.01)]


def _hosts(prefix: str, idx: Sequence[int]) -> str:
    return "[" + ", ".join(f'"{prefix}{i}"' for i in idx) + "]"


# --- figure 10: parking lot, 1 to 6 bottlenecks ----------------------------------------------------

BOTTLENECKS = (1, 2, 3, 4, 5, 6)
QUICK_BOTTLENECKS = (2, 6)


def _parking(n: int) -> List[Tuple[str, object]]:
    """N bottlenecks: the long flow src0 -> dst<N>, cross flow i src<i-1> -> dst<i>."""
    return [("topology.bottlenecks", n), ("flows.dst", f'"dst{n}"'), ("groups.cross.count", n),
            ("groups.cross.src", _hosts("src", range(n))), ("groups.cross.dst", _hosts("dst", range(1, n + 1)))]


def plan_fig10(quick: bool) -> List[Point]:
    ns = QUICK_BOTTLENECKS if quick else BOTTLENECKS
    laws = ("paper", "code", "none") if quick else tuple(LAWS)
    return [Point.make(PARKING, _parking(n) + LAWS[law] + _dur(quick), s, law=law, bottlenecks=n)
            for n in ns for law in laws for s in _seeds(quick)]


def _min_link(st: Study, **labels) -> List[float]:
    """Per seed: the least-used chain link's utilization over the data ceiling."""
    import pandas as pd

    out = []
    for r in st.rows(**labels):
        ports = pd.read_csv(Path(r["dir"]) / "ports.csv")
        out.append(float(ports["utilization"].min()) / CEILING)
    return out


def analyze_fig10(st: Study) -> List[Claim]:
    ns = sorted({dict(r["point"].labels)["bottlenecks"] for r in st.records})
    laws = [law for law in LAWS if st.rows(law=law)]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for law in laws:
        ax.plot(ns, [mean(_min_link(st, law=law, bottlenecks=n)) * 100 for n in ns], "-o", label=NAMES[law])
    ax.plot([2, 6], [98.0, 97.8], "k*", ms=10, label="paper, with feedback")
    ax.plot([2, 6], [83.3, 60.0], "kx", ms=10, label="paper, naive")
    ax.set_xlabel("number of bottlenecks")
    ax.set_ylabel("least-used link utilization (% of the data ceiling)")
    ax.set_ylim(0, 105)
    ax.set_title("ExpressPass fig. 10: parking lot, 10 Gbit/s")
    ax.legend(fontsize=7)
    save_figure(fig, st)
    st.table = [{"law": law, "bottlenecks": n, "min_link_util": round(mean(_min_link(st, law=law, bottlenecks=n)), 4),
                 "mean_link_util": round(mean(st.metric("utilization", law=law, bottlenecks=n)) / CEILING, 4),
                 "seeds": len(st.rows(law=law, bottlenecks=n))} for law in laws for n in ns]

    q = " (quick form)" if st.quick else ""
    quote = "With two bottlenecks, it achieves 98.0% utilization, an improvement from 83.3% the naïve case without " \
            "feedback control; and with six bottlenecks, it achieves 97.8% utilization, an improvement from 60% in the " \
            "naïve case"
    claims = []
    for n, paper_naive, paper_fb in ((2, 0.833, 0.980), (6, 0.60, 0.978)):
        if n not in ns:
            continue
        naive = _min_link(st, law="none", bottlenecks=n)
        claims.append(Claim(f"naive-{n}", f"Without feedback the least-used link of a {n}-bottleneck parking lot carries "
                            f"about {paper_naive:.0%} of the data ceiling{q}", f"{paper_naive:.1%}", naive,
                            abs(mean(naive) - paper_naive) <= ABOUT_POINTS, f"mean within {ABOUT_POINTS:g} of {paper_naive}",
                            "fraction", quote=quote))
        fb = _min_link(st, law="paper", bottlenecks=n)
        c = Claim(f"feedback-{n}", f"With feedback the least-used link of a {n}-bottleneck parking lot carries about "
                  f"{paper_fb:.0%} of the data ceiling{q}", f"{paper_fb:.1%}", fb,
                  abs(mean(fb) - paper_fb) <= ABOUT_POINTS, f"mean within {ABOUT_POINTS:g} of {paper_fb}", "fraction",
                  quote=quote)
        gain = [a - b for a, b in zip(fb, naive)]
        g = Claim(f"feedback-helps-{n}", f"Feedback raises the least-used link's utilization over the naive case at {n} "
                  f"bottlenecks{q}", f"+{paper_fb - paper_naive:.1%}", gain, mean(gain) > ABOUT_POINTS,
                  f"mean gain (feedback minus naive) above {ABOUT_POINTS:g}", "fraction", quote=quote)
        for law in ALT_LAWS:
            if st.rows(law=law):
                v = _min_link(st, law=law, bottlenecks=n)
                c.tried(law, NAMES[law], v, abs(mean(v) - paper_fb) <= ABOUT_POINTS, st.command)
                gl = [a - b for a, b in zip(v, naive)]
                g.tried(law, NAMES[law], gl, mean(gl) > ABOUT_POINTS, st.command)
        claims += [c, g]
    return claims


register(Reproduction("xpass-fig10", PAPER, "fig. 10",
                      "parking lot with 1 to 6 bottlenecks: least-used link utilization with and without feedback",
                      plan_fig10, analyze_fig10, READINGS))


# --- figure 11: flow 0 against the max-min ideal -------------------------------------------------

FLOWS = (1, 4, 16, 64, 256)
QUICK_FLOWS = (1, 4, 16)


#: Figure 11 as the authors' ns-2 script builds it (kaist-ina/ns2-xpass,
#: scripts/multi-bottleneck.tcl): one sender host, flow 0 to a host on the sender's switch, and
#: flows 1..N each to a receiver of its own behind a second switch, so that every receiver paces
#: its credits from its own NIC. Here: two leaves and a spine (one switch more on the long
#: paths), flow 0 h0 -> h1, flow i h0 -> h(256 + i).
OWN_RECEIVERS = Reading(
    "own-receivers", "flows 1..N each to a receiver of its own (the authors' ns-2 script of figure 11) instead of one "
    "receiver host for all of them",
    (("topology", '{kind = "leaf_spine", leaves = 2, spines = 1, hosts_per_leaf = 257, host_rate_mbps = 10000.0, '
                  'fabric_rate_mbps = 10000.0, link_delay_us = 1.0}'),
     ("flows.src", "h0"), ("flows.dst", "h1"), ("groups.multi.src", "h0"),
     ("groups.multi.dst", "[" + ", ".join(f'"h{257 + i}"' for i in range(max(FLOWS))) + "]")))


def plan_fig11(quick: bool) -> List[Point]:
    ns = QUICK_FLOWS if quick else FLOWS
    laws = ("paper", "code", "none") if quick else tuple(LAWS)
    return [Point.make(MULTI, [("groups.multi.count", n)] + LAWS[law] + _dur(quick), s, law=law, flows=n)
            for n in ns for law in laws for s in _seeds(quick)]


def _flow0(st: Study, **labels) -> List[float]:
    """Per seed: flow 0's throughput over the data ceiling of its link."""
    return [v / (LINK_BPS * CEILING) for v in st.metric("throughput_bps_flows", **labels)]


def analyze_fig11(st: Study) -> List[Claim]:
    ns = sorted({dict(r["point"].labels)["flows"] for r in st.records})
    laws = [law for law in LAWS if st.rows(law=law)]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for law in laws:
        ax.plot(ns, [mean(_flow0(st, law=law, flows=n)) * LINK_BPS * CEILING / 1e9 for n in ns], "-o", label=NAMES[law])
    ax.plot(ns, [LINK_BPS * CEILING / (n + 1) / 1e9 for n in ns], "r-", label="max-min ideal")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("flows N sharing link 1 with flow 0 (and crossing two more links)")
    ax.set_ylabel("flow 0 throughput (Gbit/s)")
    ax.set_title("ExpressPass fig. 11: fairness in a multi-bottleneck topology")
    ax.legend(fontsize=7)
    save_figure(fig, st)
    st.table = [{"law": law, "flows": n, "flow0_share": round(mean(_flow0(st, law=law, flows=n)), 4),
                 "ideal_share": round(1 / (n + 1), 4),
                 "mean_chain_util": round(mean(st.metric("utilization", law=law, flows=n)) / CEILING, 4),
                 "seeds": len(st.rows(law=law, flows=n))} for law in laws for n in ns]

    q = " (quick form)" if st.quick else ""
    small = [n for n in ns if n <= 4]
    big = [n for n in ns if n >= 16]
    quote = "ExpressPass follows the max-min fair-share closely until four flows. But, as the number of flows increases, " \
            "it shows a small gap."
    rel = lambda law, sel: [mean(_flow0(st, law=law, flows=n)) * (n + 1) for n in sel]  # noqa: E731
    close = lambda r: all(within_factor(x, 1.0, 1.25) for x in r)  # noqa: E731
    gap = lambda r: all(within_factor(x, 1.0, 1.5) for x in r)  # noqa: E731
    claims = []
    c = Claim("maxmin-close", f"With feedback flow 0 follows its max-min share 1/(N+1) closely up to N = 4{q}", "close",
              rel("paper", small), close(rel("paper", small)),
              "flow 0 / ideal within a factor 1.25 of 1 for every N <= 4 (values: per N)", "ratio", quote=quote)
    claims.append(c)
    if big:
        g = Claim("gap-many-flows", f"With more flows (N >= 16) flow 0 stays near max-min, with a small gap{q}", "small gap",
                  rel("paper", big), gap(rel("paper", big)),
                  "flow 0 / ideal within a factor 1.5 of 1 for every N >= 16 (values: per N)", "ratio", quote=quote)
        claims.append(g)
    for law in ALT_LAWS:
        if st.rows(law=law):
            c.tried(law, NAMES[law], rel(law, small), close(rel(law, small)), st.command)
            if big:
                g.tried(law, NAMES[law], rel(law, big), gap(rel(law, big)), st.command)
    if st.rows(law="none"):
        err = lambda law: mean([abs(r - 1) for r in rel(law, ns)])  # noqa: E731
        f = Claim("feedback-fairer", f"Feedback brings flow 0 closer to max-min than the naive approach{q}", "closer",
                  [err("paper"), err("none")], err("paper") < err("none"),
                  "mean |flow 0 / ideal - 1| over N: with feedback below naive (values: feedback, naive)", "ratio",
                  quote="Our feedback control also improves fairness with multiple bottlenecks")
        for law in ALT_LAWS:
            if st.rows(law=law):
                f.tried(law, NAMES[law], [err(law), err("none")], err(law) < err("none"), st.command)
        claims.append(f)
    return claims


register(Reproduction("xpass-fig11", PAPER, "fig. 11",
                      "throughput of the single-bottleneck flow against the max-min ideal as flows grow",
                      plan_fig11, analyze_fig11, READINGS + (OWN_RECEIVERS,)))
