"""Real traffic in the testbed: iperf3 for flows, :mod:`.incast` for request/response incast.

Rules:

- Sized TCP flows run :mod:`.incast`'s ``fetch``: a server on the sender, a client on the
  receiver that connects at the flow's start, asks for the bytes and times the last one
  (iperf3 ``-n`` stops counting when the sender has written its bytes, not when they arrive).
  Their rows have no retransmission counts (the generator cannot see the sender's TCP).
- Long-lived flows of a scenario whose TCP opens without a handshake (``tcp.handshake =
  false``, the ns-2 style the HCF setting uses) run :mod:`.incast`'s ``stream`` instead of
  iperf3: connected before time zero in an idle network, started at their start time (a SYN
  lost in a 5-packet buffer would otherwise wait out Linux's 1 s initial RTO and its backoff,
  a starvation the simulated flows cannot have). The receiver counts bytes per bin; the sender
  samples its ``tcp_info`` (bytes sent, retransmissions, window, RTT) every bin.
- One iperf3 server per other long-lived flow (``-s -1 -J``, port ``5201 + flow id``) in the receiver's
  namespace, one client per flow in the sender's, started at the flow's start time (relative to
  the traffic's time zero, ``t0``, on CLOCK_MONOTONIC). Clients run with ``-J
  --get-server-output`` and both ends report every ``INTERVAL_S``, so each flow's JSON holds the
  receiver's per-interval byte counts: the testbed's arrivals.
- Congestion control is set per connection (``iperf3 -C``, ``TCP_CONGESTION`` in the incast
  generator): a namespace's default may be restricted by the kernel (bed.py).
- Long-lived flows run ``ceil(duration - start)`` whole seconds (iperf3 takes whole seconds),
  so they may outlive ``sim.duration_s`` by under a second; nothing after it is measured.
- :func:`flow_row` turns one flow's JSON into the simulator's ``flows.csv`` row. A receiver
  interval counts in the window when its midpoint lies inside, so window counts are exact to
  within one interval at each edge; ``pkts_in_window`` is the window's bytes in full segments
  (rounded up); ``max_gap_s`` is the longest run of empty intervals (resolution ``INTERVAL_S``);
  ``snd_wnd_mean_bytes`` and ``rtt_mean_us`` average the sender's interval reports (its
  ``tcp_info``: the peer's advertised window, smoothed RTT) over the window.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from dcfair.procs import child_of_this_process
from dcfair.testbed import netns
from dcfair.testbed.bed import Testbed
from dcfair.testbed.mapping import Flow, Plan
from dcfair.testbed.netns import TestbedError

INTERVAL_S = 0.1
BASE_PORT = 5201
INCAST_PORT = 6000
FETCH_PORT = 20000
INCAST_SCRIPT = Path(__file__).with_name("incast.py")


class Traffic:
    def __init__(self, tb: Testbed, plan: Plan, workdir: Path):
        self.tb, self.plan, self.dir = tb, plan, Path(workdir)
        self.hosts = {h.name: h for h in tb.hosts}
        self.servers: List[subprocess.Popen] = []
        self.clients: Dict[int, subprocess.Popen] = {}
        self.launched_at: Dict[int, float] = {}
        self.incast_client: Optional[subprocess.Popen] = None
        self.t0 = 0.0
        self.stream_files: Dict[str, List[int]] = {}
        (self.dir / "flows").mkdir(parents=True, exist_ok=True)

    def _ns(self, host: str) -> str:
        return self.tb.ns(self.hosts[host])

    def start_servers(self, timeout_s: float = 15.0) -> None:
        """Starts every iperf3 and incast server and waits until each listens."""
        want: Dict[str, int] = {}
        for f in self.plan.flows:
            if sized(f) or streamed(f, self.plan):  # the fetch / stream server runs on the flow's sender
                cc = f.cc or self.hosts[f.src].cc
                argv = [sys.executable, str(INCAST_SCRIPT), "server", "--bind", self.hosts[f.src].ip,
                        "--port", str(FETCH_PORT + f.id)] + (["--cc", cc] if cc else [])
                out = subprocess.DEVNULL
                if streamed(f, self.plan):
                    argv.append("--tcp-info")
                    out = open(self.dir / "flows" / f"{f.id}.sender.json", "w")
                self.servers.append(_popen(self._ns(f.src), argv, out))
                if out is not subprocess.DEVNULL:
                    out.close()
                want[f.src] = want.get(f.src, 0) + 1
                continue
            argv = ["iperf3", "-s", "-1", "-J", "-i", str(INTERVAL_S), "-p", str(BASE_PORT + f.id),
                    "-B", self.hosts[f.dst].ip]
            out = open(self.dir / "flows" / f"{f.id}.server.json", "w")
            self.servers.append(_popen(self._ns(f.dst), argv, out))
            out.close()
            want[f.dst] = want.get(f.dst, 0) + 1
        ic = self.plan.incast
        if ic is not None:
            for i, (srv, _) in enumerate(ic.servers):
                argv = [sys.executable, str(INCAST_SCRIPT), "server", "--bind", self.hosts[srv].ip,
                        "--port", str(INCAST_PORT + i)] + (["--cc", self.hosts[srv].cc] if self.hosts[srv].cc else [])
                self.servers.append(_popen(self._ns(srv), argv, subprocess.DEVNULL))
                want[srv] = want.get(srv, 0) + 1
        deadline = time.monotonic() + timeout_s
        for host, n in want.items():
            while True:
                for p in self.servers:
                    if p.poll() is not None and p.returncode != 0:
                        raise TestbedError(f"a traffic server exited with {p.returncode} before listening")
                got = netns.run(["ss", "-Hltn"], ns=self._ns(host)).stdout.count("LISTEN")
                if got >= n:
                    break
                if time.monotonic() > deadline:
                    raise TestbedError(f"{host}: {got} of {n} servers listening after {timeout_s} s")
                time.sleep(0.05)

    def launch(self, f: Flow, t0: float, duration_s: float) -> None:
        """Starts flow ``f``'s client now."""
        dst = self.hosts[f.dst]
        cc = f.cc or self.hosts[f.src].cc
        argv = ["iperf3", "-c", dst.ip, "-p", str(BASE_PORT + f.id), "-J", "--get-server-output",
                "-i", str(INTERVAL_S)]
        if f.kind == "udp":
            argv += ["-u", "-b", str(int(f.rate_bps)), "-l", str(max(1, (f.packet_bytes or 1500) - 28))]
        elif cc:
            argv += ["-C", cc]
        if f.kind == "tcp" and self.plan.rcv_buf_bytes:
            argv += ["-w", str(self.plan.rcv_buf_bytes)]
        argv += ["-t", str(max(1, math.ceil(duration_s - (time.monotonic() - t0))))]
        out = open(self.dir / "flows" / f"{f.id}.json", "w")
        self.clients[f.id] = _popen(self._ns(f.src), argv, out)
        out.close()
        self.launched_at[f.id] = time.monotonic() - t0

    def launch_timed(self, duration_s: float) -> float:
        """Starts the sized and pre-connected flows' clients now and returns the run's start
        time ``t0``, which they wait for by themselves: 0.5 s from now, plus time for the
        pre-connected ones to open their connections (1 s and 5 ms per connection)."""
        n_pre = sum(1 for f in self.plan.flows if streamed(f, self.plan))
        self.t0 = time.monotonic() + 0.5 + (1.0 + 0.005 * n_pre if n_pre else 0.0)
        self.launch_fetches(self.t0, duration_s)
        self.launch_streams(self.t0, duration_s)
        return self.t0

    def launch_fetches(self, t0: float, duration_s: float) -> None:
        """Starts every sized flow's client now; each waits for ``t0 + start_s`` by itself."""
        for f in self.plan.flows:
            if not sized(f):
                continue
            cc = f.cc or self.hosts[f.src].cc
            argv = [sys.executable, str(INCAST_SCRIPT), "fetch", "--server", f"{self.hosts[f.src].ip}:{FETCH_PORT + f.id}",
                    "--bytes", str(f.size_bytes), "--start-at", repr(t0 + f.start_s),
                    "--deadline-at", repr(t0 + duration_s)] + (["--cc", cc] if cc else []) + self._rcvbuf()
            out = open(self.dir / "flows" / f"{f.id}.json", "w")
            self.clients[f.id] = _popen(self._ns(f.dst), argv, out)
            out.close()

    def _rcvbuf(self) -> List[str]:
        """The scenario's ``tcp.rcv_buf_bytes`` as the generators' receive buffer."""
        return ["--rcvbuf", str(self.plan.rcv_buf_bytes)] if self.plan.rcv_buf_bytes else []

    def launch_streams(self, t0: float, duration_s: float) -> None:
        """Starts one receiver process per host for its pre-connected long flows: each connects
        at once and asks for data at ``t0 + start_s``."""
        by_dst: Dict[str, List[Flow]] = {}
        for f in self.plan.flows:
            if streamed(f, self.plan):
                by_dst.setdefault(f.dst, []).append(f)
        for dst, flows in by_dst.items():
            ccs = {f.cc or self.hosts[f.src].cc for f in flows}
            if len(ccs) != 1:
                raise TestbedError(f"{dst}: pre-connected flows with different congestion controls")
            cc = ccs.pop()
            argv = [sys.executable, str(INCAST_SCRIPT), "streams",
                    "--servers", ",".join(f"{self.hosts[f.src].ip}:{FETCH_PORT + f.id}" for f in flows),
                    "--starts", ",".join(repr(t0 + f.start_s) for f in flows),
                    "--deadline-at", repr(t0 + duration_s)] + (["--cc", cc] if cc else []) + self._rcvbuf()
            out = open(self.dir / f"streams-{dst}.json", "w")
            self.clients[-1000 - len(self.stream_files)] = _popen(self._ns(dst), argv, out)
            out.close()
            self.stream_files[dst] = [f.id for f in flows]

    def stream_results(self) -> Dict[int, Dict[str, Any]]:
        """Flow id -> its record from the receivers' stream output."""
        out: Dict[int, Dict[str, Any]] = {}
        for dst, ids in self.stream_files.items():
            data = load_flow_json(self.dir / f"streams-{dst}.json")
            if isinstance(data, list):
                out.update(zip(ids, data))
        return out

    def launch_incast(self, start_at: float, deadline_s: float) -> None:
        ic = self.plan.incast
        assert ic is not None
        clients = {d for _, d in ic.servers}
        if len(clients) != 1:
            raise TestbedError("the incast generator runs one client host")
        client = clients.pop()
        servers = ",".join(f"{self.hosts[s].ip}:{INCAST_PORT + i}" for i, (s, _) in enumerate(ic.servers))
        argv = [sys.executable, str(INCAST_SCRIPT), "client", "--servers", servers, "--bytes", str(ic.server_bytes),
                "--rounds", str(ic.rounds), "--gap", str(ic.gap_s), "--start-at", repr(start_at),
                "--deadline-s", str(deadline_s)] + (["--cc", self.hosts[client].cc] if self.hosts[client].cc else []) + self._rcvbuf()
        out = open(self.dir / "incast.json", "w")
        self.incast_client = _popen(self._ns(client), argv, out)
        out.close()

    def running(self) -> int:
        n = sum(1 for p in self.clients.values() if p.poll() is None)
        return n + (1 if self.incast_client is not None and self.incast_client.poll() is None else 0)

    def wait(self, timeout_s: float) -> List[int]:
        """Waits for the clients; returns the ids of flows still running at the timeout.

        Those get SIGTERM (iperf3 then prints what it has, with an ``error``), then KILL.
        A client can be late when its control connection is in RTO backoff after a starved
        run; its receiver-side counts come from its server's own output either way."""
        deadline = time.monotonic() + timeout_s
        procs = list(self.clients.items()) + ([(-1, self.incast_client)] if self.incast_client else [])
        late = []
        for fid, p in procs:
            try:
                p.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.terminate()
                late.append((fid, p))
        for fid, p in late:
            try:
                p.wait(3.0)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        return [fid for fid, _ in late]

    def stop(self) -> None:
        """Ends every process (SIGTERM: the iperf3 servers still running print their JSON)."""
        for p in list(self.clients.values()) + self.servers + ([self.incast_client] if self.incast_client else []):
            if p.poll() is None:
                p.terminate()
        for p in list(self.clients.values()) + self.servers + ([self.incast_client] if self.incast_client else []):
            try:
                p.wait(3.0)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def sized(f: Flow) -> bool:
    """A TCP flow of a given size: run by the fetch generator, not iperf3 (iperf3 -n stops
    counting when the sender has written its bytes, not when they arrived)."""
    return f.kind == "tcp" and f.size_bytes is not None


def streamed(f: Flow, plan: Plan) -> bool:
    """A long-lived TCP flow that connects before the run (``tcp.handshake = false``)."""
    return f.kind == "tcp" and f.size_bytes is None and plan.preconnect


def stream_row(f: Flow, data, sender, t0: float, window: tuple, end_s: float, mss: int) -> Dict[str, Any]:
    """The ``flows.csv`` row of a pre-connected long flow: the receiver's bins, and the
    sender's tcp_info samples (bytes sent, retransmissions, window, RTT)."""
    row = fetch_row(f, data, t0, window, end_s, mss)
    if data is not None and data.get("connected", 0) > t0 + f.start_s:
        row["error"] = "connected after its start time"
    samples = (sender or {}).get("samples") or []
    if samples:
        fields = sender["fields"]
        col = {k: fields.index(k) for k in fields}
        last = samples[-1]
        row["bytes_sent"] = last[col["bytes_sent"]]
        row["retransmits"] = last[col["total_retrans"]] or 0
        w0, w1 = window
        inside = [s for s in samples if w0 <= s[0] - t0 <= w1]
        wnd = [s[col["snd_wnd"]] for s in inside if s[col["snd_wnd"]] is not None]
        rtt = [s[col["rtt_us"]] for s in inside if s[col["rtt_us"]]]
        row["snd_wnd_mean_bytes"] = round(sum(wnd) / len(wnd), 1) if wnd else None
        row["rtt_mean_us"] = round(sum(rtt) / len(rtt), 1) if rtt else None
    return row


def fetch_row(f: Flow, data: Optional[Dict[str, Any]], t0: float, window: tuple, end_s: float, mss: int) -> Dict[str, Any]:
    """The ``flows.csv`` row of a sized flow from the fetch generator's JSON."""
    row = flow_row(f, None, None, window, end_s, mss)
    if data is None:
        return row
    row["error"] = None
    base = float(data["start"]) - t0
    w0, w1 = window
    in_window, longest, run_start = 0, 0.0, base
    for k, b in enumerate(data.get("bins") or []):
        a, e = base + k * data["bin_s"], base + (k + 1) * data["bin_s"]
        if w0 <= (a + e) / 2 <= w1:
            in_window += b
        if b > 0:
            longest = max(longest, a - run_start)
            run_start = e
    row.update(bytes_delivered=int(data.get("received", 0)), bytes_in_window=in_window,
               pkts_in_window=-(-in_window // mss),
               max_gap_s=round(max(longest, end_s - run_start if run_start < end_s else 0.0), 6))
    if data.get("fct_s") is not None:
        fct = float(data["fct_s"])
        row.update(bytes_sent=int(data["bytes"]), end_s=round(base + fct, 6), fct_s=round(fct + base - f.start_s, 6))
    else:
        row["bytes_sent"] = None  # the receiver cannot know it
        row["error"] = data.get("error") and f"unfinished ({data['error']})"
    return row


def _popen(ns: str, argv: List[str], stdout) -> subprocess.Popen:
    return subprocess.Popen(["ip", "netns", "exec", ns] + argv, stdout=stdout, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, preexec_fn=child_of_this_process())


def load_flow_json(path: Path) -> Optional[Dict[str, Any]]:
    try:
        text = path.read_text()
    except OSError:
        return None
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def flow_row(f: Flow, data: Optional[Dict[str, Any]], launched_s: Optional[float], window: tuple,
             end_s: float, mss: int, server_data: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The ``flows.csv`` row of one flow from its iperf3 JSON: the client's (``data``, the
    sender's counters) and the server's (``server_data``, the receiver's intervals; else the copy
    inside the client's). With neither the row has zeros and ``error``."""
    w0, w1 = window
    row: Dict[str, Any] = {
        "flow_id": f.id, "src": f.src, "dst": f.dst, "kind": f.kind, "start_s": f.start_s, "end_s": None,
        "bytes_sent": 0, "bytes_delivered": 0, "pkts_in_window": 0, "fct_s": None,
        "max_gap_s": max(0.0, end_s - f.start_s), "retransmits": 0, "timeouts": 0, "group": f.group,
        "size_bytes": f.size_bytes, "bytes_in_window": 0, "snd_wnd_mean_bytes": None, "rtt_mean_us": None,
        "error": None,
    }
    if server_data is not None and not server_data.get("intervals"):
        server_data = None
    if data is None and server_data is None:
        row["error"] = "no output from iperf3"
        return row
    data = data or {}
    if data.get("error"):
        row["error"] = data["error"]
    base = launched_s if launched_s is not None else f.start_s
    server = server_data or data.get("server_output_json") or {}
    intervals = [iv["streams"][0] for iv in server.get("intervals", []) if iv.get("streams")]
    in_window, pkts_window, longest, run_start = 0, 0, 0.0, base
    total = sum(int(s["bytes"]) for s in intervals)  # when the server was stopped before its summary
    for s in intervals:
        a, b = base + float(s["start"]), base + float(s["end"])
        if w0 <= (a + b) / 2 <= w1:
            in_window += int(s["bytes"])
            pkts_window += int(s.get("packets", 0) or 0)
        if int(s["bytes"]) > 0:
            longest = max(longest, a - run_start)
            run_start = b
    longest = max(longest, end_s - run_start)
    row["max_gap_s"] = round(max(0.0, longest), 6)
    # The sender's view, per interval: the receive window it was allowed (snd_wnd: what a
    # FairQ switch rewrites) and its smoothed RTT (queueing delay included).
    wnd, rtt = [], []
    for iv in data.get("intervals", []):
        s = (iv.get("streams") or [{}])[0]
        a, b = base + float(s.get("start", 0.0)), base + float(s.get("end", 0.0))
        if w0 <= (a + b) / 2 <= w1:
            if s.get("snd_wnd") is not None:
                wnd.append(float(s["snd_wnd"]))
            if s.get("rtt"):
                rtt.append(float(s["rtt"]))
    row["snd_wnd_mean_bytes"] = round(sum(wnd) / len(wnd), 1) if wnd else None
    row["rtt_mean_us"] = round(sum(rtt) / len(rtt), 1) if rtt else None
    end = data.get("end") or {}
    srv_end = server.get("end") or {}
    if f.kind == "tcp":
        sent = end.get("sum_sent") or {}
        rcvd = srv_end.get("sum_received") or end.get("sum_received") or {}
        row["bytes_sent"] = int(sent.get("bytes", 0))
        row["retransmits"] = int(sent.get("retransmits", 0) or 0)
        row["bytes_delivered"] = int(rcvd.get("bytes", total))
        row["bytes_in_window"] = in_window
        row["pkts_in_window"] = -(-in_window // mss)
        if f.size_bytes is not None and row["bytes_delivered"] >= f.size_bytes:
            row["end_s"] = round(base + float(rcvd.get("end", rcvd.get("seconds", 0.0))), 6)
            row["fct_s"] = round(row["end_s"] - f.start_s, 6)
    else:
        sent = end.get("sum") or end.get("sum_sent") or {}
        rcvd = srv_end.get("sum") or srv_end.get("sum_received") or {}
        row["bytes_sent"] = int(sent.get("bytes", 0))
        row["bytes_delivered"] = int(rcvd.get("bytes", total))
        row["bytes_in_window"] = in_window
        row["pkts_in_window"] = pkts_window
    return row


def host_timeouts(tb: Testbed, host) -> int:
    """RTO expiries of the TCP stack in one host's namespace (TcpExt TCPTimeouts)."""
    text = netns.run(["cat", "/proc/net/netstat"], ns=tb.ns(host)).stdout.splitlines()
    for head, vals in zip(text[::2], text[1::2]):
        if head.startswith("TcpExt:"):
            names, values = head.split()[1:], vals.split()[1:]
            return int(dict(zip(names, values)).get("TCPTimeouts", 0))
    return 0
