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
    # every frame forwarded or flooded from one port is offered to another port's queue, or
    # still waits in its input line (a port without one, or a stats file from before input
    # lines existed, has none)
    offered = sum(p["forwarded"] for p in stats["ports"]) + sum(
        p["flooded"] * (len(stats["ports"]) - 1) for p in stats["ports"])
    assert offered == sum(p["queue"]["received_pkts"] + p.get("in_input_line", 0) for p in stats["ports"])
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
needs_switch = pytest.mark.skipif(find_binary() is None or "python" in find_binary()[0],
                                  reason="dcfair-switch is not built (cargo build --release -p dcfair-switch)")
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


def _cmdline(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ").strip()
    except OSError:
        return ""


def _helpers(prefix):
    """The run's long-lived processes in its namespaces (switch, iperf3), not its setup commands."""
    return {p for p in _pids_in(bed.ours(prefix))
            if any(name in _cmdline(p) for name in ("iperf3", "dcfair-switch", "dcfair.switch"))}


def _gone_within(prefix, seconds):
    """Waits until no process is left in the prefix's namespaces; what is left after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        left = _pids_in(bed.ours(prefix))
        if not left or time.monotonic() > deadline:
            return {p: _cmdline(p) for p in left}
        time.sleep(0.05)


@needs_root
def test_a_killed_run_leaves_no_switch_or_traffic_running(tmp_path, prefix):
    """kill -9 of `dcfair testbed run`: its switch and iperf3 processes die with it (issue: no
    orphans), so only the namespaces remain. They are killed by the kernel (PR_SET_PDEATHSIG) as
    the run exits, and each then exits when it next runs: on a loaded machine that is no fixed
    time, so the test waits for them with a deadline far below the 60 s they would run without
    the kill (the switch would never stop by itself)."""
    f = tmp_path / "s.toml"
    f.write_text(TESTBED_TWO_FLOWS)
    run = subprocess.Popen([sys.executable, "-m", "dcfair", "testbed", "run", str(f), "--out", str(tmp_path / "out"),
                            "--prefix", prefix, "--set", "sim.duration_s=60", "--quiet"],
                           cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(_helpers(prefix)) < 3:
            time.sleep(0.05)  # the switch and both iperf3 servers are up (not just setup commands)
        helpers = {p: _cmdline(p) for p in _helpers(prefix)}
        assert len(helpers) >= 3, f"the run never started its helpers: {helpers}"
    finally:
        # killed whatever the assertion said: a run left going would tear down the namespaces
        # of the tests after it when it ends
        run.kill()
        run.wait(5)
    left = _gone_within(prefix, 10.0)
    assert not left, f"outlived the run by 10 s: {left} (of the helpers {helpers})"
    assert len(bed.ours(prefix)) == 4, "only the namespaces remain"


@needs_root
@pytest.mark.parametrize("kind", ["dumbbell", pytest.param("fabric", marks=needs_switch)])
def test_a_run_removes_the_testbed_of_a_killed_run(tmp_path, prefix, kind):
    """kill -9 of a run once its namespaces exist; the next run on the prefix finds their owner
    gone, removes them saying so, and runs."""
    f = tmp_path / "s.toml"
    f.write_text(TESTBED_TWO_FLOWS if kind == "dumbbell" else FABRIC)
    n = 4 if kind == "dumbbell" else 8  # hosts + switch namespaces
    args = [sys.executable, "-m", "dcfair", "testbed", "run", str(f), "--prefix", prefix, "--quiet"]
    run = subprocess.Popen(args + ["--out", str(tmp_path / "killed"), "--set", "sim.duration_s=60"],
                           cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(bed.ours(prefix)) < n:
            time.sleep(0.01)
    finally:
        run.kill()
        run.wait(5)
    left = bed.ours(prefix)
    assert left, "the killed run left no namespace: nothing to test"
    owner = bed.read_owner(prefix)
    assert owner is not None and owner.pid == run.pid and not owner.alive()
    p = dcfair("testbed", "run", f, "--prefix", prefix, "--out", tmp_path / "out", "--quiet",
               "--set", "sim.duration_s=1.5", "--set", "measure.window_s=0.5", timeout=120)
    assert p.returncode == 0, (p.stdout, p.stderr)
    said = [line for line in p.stderr.splitlines() if "is gone" in line]
    want = f"dcfair: testbed {prefix!r}: its run, PID {run.pid}, is gone; removed its {len(left)} namespaces"
    assert said == [want], p.stderr
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["source"] == "testbed"
    assert bed.ours(prefix) == [] and bed.read_owner(prefix) is None


@needs_root
def test_a_run_leaves_a_testbed_whose_owner_lives_or_that_has_none(tmp_path, prefix):
    """Only a testbed whose owner is gone is removed by a run: one whose owner lives, or one
    without an owner record, is refused (exit 1) and left as it was."""
    f = tmp_path / "s.toml"
    f.write_text(TESTBED_TWO_FLOWS)
    run = ("testbed", "run", f, "--prefix", prefix, "--out", tmp_path / "out")
    # owned by this test's process, which is alive
    bed.up(bed.uniform(2, prefix), owned=True)
    before = bed.ours(prefix)
    assert bed.read_owner(prefix) == bed.Owner.of(os.getpid())
    assert_clean_error(dcfair(*run), 1, f"PID {os.getpid()}", "still going", f"dcfair testbed down --prefix {prefix}")
    assert bed.ours(prefix) == before and bed.read_owner(prefix) == bed.Owner.of(os.getpid())
    bed.down(prefix)
    # made by `testbed up`, whose process has exited: meant to stay, so it has no owner record
    assert dcfair("testbed", "up", "--hosts", "2", "--prefix", prefix).returncode == 0
    before = bed.ours(prefix)
    assert len(before) == 3 and bed.read_owner(prefix) is None
    assert_clean_error(dcfair(*run), 1, "exists", f"dcfair testbed down --prefix {prefix}")
    assert bed.ours(prefix) == before
    assert not (tmp_path / "out" / "summary.json").exists()


def test_an_owner_is_a_pid_and_its_start_time():
    me = bed.Owner.of(os.getpid())
    assert me is not None and me.alive() and me.start_ticks > 0 and me.boot_id
    # the same PID started at another time (reused) is another process
    assert not bed.Owner(me.pid, me.start_ticks + 1, me.boot_id).alive()
    assert not bed.Owner(me.pid, me.start_ticks, "another boot").alive()
    child = subprocess.Popen(["true"])
    deadline = time.monotonic() + 10
    while bed.Owner.of(child.pid) is not None and time.monotonic() < deadline:
        time.sleep(0.01)  # exited and not reaped yet: a zombie is gone
    assert bed.Owner.of(child.pid) is None
    child.wait()
    assert bed.Owner.of(child.pid) is None


def test_a_stale_or_unreadable_owner_record_counts_as_none(tmp_path, monkeypatch):
    monkeypatch.setattr(bed, "STATE_DIR", tmp_path)
    monkeypatch.setattr(bed, "ours", lambda prefix: [])
    for text in ("", "{", '{"pid": 1}', '["x"]'):
        bed.owner_path("dcfx-").write_text(text)
        assert bed.read_owner("dcfx-") is None
    # a dead owner's record left without namespaces: a testbed made after it has no owner
    bed.owner_path("dcfx-").write_text(json.dumps({"pid": 2 ** 22 + 1, "start_ticks": 5, "boot_id": "b"}))
    bed.claim("dcfx-", owned=False)
    assert not bed.owner_path("dcfx-").exists()
    bed.claim("dcfx-", owned=True)
    assert bed.read_owner("dcfx-") == bed.Owner.of(os.getpid())
    with pytest.raises(TestbedError, match=f"PID {os.getpid()}, is still going"):
        bed.claim("dcfx-", owned=True)


# ---------------------------------------------------------------- fabrics (issue 25)

from dcfair.testbed import capacity, fabric  # noqa: E402

# 50 Mbit/s: about 63,000 frames/s offered, well under what capacity.json says 4 switches carry
FABRIC = """
name = "ls-small"
seed = 3
[sim]
duration_s = 2.0
[measure]
window_s = 1.0
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
host_rate_mbps = 50.0
fabric_rate_mbps = 50.0
link_delay_us = 50.0
[routing]
mode = "ecmp"
hash_seed = 5
[queue]
kind = "droptail"
limit_pkts = 100
[tcp]
handshake = false
[groups.cross]
count = 2
src = ["h0", "h1"]
dst = ["h2", "h3"]
[groups.back]
count = 1
src = "h3"
dst = "h0"
"""
OUTCAST1 = REPO / "scenarios" / "testbed" / "outcast_case1.toml"


@needs_switch
def test_a_fabric_plan_comes_from_the_simulators_build(tmp_path, monkeypatch):
    f = tmp_path / "ls.toml"
    f.write_text(FABRIC)
    fp = fabric.plan(str(f), FABRIC)
    assert [h.name for h in fp.plan.hosts] == ["h0", "h1", "h2", "h3"]
    assert sorted(s.name for s in fp.switches) == ["l0", "l1", "sp0", "sp1"]
    assert len(fp.links) == 4 + 4  # host links + leaf-spine links
    assert sorted((x.src, x.dst, x.group) for x in fp.plan.flows) == [("h0", "h2", "cross"), ("h1", "h3", "cross"),
                                                                      ("h3", "h0", "back")]
    assert sorted(x.id for x in fp.plan.flows) == [0, 1, 2]
    leaf = next(s for s in fp.switches if s.name == "l0")
    to_host = [p for p in leaf.ports if p.peer.startswith("h")]
    up = [p for p in leaf.ports if p.peer.startswith("sp")]
    assert {p.delay_us for p in to_host} == {100.0} and {p.delay_us for p in up} == {50.0}  # RTT as simulated
    cfg = fabric.switch_configs(fp, 3)["l0"]
    assert cfg["fabric"]["node"] == "l0" and cfg["fabric"]["hosts"]["10.77.0.1"] == "h0"
    assert [p["link"] for p in cfg["port"]] == [p.link for p in leaf.ports]
    # input lines at the link's rate, bounded by 1 ms unless the environment says otherwise
    assert [(p["input_rate_bps"], p["input_max_wait_us"]) for p in cfg["port"]] == [(p.rate_bps, 1000.0) for p in leaf.ports]
    monkeypatch.setenv("DCFAIR_FABRIC_INPUT_LINE", "250")
    assert {p["input_max_wait_us"] for p in fabric.switch_configs(fp, 3)["l0"]["port"]} == {250.0}
    monkeypatch.setenv("DCFAIR_FABRIC_INPUT_LINE", "off")
    assert all("input_rate_bps" not in p for p in fabric.switch_configs(fp, 3)["l0"]["port"])
    for bad in ("maybe", "-1", "nan", "2e6"):
        monkeypatch.setenv("DCFAIR_FABRIC_INPUT_LINE", bad)
        with pytest.raises(Exception, match="DCFAIR_FABRIC_INPUT_LINE") as e:
            fabric.switch_configs(fp, 3)
        assert type(e.value).__name__ == "InvalidInput"
    monkeypatch.delenv("DCFAIR_FABRIC_INPUT_LINE")
    assert len(cfg["fabric"]["flow"]) == 3 and fp.offered_fps > 0 and fp.sim_pkts
    # every flow's simulated paths are known, both directions
    assert fp.on_paths and all(n in fp.sim_pkts for n in fp.on_paths)


@needs_switch
@pytest.mark.parametrize("override, key", [
    (("udp.rate_fraction", "0.1"), "udp"),
    (("ports.x", "1"), "ports"),
    (("groups.cross.transport", "\"xpass\""), "groups.cross.transport"),
    (("groups.cross.tcp.sack", "true"), "groups.cross.tcp.sack"),
    (("topology.k", "3"), "topology.k"),
])
def test_what_a_fabric_cannot_reproduce_exits_2_naming_the_key(tmp_path, override, key):
    f = tmp_path / "s.toml"
    f.write_text(OUTCAST1.read_text() if key == "topology.k" else FABRIC)
    p = dcfair("testbed", "run", f, "--set", f"{override[0]}={override[1]}", "--prefix", "dcfnever-")
    assert_clean_error(p, 2, key)
    assert bed.ours("dcfnever-") == []


@needs_switch
def test_a_fabric_refuses_the_bridge(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(FABRIC)
    assert_clean_error(dcfair("testbed", "run", f, "--switch", "bridge"), 2, "--switch")


def test_capacity_interpolates_and_refuses_with_the_numbers(monkeypatch):
    t = {4: 40000.0, 10: 30000.0, 20: 20000.0}
    assert capacity.sustained(4, t) == 40000.0 and capacity.sustained(2, t) == 40000.0
    assert capacity.sustained(15, t) == pytest.approx(25000.0)
    assert capacity.sustained(40, t) == pytest.approx(10000.0)
    monkeypatch.setattr(capacity, "table", lambda: t)
    monkeypatch.delenv("DCFAIR_TESTBED_NO_CAPACITY", raising=False)
    capacity.check(10, 29000.0)
    with pytest.raises(Exception) as e:
        capacity.check(10, 31000.0)
    assert "31,000 frames/s" in str(e.value) and "30,000" in str(e.value)


@needs_switch
@pytest.mark.skipif(capacity.table() is None, reason="capacity.json not measured on this machine")
def test_cli_refuses_a_fabric_above_the_measured_capacity(tmp_path):
    p = dcfair("testbed", "run", OUTCAST1, "--set", "topology.host_rate_mbps=10000", "--set",
               "topology.fabric_rate_mbps=10000", "--set", "sim.duration_s=0.3", "--set", "measure.window_s=0.2",
               "--prefix", "dcfnever-")
    assert_clean_error(p, 2, "topology", "frames/s", "20 switches")
    assert bed.ours("dcfnever-") == []


@needs_root
@needs_switch
def test_a_fabric_runs_real_tcp_on_the_simulators_routes(tmp_path, prefix):
    f = tmp_path / "ls.toml"
    f.write_text(FABRIC)
    out = tmp_path / "out"
    t0 = time.monotonic()
    p = dcfair("testbed", "run", f, "--out", out, "--prefix", prefix, timeout=120)
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert time.monotonic() - t0 < 30
    assert bed.ours(prefix) == [], "namespaces left behind"
    summary = json.loads((out / "summary.json").read_text())
    links = summary["testbed"]["links"]
    # the testbed's frames go exactly where the simulator's routing sends the flows
    assert links["testbed_off_paths"] == [] and links["testbed_idle_on_paths"] == [], links
    assert links["same"], links
    m = summary["metrics"]
    assert m["throughput_bps_cross"] > 1e6 and m["throughput_bps_back"] > 1e6
    rows = list(csv.DictReader(open(out / "links.csv")))
    assert len(rows) == 12 and {r["differs"] for r in rows} == {"0"}  # 2 leaves x 4 ports + 2 spines x 2
    for name in ("l0", "sp0"):
        ports = check_switch_identities(json.loads((out / "raw" / f"{name}.stats.json").read_text()))
        assert {p["input_rate_bps"] for p in ports} == {50_000_000}  # every port's input line at its link's rate
    t = summary["testbed"]
    assert t["input_line"] and t["input_max_wait_us"] == 1000.0 and t["input_paced_frames"] >= 0


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_an_interrupt_lost_in_a_finalizer_still_stops_the_run():
    # Python only prints an exception raised in __del__: a SIGTERM whose KeyboardInterrupt lands
    # there is remembered, and the run's next check raises it
    import signal as _signal

    class Finalized:
        def __del__(self):
            os.kill(os.getpid(), _signal.SIGTERM)
            for _ in range(1000):  # the handler runs here, between bytecodes of __del__
                pass

    before = _signal.getsignal(_signal.SIGTERM)
    with bed.sigterm_interrupts() as stop:
        stop.check()  # nothing yet
        x = Finalized()
        del x
        assert stop.fired == _signal.SIGTERM
        with pytest.raises(KeyboardInterrupt):
            stop.check()
    assert _signal.getsignal(_signal.SIGTERM) is before


def _start_fabric_run(tmp_path, prefix, seconds=20):
    f = tmp_path / "ls.toml"
    f.write_text(FABRIC)
    return subprocess.Popen([sys.executable, "-m", "dcfair", "testbed", "run", str(f), "--out", str(tmp_path / "out"),
                             "--prefix", prefix, "--set", f"sim.duration_s={seconds}", "--quiet"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_switches(prefix, n=4, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sws = [x for x in bed.ours(prefix) if "sw" in x]
        if len(sws) == n and all(_pids_in([s]) for s in sws):
            return sws
        time.sleep(0.1)
    raise AssertionError("the switches never started")


@needs_root
@needs_switch
def test_a_switch_that_dies_fails_the_run_naming_it(tmp_path, prefix):
    run = _start_fabric_run(tmp_path, prefix)
    sws = _wait_for_switches(prefix)
    victim = sorted(sws)[1]
    for pid in _pids_in([victim]):
        os.kill(pid, 9)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 1, err
    name = json.loads(bed.state_path(prefix).read_text())["switch_namespaces"] if bed.state_path(prefix).exists() else None
    assert name is None  # the run removed its testbed (and the state file)
    assert "switch " in err and "exited" in err and "Traceback" not in err
    assert not (tmp_path / "out" / "summary.json").exists() and not (tmp_path / "out" / "flows.csv").exists()
    assert bed.ours(prefix) == []


@needs_root
@needs_switch
def test_a_fabric_run_on_a_taken_prefix_leaves_the_testbed_there(tmp_path, prefix):
    bed.up(bed.uniform(2, prefix))
    before = bed.ours(prefix)
    run = _start_fabric_run(tmp_path, prefix)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 1 and "exists" in err, err
    assert bed.ours(prefix) == before, "the run removed a testbed it did not make"


@needs_root
@needs_switch
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGKILL"])
@pytest.mark.parametrize("when", ["setup", "running"])
def test_a_signalled_fabric_run_leaves_nothing_after_down(tmp_path, prefix, sig, when):
    import signal as _signal

    run = _start_fabric_run(tmp_path, prefix)
    if when == "running":
        _wait_for_switches(prefix)
        time.sleep(0.5)
    else:  # while the fabric is being planned or built
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not bed.ours(prefix) and run.poll() is None:
            time.sleep(0.01)
        assert run.poll() is None and bed.ours(prefix), "never saw the fabric being built"
    run.send_signal(getattr(_signal, sig))
    run.communicate(timeout=60)
    if sig != "SIGKILL":
        assert run.returncode != 0 and bed.ours(prefix) == [], "an interrupted run removes its testbed"
    p = dcfair("testbed", "down", "--prefix", prefix)
    assert p.returncode == 0, p.stderr
    assert bed.ours(prefix) == []
    time.sleep(0.5)
    mine = subprocess.run(["pgrep", "-f", f"{tmp_path}"], capture_output=True, text=True).stdout.split()
    assert mine == [], "processes of the run outlived it"
    assert not (tmp_path / "out" / "summary.json").exists()


FAIRQ_LS = REPO / "scenarios" / "testbed" / "fairq_incast_leafspine.toml"


@needs_switch
def test_a_fabric_incast_is_the_simulators_incast_flows():
    fp = fabric.plan(str(FAIRQ_LS), FAIRQ_LS.read_text())
    ic = fp.plan.incast
    assert len(ic.servers) == 21 and {c for _, c in ic.servers} == {"h21"} and ic.rounds == 100
    assert len(fp.plan.flows) == 21 and all(f.group == "flows" for f in fp.plan.flows)
    assert len(fp.incast_ids) == 21 and not set(fp.incast_ids) & {f.id for f in fp.plan.flows}
    cfg = fabric.switch_configs(fp, 1)["sp0"]
    listen = {e["listen"]: e["flow"] for e in cfg["fabric"]["flow"]}
    assert listen[f"10.77.0.1:{traffic.INCAST_PORT}"] == fp.incast_ids[0]  # server 0 on h0
    assert len(listen) == 42


@needs_switch
@pytest.mark.parametrize("overrides, key", [
    (["incast.connection=\"per_request\""], "incast.connection"),
    (["incast.dst=[\"h21\", \"h22\"]", "incast.servers=42"], "incast.dst"),  # two client hosts
])
def test_a_fabric_incast_the_generator_cannot_run_exits_2(overrides, key):
    sets = [x for o in overrides for x in ("--set", o)]
    p = dcfair("testbed", "run", FAIRQ_LS, *sets, "--prefix", "dcfnever-")
    assert_clean_error(p, 2, key)


@needs_root
@needs_switch
def test_one_process_can_serve_every_switch_namespace(tmp_path, prefix):
    """DCFAIR_FABRIC_PROCESS=one: `dcfair-switch multi` serves the fabric's switches from one
    process, with the same per-switch statistics and routing."""
    f = tmp_path / "ls.toml"
    f.write_text(FABRIC)
    out = tmp_path / "out"
    p = dcfair("testbed", "run", f, "--out", out, "--prefix", prefix, timeout=120, env={"DCFAIR_FABRIC_PROCESS": "one"})
    assert p.returncode == 0, (p.stdout, p.stderr)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["testbed"]["switch_processes"] == 1 and summary["testbed"]["links"]["same"]
    for name in ("l0", "l1", "sp0", "sp1"):
        st = json.loads((out / "raw" / f"{name}.stats.json").read_text())
        assert st["process"].startswith("multi") and st["netns"].startswith(f"{prefix}sw")
        check_switch_identities(st)
    assert bed.ours(prefix) == []
    bad = dcfair("testbed", "run", f, "--prefix", prefix, env={"DCFAIR_FABRIC_PROCESS": "two"})
    assert_clean_error(bad, 2, "DCFAIR_FABRIC_PROCESS")


PARKING = """
name = "pl-small"
seed = 2
[sim]
duration_s = 2.0
[measure]
window_s = 1.0
[topology]
kind = "parking_lot"
bottlenecks = 2
host_rate_mbps = 50.0
bottleneck_rate_mbps = 20.0
link_delay_us = 50.0
[queue]
kind = "red"
limit_pkts = 50
[groups.long]
count = 1
src = "src0"
dst = "dst2"
[groups.cross]
count = 2
src = ["src0", "src1"]
dst = ["dst1", "dst2"]
"""
CUSTOM = """
name = "custom-small"
seed = 4
[sim]
duration_s = 2.0
[measure]
window_s = 1.0
[topology]
kind = "custom"
hosts = ["a", "b", "c"]
switches = ["s1", "s2", "s3"]
links = [
  { a = "a", b = "s1", rate_mbps = 50.0, delay_us = 20.0 },
  { a = "s1", b = "s2", rate_mbps = 20.0, delay_us = 100.0, measured = true },
  { a = "s1", b = "s3", rate_mbps = 20.0, delay_us = 100.0 },
  { a = "s3", b = "s2", rate_mbps = 20.0, delay_us = 100.0 },
  { a = "s2", b = "b", rate_mbps = 50.0, delay_us = 20.0 },
  { a = "s3", b = "c", rate_mbps = 50.0, delay_us = 20.0 },
]
[queue]
kind = "sfq"
limit_pkts = 50
[groups.ab]
count = 2
src = "a"
dst = "b"
[groups.cb]
count = 1
src = "c"
dst = "b"
"""


@needs_root
@needs_switch
@pytest.mark.parametrize("text", [PARKING, CUSTOM], ids=["parking_lot", "custom"])
def test_parking_lots_and_custom_fabrics_run_on_the_simulators_routes(tmp_path, prefix, text):
    f = tmp_path / "s.toml"
    f.write_text(text)
    out = tmp_path / "out"
    p = dcfair("testbed", "run", f, "--out", out, "--prefix", prefix, timeout=120)
    assert p.returncode == 0, (p.stdout, p.stderr)
    summary = json.loads((out / "summary.json").read_text())
    links = summary["testbed"]["links"]
    assert links["testbed_off_paths"] == [] and links["same"], links
    assert summary["metrics"]["utilization"] > 0.1  # 2 s of iperf3 flows starting up: busy, not full
    assert all(int(r["bytes_delivered"]) > 0 for r in csv.DictReader(open(out / "flows.csv")))
    assert bed.ours(prefix) == []


def test_results_files_say_how_they_were_made(monkeypatch):
    from dcfair.testbed import doctable

    monkeypatch.setenv("DCFAIR_FABRIC_INPUT_LINE", "off")
    monkeypatch.delenv("DCFAIR_FABRIC_PROCESS", raising=False)
    p = doctable.provenance("dcfair.testbed.outcast", ["--runs", "5"])
    assert p["made_by"] == "sudo DCFAIR_FABRIC_INPUT_LINE=off python -m dcfair.testbed.outcast --runs 5"
    assert p["kernel"] and len(p["git"]) >= 7
    r = doctable.run_conditions({"input_line": True, "input_max_wait_us": 1000.0, "input_wait_mean_us": 650.1, "x": 1})
    assert r["input_line"] and r["input_max_wait_us"] == 1000.0 and r["input_wait_mean_us"] == 650.1
    assert r["load_1m"] >= 0 and "x" not in r
