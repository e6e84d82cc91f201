"""bench/: the fat-tree benchmark's scenario and its ns-2 mirror stay what the benchmark says
(the benchmark itself is timed by `make bench`, never here)."""

from __future__ import annotations

import importlib.util
import shutil
import tomllib
from pathlib import Path

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



def _pfabric():
    spec = importlib.util.spec_from_file_location("bench_pfabric", REPO / "bench" / "pfabric.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("mech", ["fq_codel", "dctcp", "pfabric"])
def test_the_pfabric_benchmark_scenario_runs_with_each_mechanisms_overrides(tmp_path, mech):
    pf = _pfabric()
    ov = {**pf.overrides(mech), "poisson.max_flows": 30, "poisson.stop_s": 0.002, "sim.duration_s": 0.01}
    sc = dcfair.Scenario.load(pf.SCENARIO).with_overrides(ov)
    assert sc.get("queue.kind") == {"fq_codel": "fq_codel", "dctcp": "droptail", "pfabric": "pfabric"}[mech]
    res = dcfair.run(sc, out=tmp_path)
    flows = res.flows
    assert len(flows) == 30 and flows["size_bytes"].notna().all()
    assert res.summary["metrics"]["flows_completed_size_all"] >= 25


def test_the_pfabric_benchmark_refuses_an_unknown_mechanism():
    with pytest.raises(SystemExit, match="--mechs: unknown mechanism 'fifo'"):
        _pfabric().overrides("fifo")


@pytest.mark.skipif(shutil.which("pkg-config") is None or not Path("/usr/include/ns3").is_dir(),
                    reason="ns-3 not installed (make peers)")
@pytest.mark.parametrize("mech", ["fq_codel", "dctcp"])
def test_ns3_replays_the_flows_dcfair_drew(tmp_path, mech):
    """The ns-3 mirror moves the same flows: every one of 12 web-search flows on a small fabric completes
    in both simulators and the mean FCTs agree within a factor of 2 (a check of the replay,
    not a validation)."""
    import json
    import subprocess

    pf = _pfabric()
    if not pf.SIMRUN.exists():
        pytest.skip("target/release/examples/simrun not built")
    pf.build_ns3()
    out = tmp_path / "dc"
    # A small fabric (2 leaves of 4 hosts, 2 spines): ns-3's global routing is slow to build.
    small = {"topology.leaves": 2, "topology.hosts_per_leaf": 4, "topology.spines": 2}
    subprocess.run(pf.dcfair_cmd(12, str(out), 0.01, mech) + [f"{k}={v}" for k, v in small.items()],
                   check=True, capture_output=True)
    dc = pf.summary(str(out))
    res = tmp_path / "ns3.json"
    subprocess.run([str(pf.NS3_BIN), *pf.ns3_args(mech), "--leaves=2", "--hostsPerLeaf=4", "--spines=2",
                    f"--flows={out}/flows.csv", "--duration=0.06", f"--result={res}"],
                   check=True, capture_output=True, timeout=600)
    ns = json.loads(res.read_text())
    assert ns["flows"] == dc["flows"] == 12
    assert ns["completed"] == dc["completed"] == 12
    assert 0.5 < ns["fct_mean_s"] / dc["fct_mean_s"] < 2.0, (ns, dc)
