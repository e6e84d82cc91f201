"""A PFC deadlock through the command line: `dcfair run` on four line-rate RoCE flows locked
around a ring of switches ends the run early, writes its results with `pfc_deadlock` in
summary.json, names the ports of the cycle on stderr, and exits 0 (the scenario was valid; the
deadlock is its result). The engine's side is crates/sim/tests/runs/pfc.rs."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import dcfair

HERE = Path(__file__).resolve().parent
RING = (HERE.parent / "crates/sim/tests/runs/pfc.rs").read_text()
#: The ring scenario of the engine's deadlock test (one text for both tests).
SCENARIO = re.search(r'const RING: &str = r#"(.*?)"#;', RING, re.S).group(1)


def test_a_pfc_deadlock_is_reported_and_ends_the_run(tmp_path):
    scenario = tmp_path / "ring.toml"
    scenario.write_text(SCENARIO)
    out = tmp_path / "out"
    p = dcfair("run", scenario, "--out", out, "--quiet")
    assert p.returncode == 0, p.stderr
    assert "PFC deadlock at" in p.stderr and "s1->s2" in p.stderr, p.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["pfc_deadlock"]["ports"] == ["s1->s2", "s2->s3", "s3->s4", "s4->s1"]
    assert s["sim_time_s"] == s["pfc_deadlock"]["at_s"] < 0.02
    ports = (out / "ports.csv").read_text()
    assert "pfc_pauses_sent" in ports.splitlines()[0]
    # the report shows the deadlock and the ports' pause counts
    p = dcfair("report", out)
    assert p.returncode == 0, p.stderr
    html = (out / "report.html").read_text()
    assert "PFC deadlock ended this run" in html and "pfc_pauses_received" in html
