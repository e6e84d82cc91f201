"""A real second opinion: `dcfair reproduce outcast-case1 --quick --peer ns2` in Debian's stock
ns-2.35 (python/dcfair/peers/ns2_outcast.py, validation/ns2/outcast_cases.tcl). `make test`
installs ns-2 (the Makefile's test-deps); the test is skipped only where the `ns` command is
missing."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import dcfair

pytestmark = pytest.mark.skipif(shutil.which("ns") is None, reason="the ns command of ns-2.35 (Debian ns2) is missing")

CLAIMS = ("twelve-about-7x", "six-about-2x", "two-early-advantage", "worse-with-more")


@pytest.fixture(scope="module")
def case1(tmp_path_factory):
    """dcfair's quick form, then ns-2's into <out>@ns2 (which folds into dcfair's claims.json)."""
    out = tmp_path_factory.mktemp("ns2") / "case1"
    p = dcfair("reproduce", "outcast-case1", "--quick", "--jobs", "1", "--out", out)
    assert p.returncode == 0, p.stderr
    t0 = time.monotonic()
    q = dcfair("reproduce", "outcast-case1", "--quick", "--peer", "ns2", "--jobs", "1", "--out", out)
    wall = time.monotonic() - t0
    assert q.returncode == 0, (q.stdout[-2000:], q.stderr[-2000:])
    return out, q, wall


def test_ns2_gives_every_case1_claim_a_value(case1):
    out, q, _ = case1
    peer = json.loads((out.parent / "case1@ns2" / "claims.json").read_text())
    assert peer["peer"] == "ns2" and peer["peer_build"].startswith("ns2:2.35-debian")
    assert peer["command"] == "dcfair reproduce outcast-case1 --quick --peer ns2"
    by_id = {c["id"]: c for c in peer["claims"]}
    for cid in CLAIMS:
        st = by_id[cid]["dcfair"]
        assert st["n"] > 0 and all(v == v for v in st["values"]), cid  # values, none NaN
    # the DropTail shares are ns-2's own: a 2-hop flow against twelve 6-hop flows is outcast
    assert 0 <= by_id["twelve-about-7x"]["dcfair"]["mean"] < 0.5
    # HCF and FairQ are not in stock ns-2.35: said, not invented
    why = {u["labels"]["qdisc"]: u["why"] for u in peer["unsupported"]}
    assert set(why) == {"hcf", "fairq"}
    assert "not in stock ns-2.35" in why["hcf"] and "not in stock ns-2.35" in why["fairq"]
    assert "not run (the peer cannot run their setting)" in q.stdout


def test_the_opinions_fold_into_dcfairs_claims(case1):
    out, _, _ = case1
    mine = json.loads((out / "claims.json").read_text())
    for c in mine["claims"]:
        so = c["second_opinion"]
        assert so["peer"] == "ns2" and so["title"].startswith("ns-2.35"), c["id"]
        assert so["value"] is not None and isinstance(so["holds"], bool) and so["why_not"] == "", c["id"]


def test_the_peer_runs_are_ns2s_measures(case1):
    out, _, wall = case1
    assert wall < 300, wall  # about 6 s on one idle core
    runs = [d for d in (out / "runs@ns2").iterdir() if (d / "summary.json").is_file()]
    assert len(runs) == 6  # DropTail: 3 cases x 2 seeds
    for d in runs:
        s = json.loads((d / "summary.json").read_text())
        m = s["metrics"]
        assert s["peer"] == "ns2" and s["labels"]["qdisc"] == "droptail"
        assert 0.95 < m["utilization"] <= 1.0, d  # the bottleneck e0_0->h0 is saturated
        six = s["labels"]["six"]
        total = m["throughput_bps_two_hop"] + six * m["throughput_bps_six_hop"]
        assert 0.9e9 < total < 0.98e9, d  # payload of a 1 Gbit/s link (1460 of 1500 bytes)
        flows = pd.read_csv(d / "flows.csv")
        assert len(flows) == six + 1 and set(flows["group"]) == {"two_hop", "six_hop"}
        ts = pd.read_csv(d / "timeseries.csv")
        last = ts[ts["time_s"] == ts["time_s"].max()].set_index("flow_id")["value"]
        assert ts["time_s"].max() == pytest.approx(0.5)
        assert (last.reindex(flows["flow_id"]).values == flows["bytes_delivered"].values).all()
        assert not list(d.glob("*.tr"))  # the per-packet traces are not kept


def test_a_point_reruns_to_the_same_numbers(tmp_path):
    """Seeded from the point: the same point twice gives the same files."""
    from dcfair.peers import Job
    from dcfair.peers.ns2_outcast import outcast
    from dcfair.reproduce import load_all

    p = load_all()["outcast-drops"].plan(True)[0]  # DropTail, drop runs at e0_0->h0
    res = []
    for k in range(2):
        d = tmp_path / str(k)
        d.mkdir()
        job = Job("outcast-drops", p.scenario, Path(p.scenario).read_text(), p.overrides, p.seed, dict(p.labels), d, True)
        res.append((outcast(job), (d / "drop_runs.csv").read_text(), (d / "flows.csv").read_text()))
    assert res[0] == res[1]
    runs = pd.read_csv(tmp_path / "0" / "drop_runs.csv")
    # every drop at the port is in one run of its input and one run of its flow
    for by in ("input", "group"):
        r = runs[(runs["by"] == by) & (runs["port"] == "e0_0->h0")]
        assert (r["run_length"] * r["episodes"]).sum() == res[0][0]["drops"], by


def test_drop_runs_follow_the_definition(tmp_path):
    """Runs per input and per flow from an ns-2 trace (docs/metrics.md, drop_runs.csv)."""
    from dcfair.peers.ns2_outcast import drop_runs

    flows = [{"id": 0, "group": "a", "src": "h1", "dst": "h0", "path": ["h1->e", "e->h0"], "ack_path": ["h0->e", "e->h1"]},
             {"id": 1, "group": "b", "src": "h4", "dst": "h0", "path": ["h4->x", "x->e", "e->h0"],
              "ack_path": ["h0->e", "e->x", "x->h4"]},
             {"id": 2, "group": "b", "src": "h5", "dst": "h0", "path": ["h5->x", "x->e", "e->h0"],
              "ack_path": ["h0->e", "e->x", "x->h5"]}]
    # (event, fid, uid): flow 0 loses 3 in a row, flow 1 and 2 alternate through one input
    seq = [("+", 0, 1), ("d", 0, 1), ("+", 1, 2), ("+", 0, 3), ("d", 0, 3), ("+", 2, 4), ("d", 2, 4),
           ("+", 0, 5), ("d", 0, 5), ("+", 1, 6), ("d", 1, 6), ("+", 0, 7), ("+", 2, 8)]
    tr = tmp_path / "t.tr"
    tr.write_text("".join(f"{e} 0.1 16 0 tcp 1500 ------- {f} 1.0 0.0 1 {u}\n" for e, f, u in seq))
    rows = {(r["by"], r["key"], r["run_length"]): (r["episodes"], r["flows"]) for r in drop_runs(tr, "e->h0", flows)}
    assert rows[("input", "h1->e", 3)] == (1, 1)
    # input x->e: flow 1 ok, flow 2 dropped, flow 1 dropped, flow 2 ok: one run of 2
    assert rows[("input", "x->e", 2)] == (1, 2)
    assert rows[("group", "a", 3)] == (1, 1)
    assert rows[("group", "b", 1)] == (2, 2)  # each of flows 1 and 2 lost one
    assert len(rows) == 4
