"""HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019) against DCQCN.

The paper's text is not in this repository (``../shared/papers``): its claims are taken from
its abstract, as co-author F. Kelly's page gives it ("HPCC can quickly converge to utilize free
bandwidth while avoiding congestion, and can maintain near-zero in-network queues for
ultra-low latency. HPCC is also fair", "compared to DCQCN and TIMELY, HPCC shortens flow
completion time by up to 95%, causing little congestion even under large-scale incasts"). Both
congestion controls take the HPCC authors' own settings: their ns-3 fork's ``run.py`` for
100 Gbit/s, which their project page says the paper's simulations used (eta 95 %, maxStage 0:
"The maxStage=5 in the paper is due to a typo for the simulation").

- ``hpcc-incast`` (``scenarios/papers/hpcc/incast.toml``): 16 senders into one receiver at
  100 Gbit/s with a 4 MiB shared buffer: the queue, the pauses, and fairness.
- ``hpcc-websearch`` (``scenarios/papers/hpcc/websearch.toml``): web-search flows at 30 % and
  50 % load on a k = 4 fat-tree (the paper's Figure 11 runs 320 hosts): FCT slowdown by size.

Full forms: 3 seeds; quick forms: 1 seed and shorter runs. The slowdown's ideal FCT is
dcfair's (``docs/metrics.md``: base RTT plus size over the host's rate) and its FCT ends when the
receiver has the last byte, where the paper's ends when the sender has its ACK; both congestion
controls are measured the same way.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import List

from dcfair.data import PAPERS
from dcfair.reproduce import Claim, Reading, Reproduction, Study, mean, pyplot, register, save_figure
from dcfair.runner import Point

PAPER = "HPCC (Li et al., SIGCOMM 2019; text not in the repository)"
QUOTE_QUEUE = "HPCC can quickly converge to utilize free bandwidth while avoiding congestion, and can maintain near-zero in-network queues for ultra-low latency."
QUOTE_FAIR = "HPCC is also fair and easy to deploy in hardware."
QUOTE_FCT = "In our evaluation, compared to DCQCN and TIMELY, HPCC shortens flow completion time by up to 95%, causing little congestion even under large-scale incasts."
INCAST = str(PAPERS / "hpcc/incast.toml")
WEBSEARCH = str(PAPERS / "hpcc/websearch.toml")
CCS = ("dcqcn", "hpcc")
NAMES = {"dcqcn": "DCQCN", "hpcc": "HPCC"}
LOADS = (0.3, 0.5)
#: "Near-zero": at most ten 1 kB packets queued on average.
NEAR_ZERO_BYTES = 10_000

READINGS = (
    Reading("longer-run", "100 MB flows (none finishes) measured over [10 ms, 30 ms] instead of 10 MB ones over "
            "[2 ms, 10 ms]: more time to converge", (("sim.duration_s", 0.03), ("measure.window_s", 0.02),
                                                      ("flows.size_bytes", 100_000_000)), claims=("fair",)),
    Reading("eta-099", "HPCC at eta = 99 %, the authors' project page's newer setting",
            (("roce.hpcc.eta", 0.99),), (("cc", "hpcc"),)),
    Reading("paper-max-stage", "HPCC with maxStage = 5, as the paper prints it (its authors call it a typo)",
            (("roce.hpcc.max_stage", 5),), (("cc", "hpcc"),)),
)


def plan_incast(quick: bool) -> List[Point]:
    dur = 0.006 if quick else 0.01
    seeds = range(1, 2) if quick else range(1, 4)
    return [Point.make(INCAST, [("roce.cc", cc), ("sim.duration_s", dur), ("measure.window_s", dur - 0.002)], seed, cc=cc)
            for cc in CCS for seed in seeds]


def _queue(r):
    """(times, bytes) of the bottleneck queue, and its mean over the window."""
    start = r["summary"]["sim_time_s"] - r["summary"]["window_s"]
    ts, qs = [], []
    with open(Path(r["dir"]) / "timeseries.csv") as f:
        for row in csv.DictReader(f):
            if row["metric"] == "queue_bytes" and row["port"] == "sw->r0":
                ts.append(float(row["time_s"]))
                qs.append(float(row["value"]))
    inside = [q for t, q in zip(ts, qs) if t >= start]
    return ts, qs, (sum(inside) / len(inside) if inside else float("nan"))


def analyze_incast(st: Study) -> List[Claim]:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.4))
    for cc in CCS:
        rows = st.rows(cc=cc)
        if rows:
            ts, qs, _ = _queue(rows[0])
            ax.plot([t * 1e3 for t in ts], [q / 1e3 for q in qs], lw=0.8, label=NAMES[cc])
    ax.set_yscale("symlog", linthresh=1)
    ax.set_xlabel("time, ms")
    ax.set_ylabel("bottleneck queue, kB")
    ax.set_title("16-to-1 incast at 100 Gbit/s, 4 MiB shared buffer")
    ax.legend()
    save_figure(fig, st)
    qmean = {cc: [_queue(r)[2] for r in st.rows(cc=cc)] for cc in CCS}
    st.table = [{"cc": cc, "seeds": len(st.rows(cc=cc)), "queue_mean_kb": round(mean(qmean[cc]) / 1e3, 2),
                 "goodput_gbps": round(mean(st.metric("throughput_bps_tcp", cc=cc)) * 16 / 1e9, 2),
                 "jain_index": round(mean(st.metric("jain_index", cc=cc)), 4),
                 "pause_frames": round(mean(st.metric("pfc_pauses_sent", cc=cc))),
                 "paused_ms": round(mean(st.metric("pfc_paused_s", cc=cc)) * 1e3, 3),
                 "lossless_drops": round(mean(st.metric("lossless_drops", cc=cc)))}
                for cc in CCS]
    ph, pd_ = st.metric("pfc_pauses_sent", cc="hpcc"), st.metric("pfc_pauses_sent", cc="dcqcn")
    jh = st.metric("jain_index", cc="hpcc")
    return [
        Claim("near-zero-queue", "HPCC keeps the bottleneck's queue near zero in a 16-to-1 incast",
              "near-zero in-network queues (abstract)", qmean["hpcc"],
              bool(qmean["hpcc"]) and max(qmean["hpcc"]) <= NEAR_ZERO_BYTES,
              f"mean bottleneck queue over the window <= {NEAR_ZERO_BYTES // 1000} kB (ten packets) in every seed",
              "bytes", quote=QUOTE_QUEUE),
        Claim("incast-little-congestion", "Under the incast HPCC causes far less congestion than DCQCN: at most a tenth of "
              "its PFC pause frames", "little congestion even under large-scale incasts (abstract)",
              [h / d if d else float("nan") for h, d in zip(ph, pd_)],
              bool(pd_) and all(d > 0 and h <= d / 10 for h, d in zip(ph, pd_)),
              "pause frames, HPCC / DCQCN, same seed: at most 0.1 in every seed (DCQCN pausing)", "ratio", quote=QUOTE_FCT),
        Claim("fair", "HPCC shares the bottleneck fairly among the 16 flows", "fair (abstract)", jh,
              bool(jh) and min(jh) >= 0.95, "Jain's index of the 16 flows over the window >= 0.95 in every seed "
              "(the bar dcqcn-convergence holds DCQCN to)", "Jain index", quote=QUOTE_FAIR),
    ]


def plan_websearch(quick: bool) -> List[Point]:
    if quick:
        sets, seeds = [("poisson.stop_s", 0.002), ("sim.duration_s", 0.008)], range(1, 2)
    else:
        sets, seeds = [], range(1, 4)
    return [Point.make(WEBSEARCH, [("roce.cc", cc), ("poisson.load", load)] + sets, seed, cc=cc, load=load)
            for load in LOADS for cc in CCS for seed in seeds]


CLASSES = ("small", "mid", "large")


def analyze_websearch(st: Study) -> List[Claim]:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(LOADS), figsize=(10, 3.4), sharey=True)
    for ax, load in zip(axes, LOADS):
        for i, cc in enumerate(CCS):
            for j, p in enumerate(("p50", "p95", "p99")):
                ys = [mean(st.metric(f"slowdown_{p}_size_{c}", cc=cc, load=load)) for c in CLASSES]
                ax.plot(range(len(CLASSES)), ys, marker="o", ls=("-", "--", ":")[j], color=f"C{i}",
                        label=f"{NAMES[cc]} {p}")
        ax.set_xticks(range(len(CLASSES)), ["< 100 kB", "100 kB - 10 MB", ">= 10 MB"])
        ax.set_yscale("log")
        ax.set_title(f"web search, load {load:.0%}")
    axes[0].set_ylabel("FCT slowdown")
    axes[-1].legend(fontsize=6, ncol=2)
    save_figure(fig, st)
    st.table = [{"load": load, "cc": cc, "seeds": len(st.rows(cc=cc, load=load)),
                 **{f"{p}_{c}": round(mean(st.metric(f"slowdown_{p}_size_{c}", cc=cc, load=load)), 3)
                    for c in CLASSES for p in ("p50", "p95", "p99")},
                 "flows_completed": round(mean(st.metric("flows_completed", cc=cc, load=load))),
                 "flows": round(mean(st.metric("flows", cc=cc, load=load))),
                 "pause_frames": round(mean(st.metric("pfc_pauses_sent", cc=cc, load=load)))}
                for load in LOADS for cc in CCS]
    # per seed and load: how much shorter HPCC's 95th-percentile slowdown of short flows is
    cut = []
    for load in LOADS:
        h = st.metric("slowdown_p95_size_small", cc="hpcc", load=load)
        d = st.metric("slowdown_p95_size_small", cc="dcqcn", load=load)
        cut += [1 - a / b for a, b in zip(h, d) if b and b == b and a == a]
    best = []
    for load in LOADS:
        for c in CLASSES:
            for p in ("p50", "p95", "p99"):
                h = mean(st.metric(f"slowdown_{p}_size_{c}", cc="hpcc", load=load))
                d = mean(st.metric(f"slowdown_{p}_size_{c}", cc="dcqcn", load=load))
                if d == d and h == h and d > 0:
                    best.append(1 - h / d)
    claim = Claim("short-flows-faster", "HPCC shortens the tail FCT of short flows against DCQCN on web search at 30 % "
                  "and 50 % load", "up to 95 % shorter (abstract)", cut, bool(cut) and min(cut) > 0,
                  "1 - HPCC's / DCQCN's 95th-percentile slowdown of flows < 100 kB, same seed and load: above 0 in every "
                  "seed and load", "fraction shorter", quote=QUOTE_FCT)
    claim.tried("largest-reduction", "the largest reduction over size classes, percentiles and loads (the abstract's "
                "\"up to\"), against 95 %", [max(best)] if best else [], bool(best) and max(best) >= 0.95)
    return [claim]


register(Reproduction("hpcc-incast", PAPER, "abstract", "16-to-1 incast at 100 Gbit/s: queue, pauses and fairness, "
                      "HPCC against DCQCN", plan_incast, analyze_incast, READINGS))
register(Reproduction("hpcc-websearch", PAPER, "abstract; Figure 11", "Web search at 30 % and 50 % load on a fat-tree: "
                      "FCT slowdown by size, HPCC against DCQCN", plan_websearch, analyze_websearch))
