"""validation/testbed/starvation.py: the per-backoff-level count behind docs/validation.md's
"What makes real TCP starve more" (the testbed runs themselves need root; see test_testbed.py)."""

from __future__ import annotations

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
