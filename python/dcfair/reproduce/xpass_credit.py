"""The ExpressPass paper (paper 002), section 3: the credit mechanisms on one bottleneck.

- ``xpass-fig6a``: Jain's fairness index over 1 ms windows of N = 1 .. 1024 concurrent long
  flows at credit pacing jitter j = 0, 0.01, 0.02, 0.04, 0.08
  (``scenarios/papers/xpass/credit_fairness.toml``);
- ``xpass-fig8``: (a) the convergence time of a new flow joining an existing one and (b) the
  credits a single-packet flow wastes in an idle network (base RTT 100 us), against the initial
  credit rate 1 .. 1/32 of the maximum (``credit_convergence.toml``, ``credit_waste.toml``);
- ``xpass-fig9``: the under-utilization of the bottleneck against the switch credit queue
  capacity 1 .. 32 credits, for 2 .. 32 flows from different ports (``credit_queue.toml``).

Every run is a scenario file of ``scenarios/papers/xpass/`` plus overrides (the flow count, the
jitter, the initial rate, the credit queue), data not code. Definitions (also in
``docs/mechanisms/expresspass.md``, which holds the claims table):

- **Jain over 1 ms** (:func:`window_jain`): per 1 ms window of the measurement window, Jain's
  index of the N flows' delivered bytes in that window (flows that delivered nothing count as
  0), averaged over the windows. Its **granularity ceiling** is the index of the most even
  split of the window's packets among N flows: below about one packet per flow per window
  (N above ~800 at 10 Gbit/s) no allocation reaches 1.
- **Convergence time** (:func:`convergence_rtts`): windows of one base RTT from the new flow's
  start; the new flow's share of the two flows' delivered bytes is ``s_k``. The convergence
  time is ``k`` RTTs for the first window ``k`` that begins five consecutive windows with
  ``|s - 0.5| <= 0.1``; ``nan`` when that never happens in the run.
- **Normalized under-utilization**: ``1 - u / (1500 / 1584)``, ``u`` the utilization of the
  data bottleneck ``l0 -> sp0``; 1500 / 1584 is the data share the credit shaper allows
  (1500-byte frames, 84-byte credits), the paper's "maximum data rate".

The paper's values of figure 8 are the bar labels that the excerpt's text layer keeps
(``2 3 4 5 6 14`` RTTs and ``80 40 20 10 4 2`` credits); those of figures 6(a) and 9 are not in
the excerpt (only axes and legends), so their claims test the text's statements.
Full form: 5 seeds; quick form: fewer points, 1 or 2 seeds, shorter runs.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from dcfair.data import PAPERS
from dcfair.reproduce import Claim, Reading, Reproduction, Study, clearly_lower, mean, pyplot, register, save_figure, within_factor
from dcfair.runner import Point

PAPER = "ExpressPass (paper 002)"
SCEN = PAPERS / "xpass"
FAIRNESS = str(SCEN / "credit_fairness.toml")
CONVERGENCE = str(SCEN / "credit_convergence.toml")
WASTE = str(SCEN / "credit_waste.toml")
QUEUE = str(SCEN / "credit_queue.toml")

MSS = 1460
#: Data share of a link whose credits are 84 B and data frames 1500 B (the paper's "max data rate").
MAX_DATA = 1500.0 / 1584.0
#: Maximum credit rate of a 10 Gbit/s link, credits/s, and the credits of one 100 us RTT at it.
MAX_CREDITS_PER_S = 10e9 / (8 * 1584)
RTT_S = 100e-6  # credit_convergence.toml / credit_waste.toml base RTT
NEW_START_S = 0.005  # credit_convergence.toml: the new flow's start

JITTERS = (0.0, 0.01, 0.02, 0.04, 0.08)
RATES = (1.0, 1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32)
#: Figure 8's bar labels as the excerpt's text layer keeps them (initial rate 1 .. 1/32).
PAPER_CONVERGENCE_RTTS = (2, 3, 4, 5, 6, 14)
PAPER_WASTED = (80, 40, 20, 10, 4, 2)
QUEUES = (1, 2, 4, 8, 16, 32)
#: Figure 8(a) runs with the paper's feedback law (the default) and the ns-2 code's.
LAWS = ("paper", "code")
FIG9_FLOWS = (2, 4, 8, 16, 32)


def _seeds(quick: bool, n_quick: int = 1) -> range:
    return range(1, 1 + n_quick) if quick else range(1, 6)


def _rate_label(r: float) -> str:
    return "1" if r == 1 else f"1/{round(1 / r)}"


def two_leaves(n: int) -> List[Tuple[str, object]]:
    """Overrides for N flows h<i> -> h<N+i> across the two leaves (one host port each)."""
    names = lambda a, b: "[" + ", ".join(f'"h{i}"' for i in range(a, b)) + "]"  # noqa: E731
    return [("topology.hosts_per_leaf", n), ("flows.count", n), ("flows.src", names(0, n)), ("flows.dst", names(n, 2 * n))]


# --- measurements from the result files -------------------------------------------------------

def delivered(run_dir) -> "pd.DataFrame":  # noqa: F821
    """Per-flow cumulative delivered bytes at each sample time: index time_s, one column per flow."""
    import pandas as pd

    ts = pd.read_csv(Path(run_dir) / "timeseries.csv")
    d = ts[ts["metric"] == "delivered_bytes"].copy()
    d["flow_id"] = d["flow_id"].astype(int)
    return d.pivot(index="time_s", columns="flow_id", values="value").sort_index()


def _between(piv, start_s: float, end_s: float):
    eps = 1e-9
    return piv[(piv.index >= start_s - eps) & (piv.index <= end_s + eps)]


def jain(xs: Sequence[float]) -> float:
    s, q = sum(xs), sum(x * x for x in xs)
    return s * s / (len(xs) * q) if q > 0 else float("nan")


def even_split_jain(pkts: int, n: int) -> float:
    """Jain's index of the most even split of ``pkts`` whole packets among ``n`` flows."""
    if pkts <= 0:
        return float("nan")
    q, r = divmod(pkts, n)
    return pkts * pkts / (n * (r * (q + 1) ** 2 + (n - r) * q * q))


def window_jain(piv, start_s: float, end_s: float) -> Tuple[float, float]:
    """Mean over the sample intervals in [start_s, end_s] of Jain's index of the flows' delivered
    bytes per interval, and the mean granularity ceiling (:func:`even_split_jain` of the
    interval's packets, ``MSS`` bytes each). Intervals in which nothing was delivered are skipped."""
    w = _between(piv, start_s, end_s).diff().iloc[1:]
    js, cs = [], []
    for _, row in w.iterrows():
        xs = [float(x) for x in row.values]
        if sum(xs) <= 0:
            continue
        js.append(jain(xs))
        cs.append(even_split_jain(round(sum(xs) / MSS), len(xs)))
    return mean(js), mean(cs)


def convergence_rtts(piv, start_s: float, rtt_s: float, old: int = 0, new: int = 1, band: float = 0.1,
                     hold: int = 5) -> float:
    """Convergence time in RTTs (module rules): ``piv`` sampled every ``rtt_s`` from ``start_s``."""
    w = _between(piv, start_s, piv.index.max()).diff().iloc[1:]
    shares = []
    for _, row in w.iterrows():
        a, b = float(row[old]), float(row[new])
        shares.append(b / (a + b) if a + b > 0 else float("nan"))
    ok = [not math.isnan(s) and abs(s - 0.5) <= band for s in shares]
    for k in range(len(ok) - hold + 1):
        if all(ok[k:k + hold]):
            return float(k)
    return float("nan")


# --- figure 6(a) -------------------------------------------------------------------------------

def _fig6a_counts(quick: bool) -> Sequence[int]:
    return (8, 128, 512) if quick else tuple(2 ** i for i in range(11))


def _fig6a_plan(quick: bool) -> List[Point]:
    jit = (0.0, 0.01, 0.08) if quick else JITTERS
    short = [("sim.duration_s", 0.012), ("measure.window_s", 0.01)] if quick else []
    return [Point.make(FAIRNESS, short + two_leaves(n) + [("xpass.jitter", j)], s, flows=n, jitter=j)
            for n in _fig6a_counts(quick) for j in jit for s in _seeds(quick)]


def _fig6a_values(st: Study) -> Dict[Tuple[int, float], List[Tuple[float, float]]]:
    """(flows, jitter) -> per seed (Jain over 1 ms, granularity ceiling)."""
    out: Dict[Tuple[int, float], List[Tuple[float, float]]] = {}
    for r in st.records:
        lab = dict(r["point"].labels)
        s = r["summary"]
        end = s["sim_time_s"]
        out.setdefault((lab["flows"], lab["jitter"]), []).append(window_jain(delivered(r["dir"]), end - s["window_s"], end))
    return out


def _fig6a_analyze(st: Study) -> List[Claim]:
    v = _fig6a_values(st)
    counts = sorted({n for n, _ in v})
    jits = sorted({j for _, j in v})
    J = lambda n, j: [a for a, _ in v.get((n, j), [])]  # noqa: E731
    C = lambda n, j: [c for _, c in v.get((n, j), [])]  # noqa: E731
    st.table = [{"flows": n, "jitter": j, "jain_1ms": round(mean(J(n, j)), 4), "ceiling": round(mean(C(n, j)), 4),
                 "jain_over_ceiling": round(mean(J(n, j)) / mean(C(n, j)), 4), "seeds": len(J(n, j))}
                for n in counts for j in jits]
    plt = pyplot()
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    for j in jits:
        ax[0].plot(counts, [mean(J(n, j)) for n in counts], marker="o", label=f"j={j:g}")
        ax[1].plot(counts, [mean(J(n, j)) / mean(C(n, j)) for n in counts], marker="o", label=f"j={j:g}")
    ax[0].plot(counts, [mean(C(n, jits[-1])) for n in counts], "k--", label="most even split")
    for a in ax:
        a.set_xscale("log", base=2)
        a.set_xlabel("concurrent flows")
        a.set_ylim(0, 1.05)
        a.legend(fontsize=7)
    ax[0].set_ylabel("Jain's index over 1 ms")
    ax[1].set_ylabel("Jain over 1 ms / most even split")
    fig.suptitle("ExpressPass fig. 6(a): fairness against credit jitter (10 Gbit/s, one bottleneck)", fontsize=10)
    save_figure(fig, st)

    big = [n for n in counts if n >= 128]
    jittered = [j for j in jits if j > 0]
    # per seed and large N: the lowest mean Jain of the jittered runs minus Jain at j = 0
    gap = [min(mean(J(n, j)) for j in jittered) - x for n in big for x in J(n, 0.0)]
    small_j = min(jittered)
    norm = [a / c for n in counts for a, c in v.get((n, small_j), [])]
    return [
        Claim("fig6a-no-jitter-unfair", "Perfect pacing (j = 0) is significantly less fair than any jitter at many flows "
              "(N >= 128)", "j = 0 well below the others (values not in the excerpt)", gap,
              bool(big) and all(clearly_lower(J(n, 0.0), J(n, j)) for n in big for j in jittered),
              "at every N >= 128 and every j > 0: Jain over 1 ms at j = 0 below j's by more than 2 standard errors "
              "(values: per seed and N, the lowest jittered mean minus j = 0)", "Jain",
              quote="We observe that perfect pacing causes significant unfairness due to exact ordering"),
        Claim("fig6a-small-jitter-enough", f"Even a small jitter (j = {small_j:g}) gives good fairness at every flow count",
              "good fairness (values not in the excerpt)", norm, bool(norm) and mean(norm) >= 0.9 and min(norm) >= 0.8,
              f"Jain over 1 ms / most even split at j = {small_j:g}, per seed and N: mean >= 0.9 and none below 0.8",
              "ratio", quote="However, even small jitter (tens of nanosecond) is enough to achieve good fairness as it "
                             "breaks synchronization"),
    ]


# --- figure 8 ------------------------------------------------------------------------------------

def _fig8_rates(quick: bool) -> Sequence[float]:
    return (1.0, 1 / 8, 1 / 32) if quick else RATES


def _fig8_plan(quick: bool) -> List[Point]:
    pts = []
    for r in _fig8_rates(quick):
        pts += [Point.make(CONVERGENCE, [("xpass.initial_rate", r), ("xpass.feedback_law", law)], s, part="convergence",
                           rate=_rate_label(r), law=law) for law in LAWS for s in _seeds(quick, 2)]
        pts += [Point.make(WASTE, [("xpass.initial_rate", r)], s, part="waste", rate=_rate_label(r)) for s in _seeds(quick)]
    return pts


def _fig8_analyze(st: Study) -> List[Claim]:
    rates = [r for r in RATES if st.rows(part="waste", rate=_rate_label(r))]
    convs = {law: {r: [convergence_rtts(delivered(x["dir"]), NEW_START_S, RTT_S)
                       for x in st.rows(part="convergence", rate=_rate_label(r), law=law)] for r in rates} for law in LAWS}
    conv = convs["paper"]
    nanmax = lambda xs: max([x for x in xs if not math.isnan(x)], default=float("nan"))  # noqa: E731
    waste = {r: st.metric("xpass_credits_wasted", part="waste", rate=_rate_label(r)) for r in rates}
    paper_c = dict(zip(RATES, PAPER_CONVERGENCE_RTTS))
    paper_w = dict(zip(RATES, PAPER_WASTED))
    st.table = [{"initial_rate": _rate_label(r), "convergence_rtts": mean(conv[r]), "convergence_max_rtts": nanmax(conv[r]),
                 "not_converged": sum(math.isnan(c) for c in conv[r]),
                 "code_law_convergence_rtts": mean(convs["code"][r]),
                 "code_law_not_converged": sum(math.isnan(c) for c in convs["code"][r]), "paper_convergence_rtts": paper_c[r],
                 "wasted_credits": mean(waste[r]), "paper_wasted_credits": paper_w[r],
                 "rate_x_rtt_credits": round(r * MAX_CREDITS_PER_S * RTT_S, 1)} for r in rates]
    plt = pyplot()
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    xs = range(len(rates))
    labels = [_rate_label(r) for r in rates]
    for a, series, paper, ylabel in ((ax[0], [("paper law", conv), ("code law", convs["code"])], paper_c,
                                      "convergence time (RTTs; converged seeds)"),
                                     (ax[1], [("dcfair", waste)], paper_w, "wasted credits")):
        bw = 0.8 / (len(series) + 1)
        for i, (lab, vals) in enumerate(series):
            a.bar([x + i * bw for x in xs], [mean(vals[r]) for r in rates], width=bw, label=f"dcfair, {lab} (mean over seeds)")
        a.bar([x + len(series) * bw for x in xs], [paper[r] for r in rates], width=bw, label="paper (bar labels)")
        a.set_xticks([x + bw * len(series) / 2 for x in xs], labels)
        a.set_xlabel("initial rate / max rate")
        a.set_ylabel(ylabel)
        a.legend(fontsize=7)
    fig.suptitle("ExpressPass fig. 8: initial rate against (a) convergence time and (b) credit waste (RTT 100 us)", fontsize=10)
    save_figure(fig, st)

    lo, hi = rates[0], rates[-1]
    conv_quote = "Figure 8 (a) shows that as the initial rate decreases, the convergence time increases from 2 RTTs to " \
                 "14 RTTs"
    waste_quote = "As the initial rate decreases, the amount of wasted credits decline as expected"
    code = convs["code"]

    def converges(vals, paper):
        return within_factor(mean(vals), paper) and not any(map(math.isnan, vals))

    fast = Claim("fig8a-fast-start", f"A new flow starting at rate {_rate_label(lo)} converges in about {paper_c[lo]} RTTs",
                 f"{paper_c[lo]} RTTs", conv[lo], converges(conv[lo], paper_c[lo]),
                 "mean over seeds within a factor of 2 of the paper's value; every seed converges", "RTT", quote=conv_quote)
    slow = Claim("fig8a-slow-start", f"Starting at {_rate_label(hi)} takes longer: about {paper_c[hi]} RTTs",
                 f"{paper_c[hi]} RTTs", conv[hi], converges(conv[hi], paper_c[hi]),
                 "mean over seeds within a factor of 2 of the paper's value; every seed converges", "RTT", quote=conv_quote)
    trend = Claim("fig8a-trend", "Convergence time grows as the initial rate falls", "2 -> 14 RTTs",
                  [mean(conv[r]) for r in rates], mean(conv[hi]) > mean(conv[lo]),
                  f"values: mean per initial rate ({', '.join(labels)}); last above first", "RTT", quote=conv_quote)
    if code[lo]:
        fast.tried("code", "the ns-2 code's feedback law", code[lo], converges(code[lo], paper_c[lo]), st.command)
        slow.tried("code", "the ns-2 code's feedback law", code[hi], converges(code[hi], paper_c[hi]), st.command)
        trend.tried("code", "the ns-2 code's feedback law", [mean(code[r]) for r in rates],
                    mean(code[hi]) > mean(code[lo]), st.command)
    wmeans = [mean(waste[r]) for r in rates]
    return [
        fast, slow, trend,
        Claim("fig8b-waste-max", f"A single-packet flow at rate {_rate_label(lo)} wastes about {paper_w[lo]} credits",
              f"{paper_w[lo]} credits (bar label)", waste[lo], within_factor(mean(waste[lo]), paper_w[lo], 1.25),
              "mean within a factor 1.25 of the paper's value", "credits",
              quote="Figure 8 (b) shows the amount of credit waste with single packet flows in an idle network whose RTT "
                    "is 100 µs"),
        Claim("fig8b-waste-declines", "Credit waste declines as the initial rate falls", "80 -> 2 credits", wmeans,
              all(a > b for a, b in zip(wmeans, wmeans[1:])), "the mean waste falls at every step of the initial rate "
              "(values: per rate)", "credits", quote=waste_quote),
    ]


# --- figure 9 ------------------------------------------------------------------------------------

def _fig9_points(quick: bool) -> Tuple[Sequence[int], Sequence[int]]:
    return ((4, 32), (1, 8, 32)) if quick else (FIG9_FLOWS, QUEUES)


def _fig9_plan(quick: bool) -> List[Point]:
    flows, queues = _fig9_points(quick)
    short = [("sim.duration_s", 0.008), ("measure.window_s", 0.005)] if quick else []
    return [Point.make(QUEUE, short + two_leaves(n) + [("xpass.credit_queue_pkts", q)], s, flows=n, queue=q)
            for n in flows for q in queues for s in _seeds(quick)]


def under_utilization(util: float) -> float:
    return 1.0 - util / MAX_DATA


def _fig9_analyze(st: Study) -> List[Claim]:
    flows = sorted({dict(r["point"].labels)["flows"] for r in st.records})
    queues = sorted({dict(r["point"].labels)["queue"] for r in st.records})
    U = lambda n, q: [under_utilization(u) for u in st.metric("utilization", flows=n, queue=q)]  # noqa: E731
    st.table = [{"flows": n, "credit_queue": q, "under_utilization_pct": round(100 * mean(U(n, q)), 3),
                 "credit_loss": round(mean([r["summary"]["metrics"]["xpass_credits_lost"] / r["summary"]["metrics"]["xpass_credits_sent"]
                                            for r in st.rows(flows=n, queue=q)]), 4),
                 "data_drops": mean([r["summary"]["metrics"]["drops_by_reason"].get("overflow", 0) for r in st.rows(flows=n, queue=q)]),
                 "seeds": len(U(n, q))} for n in flows for q in queues]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for n in flows:
        ax.plot(queues, [100 * mean(U(n, q)) for q in queues], marker="o", label=f"{n} flows")
    ax.set_xlabel("credit queue capacity (credits)")
    ax.set_ylabel("under-utilization (% of max data rate)")
    ax.set_xscale("log", base=2)
    ax.legend(fontsize=7)
    fig.suptitle("ExpressPass fig. 9: credit queue capacity against utilization", fontsize=10)
    save_figure(fig, st)

    q8, qmax, qmin = 8, queues[-1], queues[0]
    flat = [a - b for n in flows for a, b in zip(U(n, q8), U(n, qmax))]
    at1 = [x for n in flows for x in U(n, qmin)]
    at8 = [x for n in flows for x in U(n, q8)]
    return [
        Claim("fig9-eight-suffices", f"A credit queue of 8 is as good as a larger one ({qmax}) for every flow count",
              "8 is sufficient", flat, all(mean(U(n, q8)) - mean(U(n, qmax)) <= 0.01 for n in flows),
              f"under-utilization at 8 at most 1 point above at {qmax}, mean per flow count (values: the difference per "
              "seed and flow count)", "fraction",
              quote="It shows that credit buffer size of eight is sufficient across the different number of flows"),
        Claim("fig9-tiny-queue-hurts", f"A too small credit queue ({qmin}) hurts utilization",
              "lower utilization at small queues", [a - b for a, b in zip(at1, at8)], clearly_lower(at8, at1),
              f"under-utilization at {qmin} above at 8 by more than 2 standard errors over every seed and flow count "
              f"(values: {qmin} minus 8)", "fraction",
              quote="too small credit buffer can hurt utilization because credit packets can arrive in bursts across "
                    "different ports and get dropped"),
        Claim("fig9-level", "Under-utilization at 8 credits stays within the figure's range (below 6 %)", "< 6 % (the axis)",
              at8, all(mean(U(n, q8)) < 0.06 for n in flows),
              "mean under-utilization at 8 below 0.06 for every flow count", "fraction",
              quote="Normalized Under-utilization (by max data rate) [axis 0% to 6%]"),
    ]


#: Readings of what the excerpt leaves open, each tried on every claim of its figure.
CODE_LAW = Reading("code-law", "the ns-2 code's feedback law (the simulator the paper's figures came from)",
                   (("xpass.feedback_law", "code"),))
SKIP = Reading("stale-echoes-skipped", "Algorithm 1 with the echoes of credits sent before a decrease left out",
               (("xpass.stale_echoes", "skip"),))
FLOOR = Reading("rate-floor-elapsed", "a rate floor of one credit per update period elapsed since the last update "
                "that had feedback, instead of one per RTT", (("xpass.rate_floor", "elapsed"),))
NS2_CREDITS = Reading("ns2-credits", "the ns-2 code's credits: fixed 84-byte credits, a 10-credit bucket and a 10-credit "
                      "queue (so that only the hosts' jitter breaks ties)",
                      (("xpass.credit_max_bytes", 84), ("xpass.credit_bucket_pkts", 10), ("xpass.credit_queue_pkts", 10)))
NO_FEEDBACK = Reading("no-feedback", "no feedback control (figure 6(a) is in section 3.1, before feedback is introduced)",
                      (("xpass.feedback_law", "none"),))
AUTHORS_CODE = Reading("authors-code", "the authors' ns-2 code as it runs (kaist-ina/ns2-xpass, the peer ns2-xpass): its "
                       "feedback law and its 840-byte credit bucket (max_tokens_, 10 credits), credit sizes as in the paper",
                       (("xpass.feedback_law", "code"), ("xpass.credit_bucket_pkts", 10)))
BUCKET10 = Reading("bucket-10", "a credit bucket of 10 credits (the ns-2 code's max_tokens_) instead of 1",
                   (("xpass.credit_bucket_pkts", 10),), (("part", "convergence"),))


register(Reproduction("xpass-fig6a", PAPER, "fig. 6(a)", "ExpressPass fig. 6(a): Jain over 1 ms against flows and credit jitter",
                      _fig6a_plan, _fig6a_analyze, (NO_FEEDBACK, CODE_LAW, NS2_CREDITS, FLOOR, AUTHORS_CODE)))
register(Reproduction("xpass-fig8", PAPER, "fig. 8", "ExpressPass fig. 8: initial rate against convergence time and credit waste",
                      _fig8_plan, _fig8_analyze, (BUCKET10, NS2_CREDITS, FLOOR, AUTHORS_CODE)))
register(Reproduction("xpass-fig9", PAPER, "fig. 9", "ExpressPass fig. 9: credit queue capacity against under-utilization",
                      _fig9_plan, _fig9_analyze, (CODE_LAW, SKIP, FLOOR, AUTHORS_CODE, Reading(NS2_CREDITS.id, "the ns-2 code's credits: "
                      "fixed 84-byte credits and a 10-credit bucket (the queue is what figure 9 varies)",
                      (("xpass.credit_max_bytes", 84), ("xpass.credit_bucket_pkts", 10))))))
