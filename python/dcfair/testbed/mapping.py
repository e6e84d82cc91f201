"""A scenario (the simulator's TOML) as a testbed plan: hosts, switch ports, traffic.

Pure: reads the scenario's text and overrides, touches nothing, needs no root; the unit tests
run it directly. The rules (docs/testbed.md, "Mapping"):

- The engine says what the scenario is: :func:`engine_plan` (``dcfair._engine.plan``, the
  document ``dcfair-switch plan`` prints) gives the scenario as it runs, every table with the
  engine's defaults filled in (``"scenario"``), and the network and flows it builds. Every value
  the testbed decides on comes from there; nothing here knows a default of the simulator. The
  scenario as written (after ``--set``) says only which keys it sets, so that a key the
  testbed cannot reproduce is refused by name, and the tables handed on to ``dcfair-switch``
  (``[queue]``, ``[fairq]``) go as written: the switch reads them with the engine's own types.
- Only the dumbbell maps: its hosts ``s0 ..``, ``r0 ..`` and ``udp`` (the engine's nodes, in
  its order) become host namespaces ``h0 ..``; every host has its own switch port. The port
  towards a receiver is a bottleneck (its link's rate, the scenario's ``[queue]``, measured as
  the engine measures it); the others run the FIFO the engine gives them (DropTail of
  ``host_buffer_pkts``) at their link's rate. Each port delays by ``access_delay_us +
  bottleneck_delay_us`` so the round trip (through two ports) is the simulator's ``2 x (access
  + bottleneck)``. Host NICs send at their link's rate (tbf) over a FIFO of
  ``host_buffer_pkts``.
- What shapes the experiment and cannot be reproduced (other topologies, routing, per-port
  tables, Poisson arrivals, a transport other than TCP, time series and traces, several incast
  epochs, a group's TCP other than its congestion control) is invalid input naming the key:
  exit 2.
- TCP keys map onto Linux where Linux has the knob: ``cc`` (``newreno`` -> ``reno``, which in
  Linux is NewReno with SACK when SACK is on), ``min_rto_ms`` -> route ``rto_min``,
  ``delayed_ack = false`` -> route ``quickack``, ``init_cwnd_pkts`` -> ``initcwnd``, ``sack``,
  ``timestamps``, ``window_scaling``, ``ecn`` -> sysctls, ``rcv_buf_bytes`` -> iperf3 ``-w``,
  ``handshake = false`` -> long-lived flows connect before the run (no SYN in the congested
  network, as the simulator's flows have none). The values are the engine's, its defaults where
  the scenario sets none (so SACK and timestamps are off, as in the simulator). The other keys
  describe the simulated TCP's internals (ns-2 recovery variants, initial RTO, ...): Linux does
  what it does; each key the scenario sets is listed in the plan's ``notes`` and in
  ``summary.json``, never silently dropped.
- The flows are the engine's: their ids, ends, groups, sizes and start times (the simulator's
  own draws from the run's seed), and the incast servers' placement and share of a request.
"""

from __future__ import annotations

import json
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
#: The TCP keys that map onto Linux (the rest are noted as Linux's own behaviour).
TCP_MAPPED = {"cc", "mss_bytes", "init_cwnd_pkts", "rcv_buf_bytes", "window_scaling", "delayed_ack", "min_rto_ms",
              "sack", "timestamps", "ecn", "header_bytes", "handshake"}
TOP_KEYS = {"name", "description", "seed", "sim", "measure", "topology", "queue", "tcp", "flows", "groups",
            "udp", "incast", "fairq"}
GROUP_KEYS = {"count", "size_bytes", "size_pkts", "start_min_s", "start_max_s", "src", "dst", "tcp", "transport"}
#: The one transport Linux hosts run.
TCP = "tcp"


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


def engine_plan(text: str, overrides: List[Tuple[str, str]] = (), origin: str = "<scenario>",
                seed: Optional[int] = None) -> Dict[str, Any]:
    """The engine's plan of the scenario (``dcfair._engine.plan``, what ``dcfair-switch plan``
    prints without ``--simulate``): ``"scenario"``, the scenario as it runs with every default
    filled in, and the nodes, ports and flows the engine builds. ``InvalidInput`` naming the key
    when the engine refuses the scenario."""
    from dcfair import _engine
    from dcfair.overrides import normalize

    return json.loads(_engine.plan(text, origin, normalize(list(overrides or [])), seed))


def tcp_hosts(written: Dict[str, Any], tcp: Dict[str, Any]):
    """The scenario's ``[tcp]`` on Linux hosts: ``tcp`` is the table as the engine resolved it
    (every key, its defaults filled in), ``written`` the keys the scenario sets. Returns a
    function giving a new host's ``HostSpec`` keywords, and notes. ``InvalidInput`` naming a
    key that has no Linux counterpart."""
    notes: List[str] = []
    cc = tcp["cc"]
    if cc not in CC:
        raise invalid("tcp.cc", f"{cc!r} has no Linux counterpart (mapped: {', '.join(sorted(CC))})")
    for k in sorted(written):
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

    return host_kw, notes


def group_tables(sc: Dict[str, Any]) -> List[Tuple[str, str, Dict[str, Any]]]:
    """The flow groups of a scenario document, in the engine's order (``[flows]``, then
    ``[groups.*]`` by name): ``(name, key prefix, table)``."""
    groups = [("flows", sc["flows"])] if sc.get("flows") is not None else []
    groups += sorted((sc.get("groups") or {}).items())
    return [(g, "flows." if g == "flows" else f"groups.{g}.", t) for g, t in groups]


def check_groups(sc: Dict[str, Any], resolved: Dict[str, Any], allowed, why: str) -> None:
    """The flow groups of the scenario as written (``sc``) against what the testbed runs: only
    the keys in ``allowed`` (any with ``None``), TCP (the engine's ``resolved`` transport of each
    group), and of a group's own ``tcp`` table only ``cc`` (the rest is per host).
    ``InvalidInput`` naming the key."""
    rgroups = {g: t for g, _, t in group_tables(resolved)}
    for gname, where, g in group_tables(sc):
        if not isinstance(g, dict):
            raise invalid(where.rstrip("."), "expected a table")
        if allowed is not None:
            _unknown(g, allowed, where, why)
        transport = rgroups[gname]["transport"]
        if transport != TCP:
            raise invalid(f"{where}transport", f"only tcp maps onto the testbed, got {transport!r}")
        for k, v in (g.get("tcp") or {}).items():
            if k == "cc":
                if v not in CC:
                    raise invalid(f"{where}tcp.cc", f"{v!r} has no Linux counterpart")
            elif resolved["tcp"].get(k) != v:
                raise invalid(f"{where}tcp.{k}", "per-group TCP maps only cc onto the testbed (the rest is per host)")


def group_cc(sc: Dict[str, Any], group: Optional[str]) -> Optional[str]:
    """The Linux congestion control a flow group's own ``tcp.cc`` asks for (``None``: the
    host's)."""
    g = sc.get("flows") if group == "flows" else (sc.get("groups") or {}).get(group or "", {})
    cc = ((g or {}).get("tcp") or {}).get("cc")
    return None if cc is None else CC.get(cc)


def check_fairq(resolved: Dict[str, Any]) -> None:
    """FairQ as the engine runs it, against what Linux hosts do. ``InvalidInput`` naming the key."""
    fq = resolved.get("fairq")
    if fq is not None and fq["wscale"] == "reserved_bits":
        # The simulated hosts tag their ACKs with the window scale; Linux hosts do not, and
        # the switch leaves an untagged ACK alone: FairQ would silently do nothing.
        raise invalid("fairq.wscale", "reserved_bits (the default) needs end hosts that tag their ACKs; "
                                      "Linux does not: set fairq.wscale = \"off\" or \"unify\"")


def plan(text: str, overrides: List[Tuple[str, str]] = (), origin: str = "<scenario>",
         seed: Optional[int] = None) -> Plan:
    """The testbed plan of a scenario, or ``InvalidInput`` naming the first key that cannot map."""
    sc = merged(text, overrides)
    NOT = "the testbed cannot reproduce it"
    # the keys the scenario sets, first: a key the testbed cannot reproduce is named as such
    _unknown(sc, TOP_KEYS, "", f"{NOT} (docs/testbed.md, Mapping)")
    _unknown(sc.get("sim", {}), {"duration_s", "tie_break"}, "sim.", NOT)
    _unknown(sc.get("measure", {}), {"window_s"}, "measure.", f"{NOT}: the testbed measures flows and the switch's counters only")
    topo = sc.get("topology", {})
    if topo.get("kind") != "dumbbell":
        raise invalid("topology.kind", f"only \"dumbbell\" maps onto the testbed, got {topo.get('kind')!r}")
    _unknown(topo, {"kind", "senders", "receivers", "access_rate_mbps", "access_delay_us", "bottleneck_rate_mbps",
                    "bottleneck_delay_us", "host_buffer_pkts"}, "topology.", NOT)
    check_incast_keys(sc, NOT)
    if "udp" in sc:
        _unknown(sc["udp"], {"rate_fraction", "pattern", "packet_bytes", "start_s", "src", "dst"}, "udp.", NOT)

    # then every value, as the engine runs the scenario
    ep = engine_plan(text, overrides, origin, seed)
    r = ep["scenario"]
    notes: List[str] = []
    duration = float(r["sim"]["duration_s"])
    window = float(r["measure"]["window_s"] or duration)
    if "tie_break" in sc.get("sim", {}):
        notes.append("sim.tie_break: an event-ordering rule of the simulator; real time has no ties")
    t = r["topology"]
    if t["senders"] + t["receivers"] + 1 > MAX_HOSTS:
        raise invalid("topology.senders", f"the testbed has at most {MAX_HOSTS} hosts (a namespace each), "
                                          f"got {t['senders']} senders and {t['receivers']} receivers")
    check_groups(sc, r, GROUP_KEYS, NOT)
    host_kw, tnotes = tcp_hosts(sc.get("tcp", {}), r["tcp"])
    notes += tnotes

    names = [n["name"] for n in ep["nodes"] if n["kind"] == "host"]
    to_host = {p["peer"]: p for p in ep["ports"] if p["peer"] in names}  # the switch's port towards each host
    host_buffer = int(t["host_buffer_pkts"])
    hosts = [HostSpec(i, n, tx_rate_bps=float(to_host[n]["rate_bps"]), tx_limit_pkts=host_buffer, **host_kw())
             for i, n in enumerate(names)]
    queue = {**(sc.get("queue") or {}), "kind": r["queue"]["kind"]}
    delay_us = float(t["access_delay_us"]) + float(t["bottleneck_delay_us"])
    ports = []
    for n in names:
        p = to_host[n]
        fifo = {"kind": p["qdisc"], "limit_pkts": host_buffer}
        ports.append(Port(n, float(p["rate_bps"]), delay_us, queue if p["measured"] else fifo, bool(p["measured"])))

    fairq = sc.get("fairq")
    if fairq is not None:
        fairq = dict(fairq)
        fairq.pop("switches", None)
        if r["fairq"]["switches"] not in ([], ["sw"]):
            raise invalid("fairq.switches", f"the dumbbell has one switch, \"sw\"; got {r['fairq']['switches']!r}")
        check_fairq(r)

    where = {g: w for g, w, _ in group_tables(r)}
    flows: List[Flow] = []
    for f in ep["flows"]:
        if f["group"] == "incast":
            continue
        w = where[f["group"]]
        for end in ("src", "dst"):
            if f[end] not in names or f[end] == "udp":
                raise invalid(f"{w}{end}", f"{f[end]!r} is not a host of the dumbbell (s0.., r0..)")
        if f["src"] == f["dst"]:
            raise invalid(f"{w}dst", f"flow {f['id']} would go from {f['src']} to itself")
        flows.append(Flow(f["id"], f["src"], f["dst"], TCP, f["group"], float(f["start_s"]), f["size_bytes"],
                          group_cc(sc, f["group"])))
    incast = _incast(r, ep) if ep["incast"] else None
    for u in ep.get("sources", []):
        if u["pattern"] == "poisson":
            notes.append("udp.pattern: poisson sent as iperf3's constant bit rate at the same mean")
        if (u["src"], u["dst"]) != ("udp", "r0"):
            raise invalid("udp.src", "on the testbed the UDP source is host udp, to r0")
        flows.append(Flow(len(flows), u["src"], u["dst"], "udp", u["group"], float(u["start_s"]),
                          rate_bps=float(u["rate_bps"]), packet_bytes=int(u["packet_bytes"])))
    if not flows and incast is None:
        raise invalid("flows", "the scenario has no traffic the testbed can run ([flows], [groups.*], [udp], [incast])")
    tcp = r["tcp"]
    preconnect = tcp["handshake"] is False
    if preconnect:
        notes.append("tcp.handshake: false -> long-lived flows connect before the run (stream generator, not iperf3); "
                     "sized flows still connect at their start")
    return Plan(r["name"], ep["seed"], duration, window, hosts, ports, flows, queue, fairq, incast,
                int(tcp["rcv_buf_bytes"]) if "rcv_buf_bytes" in sc.get("tcp", {}) else None, int(tcp["mss_bytes"]),
                int(tcp["header_bytes"]), notes, preconnect)


#: The `[incast]` keys the testbed's incast generator reproduces.
INCAST_KEYS = {"servers", "src", "dst", "block_bytes", "server_bytes", "rounds", "start_s", "gap_s", "epochs",
               "epoch_interval_s"}


def check_incast_keys(sc: Dict[str, Any], why: str) -> None:
    """The ``[incast]`` keys the scenario sets, against :data:`INCAST_KEYS` (a dumbbell's run and
    a fabric's alike). ``InvalidInput`` naming the key."""
    if "incast" in sc:
        _unknown(sc["incast"], INCAST_KEYS, "incast.", why)


def _incast(resolved: Dict[str, Any], ep: Dict[str, Any]) -> Incast:
    """The incast of the engine's plan ``ep`` (its scenario ``resolved``): one epoch, its server
    connections as the engine places them (the flows of group ``incast``), each server's share
    of a request as the engine computes it. ``InvalidInput`` naming the key."""
    ic = resolved["incast"]
    if int(ic["epochs"]) != 1:
        raise invalid("incast.epochs", "the testbed runs one epoch of requests")
    pairs = [(f["src"], f["dst"]) for f in ep["flows"] if f["group"] == "incast"]
    for s, d in pairs:
        if "udp" in (s, d):
            raise invalid("incast.src" if s == "udp" else "incast.dst", "'udp' is not a host of the dumbbell")
        if s == d:
            raise invalid("incast.dst", f"a server on {s} would answer a client on the same host")
    share = ep["incast"]
    return Incast(pairs, int(share["per_server_bytes"]), int(ic["rounds"]), float(ic["start_s"]), float(ic["gap_s"]),
                  int(share["block_bytes"]))
