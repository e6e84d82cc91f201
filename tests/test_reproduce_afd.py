"""AFD's reproduction in its quick form (docs/mechanisms/afd.md): it runs, writes its files, and
the behaviour asserted below holds with fixed seeds. Only what dcfair reproduces is asserted to
hold; the claims document is checked for being complete either way."""

from __future__ import annotations

import json

import pytest

from conftest import check_quotes, claim, dcfair


@pytest.fixture(scope="module")
def doc(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce") / "afd-fairness"
    p = dcfair("reproduce", "afd-fairness", "--quick", "--out", out, timeout=900)
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
    for f in ("figure.png", "claims.json", "results.csv", "table.csv"):
        assert (out / f).stat().st_size > 0, f
    d = json.loads((out / "claims.json").read_text())
    check_quotes(d)
    return d


def test_afd_is_fairer_than_droptail_on_the_long_flows(doc):
    c = claim(doc, "long-fairer")
    assert c["holds"] and c["dcfair"]["min"] > 0.1, c  # Jain index gain, per seed


def test_afd_holds_the_unresponsive_source_near_its_share_where_droptail_does_not(doc):
    held, unfair = claim(doc, "udp-held"), claim(doc, "droptail-udp-unfair")
    assert held["holds"] and held["dcfair"]["max"] < 2 / 21, held
    assert unfair["holds"] and unfair["dcfair"]["min"] > 5 / 21, unfair


def test_every_claim_states_its_criterion_and_values(doc):
    assert doc["paper"].startswith("AFD") and len(doc["seeds"]) == 2
    for c in doc["claims"]:
        assert c["criterion"] and c["dcfair"]["n"] == 2, c
        assert c.get("scope", "paper") == "beyond" or c["quote"], c


def test_listed():
    p = dcfair("reproduce", "--list")
    assert p.returncode == 0 and "afd-fairness" in p.stdout
