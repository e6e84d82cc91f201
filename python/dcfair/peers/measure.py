"""The measures of ``docs/metrics.md``, computed from what a peer simulator reports, so that a
peer's runs are measured exactly as dcfair's are.

Rules:

- Every function takes plain per-flow numbers (packets in the window, completion times, ...)
  and returns metrics under ``summary.json``'s names. Undefined values (no flows, all zeros
  for Jain) are ``None``, never NaN, as in the engine's summaries.
- Variances and standard deviations are over the population (divide by n); percentiles are by
  nearest rank (the engine's ``metrics.rs``).
- A flow's longest gap counts from its start to its first arrival and from its last arrival to
  the end of the run (``max_gap``).
"""

from __future__ import annotations

import math
from typing import Dict, Iterable, List, Optional, Sequence


def mean(xs: Sequence[float]) -> Optional[float]:
    return sum(xs) / len(xs) if xs else None


def variance(xs: Sequence[float]) -> Optional[float]:
    m = mean(xs)
    return None if m is None else sum((x - m) ** 2 for x in xs) / len(xs)


def std(xs: Sequence[float]) -> Optional[float]:
    v = variance(xs)
    return None if v is None else math.sqrt(v)


def jain(xs: Sequence[float]) -> Optional[float]:
    s2 = sum(x * x for x in xs)
    return (sum(xs) ** 2) / (len(xs) * s2) if s2 > 0 else None


def percentile(xs: Sequence[float], p: float) -> Optional[float]:
    """Nearest rank: the smallest value with at least ``p`` % of the values at or below it."""
    if not xs:
        return None
    v = sorted(xs)
    rank = max(1, math.ceil(p / 100.0 * len(v)))
    return v[min(rank, len(v)) - 1]


def window_counts(pkts: Sequence[float], prefix: str = "") -> Dict[str, Optional[float]]:
    """Jain's index, population variance, starved fraction and mean of per-flow packet counts
    in the window: ``jain_index``, ``throughput_variance_pkts``, ``starved_fraction``,
    ``mean_pkts_in_window`` of packets delivered; with ``prefix="sent_"`` the engine's names
    for packets sent (``sent_jain_index``, ``sent_variance_pkts``, ``sent_starved_fraction``,
    ``mean_pkts_sent_in_window``)."""
    starved = sum(1 for x in pkts if x == 0) / len(pkts) if pkts else None
    if prefix == "sent_":
        return {"sent_jain_index": jain(pkts), "sent_variance_pkts": variance(pkts), "sent_starved_fraction": starved,
                "mean_pkts_sent_in_window": mean(pkts)}
    return {"jain_index": jain(pkts), "throughput_variance_pkts": variance(pkts), "starved_fraction": starved,
            "mean_pkts_in_window": mean(pkts)}


def max_gap(start: float, arrivals: Iterable[float], end: float) -> float:
    """The longest silence of a flow: between its start, its arrivals (in time order) and the
    end of the run."""
    last, gap = start, 0.0
    for t in arrivals:
        gap = max(gap, t - last)
        last = t
    return max(gap, end - last)


def fct_stats(fcts: Sequence[float], suffix: str = "") -> Dict[str, Optional[float]]:
    """``fct_mean_s``, ``fct_p50_s``, ``fct_p99_s``, ``fct_max_s``, ``fct_std_s`` (each with
    ``suffix``) of the finished flows' completion times, seconds."""
    return {
        f"fct_mean_s{suffix}": mean(fcts),
        f"fct_p50_s{suffix}": percentile(fcts, 50),
        f"fct_p99_s{suffix}": percentile(fcts, 99),
        f"fct_max_s{suffix}": max(fcts) if fcts else None,
        f"fct_std_s{suffix}": std(fcts),
    }


def answer_stats(times: Sequence[float]) -> Dict[str, Optional[float]]:
    """The incast's per-answer measures: ``answers_completed``, ``answer_time_mean_s``,
    ``answer_time_std_s`` (population), ``answer_time_p99_s``, ``answer_time_max_s``."""
    return {
        "answers_completed": len(times),
        "answer_time_mean_s": mean(times),
        "answer_time_std_s": std(times),
        "answer_time_p99_s": percentile(times, 99),
        "answer_time_max_s": max(times) if times else None,
    }


def rounds(block_bytes: int, round_times: Sequence[float]) -> Dict[str, Optional[float]]:
    """The incast's per-round measures: ``block_goodput_bps`` (block bytes x 8 x rounds / the
    sum of the rounds' times), ``rounds_completed``, ``block_bytes`` and the round times'
    mean, p99 and max."""
    total = sum(round_times)
    return {
        "block_goodput_bps": block_bytes * 8 * len(round_times) / total if total > 0 else None,
        "rounds_completed": len(round_times),
        "block_bytes": block_bytes,
        "round_time_mean_s": mean(round_times),
        "round_time_p99_s": percentile(round_times, 99),
        "round_time_max_s": max(round_times) if round_times else None,
    }


def clean(metrics: Dict[str, object]) -> Dict[str, object]:
    """``metrics`` with NaN and infinite floats as ``None`` (summary.json holds no NaN)."""
    out: Dict[str, object] = {}
    for k, v in metrics.items():
        out[k] = None if isinstance(v, float) and not math.isfinite(v) else v
    return out


def flows_csv(rows: List[Dict[str, object]], columns: Sequence[str]) -> str:
    """A ``flows.csv`` text with ``columns`` (CONTRACT's names), one row per dict; missing and
    ``None`` cells are empty."""
    def cell(v: object) -> str:
        if v is None:
            return ""
        if isinstance(v, float):
            return repr(v) if math.isfinite(v) else ""
        return str(v)

    lines = [",".join(columns)]
    lines += [",".join(cell(r.get(c)) for c in columns) for r in rows]
    return "\n".join(lines) + "\n"


#: pFabric's size classes of the Poisson workload (``docs/metrics.md``): ``1pkt`` (size <=
#: ``tcp.mss_bytes``), ``small`` (< 100 KB), ``mid`` (100 KB up to 10 MB), ``large`` (>= 10 MB),
#: and ``all``; ``small``, ``mid`` and ``large`` partition the flows, ``1pkt`` is part of
#: ``small`` (``crates/sim/src/poisson.rs``).
SIZE_CLASSES = ("all", "1pkt", "small", "mid", "large")
SMALL_BELOW_BYTES = 100_000
LARGE_FROM_BYTES = 10_000_000


def in_size_class(cls: str, size: int, mss: int) -> bool:
    if cls == "1pkt":
        return size <= mss
    if cls == "small":
        return size < SMALL_BELOW_BYTES
    if cls == "mid":
        return SMALL_BELOW_BYTES <= size < LARGE_FROM_BYTES
    if cls == "large":
        return size >= LARGE_FROM_BYTES
    return True


def size_classes(flows: Sequence[Dict[str, Optional[float]]], mss: int) -> Dict[str, Optional[float]]:
    """The Poisson flows' per-class measures of ``docs/metrics.md``, from dicts with ``size``
    (bytes), ``fct`` (seconds, ``None`` when unfinished) and ``ideal`` (the ideal FCT: base RTT
    plus size at the source NIC's rate, seconds), for each class ``C`` of :data:`SIZE_CLASSES`:
    ``flows_size_C``, ``flows_completed_size_C``, ``fct_{mean,p50,p99,max}_s_size_C``,
    ``slowdown_{mean,p99}_size_C`` and ``mean_throughput_bps_size_C`` (8 x mean size / mean
    FCT, both over the finished flows). Statistics of a class without finished flows are
    ``None``; every key is present."""
    out: Dict[str, Optional[float]] = {}
    for c in SIZE_CLASSES:
        of = [f for f in flows if in_size_class(c, int(f["size"]), mss)]
        done = [f for f in of if f["fct"] is not None]
        fct = [float(f["fct"]) for f in done]
        slow = [float(f["fct"]) / float(f["ideal"]) for f in done]
        sizes = [float(f["size"]) for f in done]
        s = f"_size_{c}"
        out[f"flows{s}"] = len(of)
        out[f"flows_completed{s}"] = len(done)
        out[f"fct_mean_s{s}"] = mean(fct)
        out[f"fct_p50_s{s}"] = percentile(fct, 50)
        out[f"fct_p99_s{s}"] = percentile(fct, 99)
        out[f"fct_max_s{s}"] = max(fct) if fct else None
        out[f"slowdown_mean{s}"] = mean(slow)
        out[f"slowdown_p99{s}"] = percentile(slow, 99)
        ms, mf = mean(sizes), mean(fct)
        out[f"mean_throughput_bps{s}"] = 8.0 * ms / mf if ms is not None and mf else None
    return out
