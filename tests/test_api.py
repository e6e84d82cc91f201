"""The Python API: dcfair.Scenario, dcfair.run -> Result (DataFrames from the engine's columns),
Result.load, the time series, and the result files staying byte-identical."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import dcfair
from conftest import LONGFLOWS, REPO

DATA = REPO / "tests" / "data"
# 2 simulated seconds measured over the last one: a real run in a few tens of milliseconds.
SHORT = {"sim.duration_s": 2, "measure.window_s": 1}


@pytest.fixture(scope="module")
def longflows():
    return dcfair.Scenario.load(LONGFLOWS)


# ---------------------------------------------------------------- Scenario


def test_load_reads_and_validates(longflows):
    assert longflows.name == "hcf-longflows"
    assert longflows.seed == 1 and longflows.duration_s == 180.0
    assert longflows.path == LONGFLOWS
    assert longflows.text == LONGFLOWS.read_text()  # the text is kept as it was
    assert longflows.overrides == ()


def test_set_returns_a_new_scenario(longflows):
    hcf = longflows.set("queue.kind", "hcf")
    assert hcf is not longflows and longflows.overrides == ()
    assert hcf.overrides == (("queue.kind", "hcf"),)
    assert hcf.get("queue.kind") == "hcf" and longflows.get("queue.kind") == "droptail"
    more = hcf.with_overrides({"sim.duration_s": 20, "queue.limit_pkts": 50})
    assert more.overrides[1:] == (("sim.duration_s", "20"), ("queue.limit_pkts", "50"))
    assert more.duration_s == 20.0 and more.get("queue.limit_pkts") == 50
    assert more.with_overrides(["queue.kind=sfq"]).get("queue.kind") == "sfq"
    assert longflows.get("no.such.key", None) is None
    with pytest.raises(KeyError):
        longflows.get("no.such.key")
    assert hcf == longflows.set("queue.kind", "hcf") and hash(hcf) == hash(longflows.set("queue.kind", "hcf"))
    assert "queue.kind=hcf" in repr(hcf)


def test_validate_names_the_key(longflows):
    bad = longflows.set("queue.no_such_knob", 1)  # set() does not validate...
    with pytest.raises(dcfair.InvalidInput) as ei:
        bad.validate()  # ...validate() does, like a run would
    assert ei.value.key == "queue.no_such_knob"
    with pytest.raises(dcfair.InvalidInput) as ei:
        longflows.set("sim.duration_s", 5).validate()  # shorter than measure.window_s = 10
    assert ei.value.key == "measure.window_s"
    assert longflows.with_overrides({"sim.duration_s": 5, "measure.window_s": 1}).validate().duration_s == 5.0


def test_validate_builds_the_network_as_a_run_would(longflows):
    # A measured port that does not exist is found only when the network is built: the
    # scenario's own view (name, seed) is fine, validate() and a run refuse it alike.
    bad = longflows.set("measure.ports", ["nope"])
    assert bad.name == "hcf-longflows"
    with pytest.raises(dcfair.InvalidInput) as ei:
        bad.validate()
    assert ei.value.key == "measure.ports"
    with pytest.raises(dcfair.InvalidInput) as ran:
        dcfair.run(bad.set("sim.duration_s", 20))
    assert ran.value.key == "measure.ports"
    assert dcfair.api.load_scenario(LONGFLOWS, overrides={"measure.ports": ["nope"]})["seed"] == 1
    with pytest.raises(dcfair.InvalidInput):
        dcfair.api.load_scenario(LONGFLOWS, overrides={"measure.ports": ["nope"]}, build=True)


def test_load_errors(tmp_path):
    with pytest.raises(dcfair.InvalidInput, match="no such file"):
        dcfair.Scenario.load(tmp_path / "missing.toml")
    f = tmp_path / "typo.toml"
    f.write_text(LONGFLOWS.read_text() + "\n[bogus]\nx = 1\n")
    with pytest.raises(dcfair.InvalidInput) as ei:
        dcfair.Scenario.load(f)
    assert ei.value.key.startswith("bogus")
    with pytest.raises(dcfair.InvalidInput, match="--set"):
        dcfair.Scenario.load(LONGFLOWS).with_overrides(["no-equals-sign"])


def test_from_text():
    sc = dcfair.Scenario.from_text(LONGFLOWS.read_text(), origin="inline")
    assert sc.name == "hcf-longflows" and sc.path is None


# ---------------------------------------------------------------- run -> Result


@pytest.fixture(scope="module")
def sampled(tmp_path_factory, longflows):
    out = tmp_path_factory.mktemp("run") / "out"
    sc = longflows.with_overrides({**SHORT, "measure.sample_interval_s": 0.1, "measure.cwnd": True})
    return dcfair.run(sc, seed=3, out=out), out


def test_run_returns_frames(sampled):
    res, out = sampled
    assert isinstance(res, dcfair.Result) and res.dir == out
    assert res.summary["seed"] == 3 and res.summary["scenario"] == "hcf-longflows"
    assert res["metrics"] is res.summary["metrics"] is res.metrics  # the old dict-style access
    assert 0 < res.metrics["jain_index"] <= 1
    f = res.flows
    assert list(f.columns[:13]) == ["flow_id", "src", "dst", "kind", "start_s", "end_s", "bytes_sent",
                                    "bytes_delivered", "pkts_in_window", "fct_s", "max_gap_s", "retransmits", "timeouts"]
    assert len(f) == 401 and (f["kind"] == "tcp").sum() == 400
    assert f["kind"].dtype == "category" and f["flow_id"].dtype == np.int64 and f["start_s"].dtype == np.float64
    assert f["end_s"].isna().all()  # long-lived flows never end
    assert len(res.ports) == 1 and res.ports["port"].iloc[0] == "sw->r0"
    assert res.metrics["drops"] == int(res.ports["drops"].sum())


def test_columns_come_without_copies(longflows):
    """The engine's buffers become the DataFrame's columns: numpy arrays that own Rust memory."""
    from dcfair import _engine

    summary, tables = _engine.run_tables(longflows.text, "x", [(k, str(v)) for k, v in SHORT.items()])
    kinds = {name: (kind, data) for name, kind, data in tables["flows"]}
    kind, arr = kinds["bytes_delivered"]
    assert kind == "u64" and arr.dtype == np.uint64 and not arr.flags["OWNDATA"]  # a view of the engine's Vec
    kind, (codes, levels) = kinds["kind"]
    assert kind == "cat" and codes.dtype == np.uint32 and levels == ["tcp", "udp"]
    assert "timeseries" not in tables  # off unless sampled


def test_result_load_gives_the_same_frames(sampled):
    res, out = sampled
    back = dcfair.Result.load(out)
    for name in ("flows", "ports", "timeseries"):
        pd.testing.assert_frame_equal(getattr(res, name), getattr(back, name), check_exact=True)
    assert back.summary == json.loads((out / "summary.json").read_text())


def test_timeseries(sampled):
    res, out = sampled
    ts = res.timeseries
    assert list(ts.columns) == ["time_s", "metric", "port", "flow_id", "value"]
    assert (out / "timeseries.csv").read_text().startswith("time_s,metric,port,flow_id,value\n0,queue_pkts,sw->r0,,0\n")
    times = np.sort(ts["time_s"].unique())
    np.testing.assert_allclose(times, np.arange(0, 2.0001, 0.1), atol=1e-12)
    per_tick = ts[ts["time_s"] == times[-1]]["metric"].value_counts()
    assert per_tick["queue_pkts"] == 1 and per_tick["queue_bytes"] == 1
    assert per_tick["delivered_bytes"] == 401 and per_tick["cwnd_bytes"] == 400
    # delivered bytes at the last tick (the end of the run) are flows.csv's bytes_delivered
    last = res.series("delivered_bytes").iloc[-1]
    assert (last.to_numpy() == res.flows.set_index("flow_id").loc[last.index, "bytes_delivered"].to_numpy()).all()
    q = res.series("queue_pkts")
    assert list(q.columns) == ["sw->r0"] and q.to_numpy().max() <= 20  # the 20-packet buffer
    assert ts.loc[ts["metric"] == "queue_pkts", "flow_id"].isna().all()
    assert ts.loc[ts["metric"] == "delivered_bytes", "port"].isna().all()


def test_no_timeseries_file_without_sampling(tmp_path, longflows):
    out = tmp_path / "out"
    (out).mkdir()
    (out / "timeseries.csv").write_text("stale from an earlier run\n")
    res = dcfair.run(longflows.with_overrides(SHORT), out=out)
    assert res.timeseries.empty and list(res.timeseries.columns) == ["time_s", "metric", "port", "flow_id", "value"]
    assert sorted(p.name for p in out.iterdir()) == ["fabric.csv", "flows.csv", "port_drops.csv", "ports.csv", "summary.json"]


def test_bad_sampling_is_invalid_input(longflows):
    for ov, key in [({"measure.sample_interval_s": 0}, "measure.sample_interval_s"),
                    ({"measure.sample_interval_s": 1e-7}, "measure.sample_interval_s"),  # far too many rows
                    ({"measure.cwnd": True}, "measure.cwnd")]:
        with pytest.raises(dcfair.InvalidInput) as ei:
            longflows.with_overrides(ov).validate()
        assert ei.value.key == key


def test_sampling_changes_no_result(tmp_path, longflows):
    a = dcfair.run(longflows.with_overrides(SHORT), out=tmp_path / "a")
    b = dcfair.run(longflows.with_overrides({**SHORT, "measure.sample_interval_s": 0.01}), out=tmp_path / "b")
    for f in ("flows.csv", "ports.csv"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()
    sa, sb = dict(a.summary), dict(b.summary)
    for k in ("wall_time_s", "events"):  # the ticks are events
        sa.pop(k), sb.pop(k)
    assert sa == sb


def test_run_accepts_a_path_and_overrides(tmp_path):
    res = dcfair.run(LONGFLOWS, overrides={**SHORT, "queue.kind": "hcf"}, seed=2)
    assert res.summary["queue_kind"] == "hcf" and res.seed == 2 and res.dir is None


def test_old_api_run_still_returns_the_summary_dict(tmp_path):
    from dcfair import api

    summary = api.run(LONGFLOWS, overrides=SHORT, seed=2, out=tmp_path / "o")
    assert isinstance(summary, dict) and summary["seed"] == 2 and "jain_index" in summary["metrics"]
    assert (tmp_path / "o" / "flows.csv").exists()


def test_queue_kinds():
    from dcfair import api

    kinds = api.queue_kinds()
    assert kinds[0] == "droptail" and len(set(kinds)) == len(kinds)
    assert {"droptail", "red", "sfq", "drr", "hcf", "blackout", "pfabric", "codel", "fq_codel", "afd"} == set(kinds)
    assert all(name in kinds and summary for name, summary in api.queue_kind_summaries())


def test_kinds_lists_every_discipline_with_its_summary():
    from dcfair import api

    import conftest

    p = conftest.dcfair("kinds")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert [line.split()[0] for line in lines] == api.queue_kinds()
    assert all(len(line.split(None, 1)) == 2 for line in lines)


# ---------------------------------------------------------------- the files stay what they were


def test_result_files_are_byte_identical_to_the_golden_ones(tmp_path):
    """tests/data/golden/ holds the files the engine wrote before it kept its results as
    columns (a UDP-only run: no TCP model in its numbers). Columns added since are appended:
    ports.csv's `window_drops` and flows.csv's `pkts_sent_in_window`, the rest of each line unchanged."""
    out = tmp_path / "udp"
    dcfair.run(DATA / "udp_only.toml", out=out)
    for name in ("flows.csv", "ports.csv"):
        assert (out / name).read_bytes() == (DATA / "golden" / f"udp_only.{name}").read_bytes(), name


def _render(df) -> str:
    """The CSV format of docs/metrics.md, rendered in Python from the DataFrame: shortest
    round-trip floats without exponent (Rust's Display), integers, names, empty for missing."""

    def fmt(v) -> str:
        if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
            return ""
        if isinstance(v, (float, np.floating)):
            return np.format_float_positional(float(v), unique=True, trim="-")
        return str(v)

    lines = [",".join(df.columns)]
    for row in df.astype(object).itertuples(index=False):
        lines.append(",".join(fmt(v) for v in row))
    return "\n".join(lines) + "\n"


def test_frames_render_back_to_the_engine_files(tmp_path):
    """TCP rows too (finished flows, groups, several receivers): the DataFrames handed over by
    the engine, written in the documented format, are byte for byte the files it wrote."""
    sc = dcfair.Scenario.load(REPO / "scenarios/papers/hcf/short_over_long.toml").with_overrides({
        "sim.duration_s": 4, "measure.window_s": 1, "groups.short10.start_max_s": 1,
        "groups.short30.start_max_s": 1, "groups.short60.start_max_s": 1, "topology.receivers": 2,
        "measure.sample_interval_s": 0.5,
    })
    res = dcfair.run(sc, out=tmp_path)
    assert res.flows["fct_s"].notna().any() and res.flows["fct_s"].isna().any()
    for name in ("flows", "ports", "timeseries"):
        assert _render(getattr(res, name)) == (tmp_path / f"{name}.csv").read_text(), name
