"""`[poisson]` through the `dcfair` command: the shipped scenario runs, a bad CDF file is invalid
input (exit 2) naming `poisson.cdf_file` and its line, and earlier results survive it."""

from __future__ import annotations

import json
import shutil

from conftest import REPO, assert_clean_error, dcfair

PFABRIC = REPO / "scenarios" / "workloads" / "pfabric_websearch.toml"
# A short form: 2 ms of arrivals, 30 ms of run.
SHORT = ("--set", "poisson.stop_s=0.002", "--set", "sim.duration_s=0.03")


def test_shipped_scenario_runs_and_reports_size_classes(tmp_path):
    out = tmp_path / "out"
    p = dcfair("run", PFABRIC, "--out", out, "--quiet", *SHORT)
    assert p.returncode == 0, p.stderr
    m = json.loads((out / "summary.json").read_text())["metrics"]
    assert m["poisson_flows"] > 0 and m["poisson_reference_bps"] == 144 * 10e9
    for c in ("all", "1pkt", "small", "mid", "large"):
        for k in ("flows", "flows_completed", "fct_mean_s", "fct_p99_s", "slowdown_mean", "mean_throughput_bps"):
            assert f"{k}_size_{c}" in m
    assert "poisson" in (out / "flows.csv").read_text().splitlines()[1]


def test_cdf_file_is_found_beside_the_scenario(tmp_path):
    """Run from another directory, with the scenario (and its CDF) copied elsewhere."""
    d = tmp_path / "copy"
    d.mkdir()
    shutil.copy(PFABRIC, d / "s.toml")
    shutil.copy(REPO / "scenarios" / "workloads" / "websearch_cdf.txt", d)
    p = dcfair("validate", d / "s.toml", cwd=tmp_path)
    assert p.returncode == 0, p.stderr


def test_bad_cdf_file_is_invalid_input_and_keeps_earlier_results(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("# size cdf\n1 0\n5 0.7\n3 1\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text('{"earlier": true}')
    p = dcfair("run", PFABRIC, "--out", out, "--set", f"poisson.cdf_file={bad}")
    assert_clean_error(p, 2, "poisson.cdf_file", "line 4", "must not decrease")
    assert (out / "summary.json").read_text() == '{"earlier": true}'
    missing = tmp_path / "none.txt"
    assert_clean_error(dcfair("validate", PFABRIC, "--set", f"poisson.cdf_file={missing}"), 2, "poisson.cdf_file", str(missing))
    assert_clean_error(dcfair("validate", PFABRIC, "--set", "poisson.load=1.2"), 2, "poisson.load")
