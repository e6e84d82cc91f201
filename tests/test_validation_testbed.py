"""validation/testbed/: starvation.py's measures behind docs/validation.md's "What makes real TCP
starve more", and compare.py's table (the testbed runs themselves need root; see test_testbed.py)."""

from __future__ import annotations

import importlib.util
import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "validation" / "testbed"))
import starvation  # noqa: E402

C = {"t": 0, "backoff": 1, "bytes_sent": 2}
MSS = 1460


def samples(*rows):
    return [[i / 10, b, n * MSS] for i, (b, n) in enumerate(rows)]


def test_a_stay_counts_from_the_sample_before_it_to_its_last_sample():
    # backoff 3 entered with the RTO's retransmission (segment 11), nothing more; then backoff 4
    # with one retransmission and two more segments; then an RTT sample ends it.
    s = samples((2, 10), (3, 11), (3, 11), (4, 12), (4, 14), (0, 20))
    assert starvation.sent_per_backoff_level(s, C) == [1, 3]


def test_levels_below_the_threshold_are_not_counted_and_an_open_stay_is():
    s = samples((1, 0), (2, 5), (2, 9), (3, 10), (3, 10))
    assert starvation.sent_per_backoff_level(s, C) == [1]
    assert starvation.sent_per_backoff_level(s, C, low=2) == [9, 1]
    assert starvation.sent_per_backoff_level(samples((0, 0), (0, 5)), C) == []


def test_events_on_a_lattice_are_found_with_their_phase_and_scattered_ones_are_not():
    # 40 events at 0.03 + k * 0.256 s, each seen only within a 100 ms sampling interval.
    on = [(0.03 + k * 0.256 - 0.01 * (k % 7), 0.03 + k * 0.256 - 0.01 * (k % 7) + 0.1) for k in range(40)]
    phase, share = starvation.on_lattice(on, 0.256)
    assert share == 1.0 and abs(phase - 0.03) < 0.06
    # the same intervals shifted by an irregular amount each: far fewer fit one lattice
    off = [(a + 0.037 * (k * k % 11), b + 0.037 * (k * k % 11)) for k, (a, b) in enumerate(on)]
    assert starvation.on_lattice(off, 0.256)[1] < 0.8


def test_stays_in_a_trace_count_offered_segments_and_a_dropped_retransmission(tmp_path):
    # flow 4 starved: multiplier 8 after a timeout (its retransmission dropped, nothing more),
    # then 16 (retransmission stored, one more segment), then an RTT sample ends the backoff;
    # flow 5 is not starved and is ignored.
    log = tmp_path / "trace"
    s = lambda t, f, b: f"s {t} {f} timer 1460 2920 0 0 0 0 0 1.0 {b} 1\n"  # noqa: E731
    log.write_text(
        s(1.0, 4, 4) + "+ 1.0 9 4 0 1500\n" + s(2.0, 4, 8) + "d 2.0 9 4 0 1500\n" + "+ 2.0 9 5 0 1500\n"
        + s(4.0, 4, 16) + "+ 4.0 9 4 0 1500\n" + "+ 4.1 9 4 1460 1500\n" + s(5.0, 4, 1) + "+ 5.0 9 4 2920 1500\n"
        + s(6.0, 5, 8) + "d 6.0 9 5 0 1500\n")
    assert starvation.stays_in_trace(log, {4}) == [(1, True), (2, False)]


def load_testbed_compare():
    # validation/ns3 has a compare.py too: load this one under its own name
    spec = importlib.util.spec_from_file_location("testbed_compare", REPO / "validation" / "testbed" / "compare.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_linux_timers_column_sets_the_wheel_the_random_order_and_the_l3_keys():
    cmp = load_testbed_compare()
    keys = dict(cmp.LINUX_TIMERS)
    assert keys["tcp.timer_wheel_hz"] == "250" and keys["sim.tie_break"] == "random_timers"
    assert {k for k, _ in (kv.split("=", 1) for kv in starvation.LINUXISH)} <= set(keys)
    run = lambda v: {k: v for k in cmp.METRICS}  # noqa: E731
    res = {"sim": {"droptail": [run(0.0), run(1.0)]}, "sim_linux": {"droptail": [run(0.5)]},
           "testbed": {"droptail": [run(0.25)]}}
    rows = [r for r in cmp.table(res).splitlines() if r.startswith("| droptail | starved_fraction")]
    assert rows == ["| droptail | starved_fraction | 0.5 ± 0.707 (2) | 0.5 | 0.25 |"]
    del res["sim_linux"]
    assert "| not run |" in cmp.table(res)
