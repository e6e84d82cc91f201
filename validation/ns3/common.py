"""What run_ns3.py and run_dcfair.py share: paths, logging, the result file's layout."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RESULTS = os.path.join(REPO, "validation", "results")


def log(tag: str, msg: str) -> None:
    print(f"[{tag} {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def sha256(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def now_utc() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def git_commit() -> str | None:
    r = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True)
    return r.stdout.strip() or None


def host() -> dict:
    return {"python": platform.python_version(), "machine": platform.machine(),
            "system": platform.system(), "cpus": os.cpu_count()}


def keep_other_cases(path: str, cases: list[str]) -> tuple[list[dict], list[dict], list[dict]]:
    """Runs, failures and pending entries of the cases *not* in `cases` from an earlier result
    file (for --merge), so one case can be rerun alone."""
    if not os.path.exists(path):
        return [], [], []
    with open(path) as fh:
        old = json.load(fh)
    keep = lambda xs: [x for x in xs if x.get("case") not in cases]  # noqa: E731
    return keep(old.get("runs", [])), keep(old.get("failures", [])), keep(old.get("pending", []))


def write_json(path: str, doc: dict) -> None:
    """Writes atomically (temporary name, then rename)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(doc, fh, indent=1, allow_nan=False)
        fh.write("\n")
    os.replace(tmp, path)


def case_order(runs: list[dict], names: list[str]) -> list[dict]:
    order = {n: i for i, n in enumerate(names)}
    return sorted(runs, key=lambda r: (order.get(r["case"], 999), r.get("seed", 0)))


def summary_line(r: dict) -> str:
    """One run's result as the runners log it (same words for ns-3 and dcfair)."""
    m = r["metrics"]
    return (f"{r['wall_time_s']:.1f} s: util {m['utilization']:.4f}, goodput {m['goodput_mbps']:.2f} Mb/s, "
            f"drops {m['drops']}, timeouts {m['timeouts']}, queue {m['queue_mean']:.1f}, "
            f"loss events {m['loss_events']}")
