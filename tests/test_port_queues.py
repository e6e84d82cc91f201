"""[ports."<name>"] through the `dcfair` command (the engine's own tests:
crates/sim/tests/runs/port_queues.rs)."""

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


def test_a_lossy_port_loses_its_rate_and_counts_it_as_link_loss(tmp_path):
    def run(out, *extra):
        p = dcfair("run", LONGFLOWS, "--set", "sim.duration_s=5", "--set", "measure.window_s=1", *extra,
                   "--quiet", "--out", out)
        assert p.returncode == 0, p.stderr
        return pd.read_csv(out / "ports.csv").set_index("port")

    lossy = run(tmp_path / "a", "--set", "ports.sw->r0.loss_rate=0.02")
    again = run(tmp_path / "b", "--set", "ports.sw->r0.loss_rate=0.02")
    clean = run(tmp_path / "c")
    port = lossy.loc["sw->r0"]
    rate = port["drops_link_loss"] / (port["packets_out"] + port["drops"])  # offered: sent or dropped
    assert abs(rate - 0.02) < 0.004, rate
    assert lossy["drops_link_loss"].drop("sw->r0").sum() == 0
    assert clean["drops_link_loss"].sum() == 0
    assert (tmp_path / "a" / "flows.csv").read_bytes() == (tmp_path / "b" / "flows.csv").read_bytes()
    assert (tmp_path / "a" / "flows.csv").read_bytes() != (tmp_path / "c" / "flows.csv").read_bytes()


def test_a_loss_rate_outside_0_1_is_invalid_input(tmp_path):
    p = dcfair("run", LONGFLOWS, "--set", "sim.duration_s=1", "--set", "measure.window_s=1",
               "--set", "ports.sw->r0.loss_rate=1.5", "--quiet", "--out", tmp_path / "o")
    assert_clean_error(p, 2, "ports.sw->r0.loss_rate", "probability in [0, 1)")
