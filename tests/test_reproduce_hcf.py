"""The HCF paper's reproductions in their quick form: every one runs, writes its files, and the
behaviours the paper reports that dcfair reproduces are asserted (fixed seeds, stated tolerances).

Claims that dcfair does *not* reproduce (see docs/mechanisms/hcf.md) are checked only for being
reported, not for holding: a test must not pretend a paper's claim holds when it does not.
"""

from __future__ import annotations

import json

import pytest

from conftest import check_quotes, claim, dcfair


ALL = [
    "hcf-throughput", "hcf-starvation", "hcf-buffer", "hcf-credits", "hcf-bins", "hcf-period",
    "hcf-shortflows", "hcf-incast-typical", "hcf-incast-nextgen", "hcf-incast-fixed",
]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """Runs every HCF reproduction once in its quick form; returns name -> claims document."""
    root = tmp_path_factory.mktemp("reproduce")
    docs = {}
    for name in ALL:
        out = root / name
        p = dcfair("reproduce", name, "--quick", "--out", out, timeout=900)
        assert p.returncode == 0, (name, p.stdout[-2000:], p.stderr[-2000:])
        for f in ("figure.png", "claims.json", "results.csv"):
            assert (out / f).stat().st_size > 0, (name, f)
        assert (out / "figure.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        docs[name] = json.loads((out / "claims.json").read_text())
        check_quotes(docs[name])
        docs[name]["_out"] = out
    return docs


def test_list_names_every_reproduction():
    p = dcfair("reproduce", "--list")
    assert p.returncode == 0, p.stderr
    for name in ALL:
        assert name in p.stdout


def test_unknown_reproduction_is_invalid_input():
    p = dcfair("reproduce", "hcf-nope", "--quick")
    assert p.returncode == 2 and "NAME" in p.stderr and "hcf-nope" in p.stderr


# --- the claims document ------------------------------------------------------------------------

def test_claims_documents_are_complete(quick):
    for name, doc in quick.items():
        assert doc["reproduction"] == name and doc["quick"] is True and doc["claims"], name
        assert len(doc["seeds"]) >= 2, name
        for c in doc["claims"]:
            assert set(c) >= {"id", "claim", "paper_value", "dcfair", "holds", "criterion"}, (name, c)
            assert isinstance(c["holds"], bool)
            assert c["dcfair"]["n"] >= 1 and c["dcfair"]["mean"] is not None, (name, c)


def test_a_second_run_reuses_every_finished_point(quick, tmp_path):
    out = quick["hcf-credits"]["_out"]
    before = json.loads((out / "claims.json").read_text())
    p = dcfair("reproduce", "hcf-credits", "--quick", "--out", out)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().splitlines()[-1] == "4 points: 0 run, 4 reused", p.stdout
    after = json.loads((out / "claims.json").read_text())
    assert after["claims"] == before["claims"], "same runs, same claims"


def test_a_reading_is_a_command_with_its_own_directory(quick):
    """--set (with --only) tries another reading: its own directory, the runs it leaves alone
    reused, its command recorded."""
    out = quick["hcf-credits"]["_out"]
    p = dcfair("reproduce", "hcf-credits", "--quick", "--out", out, "--set", "queue.hcf.zero_on_lp=false",
               "--only", "qdisc=hcf")
    assert p.returncode == 0, p.stderr
    alt = out.with_name(out.name + "+queue.hcf.zero_on_lp=false@qdisc=hcf")
    doc = json.loads((alt / "claims.json").read_text())
    assert doc["command"] == ("dcfair reproduce hcf-credits --quick --set queue.hcf.zero_on_lp=false "
                              "--only qdisc=hcf")
    assert doc["sets"] == [["queue.hcf.zero_on_lp", "false"]] and doc["only"] == [["qdisc", "hcf"]]
    assert p.stdout.strip().splitlines()[-1] == "4 points: 4 run, 0 reused"  # every run here is HCF's
    bad = dcfair("reproduce", "hcf-credits", "--quick", "--out", out, "--set", "queue.hcf.nope=1")
    assert bad.returncode == 2 and "queue.hcf.nope" in bad.stderr
    none = dcfair("reproduce", "hcf-credits", "--quick", "--out", out, "--set", "tcp.sack=true", "--only", "qdisc=red")
    assert none.returncode == 2 and "--only" in none.stderr


def test_the_paper_counts_packets_sent_and_delivered_is_tried(quick):
    """The HCF paper's measures count packets sent; each claim records the delivered reading."""
    d = quick["hcf-throughput"]
    c = claim(d, "fifo-starved")
    assert [e["reading"] for e in c["explored"]] == ["delivered"]
    assert c["explored"][0]["dcfair"]["mean"] != c["dcfair"]["mean"]
    rows = {r["variant"]: r for r in d["table"]}
    # a flow that sends nothing in the window delivers nothing: fewer starve by the sent measure
    assert rows["droptail"]["starved_sent"] <= rows["droptail"]["starved_fraction"]


# --- what the paper reports and dcfair reproduces ---------------------------------------------------

def test_hcf_starves_fewer_long_flows_than_fifo(quick):
    d = quick["hcf-throughput"]
    assert claim(d, "hcf-less-starvation")["holds"]
    # The paper's absolute 1.5 % is not reproduced with ns-2's TCP (docs/mechanisms/hcf.md):
    # only the direction is asserted, with a margin.
    fifo, hcf = claim(d, "fifo-starved")["dcfair"]["mean"], claim(d, "hcf-starved")["dcfair"]["mean"]
    assert hcf < 0.75 * fifo, (hcf, fifo)
    assert claim(d, "utilization")["holds"]


def test_hcf_helps_most_with_shallow_buffers(quick):
    d = quick["hcf-buffer"]
    assert claim(d, "shallow-variance")["holds"] and claim(d, "shallow-starvation")["holds"]


def test_more_initial_credits_hurt(quick):
    d = quick["hcf-credits"]
    assert claim(d, "more-credits-more-unfair")["holds"]


def test_one_bin_is_worse_and_a_few_dozen_are_enough(quick):
    d = quick["hcf-bins"]
    assert claim(d, "few-bins-worse")["holds"] and claim(d, "dozen-bins-enough")["holds"]


def test_hcf_shortens_the_tail_of_short_flows(quick):
    d = quick["hcf-shortflows"]
    assert claim(d, "tail-short10")["holds"]


def test_incast_collapses_under_fifo(quick):
    """The incast phenomenon itself: goodput with 64 servers far below that with 4."""
    import pandas as pd

    df = pd.read_csv(quick["hcf-incast-typical"]["_out"] / "results.csv")
    fifo = df[df["qdisc"] == "droptail"].groupby("servers")["block_goodput_bps"].mean()
    assert fifo[64] < fifo[4], fifo
    assert (df["rounds_completed"] > 0).all()


def test_fairq_spreads_the_long_flows_evenly(quick):
    """Beyond the paper: FairQ on the 400 long flows (one segment per flow, its floor) against
    FIFO with the same handshake (the control) and without (the paper's FIFO): far less
    variance and starvation, a higher Jain index, a full link."""
    t = {r["variant"]: r for r in quick["hcf-throughput"]["table"]}
    assert set(t) == {"droptail", "hcf", "fairq", "droptail-handshake", "xpass", "afd"}, t
    fq, ctl, dt = t["fairq"], t["droptail-handshake"], t["droptail"]
    assert fq["variance_pkts2"] < 0.4 * min(ctl["variance_pkts2"], dt["variance_pkts2"]), t
    assert fq["starved_fraction"] < 0.5 * min(ctl["starved_fraction"], dt["starved_fraction"]), t
    assert fq["jain_index"] > ctl["jain_index"] + 0.15 and fq["utilization"] >= 0.99, t
    s = {r["variant"]: r for r in quick["hcf-starvation"]["table"]}
    assert s["fairq"]["median_max_gap_s"] < s["droptail-handshake"]["median_max_gap_s"], s


def test_expresspass_incast_loses_nothing_within_the_buffer_and_answers_every_request(quick):
    import pandas as pd

    for name in ("hcf-incast-typical", "hcf-incast-nextgen", "hcf-incast-fixed"):
        d = quick[name]
        for cid in ("xpass-no-drops-within-buffer", "xpass-rounds-complete"):
            c = claim(d, cid)
            assert c["holds"] and c["dcfair"]["n"] >= 2, (name, c)
    # the same buffer overflows under FIFO + TCP at 4 servers already, so "no drops" is not void
    df = pd.read_csv(quick["hcf-incast-typical"]["_out"] / "results.csv")
    assert df[(df["qdisc"] == "droptail") & (df["servers"] == 4)]["drops"].min() > 0


def test_afd_row_is_fairer_than_fifo(quick):
    """Beyond the paper: AFD (docs/mechanisms/afd.md) on the 400 long flows."""
    c = claim(quick["hcf-throughput"], "afd-fairer")
    assert c["holds"] and c["scope"] == "beyond" and c["dcfair"]["n"] == 2, c
    t = {r["variant"]: r for r in quick["hcf-throughput"]["table"]}
    assert t["afd"]["starved_fraction"] < t["droptail"]["starved_fraction"], t


def test_expresspass_long_flow_row_keeps_the_bottleneck_busy(quick):
    d = quick["hcf-throughput"]
    c = claim(d, "xpass-utilization")
    assert c["holds"] and c["dcfair"]["n"] == 2, c
    rows = {r["variant"]: r for r in d["table"]}
    assert "xpass" in rows and rows["xpass"]["seeds"] == 2, rows
