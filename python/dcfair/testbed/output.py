"""The result files of a testbed run, shared by the dumbbell (``run.py``) and fabrics
(``fabrun.py``): the columns of ``flows.csv`` and ``ports.csv``, and writing through a
temporary name and a rename, so that a reader never sees half a file.
"""

from __future__ import annotations

import csv
from pathlib import Path

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
