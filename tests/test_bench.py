"""bench/: the fat-tree benchmark's scenario and its ns-2 mirror stay what the benchmark says
(the benchmark itself is timed by `make bench`, never here)."""

from __future__ import annotations

import importlib.util
import shutil
import tomllib

import pytest

import dcfair
from conftest import REPO


def _fattree():
    spec = importlib.util.spec_from_file_location("bench_fattree", REPO / "bench" / "fattree.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_flows_are_the_seeded_permutation():
    ft = _fattree()
    sc = tomllib.loads(ft.SCENARIO.read_text())
    n = sc["topology"]["k"] ** 3 // 4
    src = [int(h[1:]) for h in sc["flows"]["src"]]
    dst = [int(h[1:]) for h in sc["flows"]["dst"]]
    assert src == list(range(n)) and sc["flows"]["count"] == n
    assert sorted(dst) == list(range(n)), "every host receives exactly once"
    assert all(s != d for s, d in zip(src, dst))
    assert dst == ft.permutation(n, 1)


def test_the_scenario_runs_and_every_port_name_of_the_mirror_exists(tmp_path):
    ft = _fattree()
    ports = ft.all_ports(8)
    assert len(ports) == len(set(ports)) == 2 * (128 + 128 + 128)
    sc = dcfair.Scenario.load(ft.SCENARIO).with_overrides({"sim.duration_s": 0.0002, "measure.ports": ports})
    res = dcfair.run(sc, out=tmp_path)
    assert len(res.ports) == len(ports)
    assert res.ports["packets_out"].sum() > 0


@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 not installed (make peers)")
def test_ns2_and_dcfair_carry_the_packets_over_the_same_links(tmp_path):
    ft = _fattree()
    if not ft.SIMRUN.exists():
        pytest.skip("target/release/examples/simrun not built (cargo build --release --examples)")
    sc = ft.load()
    # 2 ms: every flow has started (start times differ between the simulators, within 1 ms)
    dc, ns = ft.count_dcfair(sc, 0.002, str(tmp_path)), ft.count_ns2(sc, 0.002, str(tmp_path))
    assert dc["hops"] > 0 and ns["hops"] > 0
    assert set(dc["links"]) == set(ns["links"])

