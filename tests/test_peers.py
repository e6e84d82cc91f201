"""Second opinions (`dcfair reproduce NAME --peer PEER`, dcfair.peers): the framework, with a
fake peer that runs dcfair's own engine (tests/peerkit/fake_peer.py), so that its opinions must
equal dcfair's values exactly; and the claims pages' lines and summary built from them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import REPO, assert_clean_error, dcfair

PEERKIT = str(Path(__file__).resolve().parent / "peerkit")
FAKE = {"DCFAIR_PEER_MODULES": "fake_peer", "PYTHONPATH": PEERKIT}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """outcast-case1 --quick in dcfair, then in the fake peer (twice: the second reuses)."""
    root = tmp_path_factory.mktemp("peers")
    out = root / "case1"
    p = dcfair("reproduce", "outcast-case1", "--quick", "--out", out)
    assert p.returncode == 0, p.stderr
    first = dcfair("reproduce", "outcast-case1", "--quick", "--peer", "fake", "--out", out, env=FAKE)
    again = dcfair("reproduce", "outcast-case1", "--quick", "--peer", "fake", "--out", out, env=FAKE)
    return out, first, again


def test_a_peer_run_checks_the_claims_by_the_same_criteria(runs):
    out, first, _ = runs
    assert first.returncode == 0, first.stderr
    peer = json.loads((out.parent / "case1@fake" / "claims.json").read_text())
    mine = json.loads((out / "claims.json").read_text())
    assert peer["peer"] == "fake" and peer["peer_build"].startswith("fake:1:")
    assert peer["command"] == "dcfair reproduce outcast-case1 --quick --peer fake"
    by_id = {c["id"]: c for c in peer["claims"]}
    # the fake peer is the engine: where it ran every point, its values are dcfair's
    for c in mine["claims"]:
        so = c["second_opinion"]
        assert so["peer"] == "fake" and so["command"] == peer["command"]
        if c["id"] in ("twelve-about-7x", "worse-with-more"):
            continue  # need the 1 vs 12 points the fake peer cannot run
        assert so["values"] == c["dcfair"]["values"], c["id"]
        assert so["holds"] == c["holds"] and so["why_not"] == "", c["id"]
        assert by_id[c["id"]]["dcfair"]["values"] == so["values"]


def test_points_the_peer_cannot_run_are_said_not_invented(runs):
    out, first, _ = runs
    peer = json.loads((out.parent / "case1@fake" / "claims.json").read_text())
    assert {u["labels"]["six"] for u in peer["unsupported"]} == {12}
    assert all(u["why"] == "the fake peer has no room for 12 flows" for u in peer["unsupported"])
    mine = {c["id"]: c for c in json.loads((out / "claims.json").read_text())["claims"]}
    so = mine["twelve-about-7x"]["second_opinion"]
    assert so["value"] is None and so["holds"] is None
    assert "no room for 12 flows" in so["why_not"]
    assert "not run (the peer cannot run their setting)" in first.stdout


def test_a_second_run_reuses_the_peer_runs(runs):
    _, first, again = runs
    assert again.returncode == 0, again.stderr
    n_run = int(first.stdout.strip().splitlines()[-1].split(" run,")[0].split()[-1])
    assert n_run > 0
    assert f"0 run, {n_run} reused" in again.stdout.strip().splitlines()[-1]


def test_the_opinions_survive_a_rerun_of_dcfair(runs):
    """claims.json rewritten by a dcfair run folds the peer's document back in."""
    out, _, _ = runs
    p = dcfair("reproduce", "outcast-case1", "--quick", "--out", out, env=FAKE)
    assert p.returncode == 0, p.stderr
    mine = json.loads((out / "claims.json").read_text())
    assert all(c["second_opinion"]["peer"] == "fake" for c in mine["claims"])


def test_a_missing_peer_is_invalid_input_naming_its_install(tmp_path):
    p = dcfair("reproduce", "outcast-case1", "--quick", "--peer", "fake", "--out", tmp_path / "x",
               env={**FAKE, "DCFAIR_FAKE_PEER_MISSING": "1"})
    assert_clean_error(p, 2, "--peer", "DCFAIR_FAKE_PEER_MISSING is set", "install it with")
    assert not (tmp_path / "x@fake").exists()


def test_unknown_peers_and_reproductions_without_a_runner_are_invalid_input(tmp_path):
    assert_clean_error(dcfair("reproduce", "outcast-case1", "--peer", "nope"), 2, "--peer", "no peer named 'nope'")
    assert_clean_error(dcfair("reproduce", "hcf-buffer", "--peer", "fake", env=FAKE), 2, "--peer",
                       "fake has no runner for hcf-buffer")
    assert_clean_error(dcfair("reproduce", "outcast-case1", "--peer", "fake", "--set", "seed=2", env=FAKE), 2,
                       "--peer", "not with --set")


def test_peer_list_says_what_each_peer_runs():
    p = dcfair("reproduce", "--peer", "list", env=FAKE)
    assert p.returncode == 0, p.stderr
    line = next(ln for ln in p.stdout.splitlines() if ln.strip().startswith("fake"))
    assert "outcast-case1" in line and "yes" in line


# --- docs/claims.md's second-opinion lines and summary -------------------------------------------
sys.path.insert(0, str(REPO / "validation"))
import claims_table  # noqa: E402


def _claim(holds, values, so=None):
    st = {"mean": sum(values) / len(values), "std": 0.0, "min": min(values), "max": max(values), "n": len(values),
          "values": values}
    c = {"id": "x", "claim": "c", "paper_value": "1", "unit": "", "dcfair": st, "holds": holds, "criterion": "k",
         "scope": "paper"}
    if so is not None:
        c["second_opinion"] = so
    return c


def _so(holds, value, spread=0.0):
    return {"peer": "ns2", "title": "ns-2.35", "command": "dcfair reproduce r --peer ns2", "value": value,
            "spread": spread, "min": value, "max": value, "n": 2, "holds": holds, "why_not": ""}


def test_the_opinion_line_gives_the_peer_value_verdict_and_command():
    line = claims_table.opinion_line(_claim(False, [0.1, 0.1], _so(True, 0.5)), "r")
    assert line.startswith("- Second opinion (ns-2.35): 0.5 +- 0 [0.5, 0.5], n=2")
    assert "the claim holds there" in line and "differ by more than their seed spreads" in line
    assert "`dcfair reproduce r --peer ns2`" in line
    close = claims_table.opinion_line(_claim(False, [0.1, 0.3], _so(False, 0.25, 0.1)), "r")
    assert "fails there" in close and "spreads" not in close
    none = claims_table.opinion_line(_claim(False, [1.0], {**_so(None, None), "why_not": "no pFabric"}), "r")
    assert "none: no pFabric" in none
    assert "neither ns-2.35 nor ns-3.37 has AFD" in claims_table.opinion_line(_claim(True, [1.0]), "afd-fairness")


def test_the_summary_counts_agreement_per_paper():
    paper = next(iter(claims_table.PAGES))
    doc = {"paper": paper, "claims": [
        _claim(True, [1.0], _so(True, 1.0)), _claim(True, [1.0], _so(False, 1.0)), _claim(True, [1.0]),
        _claim(False, [1.0], _so(False, 1.0)), _claim(False, [1.0], _so(True, 1.0)), _claim(False, [1.0]),
        _claim(False, [1.0], {**_so(None, None), "why_not": "x"}),
    ]}
    lines = claims_table.opinions_summary({paper: [doc]})
    row = next(ln for ln in lines if ln.startswith(f"| {claims_table.PAGES[paper][1]} |"))
    # hold 3, checked 2, agree 1 | fail 4, fail too 1, hold in peer 1, none 2
    assert row.split("|")[2:10] == [" 3 ", " 2 ", " 1 ", " 4 ", " 1 ", " 1 ", " 2 ", ""][:8]
    assert any("2 of 4 failing claims (50 %) have a second opinion" in ln for ln in lines)


def test_user_built_peers_say_how_to_get_them():
    """ns2-xpass and htsim are built by the user from the authors' code: without the variable
    that names the build, the command says which and how (exit 2)."""
    env = {"DCFAIR_NS2_XPASS": "", "DCFAIR_HTSIM": ""}
    assert_clean_error(dcfair("reproduce", "xpass-fig9", "--peer", "ns2-xpass", env=env), 2, "--peer", "DCFAIR_NS2_XPASS")
    assert_clean_error(dcfair("reproduce", "mptcp-goals", "--peer", "htsim", env=env), 2, "--peer", "DCFAIR_HTSIM")


def test_a_slow_peer_runs_its_first_seeds_only(tmp_path):
    p = dcfair("reproduce", "outcast-case1", "--quick", "--peer", "fake", "--out", tmp_path / "c",
               env={**FAKE, "DCFAIR_FAKE_PEER_SEEDS": "1"})
    assert p.returncode == 0, p.stderr
    doc = json.loads((tmp_path / "c@fake" / "claims.json").read_text())
    assert doc["seeds"] == [1]
    assert {c["dcfair"]["n"] for c in doc["claims"] if c["id"] == "six-about-2x"} == {1}
