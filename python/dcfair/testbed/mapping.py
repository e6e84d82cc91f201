"""A scenario (the simulator's TOML) as a testbed plan: hosts, switch ports, traffic.

Pure: reads the scenario's text and overrides, touches nothing, needs no root; the unit tests
run it directly. The rules (docs/testbed.md, "Mapping"):

- Only the dumbbell maps: hosts ``s0 ..``, ``r0 ..`` and ``udp`` become host namespaces
  ``h0 ..`` in that order; every host has its own switch port. The port towards a receiver is
  a bottleneck (rate ``bottleneck_rate_mbps``, the scenario's ``[queue]``, measured); the
  others run a DropTail FIFO of ``host_buffer_pkts`` at ``access_rate_mbps``. Each port delays
  by ``access_delay_us + bottleneck_delay_us`` so the round trip (through two ports) is the
  simulator's ``2 x (access + bottleneck)``. Host NICs send at their link's rate (tbf) over a
  FIFO of ``host_buffer_pkts``.
- What shapes the experiment and cannot be reproduced (other topologies, routing, per-port
  tables, Poisson arrivals, ExpressPass, time series and traces, several incast epochs, a
  group's TCP other than its congestion control) is invalid input naming the key: exit 2.
- TCP keys map onto Linux where Linux has the knob: ``cc`` (``newreno`` -> ``reno``, which in
  Linux is NewReno with SACK when SACK is on), ``min_rto_ms`` -> route ``rto_min``,
  ``delayed_ack = false`` -> route ``quickack``, ``init_cwnd_pkts`` -> ``initcwnd``, ``sack``,
  ``timestamps``, ``window_scaling``, ``ecn`` -> sysctls, ``rcv_buf_bytes`` -> iperf3 ``-w``,
  ``handshake = false`` -> long-lived flows connect before the run (no SYN in the congested
  network, as the simulator's flows have none).
  The simulator's defaults apply when a key is absent (so SACK and timestamps are off, as in
  the simulator). The other keys describe the simulated TCP's internals (ns-2 recovery
  variants, initial RTO, ...): Linux does what it does; each is listed in the plan's
  ``notes`` and in ``summary.json``, never silently dropped.
- Start times are uniform in ``[start_min_s, start_max_s]`` from Python's ``random.Random``
  seeded with the scenario's seed: the same distribution as the simulator, not the same draws.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from dcfair.errors import InvalidInput
from dcfair.testbed.bed import MAX_HOSTS, HostSpec

try:
    import tomllib as _toml
except ImportError:  # pragma: no cover - Python < 3.11
    import tomli as _toml  # type: ignore[no-redef]


def invalid(key: str, reason: str) -> Exception:
    return InvalidInput(key, reason)


def check_cc(plan: "Plan") -> None:
    """Invalid input naming the group's ``tcp.cc`` if a flow asks for a congestion control the
    kernel does not offer (a dumbbell's run and a fabric's alike)."""
    from dcfair.testbed.netns import available_cc

    offered = available_cc()
    for f in plan.flows:
        if f.cc is not None and f.cc not in offered:
            where = "flows" if f.group == "flows" else f"groups.{f.group}"
            raise invalid(f"{where}.tcp.cc", f"the kernel does not offer {f.cc!r} "
                                             f"(tcp_available_congestion_control: {' '.join(offered)})")


#: The simulator's congestion controls -> Linux's (tcp_congestion_control).
CC = {"newreno": "reno", "reno": "reno", "cubic": "cubic", "dctcp": "dctcp"}
#: The simulator's TCP defaults the testbed reproduces (docs/tcp.md).
TCP_DEFAULTS = {
    "cc": "newreno", "mss_bytes": 1460, "init_cwnd_pkts": 2, "rcv_buf_bytes": 65535, "window_scaling": True,
    "delayed_ack": False, "min_rto_ms": 200.0, "sack": False, "timestamps": False, "ecn": False,
}
#: TCP keys that are mapped (the rest are noted as Linux's own behaviour).
TCP_MAPPED = set(TCP_DEFAULTS) | {"header_bytes", "handshake"}
TOP_KEYS = {"name", "description", "seed", "sim", "measure", "topology", "queue", "tcp", "flows", "groups",
            "udp", "incast", "fairq"}
GROUP_KEYS = {"count", "size_bytes", "size_pkts", "start_min_s", "start_max_s", "src", "dst", "tcp", "transport"}
DEFAULT_BUFFER = 1000


@dataclass
class Flow:
    """One flow: a TCP connection (iperf3) or a UDP source."""

    id: int
    src: str
    dst: str
    kind: str  # "tcp" or "udp"
    group: str
    start_s: float
    size_bytes: Optional[int] = None
    cc: Optional[str] = None  # Linux name, for iperf3 -C; None: the host's
    rate_bps: Optional[float] = None  # UDP
    packet_bytes: Optional[int] = None  # UDP, on the wire


@dataclass
class Port:
    host: str
    rate_bps: float
    delay_us: float
    queue: Dict[str, Any]
    measured: bool


@dataclass
class Incast:
    servers: List[Tuple[str, str]]  # (server host, client host), one per server connection
    server_bytes: int
    rounds: int
    start_s: float
    gap_s: float
    block_bytes: int


@dataclass
class Plan:
    name: str
    seed: int
    duration_s: float
    window_s: float
    hosts: List[HostSpec]
    ports: List[Port]
    flows: List[Flow]
    queue: Dict[str, Any]
    fairq: Optional[Dict[str, Any]] = None
    incast: Optional[Incast] = None
    rcv_buf_bytes: Optional[int] = None
    mss_bytes: int = 1460
    header_bytes: int = 40
    notes: List[str] = field(default_factory=list)
    #: ``tcp.handshake = false``: long-lived flows connect before the run, in an idle network
    #: (the stream generator); otherwise iperf3 connects at the flow's start time.
    preconnect: bool = False

    @property
    def queue_kind(self) -> str:
        return str(self.queue.get("kind", "droptail"))

    def switch_config(self, seed: Optional[int] = None) -> Dict[str, Any]:
        """The ``switch.toml`` of ``dcfair-switch`` (its ``iface`` names: ``p<host index>``)."""
        index = {h.name: h for h in self.hosts}
        cfg: Dict[str, Any] = {"seed": self.seed if seed is None else seed}
        if self.fairq is not None:
            cfg["fairq"] = self.fairq
        cfg["port"] = [
            {"iface": index[p.host].port, "prefixes": [f"{index[p.host].ip}/32"], "rate_bps": float(p.rate_bps),
             "delay_us": float(p.delay_us), "queue": p.queue}
            for p in self.ports
        ]
        return cfg


def merged(text: str, overrides: List[Tuple[str, str]] = ()) -> Dict[str, Any]:
    """The scenario's table after ``--set`` overrides (dotted keys, TOML literals)."""
    from dcfair.scenario import parse_literal

    try:
        doc = _toml.loads(text)
    except _toml.TOMLDecodeError as e:
        raise invalid("<scenario>", f"not valid TOML: {e}") from None
    for key, value in overrides:
        node = doc
        parts = key.split(".")
        for p in parts[:-1]:
            nxt = node.get(p)
            if not isinstance(nxt, dict):
                nxt = node[p] = {}
            node = nxt
        node[parts[-1]] = parse_literal(value) if isinstance(value, str) else value
    return doc


def _unknown(table: Dict[str, Any], allowed, where: str, why: str) -> None:
    for k in table:
        if k not in allowed:
            raise invalid(f"{where}{k}", why)


def _num(table: Dict[str, Any], key: str, where: str, default=None, required: bool = False) -> Any:
    if key not in table:
        if required:
            raise invalid(f"{where}{key}", "required")
        return default
    v = table[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise invalid(f"{where}{key}", f"must be a number, got {v!r}")
    return v


def _names(value, key: str) -> List[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return list(value)
    raise invalid(key, f"expected a host name or a non-empty list of host names, got {value!r}")


SYSCTL_KEY = re.compile(r"net\.(ipv4|ipv6|core)\.[a-z0-9_.]+")
#: Values go into the namespaces' shell scripts: plain words only.
SYSCTL_VALUE = re.compile(r"[A-Za-z0-9_.,:/+-]+")


def extra_sysctls(pairs: List[str]) -> Dict[str, str]:
    """``--sysctl KEY=VALUE`` options: network sysctls set in every host namespace after the
    scenario's own (for measurements beyond the scenario keys, e.g. ``net.ipv4.tcp_frto=0``).
    ``InvalidInput`` naming ``--sysctl`` when one is not ``net.ipv4|ipv6|core.NAME=VALUE``."""
    out: Dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not SYSCTL_KEY.fullmatch(key) or not SYSCTL_VALUE.fullmatch(value):
            raise invalid("--sysctl", f"expected net.ipv4|ipv6|core.NAME=VALUE (a plain word: letters, digits, "
                                      f"_ . , : / + -), got {pair!r}")
        out[key] = value
    return out


def with_sysctls(p: Plan, extra: Dict[str, str]) -> Plan:
    """``p`` with ``extra`` (from :func:`extra_sysctls`) set on every host, and a note saying so."""
    for h in p.hosts:
        h.sysctls.update(extra)
    if extra:
        p.notes.append("every host: " + ", ".join(f"{k}={v}" for k, v in sorted(extra.items())) + " (--sysctl)")
    return p


def tcp_hosts(sc: Dict[str, Any]):
    """The scenario's ``[tcp]`` on Linux hosts: (the keys with the simulator's defaults, a
    function giving a new host's ``HostSpec`` keywords, notes). ``InvalidInput`` naming a key
    that has no Linux counterpart."""
    notes: List[str] = []
    tcp = dict(TCP_DEFAULTS)
    tcp.update(sc.get("tcp", {}))
    cc = tcp["cc"]
    if cc not in CC:
        raise invalid("tcp.cc", f"{cc!r} has no Linux counterpart (mapped: {', '.join(sorted(CC))})")
    for k in sorted(sc.get("tcp", {})):
        if k not in TCP_MAPPED:
            notes.append(f"tcp.{k}: not applied (Linux's own {CC[cc]} behaviour)")
    if int(tcp["mss_bytes"]) != 1460:
        raise invalid("tcp.mss_bytes", "the testbed's MTU is 1500 (MSS 1460 without timestamps); only 1460 maps")
    sysctls = {
        "net.ipv4.tcp_sack": "1" if tcp["sack"] else "0",
        "net.ipv4.tcp_timestamps": "1" if tcp["timestamps"] else "0",
        "net.ipv4.tcp_window_scaling": "1" if tcp["window_scaling"] else "0",
        "net.ipv4.tcp_ecn": "1" if (tcp["ecn"] or cc == "dctcp") else "0",
    }

    def host_kw() -> Dict[str, Any]:
        return dict(cc=CC[cc], rto_min_ms=float(tcp["min_rto_ms"]), quickack=not tcp["delayed_ack"],
                    initcwnd=int(tcp["init_cwnd_pkts"]), sysctls=dict(sysctls))

    return tcp, host_kw, notes


def plan(text: str, overrides: List[Tuple[str, str]] = (), origin: str = "<scenario>",
         seed: Optional[int] = None) -> Plan:
    """The testbed plan of a scenario, or ``InvalidInput`` naming the first key that cannot map."""
    sc = merged(text, overrides)
    notes: List[str] = []
    NOT = "the testbed cannot reproduce it"
    _unknown(sc, TOP_KEYS, "", f"{NOT} (docs/testbed.md, Mapping)")
    name = sc.get("name") or _stem(origin)
    if seed is None:
        seed = int(sc.get("seed", 1))

    simt = sc.get("sim", {})
    _unknown(simt, {"duration_s", "tie_break"}, "sim.", NOT)
    duration = float(_num(simt, "duration_s", "sim.", required=True))
    if not duration > 0:
        raise invalid("sim.duration_s", f"must be positive, got {duration}")
    if "tie_break" in simt:
        notes.append("sim.tie_break: an event-ordering rule of the simulator; real time has no ties")
    meas = sc.get("measure", {})
    _unknown(meas, {"window_s"}, "measure.", f"{NOT}: the testbed measures flows and the switch's counters only")
    window = float(_num(meas, "window_s", "measure.", default=duration))
    if not 0 < window <= duration:
        raise invalid("measure.window_s", f"must be in (0, sim.duration_s], got {window}")

    topo = sc.get("topology", {})
    if topo.get("kind") != "dumbbell":
        raise invalid("topology.kind", f"only \"dumbbell\" maps onto the testbed, got {topo.get('kind')!r}")
    _unknown(topo, {"kind", "senders", "receivers", "access_rate_mbps", "access_delay_us", "bottleneck_rate_mbps",
                    "bottleneck_delay_us", "host_buffer_pkts"}, "topology.", NOT)
    senders = int(_num(topo, "senders", "topology.", required=True))
    receivers = int(_num(topo, "receivers", "topology.", default=1))
    access_bps = float(_num(topo, "access_rate_mbps", "topology.", required=True)) * 1e6
    bottleneck_bps = float(_num(topo, "bottleneck_rate_mbps", "topology.", required=True)) * 1e6
    delay_us = float(_num(topo, "access_delay_us", "topology.", required=True)) + float(
        _num(topo, "bottleneck_delay_us", "topology.", required=True))
    host_buffer = int(_num(topo, "host_buffer_pkts", "topology.", default=DEFAULT_BUFFER))
    if senders < 1 or receivers < 1:
        raise invalid("topology.senders", "at least one sender and one receiver")
    if senders + receivers + 1 > MAX_HOSTS:
        raise invalid("topology.senders", f"the testbed has at most {MAX_HOSTS} hosts (a namespace each), "
                                          f"got {senders} senders and {receivers} receivers")

    tcp, host_kw, tnotes = tcp_hosts(sc)
    notes += tnotes

    udp = sc.get("udp")
    names = [f"s{i}" for i in range(senders)] + [f"r{i}" for i in range(receivers)] + (["udp"] if udp is not None else [])
    hosts: List[HostSpec] = []
    for i, n in enumerate(names):
        hosts.append(HostSpec(i, n, tx_rate_bps=bottleneck_bps if n.startswith("r") else access_bps,
                              tx_limit_pkts=host_buffer, **host_kw()))

    queue = dict(sc.get("queue", {}))
    queue.setdefault("kind", "droptail")
    fifo = {"kind": "droptail", "limit_pkts": host_buffer}
    ports = [Port(n, bottleneck_bps if n.startswith("r") else access_bps, delay_us,
                  queue if n.startswith("r") else fifo, n.startswith("r")) for n in names]

    fairq = sc.get("fairq")
    if fairq is not None:
        fairq = dict(fairq)
        sw = fairq.pop("switches", ["sw"])
        if sw not in (["sw"], "sw"):
            raise invalid("fairq.switches", f"the dumbbell has one switch, \"sw\"; got {sw!r}")
        if fairq.get("wscale", "reserved_bits") == "reserved_bits":
            # The simulated hosts tag their ACKs with the window scale; Linux hosts do not, and
            # the switch leaves an untagged ACK alone: FairQ would silently do nothing.
            raise invalid("fairq.wscale", "reserved_bits (the default) needs end hosts that tag their ACKs; "
                                          "Linux does not: set fairq.wscale = \"off\" or \"unify\"")

    rng = random.Random(seed)
    flows: List[Flow] = []
    groups = [("flows", sc["flows"])] if "flows" in sc else []
    groups += sorted((sc.get("groups") or {}).items())
    for gname, g in groups:
        where = "flows." if gname == "flows" else f"groups.{gname}."
        if not isinstance(g, dict):
            raise invalid(where.rstrip("."), "expected a table")
        _unknown(g, GROUP_KEYS, where, NOT)
        if g.get("transport", "tcp") != "tcp":
            raise invalid(f"{where}transport", f"only tcp maps onto the testbed, got {g['transport']!r}")
        count = int(_num(g, "count", where, required=True))
        size = _num(g, "size_bytes", where)
        if "size_pkts" in g:
            size = int(_num(g, "size_pkts", where)) * int(tcp["mss_bytes"])
        lo = float(_num(g, "start_min_s", where, default=0.0))
        hi = float(_num(g, "start_max_s", where, default=lo))
        src = _names(g["src"], f"{where}src") if "src" in g else None
        dst = _names(g["dst"], f"{where}dst") if "dst" in g else None
        for hn, key in [(src, "src"), (dst, "dst")]:
            for h in hn or []:
                if h not in names or h == "udp":
                    raise invalid(f"{where}{key}", f"{h!r} is not a host of the dumbbell (s0.., r0..)")
        gcc = None
        for k, v in (g.get("tcp") or {}).items():
            if k == "cc":
                if v not in CC:
                    raise invalid(f"{where}tcp.cc", f"{v!r} has no Linux counterpart")
                gcc = CC[v]
            elif tcp.get(k) != v:
                raise invalid(f"{where}tcp.{k}", "per-group TCP maps only cc onto the testbed (the rest is per host)")
        for j in range(count):
            fid = len(flows)
            s = src[j % len(src)] if src else f"s{fid % senders}"
            d = dst[j % len(dst)] if dst else f"r{fid % receivers}"
            if s == d:
                raise invalid(f"{where}dst", f"flow {fid} would go from {s} to itself")
            start = lo + (hi - lo) * rng.random() if hi > lo else lo
            flows.append(Flow(fid, s, d, "tcp", gname, start, None if size is None else int(size), gcc))
    incast = None
    if "incast" in sc:
        incast = _incast(sc["incast"], senders, names, NOT)
    if udp is not None:
        _unknown(udp, {"rate_fraction", "pattern", "packet_bytes", "start_s", "src", "dst"}, "udp.", NOT)
        frac = float(_num(udp, "rate_fraction", "udp.", required=True))
        if udp.get("pattern", "poisson") == "poisson":
            notes.append("udp.pattern: poisson sent as iperf3's constant bit rate at the same mean")
        if udp.get("src", "udp") != "udp" or udp.get("dst", "r0") != "r0":
            raise invalid("udp.src", "on the testbed the UDP source is host udp, to r0")
        flows.append(Flow(len(flows), "udp", "r0", "udp", "udp", float(_num(udp, "start_s", "udp.", default=0.0)),
                          rate_bps=frac * bottleneck_bps, packet_bytes=int(_num(udp, "packet_bytes", "udp.", default=1500))))
    if not flows and incast is None:
        raise invalid("flows", "the scenario has no traffic the testbed can run ([flows], [groups.*], [udp], [incast])")
    rcv = tcp.get("rcv_buf_bytes")
    preconnect = tcp.get("handshake", True) is False
    if preconnect:
        notes.append("tcp.handshake: false -> long-lived flows connect before the run (stream generator, not iperf3); "
                     "sized flows still connect at their start")
    return Plan(name, seed, duration, window, hosts, ports, flows, queue, fairq, incast,
                None if "rcv_buf_bytes" not in sc.get("tcp", {}) else int(rcv), int(tcp["mss_bytes"]),
                int(tcp.get("header_bytes", 40)), notes, preconnect)


def _incast(ic: Dict[str, Any], senders: int, names: List[str], NOT: str) -> Incast:
    _unknown(ic, {"servers", "src", "dst", "block_bytes", "server_bytes", "rounds", "start_s", "gap_s", "epochs",
                  "epoch_interval_s"}, "incast.", NOT)
    n = int(_num(ic, "servers", "incast.", required=True))
    if int(ic.get("epochs", 1)) != 1:
        raise invalid("incast.epochs", "the testbed runs one epoch of requests")
    src = _names(ic["src"], "incast.src") if "src" in ic else [f"s{i}" for i in range(min(n, senders))]
    dst = _names(ic["dst"], "incast.dst") if "dst" in ic else ["r0"]
    if "src" not in ic and n > senders:
        raise invalid("incast.servers", f"at most topology.senders ({senders}) without incast.src")
    for key, lst in [("incast.src", src), ("incast.dst", dst)]:
        for h in lst:
            if h not in names or h == "udp":
                raise invalid(key, f"{h!r} is not a host of the dumbbell")
    if ("block_bytes" in ic) == ("server_bytes" in ic):
        raise invalid("incast.block_bytes", "give exactly one of block_bytes and server_bytes")
    per = int(ic["server_bytes"]) if "server_bytes" in ic else -(-int(ic["block_bytes"]) // n)
    pairs = [(src[i % len(src)], dst[(i // len(src)) % len(dst)]) for i in range(n)]
    for s, d in pairs:
        if s == d:
            raise invalid("incast.dst", f"a server on {s} would answer a client on the same host")
    return Incast(pairs, per, int(_num(ic, "rounds", "incast.", required=True)),
                  float(_num(ic, "start_s", "incast.", default=0.01)), float(_num(ic, "gap_s", "incast.", default=0.0)),
                  int(ic.get("block_bytes", per * n)))


def _stem(origin: str) -> str:
    import os

    base = os.path.basename(origin)
    return base[:-5] if base.endswith(".toml") else (base or "scenario")
