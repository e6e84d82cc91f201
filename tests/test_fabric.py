"""The fabric view's tables from Python: ``measure.ports = "all"``, ``fabric.csv`` and
``port_drops.csv`` as DataFrames, as files, and from directories written before them."""

from __future__ import annotations

import pandas as pd
import pytest

import dcfair
from conftest import REPO, assert_clean_error, dcfair as cli
from test_api import _render

OUTCAST = REPO / "python" / "dcfair" / "scenarios" / "papers" / "outcast" / "fattree.toml"
SHORT = {"sim.duration_s": 0.1, "measure.ports": "all"}


@pytest.fixture(scope="module")
def outcast(tmp_path_factory):
    out = tmp_path_factory.mktemp("fabric")
    return dcfair.run(dcfair.Scenario.load(OUTCAST).with_overrides(SHORT), out=out), out


def test_every_switch_port_is_measured_and_named_with_its_tier(outcast):
    res, _ = outcast
    f = res.fabric
    assert len(f) == 96 and f["level"].dtype == "Int64"
    switch = f["tier"] != "host"
    assert list(res.ports["port"]) == list(f.loc[switch, "port"])
    assert (f["measured"] == switch.astype(int)).all()
    tiers = f.drop_duplicates("node").set_index("node")["tier"]
    assert (tiers["h0"], tiers["e0_0"], tiers["a3_1"], tiers["c2"]) == ("host", "edge", "aggregation", "core")
    levels = f.drop_duplicates("tier").set_index("tier")["level"]
    assert levels.to_dict() == {"edge": 1, "host": 0, "aggregation": 2, "core": 3}


def test_port_drops_add_up_to_the_ports_drops(outcast):
    res, _ = outcast
    d = res.port_drops
    assert len(d) and (d["pkts"] > 0).all()
    per_port = d.groupby("port", observed=True)["pkts"].sum()
    ports = res.ports.set_index("port")["drops"]
    assert per_port.to_dict() == ports[ports > 0].to_dict()
    # the 2-hop flow loses packets at the port into h0, where the 6-hop flows meet it
    two_hop = d[(d["port"] == "e0_0->h0") & (d["group"] == "two_hop")]
    assert len(two_hop) == 1 and int(two_hop["pkts"].iloc[0]) > 0


def test_frames_are_the_files(outcast):
    res, out = outcast
    back = dcfair.Result.load(out)
    for name in ("fabric", "port_drops"):
        pd.testing.assert_frame_equal(getattr(res, name), getattr(back, name), check_exact=True)
        assert _render(getattr(res, name)) == (out / f"{name}.csv").read_text(), name


def test_a_directory_from_before_the_fabric_tables_loads_them_empty(outcast, tmp_path):
    _, out = outcast
    for name in ("summary.json", "flows.csv", "ports.csv"):
        (tmp_path / name).write_bytes((out / name).read_bytes())
    back = dcfair.Result.load(tmp_path)
    fresh = dcfair.Result.load(out)
    for name in ("fabric", "port_drops"):
        empty = getattr(back, name)
        assert empty.empty and list(empty.columns) == list(getattr(fresh, name).columns), name
        assert dict(empty.dtypes.astype(str)) == dict(getattr(fresh, name).dtypes.astype(str)), name


def test_the_command_line_lists_the_files_and_refuses_a_bad_word(tmp_path):
    p = cli("run", OUTCAST, "--out", tmp_path / "o", "--set", "sim.duration_s=0.05", "--set", "measure.ports=all")
    assert p.returncode == 0, p.stderr
    assert "fabric.csv" in p.stdout and "port_drops.csv" in p.stdout
    p = cli("run", OUTCAST, "--out", tmp_path / "x", "--set", "measure.ports=every")
    assert_clean_error(p, 2, "dcfair: invalid input: measure.ports", '"all"')
    assert not (tmp_path / "x").exists()
