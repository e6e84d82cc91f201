"""[ports."<name>"] through the `dcfair` command (the engine's own tests:
crates/sim/tests/port_queues.rs)."""

from __future__ import annotations

import pandas as pd

from conftest import LONGFLOWS, assert_clean_error, dcfair


def test_a_named_port_gets_its_own_discipline_and_buffer(tmp_path):
    p = dcfair("run", LONGFLOWS, "--set", "sim.duration_s=1", "--set", "measure.window_s=1",
               "--set", "ports.sw->r0.queue.kind=sfq", "--set", "ports.sw->r0.buffer_pkts=7",
               "--quiet", "--out", tmp_path / "o")
    assert p.returncode == 0, p.stderr
    ports = pd.read_csv(tmp_path / "o" / "ports.csv").set_index("port")
    assert ports.loc["sw->r0", "queue_kind"] == "sfq"
    assert ports.loc["sw->r0", "max_queue_pkts"] <= 7


def test_a_named_port_that_does_not_exist_is_invalid_input(tmp_path):
    p = dcfair("run", LONGFLOWS, "--set", "sim.duration_s=1", "--set", "measure.window_s=1",
               "--set", "ports.sw->r9.buffer_pkts=5", "--quiet", "--out", tmp_path / "o")
    assert_clean_error(p, 2, "ports.sw->r9", 'no port named "sw->r9"')
