"""What this machine's testbed carries: frames per second through the fabric's switches.

Rules:

- The measurements live in ``capacity.json`` beside this module, written by
  ``bench/testbed_capacity.py`` (docs/testbed.md, "Capacity", has the table and the command):
  for each number of switch namespaces measured, the total frames per second every switch
  together forwarded while their queues stayed empty (no frame lost to the switches).
- :func:`check` refuses (``InvalidInput``, exit 2, with the numbers) a fabric whose offered
  load, the frames per second its switches send in the simulation of the same scenario, is
  above what was measured for that many switches (interpolated linearly between the measured
  counts; above the largest, that one's figure scaled down by the ratio of switch counts).
- ``--doc docs/testbed.md`` rewrites the table between ``<!-- capacity:begin -->`` and
  ``<!-- capacity:end -->`` from the file (``--doc-only``: without measuring again).
- Without the file nothing is refused (a machine not measured yet); ``DCFAIR_TESTBED_NO_CAPACITY=1``
  turns the check off for a run (the tests' small fabrics, a faster machine).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Dict, Optional

from dcfair.errors import InvalidInput
from dcfair.testbed import doctable

FILE = Path(__file__).with_name("capacity.json")


def table(mode: Optional[str] = None) -> Optional[Dict[int, float]]:
    """Switch count -> sustained frames per second (all switches together) of the switch
    process mode ``mode`` (default: the one runs use, ``fabric.process_mode()``), or None."""
    try:
        doc = json.loads(FILE.read_text())
    except (OSError, ValueError):
        return None
    if mode is None:
        from dcfair.testbed.fabric import process_mode

        mode = process_mode()
    t = {int(r["switches"]): float(r["frames_per_s"]) for r in doc["rows"] if r.get("mode", "each") == mode}
    return t or None


def sustained(switches: int, t: Dict[int, float]) -> float:
    """The measured frames per second for ``switches`` switch processes (module rules)."""
    ks = sorted(t)
    if switches <= ks[0]:
        return t[ks[0]]
    if switches >= ks[-1]:
        return t[ks[-1]] * ks[-1] / switches if switches > ks[-1] else t[ks[-1]]
    for a, b in zip(ks, ks[1:]):
        if a <= switches <= b:
            return t[a] + (t[b] - t[a]) * (switches - a) / (b - a)
    return t[ks[-1]]  # pragma: no cover


def check(switches: int, offered_fps: float) -> None:
    if os.environ.get("DCFAIR_TESTBED_NO_CAPACITY") == "1":
        return
    t = table()
    if not t or offered_fps <= 0:
        return
    limit = sustained(switches, t)
    if offered_fps > limit:
        raise InvalidInput(
            "topology", f"the offered load needs {offered_fps:,.0f} frames/s through {switches} switches (the simulation's "
                        f"switch ports, per second), above the {limit:,.0f} frames/s this machine's testbed sustains with "
                        f"{switches} switches ({FILE.name}, docs/testbed.md \"Capacity\"): scale the link rates down")


#: The scenarios measured, by switch count (scenarios/testbed/).
SCENARIOS = {4: "capacity_4.toml", 10: "capacity_10.toml", 20: "capacity_20.toml"}


def measure(repeats: int = 3, prefix: str = "dcfcap-", log=print, modes=("each", "one")) -> Dict:
    """Runs each capacity scenario ``repeats`` times on the testbed and writes :data:`FILE`:
    per switch count, the lowest of the runs' frames per second (every switch port's frames
    sent during the window, over the window), and every run's figure."""
    import platform
    import subprocess
    import sys
    import time

    repo = Path(__file__).resolve().parents[3]
    rows = []
    for n, name in SCENARIOS.items():
        path = repo / "scenarios" / "testbed" / name
        runs: Dict[str, list] = {m: [] for m in modes}
        for r in range(repeats):
            for m in modes:  # alternating, so both modes see the machine's load alike
                out = Path("/tmp") / f"dcfair-capacity-{n}-{m}-{r}"
                # the command line, as a user runs it; measuring, so nothing to check against yet
                env = dict(os.environ, DCFAIR_FABRIC_PROCESS=m, DCFAIR_TESTBED_NO_CAPACITY="1")
                cmd = [sys.executable, "-m", "dcfair", "testbed", "run", str(path), "--out", str(out), "--prefix", prefix,
                       "--quiet"]
                p = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=repo)
                if p.returncode != 0:
                    raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[-400:]}")
                s = json.loads((out / "summary.json").read_text())
                t = s["testbed"]
                runs[m].append({"window_frames_per_s": t["window_frames_per_s"], "switch_cpu_s": t["switch_cpu_s"],
                                "throughput_bps_tcp": s["metrics"]["throughput_bps_tcp"], "links_same": t["links"]["same"]})
                log(f"{n} switches, {m}, run {r + 1}: {t['window_frames_per_s']:,.0f} frames/s")
        for m in modes:
            rows.append({"switches": n, "mode": m, "scenario": f"scenarios/testbed/{name}",
                         "frames_per_s": min(x["window_frames_per_s"] for x in runs[m]), "runs": runs[m]})
    doc = {"command": f"python -m dcfair.testbed.capacity --repeats {repeats}",
           "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "kernel": platform.release(),
           "cpus": os.cpu_count(), "rows": rows}
    tmp = FILE.with_name(FILE.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(FILE)
    return doc


def table_md(doc: Dict) -> str:
    """The capacity table of docs/testbed.md from a ``capacity.json`` document."""
    lines = ["| switches | switch processes | scenario | sustained (lowest run), frames/s | runs, frames/s | "
             "mean TCP goodput per flow, Mbit/s | switch CPU s per run |", "|---|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        runs = ", ".join(f"{x['window_frames_per_s']:,.0f}" for x in r["runs"])
        tput = ", ".join(f"{x['throughput_bps_tcp'] / 1e6:.1f}" for x in r["runs"])
        cpu = ", ".join(f"{x['switch_cpu_s']:.1f}" for x in r["runs"])
        procs = "one (`multi`)" if r.get("mode") == "one" else "one per switch"
        lines.append(f"| {r['switches']} | {procs} | `{r['scenario']}` | {r['frames_per_s']:,.0f} | {runs} | {tput} | {cpu} |")
    lines.append("")
    lines.append(f"Measured {doc['measured_at']} on Linux {doc['kernel']}, {doc['cpus']} vCPUs, by `{doc['command']}`.")
    return "\n".join(lines)


def write_doc(path: Path, doc: Dict) -> None:
    doctable.write_section(path, "capacity", table_md(doc))


if __name__ == "__main__":  # pragma: no cover - needs root and minutes
    import argparse

    ap = argparse.ArgumentParser(description="measure the fabric testbed's capacity (needs root)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--doc", type=Path, help="also rewrite the table in this file (docs/testbed.md)")
    ap.add_argument("--doc-only", action="store_true", help="rewrite the table from capacity.json, measure nothing")
    a = ap.parse_args()
    d = json.loads(FILE.read_text()) if a.doc_only else measure(a.repeats)
    if a.doc:
        write_doc(a.doc, d)
