"""The Outcast measurements from Python: group goodput over time, consecutive-drop runs, the port
trace, the blackout discipline; as DataFrames, as files, and through the command line."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import dcfair
from conftest import REPO, assert_clean_error, dcfair as cli
from test_api import _render

FATTREE = REPO / "scenarios" / "papers" / "outcast" / "blackout_runs_fattree.toml"
MODEL = REPO / "scenarios" / "papers" / "outcast" / "blackout_model.toml"
# Half a second, the trace over 2 ms of it.
SHORT = {"sim.duration_s": 0.5, "measure.window_s": 0.4, "measure.trace.start_s": 0.3, "measure.trace.end_s": 0.302}


@pytest.fixture(scope="module")
def outcast(tmp_path_factory):
    out = tmp_path_factory.mktemp("outcast")
    return dcfair.run(dcfair.Scenario.load(FATTREE).with_overrides(SHORT), out=out), out


# ---------------------------------------------------------------- the tables


def test_every_optional_table_is_a_frame(outcast):
    res, out = outcast
    from dcfair.results import OPTIONAL_FILES, OPTIONAL_TABLES

    for name, columns in OPTIONAL_TABLES.items():
        df = getattr(res, name)
        assert tuple(df.columns) == columns, name
        # every table but the MPTCP subflows and the jobs' (this run has no MPTCP connection and
        # no job: empty frames)
        assert (len(df) == 0) == (name in ("subflows", "jobs", "job_iterations")), name
    written = sorted(f for f in OPTIONAL_FILES if f not in ("subflows.csv", "jobs.csv", "job_iterations.csv"))
    assert sorted(p.name for p in out.iterdir() if p.name in OPTIONAL_FILES) == written


def test_frames_are_the_files(outcast):
    res, out = outcast
    back = dcfair.Result.load(out)
    for name in ("groups", "group_windows", "drop_runs", "trace"):
        pd.testing.assert_frame_equal(getattr(res, name), getattr(back, name), check_exact=True)
        assert _render(getattr(res, name)) == (out / f"{name}.csv").read_text(), name


def test_drop_run_histogram_by_input_and_group(outcast):
    res, _ = outcast
    by_input = res.drop_run_histogram(by="input")
    assert list(by_input.columns) == ["h1->e0_0", "a0_0->e0_0"]
    drops = int(res.ports.set_index("port").loc["e0_0->h0", "drops"])
    assert drops > 0
    assert int((by_input.sum(axis=1) * by_input.index).sum()) == drops
    by_group = res.drop_run_histogram(by="group", port="e0_0->h0")
    assert list(by_group.columns) == ["hop2", "hop6"]
    share = res.drop_run_histogram(by="group", share=True)
    assert share["hop2"].sum() == pytest.approx(1.0)


def test_group_goodput_pivots(outcast):
    res, _ = outcast
    g = res.group_goodput()
    assert list(g.columns) == ["hop2", "hop6"] and len(g) == 50
    w = res.group_goodput(window=True, per_flow=True)
    assert len(w) == 5
    delivered = res.flows.groupby("group", observed=True)["bytes_delivered"].sum()
    assert res.groups.groupby("group", observed=True)["delivered_bytes"].sum().to_dict() == delivered.to_dict()
    agg = res.metrics["aggregate_throughput_bps_hop6"]
    assert agg == pytest.approx(12 * res.metrics["throughput_bps_hop6"])


def test_trace_window_and_summary(outcast):
    res, _ = outcast
    t = res.trace
    assert t["time_s"].between(0.3, 0.302).all()
    assert list(t["event"].cat.categories) == ["arrive", "enqueue", "drop", "dequeue"]
    assert res.summary["trace"]["rows"] == len(t) and res.summary["trace"]["truncated_at_s"] is None


def test_absent_tables_are_empty_frames_with_their_columns(tmp_path):
    res = dcfair.run(dcfair.Scenario.load(MODEL).with_overrides({"sim.duration_s": 0.05, "measure.window_s": 0.04}))
    assert res.drop_runs.empty and list(res.drop_runs.columns)[:3] == ["port", "by", "key"]
    assert res.trace.empty and res.groups.empty and res.timeseries.empty


# ---------------------------------------------------------------- the blackout discipline


def test_blackout_drops_are_a_column_of_ports(tmp_path):
    res = dcfair.run(dcfair.Scenario.load(MODEL).with_overrides({"sim.duration_s": 0.3, "measure.window_s": 0.2}))
    row = res.ports.iloc[0]
    assert row["queue_kind"] == "blackout" and row["drops_blackout"] > 0
    assert res.metrics["drops_by_reason"]["blackout"] == row["drops_blackout"]
    assert "blackout" in dcfair.api.queue_kinds()


# ---------------------------------------------------------------- the command line


def test_bad_measure_keys_exit_2_and_keep_earlier_results(tmp_path):
    out = tmp_path / "o"
    args = ("run", FATTREE, "--out", out, "--quiet", "--set", "sim.duration_s=0.2", "--set", "measure.window_s=0.1",
            "--set", "measure.trace.start_s=0.1", "--set", "measure.trace.end_s=0.1")
    p = cli(*args)
    assert p.returncode == 0, p.stderr
    before = {f.name: f.read_bytes() for f in out.iterdir()}
    for key, value in [("measure.drop_runs_ports", '["e0_0->h99"]'), ("measure.trace.port", "x"),
                       ("measure.group_window_s", "0.015"), ("queue.blackout.input", "s0->sw")]:
        p = cli(*args, "--set", f"{key}={value}", *(("--set", "queue.kind=blackout", "--set", "queue.blackout.drop_pkts=1")
                                                      if key.startswith("queue") else ()))
        assert_clean_error(p, 2, "dcfair: invalid input:", key)
        assert {f.name: f.read_bytes() for f in out.iterdir()} == before, key


def test_a_truncated_trace_warns(tmp_path):
    p = cli("run", FATTREE, "--out", tmp_path / "t", "--quiet", "--set", "sim.duration_s=0.2", "--set",
            "measure.window_s=0.1", "--set", "measure.trace.start_s=0", "--set", "measure.trace.max_rows=10")
    assert p.returncode == 0, p.stderr
    assert "warning: trace.csv stopped at" in p.stderr and "measure.trace.max_rows" in p.stderr
    summary = json.loads((tmp_path / "t" / "summary.json").read_text())
    assert summary["trace"]["rows"] == 10


def test_a_rerun_without_an_optional_file_removes_it(tmp_path):
    out = tmp_path / "o"
    short = ("--set", "sim.duration_s=0.2", "--set", "measure.window_s=0.1")
    p = cli("run", FATTREE, "--out", out, "--quiet", *short, "--set", "measure.trace.start_s=0.1", "--set", "measure.trace.end_s=0.1")
    assert p.returncode == 0, p.stderr
    assert (out / "trace.csv").exists() and (out / "drop_runs.csv").exists()
    p = cli("run", MODEL, "--out", out, *short)
    assert p.returncode == 0, p.stderr
    from dcfair.results import OPTIONAL_FILES

    assert not [n for n in OPTIONAL_FILES if (out / n).exists()]
    assert "trace.csv" not in p.stdout
