"""The ExpressPass paper's credit reproductions (figures 6(a), 8, 9) in their quick form: each
runs and writes its files, the behaviours dcfair reproduces are asserted (fixed seeds, stated
tolerances), and every claim is reported with its criterion (docs/mechanisms/expresspass.md
explains the ones that do not hold). Also the measurement helpers on hand-made series.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from conftest import assert_listed, run_quick_reproductions, table
from dcfair.reproduce import xpass_credit as xc

ALL = ["xpass-fig6a", "xpass-fig8", "xpass-fig9"]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    return run_quick_reproductions(tmp_path_factory.mktemp("xpass_credit"), ALL)


def test_every_reproduction_is_listed():
    assert_listed(ALL)


def test_claims_are_reported_with_criteria(quick):
    for name, doc in quick.items():
        assert doc["quick"] and doc["claims"], name
        for c in doc["claims"]:
            assert isinstance(c["holds"], bool) and c["criterion"], (name, c["id"])
            # a claim without any value (e.g. no seed converged) cannot hold
            assert c["dcfair"]["n"] >= 1 or not c["holds"], (name, c["id"])


def test_fig6a_fairness_against_flows_and_jitter(quick):
    t = table(quick["xpass-fig6a"]).set_index(["flows", "jitter"])
    # few flows (several credits per flow per RTT): fair over 1 ms at every jitter
    for j in (0.0, 0.01, 0.08):
        assert t.loc[(8, j), "jain_1ms"] > 0.8, j
    # below one credit per flow per RTT fairness falls (full form: 0.96 at 8 flows, 0.49 at 512,
    # perfect pacing) ...
    assert t.loc[(512, 0.0), "jain_1ms"] < t.loc[(8, 0.0), "jain_1ms"] - 0.2
    # ... and a large jitter restores some of it (full form, 128 flows: 0.57 at j = 0, 0.80 at
    # j = 0.08); docs/claims.md traces why small jitters do not
    assert t.loc[(128, 0.08), "jain_1ms"] > t.loc[(128, 0.0), "jain_1ms"] + 0.1
    # the index never exceeds the granularity ceiling (the most even split of the packets)
    assert (t["jain_1ms"] <= t["ceiling"] + 1e-9).all()
    assert t.loc[(512, 0.0), "ceiling"] < 0.95  # < 2 packets per flow per ms: the ceiling bites


def test_fig8_waste_follows_the_initial_rate(quick):
    t = table(quick["xpass-fig8"]).set_index("initial_rate")
    # a one-packet flow wastes about one RTT of credits at its initial rate (79 at 10 Gbit/s, 100 us)
    for r in ("1", "1/8", "1/32"):
        ref = t.loc[r, "rate_x_rtt_credits"]
        assert 0.7 * ref - 1 <= t.loc[r, "wasted_credits"] <= 1.3 * ref + 1, (r, t.loc[r])


def test_fig8_convergence_both_laws_share(quick):
    doc = quick["xpass-fig8"]
    t = table(doc).set_index("initial_rate")
    # from 1/8 both laws converge in every seed, Algorithm 1 within 40 RTTs and the ns-2 code's
    # law within 30 (full form: 23.4 and 23.8); from the full rate a seed may not converge in
    # the run (docs/claims.md, fig8a-fast-start)
    assert t.loc["1/8", "not_converged"] == 0 and t.loc["1/8", "convergence_rtts"] <= 40
    assert t.loc["1/8", "code_law_not_converged"] == 0
    assert t.loc["1/8", "code_law_convergence_rtts"] <= 30


def test_fig9_credits_bound_the_data_queue_and_one_credit_is_too_few(quick):
    t = table(quick["xpass-fig9"]).set_index(["flows", "credit_queue"])
    # 32 flows: a one-credit queue loses utilization that 8 credits keep (full form: 4.6 % and
    # 0.26 %). Whether 8 suffice at every flow count is a claim the full form does not support
    # under Algorithm 1 (docs/claims.md, fig9-eight-suffices), so it is not asserted here.
    assert t.loc[(32, 1), "under_utilization_pct"] > t.loc[(32, 8), "under_utilization_pct"] + 2
    for n in (4, 32):
        # credits bound the data queue: no data packet is dropped at the bottleneck
        assert (t.loc[n, "data_drops"] == 0).all(), n


# --- the measurement helpers ----------------------------------------------------------------------

def _series(rows):
    """A delivered-bytes pivot from {time: [bytes of flow 0, flow 1, ...]} (cumulative)."""
    return pd.DataFrame.from_dict(rows, orient="index").sort_index()


def test_window_jain_per_interval():
    # 2 flows; interval 1: equal (J = 1); interval 2: one flow only (J = 0.5)
    piv = _series({0.0: [0, 0], 0.001: [1460 * 4, 1460 * 4], 0.002: [1460 * 12, 1460 * 4]})
    j, ceiling = xc.window_jain(piv, 0.0, 0.002)
    assert j == pytest.approx(0.75)
    assert ceiling == pytest.approx(1.0)
    # the measurement window selects the intervals
    j2, _ = xc.window_jain(piv, 0.001, 0.002)
    assert j2 == pytest.approx(0.5)


def test_even_split_ceiling():
    assert xc.even_split_jain(8, 8) == pytest.approx(1.0)
    # 3 packets among 4 flows: at best (1, 1, 1, 0) -> 9 / (4 * 3)
    assert xc.even_split_jain(3, 4) == pytest.approx(0.75)
    assert math.isnan(xc.even_split_jain(0, 4))


def test_convergence_rtts_definition():
    rtt = 1e-4
    # the new flow (1) gets 10 %, 30 %, then 50 % of each RTT: converged from window 2
    inc = [(90, 10), (70, 30)] + [(50, 50)] * 6
    rows, a, b = {0.0: [0, 0]}, 0, 0
    for k, (x, y) in enumerate(inc):
        a, b = a + x, b + y
        rows[(k + 1) * rtt] = [a, b]
    assert xc.convergence_rtts(_series(rows), 0.0, rtt) == 2.0
    # a run too short to hold the band for five windows never converges
    short = {t: v for t, v in rows.items() if t <= 5 * rtt + 1e-12}
    assert math.isnan(xc.convergence_rtts(_series(short), 0.0, rtt))
