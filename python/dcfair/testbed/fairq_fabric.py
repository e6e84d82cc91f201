"""FairQ on a real fabric: the FairQ paper's incast with elephants on a leaf-spine of switch
namespaces, DropTail against FairQ at every switch, beside the simulator.

    sudo python -m dcfair.testbed.fairq_fabric [--runs 3] [--doc docs/validation.md]

Rules:

- Every row runs ``scenarios/testbed/fairq_incast_leafspine.toml`` through the command line:
  ``dcfair testbed run`` and ``dcfair run`` with ``--seed 1..N``, as written (DropTail) and with
  ``--set fairq.wscale=off`` (FairQ at every switch, :data:`VARIANTS`). The commands are kept
  with the numbers in ``scenarios/testbed/fairq_incast_leafspine.results.json`` (``--results``).
- With ``--doc`` the table replaces what is between ``<!-- fairq-testbed:begin -->`` and
  ``<!-- fairq-testbed:end -->`` (``--table-only``: from the results file, without running).
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
SCENARIO = REPO / "scenarios" / "testbed" / "fairq_incast_leafspine.toml"
RESULTS = REPO / "scenarios" / "testbed" / "fairq_incast_leafspine.results.json"
VARIANTS = {"droptail": [], "fairq": ["fairq.wscale=off"]}
SOURCES = ("testbed", "sim")
KEYS = ("rounds_completed", "answers_completed", "answer_time_mean_s", "answer_time_p99_s", "answer_time_max_s",
        "block_goodput_bps", "throughput_bps_flows", "fairq_rewrites")


def run_one(source: str, variant: str, seed: int, root: Path) -> Dict:
    out = root / f"{source}-{variant}-{seed}"
    argv = (["testbed", "run"] if source == "testbed" else ["run"]) + [str(SCENARIO), "--seed", str(seed), "--out", str(out),
                                                                       "--quiet"]
    for s in VARIANTS[variant]:
        argv += ["--set", s]
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "dcfair"] + argv, capture_output=True, text=True, cwd=REPO)
    if p.returncode != 0:
        raise SystemExit(f"dcfair {' '.join(argv)} failed ({p.returncode}): {p.stderr.strip()[-400:]}")
    doc = json.loads((out / "summary.json").read_text())
    r = {k: doc["metrics"].get(k) for k in KEYS}
    if source == "testbed":
        links = doc["testbed"]["links"]
        r.update(links_same=links["same"], links_off_paths=links["testbed_off_paths"], **doctable.run_conditions(doc["testbed"]))
    r.update(seed=seed, wall_s=round(time.monotonic() - t0, 1), command="dcfair " + " ".join(argv))
    return r


def table(res: Dict[str, Dict[str, List[Dict]]]) -> str:
    return doctable.comparison(res, "variant", ("testbed (Linux CUBIC)", "simulation"), SOURCES, KEYS)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--results", type=Path, default=RESULTS, help="where the raw numbers go")
    ap.add_argument("--work", type=Path, default=Path("/tmp/dcfair-fairq-testbed"))
    ap.add_argument("--doc", type=Path)
    ap.add_argument("--table-only", action="store_true")
    a = ap.parse_args(argv)
    if a.table_only:
        return doctable.write_section(a.doc, "fairq-testbed", table(json.loads(a.results.read_text())["results"]))
    res: Dict[str, Dict[str, List[Dict]]] = {}
    for v in VARIANTS:
        for s in SOURCES:
            for seed in range(1, a.runs + 1):
                r = run_one(s, v, seed, a.work)
                res.setdefault(v, {}).setdefault(s, []).append(r)
                print(f"{v:8s} {s:7s} seed {seed}: rounds {r['rounds_completed']}  max answer {r['answer_time_max_s']}",
                      flush=True)
    a.results.write_text(json.dumps({"scenario": str(SCENARIO.relative_to(REPO)),
                                     **doctable.provenance("dcfair.testbed.fairq_fabric", argv), "results": res},
                                    indent=1) + "\n")
    text = table(res)
    print(text)
    return doctable.write_section(a.doc, "fairq-testbed", text) if a.doc else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
