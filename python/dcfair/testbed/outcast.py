"""The Outcast paper's case I on a real fabric against the simulator: runs and the doc table.

    sudo python -m dcfair.testbed.outcast [--runs 5] [--qdiscs droptail,sfq,red] [--doc docs/validation.md]

Rules:

- Every row runs ``scenarios/testbed/outcast_case1.toml`` (or ``--scenario``) through the
  command line, as a user would: ``dcfair testbed run`` (real Linux TCP through one
  dcfair-switch per switch namespace) with ``--seed 1..N``, and ``dcfair run`` with the same
  seeds twice: exact timers, and Linux's timer wheel (``tcp.timer_wheel_hz = 250``,
  ``sim.tie_break = "random_timers"``). The commands are kept with the numbers.
- The mitigations are the paper's section 5 settings already in the scenario's ``[queue.red]``
  and ``[queue.sfq]``, with the buffer the repository's Outcast reproduction gives them
  (:data:`MITIGATION`): 30 packets / 45,000 bytes, since RED's 5/15-packet thresholds cannot be
  reached in a 16 KB buffer.
- The share is the 2-hop flow's throughput over the mean six-hop flow's, in the window
  (``throughput_bps_two_hop / throughput_bps_six_hop``); the paper reports about 1/7 under
  DropTail (figure 3(f)).
- Raw numbers go to ``scenarios/testbed/outcast_case1.results.json``; with ``--doc`` the table
  replaces what is between ``<!-- outcast-testbed:begin -->`` and ``<!-- outcast-testbed:end -->``
  (``--table-only``: from that file, without running).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

from dcfair.testbed import doctable

REPO = Path(__file__).resolve().parents[3]
SCENARIO = REPO / "scenarios" / "testbed" / "outcast_case1.toml"
RESULTS = REPO / "scenarios" / "testbed" / "outcast_case1.results.json"
MITIGATION = {"droptail": [], "sfq": ["queue.kind=sfq", "queue.limit_pkts=30", "queue.limit_bytes=45000"],
              "red": ["queue.kind=red", "queue.limit_pkts=30", "queue.limit_bytes=45000"]}
WHEEL = ["tcp.timer_wheel_hz=250", "sim.tie_break=random_timers"]
SOURCES = ("testbed", "sim", "sim_wheel")
KEYS = ("share", "throughput_bps_two_hop", "throughput_bps_six_hop", "utilization", "drops", "timeouts")


def _cmd(source: str, qdisc: str, seed: int, out: Path, scenario: Path) -> List[str]:
    sets = MITIGATION[qdisc] + (WHEEL if source == "sim_wheel" else [])
    base = ["testbed", "run"] if source == "testbed" else ["run"]
    argv = base + [str(scenario), "--seed", str(seed), "--out", str(out), "--quiet"]
    for s in sets:
        argv += ["--set", s]
    return argv


def run_one(source: str, qdisc: str, seed: int, scenario: Path, root: Path) -> Dict:
    out = root / f"{source}-{qdisc}-{seed}"
    argv = _cmd(source, qdisc, seed, out, scenario)
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "dcfair"] + argv, capture_output=True, text=True, cwd=REPO)
    if p.returncode != 0:
        raise SystemExit(f"dcfair {' '.join(argv)} failed ({p.returncode}): {p.stderr.strip()[-400:]}")
    m = json.loads((out / "summary.json").read_text())["metrics"]
    r = {k: m.get(k) for k in KEYS if k != "share"}
    r["share"] = m["throughput_bps_two_hop"] / m["throughput_bps_six_hop"] if m.get("throughput_bps_six_hop") else None
    if source == "testbed":
        t = json.loads((out / "summary.json").read_text())["testbed"]
        r["links_same"] = t["links"]["same"]
        r["links_off_paths"] = t["links"]["testbed_off_paths"]
        r["links_only_sim"] = t["links"]["only_sim"]
        r["links_only_testbed"] = t["links"]["only_testbed"]
        r.update(doctable.run_conditions(t))
    r.update(seed=seed, wall_s=round(time.monotonic() - t0, 1), command="dcfair " + " ".join(argv))
    return r


def table(res: Dict[str, Dict[str, List[Dict]]]) -> str:
    return doctable.comparison(res, "qdisc", ("testbed (Linux CUBIC)", "simulation", "simulation, Linux's timers"),
                               SOURCES, KEYS)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--first-seed", type=int, default=1, help="seeds FIRST .. FIRST + RUNS - 1")
    ap.add_argument("--results", type=Path, default=RESULTS, help="where the raw numbers go")
    ap.add_argument("--qdiscs", default="droptail,sfq,red")
    ap.add_argument("--sources", default=",".join(SOURCES))
    ap.add_argument("--scenario", type=Path, default=SCENARIO)
    ap.add_argument("--work", type=Path, default=Path("/tmp/dcfair-outcast-testbed"))
    ap.add_argument("--doc", type=Path)
    ap.add_argument("--table-only", action="store_true", help="rewrite --doc's table from the results file; run nothing")
    a = ap.parse_args(argv)
    if a.table_only:
        return doctable.write_section(a.doc, "outcast-testbed", table(json.loads(a.results.read_text())["results"]))
    res: Dict[str, Dict[str, List[Dict]]] = {}
    for q in a.qdiscs.split(","):
        for s in a.sources.split(","):
            for seed in range(a.first_seed, a.first_seed + a.runs):
                r = run_one(s, q, seed, a.scenario, a.work)
                res.setdefault(q, {}).setdefault(s, []).append(r)
                print(f"{q:9s} {s:9s} seed {seed}: share {r['share']!s:.6}  ({r['wall_s']} s)", flush=True)
    doc = {"scenario": str(a.scenario.relative_to(REPO)), **doctable.provenance("dcfair.testbed.outcast", argv),
           "results": res}
    a.results.write_text(json.dumps(doc, indent=1) + "\n")
    text = table(res)
    print(text)
    return doctable.write_section(a.doc, "outcast-testbed", text) if a.doc else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
