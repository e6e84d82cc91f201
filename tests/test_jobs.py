"""Jobs (collective patterns) through the `dcfair` command: `dcfair run` writes jobs.csv and
job_iterations.csv and prints the job table, `dcfair report` shows them, and the Python API
reads them back (docs/workloads.md, "Collectives"; docs/metrics.md)."""

from __future__ import annotations

import csv

import pytest

from conftest import REPO, assert_clean_error, dcfair

TWO_JOBS = REPO / "scenarios" / "jobs" / "two_allreduce_k4.toml"


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    out = tmp_path_factory.mktemp("jobs") / "run"
    p = dcfair("run", TWO_JOBS, "--out", out)
    assert p.returncode == 0, p.stderr
    return p, out


def test_run_writes_jobs_csv_with_a_slowdown_per_job(ran):
    _, out = ran
    rows = list(csv.DictReader((out / "jobs.csv").open()))
    assert [r["job"] for r in rows] == ["a", "b"]
    assert [r["collective"] for r in rows] == ["allreduce_ring", "allreduce_tree"]
    for r in rows:
        assert r["iterations_done"] == r["iterations"] == "3"
        assert float(r["slowdown"]) >= 1.0
        assert abs(float(r["slowdown"]) - float(r["completion_s"]) / float(r["alone_completion_s"])) < 1e-12
    its = list(csv.DictReader((out / "job_iterations.csv").open()))
    assert len(its) == 6 and all(float(i["time_s"]) > 0 for i in its)


def test_run_prints_the_job_table_and_the_summary_has_the_jobs_keys(ran):
    import json

    p, out = ran
    assert "jobs (jobs.csv)" in p.stdout and "allreduce_tree" in p.stdout and "3 of 3" in p.stdout
    assert "Jain's index of the slowdowns" in p.stdout
    assert "jobs.csv, job_iterations.csv" in p.stdout, "the footer lists the files written"
    m = json.loads((out / "summary.json").read_text())["metrics"]
    assert m["jobs"] == 2 and m["jobs_completed"] == 2
    assert 0 < m["jobs_jain_slowdown"] <= 1
    assert m["job_slowdown_a"] >= 1 and m["job_slowdown_b"] >= 1


def test_the_files_read_back_as_frames_and_the_report_shows_them(ran):
    from dcfair.results import Result

    _, out = ran
    res = Result.load(out)
    assert list(res.jobs["job"]) == ["a", "b"] and res.jobs["slowdown"].dtype == "float64"
    assert len(res.job_iterations) == 6
    p = dcfair("report", out)
    assert p.returncode == 0, p.stderr
    html = (out / "report.html").read_text()
    assert "<h2>Jobs</h2>" in html and "alone_completion_s" in html


def test_a_bad_job_is_refused_naming_its_key(tmp_path):
    p = dcfair("run", TWO_JOBS, "--set", 'groups.b.hosts=["h1", "h3", "h5"]', "--out", tmp_path / "x")
    assert_clean_error(p, 2, "groups.b.hosts", "power of two")
    assert not (tmp_path / "x").exists()
