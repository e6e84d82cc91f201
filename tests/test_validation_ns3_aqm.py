"""FQ-CoDel and DCTCP beside ns-3 (validation/ns3/run_aqm.py): the scenario -> ns-3 option
mapping, and one short run of both cases in both simulators whose agreement is checked within
stated tolerances. The live test is skipped when ns-3 3.37's development files (pkg-config
ns3-core), a C++ compiler or the release `simrun` are missing. The full table is
`make validate-ns3-aqm`."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "validation" / "ns3"))
import run_aqm  # noqa: E402


def _args(case: str, seed: int = 1, **changes) -> dict[str, str]:
    flat = {**run_aqm.load(case), **changes}
    return dict(a[2:].split("=", 1) for a in run_aqm.ns3_args(flat, seed))


def test_fq_codel_case_maps_to_fqcodel():
    a = _args("fq_codel8")
    assert (a["aqm"], a["fqFlows"], a["targetUs"], a["intervalUs"]) == ("fq_codel", "1024", "5000.0", "100000.0")
    assert a["quantumBytes"] == "1512" and a["limitPkts"] == "1000"
    assert a["shortFlows"] == "20" and a["shortBytes"] == "2920"
    assert _args("fq_codel8", 2)["perturbation"] != a["perturbation"]  # a salt per seed, as dcfair


def test_dctcp_case_maps_to_red_step_one_below_k():
    a = _args("dctcp8")
    assert (a["aqm"], a["redThPkts"], a["limitPkts"], a["dctcpG"]) == ("dctcp", "19", "100", "0.0625")


@pytest.mark.parametrize("case, key, value, needle", [
    ("fq_codel8", "queue.fq_codel.ecn", True, "queue.fq_codel.ecn"),
    ("fq_codel8", "tcp.sack", False, "tcp.sack"),
    ("fq_codel8", "queue.kind", "red", "queue.kind"),
    ("dctcp8", "tcp.cc", "cubic", "queue.kind"),
    ("dctcp8", "queue.droptail.mark_threshold_pkts", 1, "mark_threshold_pkts"),
    ("dctcp8", "flows.size_bytes", 1000, "flows.size_bytes"),
])
def test_mapping_refuses_what_the_mirror_lacks(case, key, value, needle):
    with pytest.raises(run_aqm.MappingError, match=needle.replace(".", r"\.")):
        _args(case, **{key: value})


def _ns3_available() -> str | None:
    if shutil.which("pkg-config") is None or shutil.which(run_aqm.run_ns3.CXX) is None:
        return "pkg-config or a C++ compiler missing"
    if subprocess.run(["pkg-config", "--exists", "ns3-core"]).returncode != 0:
        return "ns-3 development files missing (make peers)"
    if not run_aqm.os.path.exists(run_aqm.SIMRUN):
        return "target/release/examples/simrun missing (cargo build --release -p dcfair-sim --example simrun)"
    return None


# A 4 s run, the last 3 s measured, the 20 short flows in [1, 3.5] s: a few seconds per side.
SHORT = {"sim.duration_s": 4.0, "measure.window_s": 3.0,
         "groups.sparse.start_min_s": 1.0, "groups.sparse.start_max_s": 3.5}


@pytest.fixture(scope="module")
def short_runs(tmp_path_factory):
    why = _ns3_available()
    if why:
        pytest.skip(why)
    run_aqm.ensure_built()
    run_aqm.RAW = str(tmp_path_factory.mktemp("aqm"))  # leave a full run's raw output alone
    extra = [f"{k}={v!r}" for k, v in SHORT.items()]
    out = {}
    for case in run_aqm.CASES:
        flat = {**run_aqm.load(case), **SHORT}
        out[case] = (run_aqm.run_dcfair_side(case, 1, flat, extra)["metrics"],
                     run_aqm.run_ns3_side(case, 1, flat, extra)["metrics"])
    return out


@pytest.mark.parametrize("case", list(run_aqm.CASES))
def test_both_fill_the_link_and_share_it(short_runs, case):
    d, n = short_runs[case]
    for m in (d, n):
        assert m["utilization"] > 0.95
        assert m["jain_index"] > 0.95
        assert m["short_completed"] == m["short_flows"] == 20
    assert abs(d["utilization"] - n["utilization"]) <= 0.05
    assert abs(d["goodput_mbps_mean"] - n["goodput_mbps_mean"]) <= 0.05 * n["goodput_mbps_mean"]


def test_dctcp_holds_the_queue_near_k_by_marks_alone(short_runs):
    d, n = short_runs["dctcp8"]
    for m in (d, n):
        assert 15.0 <= m["queue_mean_pkts"] <= 24.0  # K = 20
        assert m["drops"] == 0 and m["marks"] > 1000
        assert m["queue_p99_pkts"] <= 40
    assert abs(d["queue_mean_pkts"] - n["queue_mean_pkts"]) <= 4.0


def test_fq_codel_drops_and_keeps_short_flows_fast(short_runs):
    d, n = short_runs["fq_codel8"]
    for m in (d, n):
        assert m["drops"] > 0 and m["marks"] == 0
        # both sides split their drops by reason: the CoDel law's and the overflow batches'
        assert m["drops_law"] > 0 and m["drops_law"] + m["drops_overflow"] == m["drops"]
        assert m["jain_index"] > 0.98
