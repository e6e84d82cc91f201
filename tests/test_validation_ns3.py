"""The ns-3 validation's own logic, without ns-3: the scenario -> ns-3 option mapping refuses what
it cannot mirror, the metrics are computed as documented, and the comparison's agreement rule.
(Running ns-3 itself is `make validate-ns3`.)"""

from __future__ import annotations

import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "validation" / "ns3"))
import cases as C  # noqa: E402
import compare  # noqa: E402
import metrics as M  # noqa: E402
import tomlmap  # noqa: E402


# ----- scenario -> ns-3 options ------------------------------------------------------------------

def _args(case: str, *sets: str) -> dict[str, str]:
    c = C.BY_NAME[case]
    flat = tomlmap.load(str(REPO / c.scenario), [*c.overrides, *sets])
    return dict(a[2:].split("=", 1) for a in tomlmap.ns3_args(flat))


@pytest.mark.parametrize("case", [c.name for c in C.CASES])
def test_every_case_maps_to_ns3(case):
    a = _args(case)
    assert a["hystart"] == "0" and a["recovery"] == "classic" and a["timestamps"] == "0"
    assert a["delAckCount"] == "1" and a["minRtoMs"] == "200.0" and a["initCwnd"] == "10"


def test_mapping_follows_the_scenario():
    a = _args("cubic1")
    assert (a["cc"], a["sack"], a["cubicBeta"], a["cubicC"], a["bufferPkts"]) == ("cubic", "1", "0.7", "0.4", "20")
    p = _args("pacing8_linux")
    assert (p["pacing"], p["pacingSsRatio"], p["pacingCaRatio"]) == ("1", "200", "120")
    assert _args("newreno8", "seed=4")["run"] == "4"
    assert _args("newreno8")["sack"] == "0" and _args("newreno8")["pacing"] == "0"


@pytest.mark.parametrize("override, needle", [
    ("tcp.header_bytes=40", "tcp.header_bytes"),
    ("queue.kind=red", "queue.kind"),
    ("tcp.timestamps=false", "tcp.timestamps"),
    ("tcp.recovery_max_burst=2", "tcp.recovery_max_burst"),
    ("sim.tie_break=float_clock", "sim.tie_break"),
    ("tcp.max_rto_s=10.0", "tcp.max_rto_s"),
    ("tcp.pacing_ca_ratio=1.234", "tcp.pacing_ca_ratio"),
    ("flows.size_bytes=1000", "flows.size_bytes"),
])
def test_mapping_refuses_what_ns3_cannot_mirror(override, needle):
    with pytest.raises(tomlmap.MappingError, match=needle.replace(".", r"\.")):
        _args("newreno8", override)


def test_reno_friendly_cubic_is_refused():
    with pytest.raises(tomlmap.MappingError, match="Reno-friendly"):
        _args("cubic8", "tcp.cubic_reno_friendly=true")


def test_bare_word_overrides_are_strings():
    assert tomlmap.parse_value("cubic") == "cubic"
    assert tomlmap.parse_value("0.5") == 0.5 and tomlmap.parse_value("true") is True


# ----- metrics -------------------------------------------------------------------------------------

def _series(tmp_path, rows):
    p = tmp_path / "timeseries.csv"
    p.write_text("time_s,metric,port,flow_id,value\n"
                 + "".join(f"{t},{m},{port},{fid},{v}\n" for t, m, port, fid, v in rows))
    return str(p)


def test_metrics_on_a_small_run(tmp_path):
    rows = []
    for k in range(11):  # samples every 0.1 s over 1 s; window [0.5, 1.0]
        t = round(k * 0.1, 1)
        rows.append((t, "queue_pkts", "sw->r0", "", [0, 1, 2, 3, 4, 0, 2, 4, 6, 8, 10][k]))
        rows.append((t, "delivered_bytes", "", 0, 1000 * k))
        rows.append((t, "delivered_bytes", "", 1, 3000 * k))
    f0 = M.Flow0(departures=[0.6, 0.6, 0.7, 0.9], arrivals=[(0.1, 1), (0.6, 1), (0.7, 2)],
                 acks=[0.45, 0.55, 0.58, 0.59, 0.77],
                 losses=[M.Loss(0.55, "recovery", 20000, 10000, 10000),
                         M.Loss(0.75, "recovery", 16000, 8000, 8000),
                         M.Loss(0.95, "timeout", 12000, 6000, 1000)],
                 recovery=[(0.4, 0.6), (0.75, 0.8)],
                 outstanding=[(0.3, 100.0), (0.6, 4.0), (0.8, 6.0)],
                 in_network=[(0.45, 50), (0.55, 3), (0.59, 5), (0.7, 9), (0.77, 7)])
    m = M.compute(M.Run(series_csv=_series(tmp_path, rows), flow0=f0, utilization=0.9,
                        drops=7, retransmits=9, timeouts=1),
                  duration=1.0, window=0.5, interval=0.1, mss=1000)
    assert m["goodput_mbps"] == pytest.approx((5000 + 15000) / 2 * 8 / 0.5 / 1e6)
    assert m["jain"] == pytest.approx(20000 ** 2 / (2 * (5000 ** 2 + 15000 ** 2)))
    assert m["queue_mean"] == pytest.approx(30 / 6) and m["queue_p99"] == 10
    assert m["queue_empty"] == pytest.approx(1 / 6)
    assert m["loss_events"] == 3 and m["period_s"] == pytest.approx(0.2)
    assert m["wmax_pkts"] == pytest.approx(16) and m["reduction"] == pytest.approx(0.5)
    assert m["_epochs"]["period_s"] == pytest.approx([0.2, 0.2])
    assert m["gap_median_us"] == pytest.approx(1e5) and m["burst_frac"] == pytest.approx(1 / 3)
    assert m["spurious"] == 2 and m["dup_arrivals"] == 1
    assert m["in_recovery"] == pytest.approx((0.1 + 0.05) / 0.5)
    assert m["outstanding"] == pytest.approx(5.0)
    # in recovery within the window: (0.5, 0.6] and (0.75, 0.8]: sends 0.6, 0.6; ACKs 0.55, 0.58, 0.59, 0.77
    assert m["recovery_send_ratio"] == pytest.approx(2 / 4)
    assert m["in_network_recovery"] == pytest.approx((3 + 5 + 7) / 3)


def test_dcfair_trace_reader(tmp_path):
    # s t fid why cwnd ssthresh una nxt max dupacks recovery rto backoff timeouts
    trace = tmp_path / "trace.txt"
    trace.write_text("\n".join([
        "s 0.1 0 ack 10000 99 0 10000 10000 0 0 0.2 1 0",
        "x 0.1 0 10000 1000",
        "r 0.2 0 0 1042 16 0",
        "r 0.2 0 0 42 16 1000",          # an ACK: not data
        "s 0.3 0 ack 5000 5000 1000 11000 11000 3 1 0.2 1 0",
        "d 0.3 3 1 5000 1042",
        "s 0.4 0 ack 5000 5000 11000 11000 11000 0 0 0.2 1 0",
        "s 0.9 0 timer 1000 2500 11000 12000 15000 0 0 0.4 2 1",
        "s 1.3 0 timer 1000 2000 11000 12000 15000 0 0 0.8 4 2",   # same episode
        "s 1.4 1 ack 1000 2000 0 0 0 0 1 0.2 1 0",                  # another flow
    ]) + "\n")
    f0 = M.dcfair_trace(str(trace), 0.25, 42, 1000)
    assert [(e.t, e.kind, e.before, e.ssthresh) for e in f0.losses] == [
        (0.3, "recovery", 10000, 5000), (0.9, "timeout", 5000, 2500)]
    assert f0.departures == [0.1] and f0.arrivals == [(0.2, 0)] and f0.drops_in_window == 1
    assert f0.acks == [0.2] and f0.in_network == [(0.2, 0)]
    assert f0.recovery == [(0.3, 0.4)]
    assert f0.outstanding == [(0.1, 10.0), (0.3, 10.0), (0.4, 0.0)]


def test_agreement_rule():
    s = lambda mean, std, lo, hi, n: {"mean": mean, "std": std, "min": lo, "max": hi, "n": n}  # noqa: E731
    assert compare.agree("drops", s(100, 10, 90, 110, 5), s(115, 5, 111, 120, 5)) == "yes"
    assert compare.agree("drops", s(100, 1, 99, 101, 5), s(120, 1, 119, 121, 5)) == "**no**"
    assert compare.agree("drops", s(100, 0, 100, 100, 1), s(104, 0, 104, 104, 1)) == "yes"
    assert compare.agree("drops", s(100, 0, 100, 100, 1), s(106, 0, 106, 106, 1)) == "**no**"
    assert compare.agree("timeouts", s(0, 0, 0, 0, 1), s(1, 0, 1, 1, 1)) == "yes"
    # epochs that all repeat one value have no spread: the relative rule applies
    assert compare.agree("period_s", s(1.0, 0, 1.0, 1.0, 9), s(1.03, 0, 1.03, 1.03, 9)) == "yes"
