"""Request/response incast generator: servers answer block requests; one client asks them all at once.

Stand-alone (standard library only) so it runs inside a namespace as
``python3 incast.py server|client ...`` without the dcfair package. The model follows the
simulator's ``[incast]`` (docs/scenarios.md): persistent connections, opened one after another
before the first request; each round the client sends every server an 8-byte request (the
number of bytes wanted, big-endian) at once; a server answers with that many bytes; the round
ends when the last answer is complete; the next request leaves ``gap`` seconds later.

    python3 incast.py server --bind 10.77.0.1 --port 6000 [--cc reno]
    python3 incast.py client --servers 10.77.0.1:6000,10.77.0.2:6000 --bytes 64000 --rounds 20
                             [--gap 0] [--start-at MONOTONIC] [--cc reno] [--deadline-s 60]
    python3 incast.py fetch --server 10.77.0.1:6001 --bytes 200000 [--start-at MONOTONIC] [--cc reno]

    python3 incast.py streams --servers 10.77.0.1:6002,... --starts T1,... --deadline-at T2 [--cc reno]

``streams`` runs a receiver's long-lived flows, connected one after another before the run and
started at their ``--starts`` (a server run with ``--tcp-info`` samples the sender's tcp_info and prints it on
SIGTERM).
``fetch`` is one sized flow (the server is its sender): it connects at ``--start-at`` and prints
``fct_s`` (connection, request and answer) and the bytes received per ``bin_s`` since the start.

The client prints one JSON object: ``round_times_s`` (per round), ``answer_times_s`` (per
round, per server: from the request to the answer's last byte), ``rounds_completed``,
``bytes_per_server``, ``servers``. Times come from ``time.monotonic`` (CLOCK_MONOTONIC, shared by
every namespace, so ``--start-at`` from the parent process is meaningful here).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import socket
import struct
import sys
import time

CHUNK = 1 << 16
BIN_S = 0.1  # fetch: bytes received per bin, from the start
REQUEST = struct.Struct("!Q")


RCVBUF = 0  # --rcvbuf: SO_RCVBUF of the receiving sockets (set before connect), 0 = the kernel's


def _set_cc(sock: socket.socket, cc) -> None:
    if cc:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())


def _client_socket(cc) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    _set_cc(sock, cc)
    if RCVBUF:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
    sock.setblocking(False)
    return sock


#: struct tcp_info (linux/tcp.h): offsets of the fields the stream server samples.
#: The RTO state (ca_state, backoff, rto_us, cwnd, unacked) is there for per-flow timelines of
#: starved flows (docs/validation.md, testbed section).
TCPI = {"rtt_us": (68, "I"), "total_retrans": (100, "I"), "bytes_sent": (200, "Q"), "snd_wnd": (228, "I"),
        "ca_state": (1, "B"), "backoff": (4, "B"), "rto_us": (8, "I"), "rttvar_us": (72, "I"),
        "snd_cwnd": (80, "I"), "unacked": (24, "I")}
SAMPLES: list = []  # stream servers: [monotonic, *TCPI fields] every BIN_S


def tcp_info(sock: socket.socket) -> list:
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 512)
    return [struct.unpack_from(fmt, raw, off)[0] if len(raw) >= off + struct.calcsize(fmt) else None
            for off, fmt in TCPI.values()]


async def _sample(sock: socket.socket) -> None:
    while True:
        try:
            SAMPLES.append([time.monotonic()] + tcp_info(sock))
        except OSError:
            return
        await asyncio.sleep(BIN_S)


async def _serve_one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    payload = bytes(CHUNK)
    sampler = None
    if STREAM_INFO:
        sampler = asyncio.ensure_future(_sample(writer.get_extra_info("socket")))
    try:
        while True:
            head = await reader.readexactly(REQUEST.size)
            (n,) = REQUEST.unpack(head)
            while n > 0:
                k = min(n, CHUNK)
                writer.write(payload[:k])
                n -= k
                await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        if sampler is not None:
            sampler.cancel()
        writer.close()


STREAM_INFO = False  # set by `server --tcp-info`


async def server(bind: str, port: int, cc) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    _set_cc(sock, cc)  # accepted sockets inherit the listener's congestion control
    sock.bind((bind, port))
    sock.listen(1024)
    srv = await asyncio.start_server(_serve_one, sock=sock)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with srv:
        await stop.wait()
    if STREAM_INFO:  # the sender's view, printed when it is told to stop
        json.dump({"fields": ["t"] + list(TCPI), "samples": SAMPLES}, sys.stdout)
        print(flush=True)


async def _answer(reader: asyncio.StreamReader, n: int, t0: float, bins=None) -> float:
    left = n
    while left > 0:
        data = await reader.read(min(left, 1 << 20))
        if not data:
            raise ConnectionError("server closed the connection")
        left -= len(data)
        if bins is not None:
            k = int((time.monotonic() - t0) / BIN_S)
            bins.extend([0] * (k + 1 - len(bins)))
            bins[k] += len(data)
    return time.monotonic() - t0


async def fetch(host: str, port: int, nbytes: int, start_at, cc, deadline_at=None) -> dict:
    """One sized flow: at ``start_at`` connect, ask for ``nbytes``, read them; the flow's
    completion time runs from before the connection (its handshake included) to the last byte.
    At ``deadline_at`` (monotonic) it gives up: ``fct_s`` is then null and ``received`` short."""
    bins: list = []
    t0 = time.monotonic()
    try:
        return await asyncio.wait_for(_fetch(host, port, nbytes, start_at, cc, bins),
                                      None if deadline_at is None else max(0.0, deadline_at - t0))
    except (asyncio.TimeoutError, OSError) as e:
        start = max(t0, start_at or t0)
        return {"start": start, "fct_s": None, "bytes": nbytes, "received": sum(bins), "bin_s": BIN_S, "bins": bins,
                "error": type(e).__name__}


async def streams(targets, starts, deadline_at: float, cc) -> list:
    """Long-lived flows into this host, one per ``(host, port)`` of ``targets``: the connections
    open one after another before the run (the simulator's flows open without a handshake; all
    at once, 100 SYN-ACKs meet a 5-packet bottleneck buffer, most are dropped and the 1 s, 2 s,
    4 s ... SYN backoff delays the whole run, as the first dcfair-switch run showed); flow ``i``
    asks for an endless answer at ``starts[i]`` (monotonic) and counts what arrives per bin
    until ``deadline_at``. One process for all of a receiver's flows."""
    loop = asyncio.get_running_loop()

    async def connect(host, port):
        sock = _client_socket(cc)
        await loop.sock_connect(sock, (host, port))
        return (time.monotonic(),) + await asyncio.open_connection(sock=sock)

    conns = [await connect(h, p) for h, p in targets]

    async def one(i):
        connected, reader, writer = conns[i]
        await asyncio.sleep(max(0.0, starts[i] - time.monotonic()))
        t0 = time.monotonic()
        writer.write(REQUEST.pack(1 << 62))
        bins: list = []
        try:
            await asyncio.wait_for(_answer(reader, 1 << 62, t0, bins), max(0.0, deadline_at - t0))
        except (asyncio.TimeoutError, ConnectionError):
            pass
        writer.close()
        return {"start": t0, "connected": connected, "fct_s": None, "received": sum(bins), "bin_s": BIN_S, "bins": bins}

    return await asyncio.gather(*(one(i) for i in range(len(targets))))


async def _fetch(host, port, nbytes, start_at, cc, bins) -> dict:
    if start_at is not None:
        await asyncio.sleep(max(0.0, start_at - time.monotonic()))
    t0 = time.monotonic()
    sock = _client_socket(cc)
    await asyncio.get_running_loop().sock_connect(sock, (host, port))
    reader, writer = await asyncio.open_connection(sock=sock)
    writer.write(REQUEST.pack(nbytes))
    fct = await _answer(reader, nbytes, t0, bins)
    writer.close()
    return {"start": t0, "fct_s": fct, "bytes": nbytes, "received": nbytes, "bin_s": BIN_S, "bins": bins}


async def client(servers, nbytes: int, rounds: int, gap: float, start_at, cc, deadline_s: float) -> dict:
    conns = []
    for host, port in servers:  # one after another, as the simulator opens them
        sock = _client_socket(cc)
        await asyncio.get_running_loop().sock_connect(sock, (host, port))
        conns.append(await asyncio.open_connection(sock=sock))
    if start_at is not None:
        await asyncio.sleep(max(0.0, start_at - time.monotonic()))
    end = time.monotonic() + deadline_s
    out = {"servers": len(servers), "bytes_per_server": nbytes, "round_times_s": [], "answer_times_s": [],
           "round_starts_s": []}
    req = REQUEST.pack(nbytes)
    for _ in range(rounds):
        if time.monotonic() >= end:
            break
        t0 = time.monotonic()
        for _, w in conns:
            w.write(req)
        try:
            answers = await asyncio.wait_for(
                asyncio.gather(*(_answer(r, nbytes, t0) for r, _ in conns)), timeout=max(0.001, end - t0))
        except asyncio.TimeoutError:
            break
        out["round_starts_s"].append(t0)
        out["answer_times_s"].append(answers)
        out["round_times_s"].append(max(answers))
        if gap > 0:
            await asyncio.sleep(gap)
    out["rounds_completed"] = len(out["round_times_s"])
    for _, w in conns:
        w.close()
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="incast.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("server")
    s.add_argument("--bind", default="0.0.0.0")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--cc")
    s.add_argument("--tcp-info", action="store_true", help="sample each connection's tcp_info; print it on SIGTERM")
    c = sub.add_parser("client")
    c.add_argument("--servers", required=True, help="host:port,host:port,...")
    c.add_argument("--bytes", type=int, required=True)
    c.add_argument("--rounds", type=int, required=True)
    c.add_argument("--gap", type=float, default=0.0)
    c.add_argument("--start-at", type=float)
    c.add_argument("--cc")
    c.add_argument("--deadline-s", type=float, default=3600.0)
    g = sub.add_parser("fetch")
    g.add_argument("--server", required=True, help="host:port")
    g.add_argument("--bytes", type=int, required=True)
    g.add_argument("--start-at", type=float)
    g.add_argument("--cc")
    g.add_argument("--deadline-at", type=float)
    t = sub.add_parser("streams")
    t.add_argument("--servers", required=True, help="host:port,host:port,...")
    t.add_argument("--starts", required=True, help="monotonic start time of each, comma-separated")
    t.add_argument("--deadline-at", type=float, required=True)
    t.add_argument("--cc")
    for sp in (c, g, t):
        sp.add_argument("--rcvbuf", type=int, default=0, help="SO_RCVBUF of the receiving sockets (bytes)")
    a = p.parse_args(argv)
    global RCVBUF
    RCVBUF = getattr(a, "rcvbuf", 0)
    try:
        if a.mode == "server":
            global STREAM_INFO
            STREAM_INFO = a.tcp_info
            asyncio.run(server(a.bind, a.port, a.cc))
        elif a.mode == "streams":
            targets = [(h, int(port)) for h, _, port in (x.rpartition(":") for x in a.servers.split(","))]
            starts = [float(x) for x in a.starts.split(",")]
            json.dump(asyncio.run(streams(targets, starts, a.deadline_at, a.cc)), sys.stdout)
            print()
        elif a.mode == "fetch":
            host, _, port = a.server.rpartition(":")
            json.dump(asyncio.run(fetch(host, int(port), a.bytes, a.start_at, a.cc, a.deadline_at)), sys.stdout)
            print()
        else:
            servers = [(h, int(port)) for h, _, port in (x.rpartition(":") for x in a.servers.split(","))]
            res = asyncio.run(client(servers, a.bytes, a.rounds, a.gap, a.start_at, a.cc, a.deadline_s))
            json.dump(res, sys.stdout)
            print()
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
