"""dcfair._engine, the PyO3 module: its API and how engine errors reach Python."""

from __future__ import annotations

import pickle
import re

import pytest

from conftest import LONGFLOWS

from dcfair import _engine


def test_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", _engine.version())
    assert _engine.__version__ == _engine.version()


def test_package_reexports():
    import dcfair

    assert dcfair.InvalidInput is _engine.InvalidInput
    assert dcfair.engine_version() == _engine.version()
    assert callable(dcfair.run) and callable(dcfair.load_scenario)


# ---------------------------------------------------------------- InvalidInput


def test_invalid_input_is_a_value_error_with_key_and_reason():
    e = _engine.InvalidInput("queue.limit_pkts", "must be > 0, got -5")
    assert isinstance(e, ValueError)
    assert (e.key, e.reason) == ("queue.limit_pkts", "must be > 0, got -5")
    assert str(e) == "queue.limit_pkts: must be > 0, got -5"
    assert type(e).__module__ == "dcfair._engine"


def test_invalid_input_survives_pickling():
    """Sweeps send errors back from worker processes."""
    e = pickle.loads(pickle.dumps(_engine.InvalidInput("a.b", "why")))
    assert type(e) is _engine.InvalidInput
    assert (e.key, e.reason, str(e)) == ("a.b", "why", "a.b: why")


# ---------------------------------------------------------------- argument checking (no engine needed)


def test_overrides_must_be_pairs_of_strings():
    with pytest.raises((TypeError, ValueError)):
        _engine.run("", "x", [("only-a-key",)])
    with pytest.raises(TypeError):
        _engine.load_scenario("", "x", [("a", 1)])


def test_progress_must_be_callable():
    with pytest.raises(TypeError, match="progress"):
        _engine.run("", "x", [], None, None, 42)


def test_seed_must_fit_u64():
    with pytest.raises(OverflowError):
        _engine.run("", "x", [], -1)


def test_api_rejects_bad_seed_as_invalid_input():
    from dcfair import api

    with pytest.raises(_engine.InvalidInput, match="seed"):
        api.run(LONGFLOWS, seed=-3)


def test_api_override_forms():
    from dcfair.overrides import normalize

    expected = [("queue.kind", "hcf"), ("sim.duration_s", "20.0"), ("x.flag", "true"), ("n", "3")]
    assert normalize({"queue.kind": "hcf", "sim.duration_s": 20.0, "x.flag": True, "n": 3}) == expected
    assert normalize(["queue.kind=hcf", ("sim.duration_s", 20.0), ("x.flag", True), "n=3"]) == expected
    assert normalize({"v": [1, 2]}) == [("v", "[1, 2]")]
    with pytest.raises(ValueError):
        normalize(["no-equals-sign"])


# ---------------------------------------------------------------- with the real engine


def test_load_scenario_returns_name_seed_duration():
    info = _engine.load_scenario(LONGFLOWS.read_text(), str(LONGFLOWS), [("sim.duration_s", "20")])
    assert info["name"] == "hcf-longflows"
    assert info["seed"] == 1
    assert info["duration_s"] == 20.0


def test_unknown_key_raises_invalid_input_with_the_key():
    with pytest.raises(_engine.InvalidInput) as ei:
        _engine.load_scenario(LONGFLOWS.read_text(), str(LONGFLOWS), [("queue.no_such_knob", "1")])
    assert "queue.no_such_knob" in ei.value.key


def test_run_returns_summary_json_and_writes_nothing_without_out_dir(tmp_path, monkeypatch):
    import json

    monkeypatch.chdir(tmp_path)
    text = _engine.run(LONGFLOWS.read_text(), str(LONGFLOWS), [("sim.duration_s", "1"), ("measure.window_s", "0.5")], 3)
    summary = json.loads(text)
    assert summary["seed"] == 3 and summary["scenario"] == "hcf-longflows"
    assert list(tmp_path.iterdir()) == []


class _Stop(Exception):
    pass


@pytest.mark.parametrize("exc", [_Stop, KeyboardInterrupt])
def test_an_exception_in_progress_stops_the_run(tmp_path, exc):
    calls = []

    def progress(sim_time_s, duration_s, events, wall_time_s):
        calls.append((sim_time_s, duration_s, events, wall_time_s))
        raise exc()

    out = tmp_path / "out"
    with pytest.raises(exc):
        _engine.run(LONGFLOWS.read_text(), str(LONGFLOWS), [("sim.duration_s", "100000")], None, str(out), progress)
    assert len(calls) == 1
    sim_time_s, duration_s, events, wall_time_s = calls[0]
    assert 0 <= sim_time_s <= duration_s == 100000.0 and events >= 0 and wall_time_s > 0
    assert not out.exists()
