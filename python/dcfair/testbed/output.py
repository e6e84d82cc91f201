"""The result files of a testbed run, shared by the dumbbell (``run.py``) and fabrics
(``fabrun.py``): the columns of ``flows.csv`` and ``ports.csv``, and writing through a
temporary name and a rename, so that a reader never sees half a file; the incast metrics
(``incast_metrics``, from the incast generator's output).
"""

from __future__ import annotations

import csv
import math
import statistics
from pathlib import Path
from typing import Any, Dict, List

FLOW_COLUMNS = ("flow_id", "src", "dst", "kind", "start_s", "end_s", "bytes_sent", "bytes_delivered", "pkts_in_window",
                "fct_s", "max_gap_s", "retransmits", "timeouts", "group", "size_bytes", "bytes_in_window", "snd_wnd_mean_bytes",
                "rtt_mean_us", "error")
PORT_COLUMNS = ("port", "packets_out", "bytes_out", "utilization", "drops", "marks", "max_queue_pkts", "queue_kind",
                "rate_bps", "max_queue_bytes")
#: Ethernet header bytes per frame, taken off the kernel's byte counters (the simulator's packets have none).
ETH_HEADER = 14


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def _atomic_csv(path: Path, columns, rows) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if r.get(c) is None else r.get(c) for c in columns])
    tmp.replace(path)


def _rank(sorted_values: List[float], q: float) -> float:
    return sorted_values[max(0, math.ceil(q * len(sorted_values)) - 1)]


def incast_metrics(plan, tr) -> Dict[str, Any]:
    """The incast keys of ``summary.json`` from the generator's ``incast.json`` (docs/testbed.md)."""
    from dcfair.testbed import traffic

    data = traffic.load_flow_json(tr.dir / "incast.json") or {}
    rounds = data.get("round_times_s") or []
    answers = sorted(a for r in data.get("answer_times_s") or [] for a in r)
    ic = plan.incast
    m: Dict[str, Any] = {"rounds_completed": len(rounds), "block_bytes": ic.block_bytes, "answers_completed": len(answers)}
    if rounds:
        r = sorted(rounds)
        m.update(block_goodput_bps=ic.block_bytes * 8 * len(rounds) / sum(rounds), round_time_mean_s=statistics.fmean(r),
                 round_time_p99_s=_rank(r, 0.99), round_time_max_s=r[-1])
    if answers:
        m.update(answer_time_mean_s=statistics.fmean(answers), answer_time_std_s=statistics.pstdev(answers),
                 answer_time_p99_s=_rank(answers, 0.99), answer_time_max_s=answers[-1])
    return m
