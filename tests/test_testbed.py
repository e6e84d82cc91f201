"""`dcfair testbed`: the scenario -> testbed mapping (no root needed), and real runs in network
namespaces (root, iproute2, ethtool, iperf3: skipped with the reason when any is missing).

The integration run uses the dcfair switch when its binary exists (target/release/dcfair-switch
or $DCFAIR_SWITCH), else the Linux bridge baseline.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import LONGFLOWS, REPO, TESTBED_TWO_FLOWS, assert_clean_error, dcfair
from dcfair.testbed import bed, mapping, netns, traffic
from dcfair.testbed.netns import TestbedError
from dcfair.testbed.switch import find_binary, switch_port, toml_dumps

try:
    import tomllib
except ImportError:  # pragma: no cover
    import tomli as tomllib

SMALL = TESTBED_TWO_FLOWS + """
[groups.short]
count = 1
size_bytes = 300000
start_min_s = 1.0
start_max_s = 1.0
[incast]
servers = 2
server_bytes = 20000
rounds = 5
start_s = 0.5
gap_s = 0.05
"""


def _plan(text=SMALL, overrides=()):
    return mapping.plan(text, list(overrides), origin="small.toml")


# ---------------------------------------------------------------- mapping (no root)


def test_longflows_maps_onto_the_dumbbell():
    p = mapping.plan(LONGFLOWS.read_text(), [], origin=str(LONGFLOWS))
    names = [h.name for h in p.hosts]
    assert names[:2] == ["s0", "s1"] and names[400:] == ["r0", "udp"] and len(names) == 402
    r0 = p.hosts[400]
    assert (r0.cc, r0.rto_min_ms, r0.quickack, r0.initcwnd) == ("reno", 200.0, True, 2)
    assert r0.sysctls["net.ipv4.tcp_sack"] == "0" and r0.sysctls["net.ipv4.tcp_timestamps"] == "0"
    measured = [port for port in p.ports if port.measured]
    assert [m.host for m in measured] == ["r0"]
    assert measured[0].rate_bps == 100e6 and measured[0].queue["limit_pkts"] == 20
    assert all(port.delay_us == 50.0 for port in p.ports)  # access + bottleneck: RTT 2 x 50 us over two ports
    assert p.ports[0].queue == {"kind": "droptail", "limit_pkts": 1000}
    assert [f.kind for f in p.flows].count("tcp") == 400
    udp = p.flows[-1]
    assert (udp.src, udp.dst, udp.rate_bps) == ("udp", "r0", pytest.approx(5e6))
    assert p.rcv_buf_bytes == 64240 and p.window_s == 10.0
    assert p.preconnect  # tcp.handshake = false: the flows connect before the run
    assert not _plan().preconnect
    # ns-2 details of the simulated TCP are listed, not silently dropped
    assert any(n.startswith("tcp.recovery_cwnd") for n in p.notes)
    assert any(n.startswith("udp.pattern") for n in p.notes)
    starts = [f.start_s for f in p.flows if f.kind == "tcp"]
    assert all(0.0 <= s <= 1.0 for s in starts)
    assert starts == [f.start_s for f in mapping.plan(LONGFLOWS.read_text(), [], origin="x").flows if f.kind == "tcp"]


def test_overrides_and_groups():
    p = _plan(overrides=[("queue.kind", "droptail"), ("flows.count", "3"), ("tcp.min_rto_ms", "1.5")])
    assert p.queue_kind == "droptail" and p.hosts[0].rto_min_ms == 1.5
    tcp = [f for f in p.flows if f.kind == "tcp"]
    assert [(f.src, f.group, f.size_bytes) for f in tcp] == [
        ("s0", "flows", None), ("s1", "flows", None), ("s0", "flows", None), ("s1", "short", 300000)]
    assert p.incast.servers == [("s0", "r0"), ("s1", "r0")] and p.incast.server_bytes == 20000


def test_switch_config_is_the_switch_contract():
    p = _plan(overrides=[("fairq.target_fraction", "0.3"), ("fairq.wscale", "off")])
    cfg = tomllib.loads(toml_dumps(p.switch_config()))
    assert cfg["seed"] == 7 and cfg["fairq"] == {"target_fraction": 0.3, "wscale": "off"}
    ports = cfg["port"]
    assert [x["iface"] for x in ports] == ["p0", "p1", "p2"]
    assert ports[2] == {"iface": "p2", "prefixes": ["10.77.0.3/32"], "rate_bps": 100e6, "delay_us": 50.0,
                        "queue": {"kind": "hcf", "limit_pkts": 40}}
    assert ports[0]["queue"] == {"kind": "droptail", "limit_pkts": 1000} and ports[0]["rate_bps"] == 1e9


@pytest.mark.parametrize("override, key", [
    (("topology.kind", "fat_tree"), "topology.kind"),
    (("measure.sample_interval_s", "0.1"), "measure.sample_interval_s"),
    (("poisson.load", "0.5"), "poisson"),
    (("ports.x.buffer_pkts", "5"), "ports"),
    (("incast.epochs", "2"), "incast.epochs"),
    (("tcp.cc", "pfabric"), "tcp.cc"),
    (("tcp.mss_bytes", "1000"), "tcp.mss_bytes"),
    (("groups.short.tcp.min_rto_ms", "9.0"), "groups.short.tcp.min_rto_ms"),
    (("groups.short.transport", "xpass"), "groups.short.transport"),
    (("groups.short.via", "sw"), "groups.short.via"),
    (("fairq.switches", '["x"]'), "fairq.switches"),
    (("fairq.target_fraction", "0.3"), "fairq.wscale"),  # reserved_bits: Linux does not tag
    (("flows.src", "r0"), "flows.dst"),
    (("topology.senders", "5000"), "topology.senders"),
])
def test_what_cannot_map_is_invalid_input_naming_the_key(override, key):
    with pytest.raises(mapping.InvalidInput) as e:
        _plan(overrides=[override])
    assert e.value.key == key, e.value


def test_cli_run_rejects_an_unmappable_key_with_exit_2(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(SMALL)
    out = tmp_path / "out"
    p = dcfair("testbed", "run", f, "--set", "measure.sample_interval_s=0.5", "--out", out, "--prefix", "dctx-")
    assert_clean_error(p, 2, "measure.sample_interval_s")
    assert not out.exists()


def test_extra_sysctls_reach_every_host_and_the_notes():
    extra = mapping.extra_sysctls(["net.ipv4.tcp_frto=0", "net.core.somaxconn=512"])
    p = mapping.with_sysctls(_plan(), extra)
    assert all(h.sysctls["net.ipv4.tcp_frto"] == "0" and h.sysctls["net.core.somaxconn"] == "512" for h in p.hosts)
    assert all(h.sysctls["net.ipv4.tcp_sack"] == "0" for h in p.hosts)  # the scenario's own stay
    assert any("net.ipv4.tcp_frto=0" in n for n in p.notes)


@pytest.mark.parametrize("bad", ["net.ipv4.tcp_frto", "kernel.panic=1", "net.ipv4.tcp_frto=", "net.ipv4.x=1 2",
                                 "net.ipv4.a;rm=1", "net.ipv4.tcp_frto=0;reboot", "net.ipv4.tcp_frto=$(x)"])
def test_a_malformed_sysctl_is_invalid_input_naming_the_option(bad):
    with pytest.raises(mapping.InvalidInput) as e:
        mapping.extra_sysctls([bad])
    assert e.value.key == "--sysctl", e.value


def test_cli_run_rejects_a_malformed_sysctl_with_exit_2(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(SMALL)
    out = tmp_path / "out"
    p = dcfair("testbed", "run", f, "--sysctl", "kernel.panic=1", "--out", out, "--prefix", "dctx-")
    assert_clean_error(p, 2, "--sysctl", "kernel.panic=1")
    assert not out.exists()


def test_cli_engine_checks_come_first(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(SMALL)
    p = dcfair("testbed", "run", f, "--set", "queue.limit_pkts=-3")
    assert_clean_error(p, 2, "queue.limit_pkts")


def test_cli_run_rejects_a_group_congestion_control_the_kernel_lacks(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(SMALL)
    lacking = "dctcp" if "dctcp" not in netns.available_cc() else None
    if lacking is None:
        pytest.skip("this kernel offers every congestion control the mapping knows")
    p = dcfair("testbed", "run", f, "--set", f"groups.short.tcp.cc={lacking}", "--prefix", "dctx-")
    assert_clean_error(p, 2, "groups.short.tcp.cc", lacking)


def test_cli_up_rejects_a_congestion_control_the_kernel_lacks():
    p = dcfair("testbed", "up", "--hosts", "2", "--cc", "no-such-cc", "--prefix", "dctx-")
    assert_clean_error(p, 2, "--cc", "no-such-cc")


def test_flow_row_counts_the_window_from_receiver_intervals():
    f = mapping.Flow(0, "s0", "r0", "tcp", "flows", 0.5)
    ivs = [{"streams": [{"start": i * 0.1, "end": (i + 1) * 0.1, "bytes": b}]} for i, b in
           enumerate([2920] * 10 + [0] * 12 + [1460] * 3)]
    data = {"end": {"sum_sent": {"bytes": 50000, "retransmits": 4}},
            "server_output_json": {"intervals": ivs, "end": {"sum_received": {"bytes": 33580}}}}
    # flow starts at 0.5: data in [0.5, 1.5), silent [1.5, 2.7), data [2.7, 3.0); window [2.0, 3.0]
    row = traffic.flow_row(f, data, 0.5, (2.0, 3.0), 3.0, 1460)
    assert row["bytes_in_window"] == 3 * 1460 and row["pkts_in_window"] == 3
    assert row["max_gap_s"] == pytest.approx(1.2)
    assert (row["bytes_sent"], row["bytes_delivered"], row["retransmits"]) == (50000, 33580, 4)
    assert row["error"] is None
    starved = traffic.flow_row(f, data, 0.5, (1.6, 2.6), 3.0, 1460)
    assert starved["pkts_in_window"] == 0
    assert traffic.flow_row(f, None, None, (2.0, 3.0), 3.0, 1460)["error"] == "no output from iperf3"


# stats.json of a real dcfair-switch run, as written: SMALL up to [groups.short] (two long flows,
# HCF on the bottleneck port p2) by `dcfair testbed run small.toml --set sim.duration_s=3.0
# --set measure.window_s=1.0` (switch 0.1.0). The reader takes the switch's exact keys.
REAL_STATS = REPO / "tests" / "data" / "switch-stats-hcf.json"


def check_switch_identities(stats):
    """docs/testbed.md's per-port identities of dcfair-switch's stats.json; returns the ports."""
    for p in stats["ports"]:
        q = p["queue"]
        assert q["received_pkts"] == (p["tx_frames"] + p["tx_errors"] + q["drops_pkts"] + q["queued_pkts"]
                                      + q["in_delay_line"]), p["iface"]
        assert p["rx_frames"] == (p["forwarded"] + p["flooded"] + p["malformed_total"] + p["no_route"]
                                  + p["hairpin"]), p["iface"]
        assert q["drops_pkts"] == sum(q["drops"].values()), p["iface"]
        assert q["dequeued_pkts"] <= q["enqueued_pkts"] <= q["received_pkts"], p["iface"]
    # every frame forwarded or flooded from one port is offered to another port's queue
    offered = sum(p["forwarded"] for p in stats["ports"]) + sum(
        p["flooded"] * (len(stats["ports"]) - 1) for p in stats["ports"])
    assert offered == sum(p["queue"]["received_pkts"] for p in stats["ports"])
    return stats["ports"]


def test_switch_port_reads_a_real_stats_json():
    stats = json.loads(REAL_STATS.read_text())
    assert stats["switch"] == "dcfair-switch"
    ports = check_switch_identities(stats)
    bottleneck = max(ports, key=lambda p: p["tx_bytes"])
    q = switch_port(stats, bottleneck["iface"])
    raw = bottleneck["queue"]
    assert q["kind"] == "hcf" and q["dequeued_pkts"] > 1000 and q["fairq"] is None
    assert (q["drops_pkts"], q["marks"], q["max_len_pkts"], q["mean_len_bytes"]) == (
        raw["drops_pkts"], raw["marks"], raw["max_len_pkts"], raw["mean_len_bytes"])
    assert q["tx_frames"] == bottleneck["tx_frames"] and "window_samples" not in q
    # the time series over a window: means of the samples inside it
    t = bottleneck["series"]["t_s"]
    lo, hi = t[len(t) // 4], t[len(t) // 2]
    w = switch_port(stats, bottleneck["iface"], (lo, hi))
    inside = [v for tt, v in zip(t, bottleneck["series"]["queue_pkts"]) if lo <= tt <= hi]
    assert w["window_samples"] == len(inside) > 10
    assert w["window_queue_mean_pkts"] == pytest.approx(sum(inside) / len(inside))
    assert switch_port(stats, bottleneck["iface"], (-2.0, -1.0))["window_queue_mean_pkts"] is None


@pytest.mark.parametrize("edit, needle", [
    (lambda s: s.update(switch="fake"), "'fake'"),
    (lambda s: s["ports"][0]["queue"].pop("drops_pkts"), "drops_pkts"),
    (lambda s: s["ports"][0].pop("fairq"), "fairq"),
])
def test_switch_port_names_what_is_missing(edit, needle):
    stats = json.loads(REAL_STATS.read_text())
    edit(stats)
    with pytest.raises(TestbedError, match=needle):
        switch_port(stats, stats["ports"][0]["iface"])
    with pytest.raises(TestbedError, match="no port"):
        switch_port(json.loads(REAL_STATS.read_text()), "nosuch")


# ---------------------------------------------------------------- real runs (root)

WHY = netns.why_not_available()
needs_root = pytest.mark.skipif(WHY is not None, reason=f"testbed unavailable: {WHY}")
PREFIX = f"dct{os.getpid() % 10000}-"


@pytest.fixture
def prefix():
    yield PREFIX
    bed.down(PREFIX)


@needs_root
@pytest.mark.parametrize("handshake", ["true", "false"])  # iperf3, or pre-connected streams
def test_run_moves_real_tcp_and_tears_down(tmp_path, prefix, handshake):
    f = tmp_path / "s.toml"
    f.write_text(SMALL)
    switch = "dcfair" if find_binary() else "bridge"
    out = tmp_path / "out"
    t0 = time.monotonic()
    p = dcfair("testbed", "run", f, "--switch", switch, "--out", out, "--prefix", prefix,
               "--set", f"tcp.handshake={handshake}", timeout=120)
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert time.monotonic() - t0 < 30
    assert bed.ours(prefix) == [], "namespaces left behind"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["source"] == "testbed" and summary["testbed"]["switch"] == switch
    m = summary["metrics"]
    rows = list(csv.DictReader(open(out / "flows.csv")))
    assert [r["group"] for r in rows] == ["flows", "flows", "short"]
    assert (out / "raw" / "streams-r0.json").exists() == (handshake == "false")
    for r in rows:
        assert r["error"] == "" and int(r["bytes_delivered"]) > 0, r
    long = rows[:2]
    assert all(int(r["pkts_in_window"]) > 0 for r in long)
    assert rows[2]["fct_s"] != "" and int(rows[2]["bytes_delivered"]) == 300000
    # the bottleneck was busy: 100 Mbit/s through the switch's port towards r0
    assert 0.5 < m["utilization"] < 1.05, m
    assert m["flows"] == 3 and m["flows_completed"] == 1
    assert m["rounds_completed"] == 5 and m["answers_completed"] == 10 and m["block_goodput_bps"] > 0
    ports = list(csv.DictReader(open(out / "ports.csv")))
    assert [r["port"] for r in ports] == ["sw->r0"]
    # bytes through the port >= what the flows delivered in the window
    assert int(ports[0]["bytes_out"]) > sum(int(r["bytes_in_window"]) for r in long)
    if switch == "dcfair":
        # through the real switch: its identities, and the data went through HCF at the bottleneck
        stats = json.loads((out / "switch-stats.json").read_text())
        check_switch_identities(stats)
        sq = summary["testbed"]["switch_ports"]["sw->r0"]
        assert sq["kind"] == "hcf" and summary["queue_kind"] == "hcf"
        assert sq["dequeued_bytes"] >= 300000 + sum(int(r["bytes_in_window"]) for r in long)
        assert sq["max_len_pkts"] > 0 and sq["window_samples"] > 50
        assert int(ports[0]["drops"]) == sq["drops_pkts"]


@needs_root
def test_the_switch_contract_through_a_stand_in(tmp_path, prefix):
    """The dcfair path (switch.toml, `ready`, SIGTERM, stats.json) with tests/data/fake_switch.py,
    a bridge that keeps dcfair-switch's command-line contract."""
    f = tmp_path / "s.toml"
    f.write_text(TESTBED_TWO_FLOWS)  # two long flows
    out = tmp_path / "out"
    fake = REPO / "tests" / "data" / "fake_switch.py"
    p = dcfair("testbed", "run", f, "--switch", "dcfair", "--out", out, "--prefix", prefix,
               "--set", "sim.duration_s=2.0", "--set", "measure.window_s=1.0", timeout=60,
               env={"DCFAIR_SWITCH": str(fake)})
    assert p.returncode == 0, (p.stdout, p.stderr)
    cfg = tomllib.loads((out / "raw" / "switch.toml").read_text())
    assert cfg["port"][2]["queue"]["kind"] == "hcf"
    assert json.loads((out / "switch-stats.json").read_text())["seed"] == 7
    summary = json.loads((out / "summary.json").read_text())
    assert summary["queue_kind"] == "hcf" and summary["metrics"]["utilization"] > 0.3
    assert bed.ours(prefix) == []


@needs_root
def test_down_cleans_up_after_a_crash(prefix):
    tb = bed.uniform(3, prefix)
    bed.up(tb)
    # a crash: a process left inside a host, the state file gone, nobody called down
    sleeper = subprocess.Popen(["ip", "netns", "exec", f"{prefix}h1", "sleep", "60"])
    bed.state_path(prefix).unlink()
    assert len(bed.ours(prefix)) == 4
    p = dcfair("testbed", "up", "--hosts", "2", "--prefix", prefix)
    assert_clean_error(p, 1, "exists", "testbed down")
    p = dcfair("testbed", "down", "--prefix", prefix)
    assert p.returncode == 0, p.stderr
    assert "removed 4 namespaces" in p.stdout
    assert bed.ours(prefix) == []
    assert sleeper.wait(5) != 0  # ended by down


def _pids_in(names):
    pids = set()
    for n in names:
        out = subprocess.run(["ip", "netns", "pids", n], capture_output=True, text=True).stdout
        pids |= {int(p) for p in out.split()}
    return pids


@needs_root
def test_a_killed_run_leaves_no_switch_or_traffic_running(tmp_path, prefix):
    """kill -9 of `dcfair testbed run`: its switch and iperf3 processes die with it (issue: no
    orphans), so only the namespaces remain for `testbed down`."""
    f = tmp_path / "s.toml"
    f.write_text(TESTBED_TWO_FLOWS)
    run = subprocess.Popen([sys.executable, "-m", "dcfair", "testbed", "run", str(f), "--out", str(tmp_path / "out"),
                            "--prefix", prefix, "--set", "sim.duration_s=20", "--quiet"],
                           cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(_pids_in(bed.ours(prefix))) < 3:
        time.sleep(0.2)  # the switch and both flows' ends are up
    helpers = _pids_in(bed.ours(prefix))
    assert len(helpers) >= 3, "the run never started its helpers"
    run.kill()
    run.wait(5)
    time.sleep(1.0)
    assert not _pids_in(bed.ours(prefix)), "helpers outlived the run"
