#!/usr/bin/env python3
"""Benchmark of the real-packet switch (crates/switch): forwarding capacity and added latency.

Not a test: run as root on an otherwise idle machine, then read the numbers it writes into
docs/performance.md (section "Real-packet switch", between the switch-bench markers).

    cargo build --release -p dcfair-switch && sudo python3 bench/switch.py [--seconds 5] [--pings 2000]

What it does:
- Builds, in namespaces named dcfsw-bench-PID-*, two hosts joined through a switch namespace
  (veth pairs, static ARP, checksum/TSO/GSO offload off on the host veths, GRO off on the
  switch's), and a direct veth pair between two more hosts as the latency baseline.
- Capacity, per discipline (DropTail and HCF, 1000-packet buffers): the switch's port at
  rate_bps = 1 Gbit/s ("line rate") and at 100 Gbit/s (no serializer limit: what the software
  forwards at most). iperf3 sends UDP with 1472-byte payloads (1500-byte IPv4 packets,
  1514-byte frames) from h1 to h2, unlimited rate (`-b 0`) for --seconds; the rate is the
  frames the switch sent out of h2's port (its stats) over the iperf3 interval. The sender
  shares the 2 CPUs with the switch and the receiver, so "at most" is a lower bound of the
  switch alone.
- Also TCP (iperf3, 1 stream, CUBIC) through the 1 Gbit/s port, as a sanity figure.
- Latency, uncongested: a UDP echo (56-byte payload, one every 2 ms, Python sockets, timed
  with perf_counter_ns) from h1 to h2 through the switch (DropTail, 1 Gbit/s, no delay line)
  and over the direct pair, the two paths interleaved ping by ping from one process (so both
  see the same machine load); the added round-trip time (two switch traversals: request and
  reply) is the difference of the medians and of the 99th percentiles. Also the switch's own
  input delay (kernel receive timestamp to the switch reading the frame, its `rx_delay`).
- Every measurement is repeated for each wait mode of --waits (the switch's `wait` key), with
  the switch's CPU use (its user + system time over its run time); --cpu N pins the switch to
  CPU N (`cpu` key) and the traffic generators to the other CPUs.
- Removes every namespace it made, also on failure.
"""
import argparse
import datetime
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "dcfair-switch")
DOC = os.path.join(ROOT, "docs", "performance.md")
BEGIN, END = "<!-- switch-bench:begin -->", "<!-- switch-bench:end -->"
PFX = f"dcfsw-bench-{os.getpid()}-"


def sh(*args, check=True):
    r = subprocess.run(args, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


def mac(ns, dev):
    return re.search(r"link/ether (\S+)", sh("ip", "-n", ns, "link", "show", dev)).group(1)


def pair(a, b, ip_a, ip_b, sw=None):
    """Host a and host b, joined directly (sw None) or each to switch namespace sw."""
    for h, ip, peer in ((a, ip_a, "p1"), (b, ip_b, "p2")):
        if sw:
            sh("ip", "-n", h, "link", "add", "veth0", "type", "veth", "peer", "name", peer, "netns", sw)
            sh("ip", "-n", sw, "link", "set", peer, "up")
            sh("ip", "netns", "exec", sw, "ethtool", "-K", peer, "gro", "off")
    if not sw:
        sh("ip", "-n", a, "link", "add", "veth0", "type", "veth", "peer", "name", "veth0", "netns", b)
    for h, ip in ((a, ip_a), (b, ip_b)):
        sh("ip", "-n", h, "addr", "add", ip + "/24", "dev", "veth0")
        sh("ip", "-n", h, "link", "set", "veth0", "up")
        sh("ip", "-n", h, "link", "set", "lo", "up")
        sh("ip", "netns", "exec", h, "ethtool", "-K", "veth0", "tx", "off", "tso", "off", "gso", "off")
    sh("ip", "-n", a, "neigh", "replace", ip_b, "lladdr", mac(b, "veth0"), "dev", "veth0", "nud", "permanent")
    sh("ip", "-n", b, "neigh", "replace", ip_a, "lladdr", mac(a, "veth0"), "dev", "veth0", "nud", "permanent")


BURST = ""  # extra port key from --burst-us
TOP = ""  # top-level switch keys from --wait, --spin-us, --cpu
TRAFFIC_CPUS = []  # taskset prefix for the traffic generators when the switch is pinned


def config(kind, rate):
    port = lambda i, p: (f'[[port]]\niface = "{i}"\nprefixes = ["{p}"]\nrate_bps = {rate}\n{BURST}'
                         f'[port.queue]\nkind = "{kind}"\nlimit_pkts = 1000\n')
    return TOP + port("p1", "10.198.0.1/32") + port("p2", "10.198.0.2/32")


RUNNING = []


class Switch:
    def __init__(self, ns, kind, rate, tmp):
        self.cfg, self.stats = os.path.join(tmp, "sw.toml"), os.path.join(tmp, "stats.json")
        with open(self.cfg, "w") as f:
            f.write(config(kind, rate))
        self.p = subprocess.Popen(["ip", "netns", "exec", ns, BIN, "--config", self.cfg, "--stats", self.stats],
                                  stdout=subprocess.PIPE, text=True)
        RUNNING.append(self.p)
        assert self.p.stdout.readline().strip() == "ready"

    def stop(self):
        RUNNING.remove(self.p)
        self.p.send_signal(signal.SIGTERM)
        assert self.p.wait(timeout=10) == 0
        with open(self.stats) as f:
            return json.load(f)


def iperf(h1, h2, udp, seconds):
    srv = subprocess.Popen(TRAFFIC_CPUS + ["ip", "netns", "exec", h2, "iperf3", "-s", "-1", "-B", "10.198.0.2"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    args = TRAFFIC_CPUS + ["ip", "netns", "exec", h1, "iperf3", "-c", "10.198.0.2", "-t", str(seconds), "-J"]
    if udp:
        args += ["-u", "-b", "0", "-l", "1472"]
    out = json.loads(sh(*args))
    srv.wait(timeout=10)
    return out


ECHO = """
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 7777))
while True:
    d, a = s.recvfrom(2048)
    if d == b"stop":
        break
    s.sendto(d, a)
"""

PING = """
import ctypes, json, os, socket, sys, time
libc = ctypes.CDLL(None, use_errno=True)
n, paths = int(sys.argv[1]), sys.argv[2:]  # paths: NETNS:DST ...
socks = []
for p in paths:
    ns, dst = p.split(":")
    fd = os.open("/var/run/netns/" + ns, os.O_RDONLY)
    if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
        raise OSError(ctypes.get_errno(), "setns " + ns)
    os.close(fd)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # lives in ns from now on
    s.settimeout(1.0)
    socks.append((s, dst))
rtt = [[] for _ in paths]
for i in range(n + 50):
    for k, (s, dst) in enumerate(socks):  # interleaved: every path sees the same machine
        t0 = time.perf_counter_ns()
        s.sendto(b"x" * 56, (dst, 7777))
        try:
            s.recvfrom(2048)
        except socket.timeout:
            continue
        if i >= 50:  # warm-up
            rtt[k].append((time.perf_counter_ns() - t0) / 1000)
        time.sleep(0.002)
for s, dst in socks:
    s.sendto(b"stop", (dst, 7777))
print(json.dumps(rtt))
"""


def pings(paths, n):
    """UDP echo round-trip times in us over each (src ns, dst ns, dst address) path, the paths
    interleaved ping by ping (56-byte payload, one every 2 ms; `ping` may be absent)."""
    srv = [subprocess.Popen(TRAFFIC_CPUS + ["ip", "netns", "exec", d, sys.executable, "-c", ECHO]) for _, d, _ in paths]
    time.sleep(0.3)
    out = json.loads(sh(*TRAFFIC_CPUS, sys.executable, "-c", PING, str(n), *[f"{s}:{a}" for s, _, a in paths]))
    for p in srv:
        p.wait(timeout=10)
    return [sorted(t) for t in out]


def pct(v, q):
    return v[min(len(v) - 1, int(q * len(v)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--pings", type=int, default=2000)
    ap.add_argument("--burst-us", type=float, help="port.burst_us (default: the switch's)")
    ap.add_argument("--waits", default="poll,hybrid,busy",
                    help="the switch's wait modes to measure, comma-separated (default: poll,hybrid,busy)")
    ap.add_argument("--repeat", type=int, default=1, help="rounds of the latency measurement (each mode once per round)")
    ap.add_argument("--spin-us", type=float, help="spin_us of the hybrid mode (default: the switch's)")
    ap.add_argument("--cpu", type=int, help="pin the switch to this CPU (its `cpu` key) and the traffic to the others")
    ap.add_argument("--only-1g-udp", action="store_true", help="just DropTail, 1 Gbit/s, UDP (a quick check)")
    ap.add_argument("--latency-only", action="store_true", help="only the UDP echo, no iperf3")
    ap.add_argument("--no-doc", action="store_true", help="print only, do not edit docs/performance.md")
    a = ap.parse_args()
    global BURST, TRAFFIC_CPUS
    if a.burst_us is not None:
        BURST = f"burst_us = {a.burst_us}\n"
    waits = a.waits.split(",")
    if any(w not in ("poll", "busy", "hybrid") for w in waits):
        sys.exit(f"bench/switch.py: --waits: {a.waits!r}: each must be poll, busy or hybrid")
    cpu = os.cpu_count()
    if a.cpu is not None:
        if not 0 <= a.cpu < cpu or cpu < 2:
            sys.exit(f"bench/switch.py: --cpu: {a.cpu} is not one of CPUs 0..{cpu - 1}, or only one CPU")
        TRAFFIC_CPUS = ["taskset", "-c", ",".join(str(c) for c in range(cpu) if c != a.cpu)]
    if os.geteuid() != 0:
        sys.exit("bench/switch.py: needs root (network namespaces, packet sockets)")
    if not os.path.exists(BIN):
        sys.exit(f"bench/switch.py: build first: cargo build --release -p dcfair-switch ({BIN} missing)")
    names = [PFX + s for s in ("h1", "h2", "sw", "d1", "d2")]
    h1, h2, sw, d1, d2 = names
    rows, lat = [], []

    def set_top(wait):
        global TOP
        TOP = f'wait = "{wait}"\n' + ("" if a.spin_us is None else f"spin_us = {a.spin_us}\n") + \
            ("" if a.cpu is None else f"cpu = {a.cpu}\n")
    load = os.getloadavg()[0]
    busy_share = lambda st: (st["cpu_user_s"] + st["cpu_sys_s"]) / st["duration_s"]
    try:
        for n in names:
            sh("ip", "netns", "add", n)
        pair(h1, h2, "10.198.0.1", "10.198.0.2", sw)
        pair(d1, d2, "10.198.0.1", "10.198.0.2")
        with tempfile.TemporaryDirectory() as tmp:
            for wait in waits:
                set_top(wait)
                for kind in () if a.latency_only else ("droptail",) if a.only_1g_udp else ("droptail", "hcf"):
                    for rate in (1e9,) if a.only_1g_udp else (1e9, 1e11):
                        s = Switch(sw, kind, rate, tmp)
                        r = iperf(h1, h2, True, a.seconds)
                        st = s.stop()
                        secs = r["end"]["sum"]["seconds"]
                        p2 = st["ports"][1]
                        pps = p2["tx_frames"] / secs
                        rows.append(dict(wait=wait, kind=kind, rate=rate, proto="UDP 1500 B", pps=pps,
                                         ip_bps=p2["queue"]["dequeued_bytes"] * 8 / secs,
                                         frame_bps=p2["tx_bytes"] * 8 / secs,
                                         offered_bps=st["ports"][0]["rx_bytes"] * 8 / secs,
                                         drops=p2["queue"]["drops_pkts"], rx=st["ports"][0]["rx_frames"], cpu=busy_share(st)))
                    if a.only_1g_udp:
                        break
                    s = Switch(sw, kind, 1e9, tmp)
                    r = iperf(h1, h2, False, a.seconds)
                    st = s.stop()
                    rows.append(dict(wait=wait, kind=kind, rate=1e9, proto="TCP", pps=st["ports"][1]["tx_frames"] / r["end"]["sum_received"]["seconds"],
                                     ip_bps=r["end"]["sum_received"]["bits_per_second"], frame_bps=float("nan"),
                                     offered_bps=float("nan"), drops=st["ports"][1]["queue"]["drops_pkts"], rx=st["ports"][0]["rx_frames"],
                                     cpu=busy_share(st)))
            # latency: the modes in turn, --repeat rounds, so every mode meets the same spread of machine load
            for rep in range(a.repeat):
                for wait in waits:
                    set_top(wait)
                    s = Switch(sw, "droptail", 1e9, tmp)
                    sw_l, d_l = pings([(h1, h2, "10.198.0.2"), (d1, d2, "10.198.0.2")], a.pings)
                    st = s.stop()
                    lat.append((wait, rep + 1, sw_l, d_l, busy_share(st), st["rx_delay"]))
    finally:
        for p in RUNNING:
            p.kill()
            p.wait()
        for n in names:
            sh("ip", "netns", "del", n, check=False)
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    opts = "".join(f" {k} {v}" for k, v in (("--seconds", a.seconds), ("--pings", a.pings), ("--burst-us", a.burst_us),
                                           ("--waits", a.waits), ("--repeat", a.repeat if a.repeat != 1 else None), ("--spin-us", a.spin_us), ("--cpu", a.cpu)) if v is not None)
    opts += " --latency-only" * a.latency_only + " --only-1g-udp" * a.only_1g_udp
    pin = ("the switch unpinned, sharing them with the traffic" if a.cpu is None
           else f"the switch pinned to CPU {a.cpu}, the traffic to the others")
    lines = [f"Machine: {cpu} logical CPUs, {pin}; "
             f"`sudo python3 bench/switch.py{opts}` on {when}; load average before: {load:.1f}.", ""]
    if rows:
        lines += ["| wait | discipline | port rate | traffic | frames/s out | IPv4 bit/s out | frame bit/s out | offered (frame bit/s in) | queue drops | switch CPU |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        f = lambda v: "-" if v != v else f"{v / 1e6:,.0f} M"
        lines.append(f"| {r['wait']} | {r['kind']} | {r['rate'] / 1e9:g} Gbit/s | {r['proto']} | {r['pps']:,.0f} | {f(r['ip_bps'])} | "
                     f"{f(r['frame_bps'])} | {f(r['offered_bps'])} | {r['drops']:,} | {r['cpu']:.0%} |")
    med = statistics.median
    lines += ["", "UDP echo round trips (us), through the switch (DropTail, 1 Gbit/s) and over a direct veth pair, "
              "interleaved ping by ping; added = switch - direct (two traversals: request and reply).", "",
              "| wait | round | direct median | direct p99 | switch median | switch p99 | **added median** | **added p99** | samples | switch CPU | switch input delay p50 / p99 |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for wait, rep, sw_l, d_l, c, rxd in sorted(lat, key=lambda r: (waits.index(r[0]), r[1])):
        lines.append(f"| {wait} | {rep} | {med(d_l):.0f} | {pct(d_l, 0.99):.0f} | {med(sw_l):.0f} | {pct(sw_l, 0.99):.0f} | "
                     f"**{med(sw_l) - med(d_l):.0f}** | **{pct(sw_l, 0.99) - pct(d_l, 0.99):.0f}** | {min(len(sw_l), len(d_l))} | {c:.0%} | "
                     f"{rxd['p50_us']} / {rxd['p99_us']} |")
    text = "\n".join(lines)
    print(text)
    if a.no_doc:
        return
    with open(DOC) as f:
        doc = f.read()
    block = f"{BEGIN}\n{text}\n{END}"
    if BEGIN in doc:
        doc = doc[:doc.index(BEGIN)] + block + doc[doc.index(END) + len(END):]
    else:
        doc += f"\n## Real-packet switch\n\n{block}\n"
    with open(DOC, "w") as f:
        f.write(doc)


if __name__ == "__main__":
    main()
