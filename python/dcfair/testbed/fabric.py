"""A fabric scenario (fat-tree, leaf-spine, parking lot, custom) as a testbed plan.

Rules (docs/testbed.md, "Fabrics"):

- The topology, the flows (ids, groups, ends, start times, sizes) and the simulated 5-tuples
  come from the simulator's own build of the scenario, through ``dcfair-switch plan`` (the
  switch crate links the simulator): nothing here re-derives them. Routing is not planned
  here at all: every switch process builds the same scenario and routes with the simulator's
  ``Routes`` (``dcfair_switch::fabric``).
- Every simulated node is a namespace: host ``i`` (in the simulator's node order) is
  ``<prefix>h<i>`` with ``eth0`` (addresses and MACs as the dumbbell's, ``bed.host_ip``);
  switch ``j`` is ``<prefix>sw<j>``, its simulator port ``k`` the interface ``p<k>``. Every
  simulated link is a veth pair.
- A switch port sends at its link's rate through the scenario's ``[queue]`` and delays by
  its link's delay; a port towards a host delays by twice the link's delay, because the
  host's own direction has no delay line (no netem): every round trip is the simulator's.
  Host NICs are token buckets at their link's rate over a FIFO of ``host_buffer_pkts``.
- Every value comes from the engine's plan (its resolved scenario: ``mapping.py``'s rules), and
  TCP keys map as for the dumbbell (``mapping.tcp_hosts``). ``[incast]`` maps as the
  dumbbell's (one epoch, persistent connections, one client host; ``src`` and ``dst`` given),
  its server connections being the simulator's incast flows. What cannot be reproduced on a
  fabric is invalid input naming the key: ``[udp]``, ``[poisson]``, ``[ports]``,
  ``[host_queue]``, a custom link's own queue, a group's transport other than TCP.
- :func:`switch_configs` writes each switch's ``switch.toml``: its ports (``link`` = the
  simulator's port index) and ``[fabric]`` (scenario file, overrides, seed, node, every
  host's address, every flow's listening end).
- Every switch port has an input line at its link's rate (``input_rate_bps``) with a bound of
  1 ms (``input_max_wait_us``): frames that a neighbour sends back to back after a late
  wake-up, or a host's NIC in a burst, reach the output queues spaced as on the wire, as in
  the simulator. ``$DCFAIR_FABRIC_INPUT_LINE`` gives another bound in us, or ``off`` leaves the
  lines out (readings for comparison).
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from dcfair.testbed import mapping
from dcfair.testbed.bed import MAX_HOSTS, HostSpec, host_ip
from dcfair.testbed.mapping import Flow, Plan, invalid
from dcfair.testbed.netns import TestbedError

FABRIC_KINDS = ("fat_tree", "leaf_spine", "parking_lot", "custom")
#: Top-level scenario keys a fabric run accepts (the rest: invalid input naming the key).
TOP_KEYS = {"name", "description", "seed", "sim", "measure", "topology", "queue", "tcp", "flows", "groups",
            "fairq", "routing", "incast"}
LINK_KEYS = {"a", "b", "rate_mbps", "delay_us", "measured"}


@dataclass
class SwitchPort:
    iface: str
    link: int  # the simulator's local port index
    name: str  # the simulator's port name (``e0_0->h0``)
    peer: str
    rate_bps: float
    delay_us: float
    measured: bool
    sim_pkts_out: Optional[int] = None


@dataclass
class FabricSwitch:
    index: int
    name: str  # the simulator's node name
    ports: List[SwitchPort] = field(default_factory=list)

    def ns(self, prefix: str) -> str:
        return f"{prefix}sw{self.index}"


@dataclass
class FabricPlan:
    plan: Plan  # hosts, flows, TCP settings: what the traffic needs (its ``ports`` are empty)
    switches: List[FabricSwitch]
    #: veth pairs: ((namespace kind, index, interface), (kind, index, interface)); kind "h" or "sw"
    links: List[Tuple[Tuple[str, int, str], Tuple[str, int, str]]]
    scenario_path: str
    overrides: List[Tuple[str, str]]
    #: the simulated packets out of every port, by the simulator's port name (``simulate``)
    sim_pkts: Dict[str, int] = field(default_factory=dict)
    #: the frame rate (frames/s, summed over switches) the offered load needs, for the capacity check
    offered_fps: float = 0.0
    #: the ports (simulator names) on some flow's data or ACK path, as the simulator routes them
    on_paths: set = field(default_factory=set)
    #: the simulator's flow id of each incast server connection, in server order
    incast_ids: List[int] = field(default_factory=list)

    @property
    def measured(self) -> List[Tuple[FabricSwitch, SwitchPort]]:
        return [(s, p) for s in self.switches for p in s.ports if p.measured]


def is_fabric(text: str, overrides=()) -> bool:
    """Whether the scenario's topology is one of :data:`FABRIC_KINDS`."""
    sc = mapping.merged(text, list(overrides or []))
    return (sc.get("topology") or {}).get("kind") in FABRIC_KINDS


def simulator_plan(binary: List[str], path: str, overrides, seed: Optional[int], simulate: bool) -> Dict[str, Any]:
    """``dcfair-switch plan``'s JSON; its exit 2 becomes ``InvalidInput`` naming the key."""
    argv = list(binary) + ["plan", "--scenario", str(path)]
    for k, v in overrides or []:
        argv += ["--set", f"{k}={v}"]
    if seed is not None:
        argv += ["--seed", str(seed)]
    if simulate:
        argv.append("--simulate")
    p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if p.returncode == 2:
        msg = p.stderr.strip().removeprefix("dcfair-switch: ").removeprefix("invalid input: ")
        key, _, reason = msg.partition(": ")
        raise invalid(key or "<scenario>", reason or msg)
    if p.returncode != 0:
        raise TestbedError(f"`{' '.join(argv)}` failed ({p.returncode}): {p.stderr.strip()[:400]}")
    return json.loads(p.stdout)


def plan(path: str, text: str, overrides=(), seed: Optional[int] = None, binary: Optional[List[str]] = None,
         simulate: bool = True) -> FabricPlan:
    """The fabric plan of a scenario, or ``InvalidInput`` naming the first key that cannot map."""
    overrides = list(overrides or [])
    sc = mapping.merged(text, overrides)
    NOT = "the testbed cannot reproduce it on a fabric"
    # the keys the scenario sets, first (mapping.py's rules)
    mapping._unknown(sc, TOP_KEYS, "", f"{NOT} (docs/testbed.md, Fabrics)")
    topo = sc.get("topology") or {}
    if topo.get("kind") not in FABRIC_KINDS:
        raise invalid("topology.kind", f"a fabric is one of {', '.join(FABRIC_KINDS)}, got {topo.get('kind')!r}")
    for i, link in enumerate(topo.get("links") or []):
        for k in link:
            if k not in LINK_KEYS:
                raise invalid(f"topology.links[{i}].{k}", f"{NOT}: every switch port runs the scenario's [queue]")
    simt = sc.get("sim", {})
    mapping._unknown(simt, {"duration_s", "tie_break"}, "sim.", NOT)
    mapping._unknown(sc.get("measure", {}), {"window_s", "ports"}, "measure.",
                     f"{NOT}: the testbed measures flows and the switches' counters only")
    mapping.check_incast_keys(sc, NOT)
    if "incast" in sc:
        for k in ("src", "dst"):
            if k not in sc["incast"]:
                raise invalid(f"incast.{k}", "required on a fabric (the hosts' names)")
    if binary is None:
        from dcfair.testbed.switch import find_binary

        binary = find_binary()
        if binary is None:
            raise TestbedError("dcfair-switch not found: build it (`cargo build --release -p dcfair-switch`) or set DCFAIR_SWITCH")
    # then every value, as the engine runs the scenario
    sim = simulator_plan(binary, path, overrides, seed, simulate)
    r = sim["scenario"]
    seed = sim["seed"]
    duration = float(r["sim"]["duration_s"])
    window = float(r["measure"]["window_s"] or duration)
    notes: List[str] = []
    if "tie_break" in simt:
        notes.append("sim.tie_break: an event-ordering rule of the simulator; real time has no ties")
    mapping.check_groups(sc, r, None, NOT)
    host_kw, tnotes = mapping.tcp_hosts(sc.get("tcp", {}), r["tcp"])
    notes += tnotes
    if sim["udp_sources"]:
        raise invalid("udp", f"{NOT}: a fabric run has TCP flows and an incast only")
    nodes = sim["nodes"]
    host_no: Dict[str, int] = {}
    sw_no: Dict[str, int] = {}
    for n in nodes:
        (host_no if n["kind"] == "host" else sw_no)[n["name"]] = len(host_no if n["kind"] == "host" else sw_no)
    if len(host_no) > MAX_HOSTS:
        raise invalid("topology", f"the testbed has at most {MAX_HOSTS} hosts, this fabric has {len(host_no)}")
    host_buffer = int(r["topology"]["host_buffer_pkts"])
    uplink = {p["node"]: p for p in sim["ports"] if p["node"] in host_no}
    hosts = [HostSpec(i, h, tx_rate_bps=float(uplink[h]["rate_bps"]), tx_limit_pkts=host_buffer, **host_kw())
             for h, i in host_no.items()]
    switches = [FabricSwitch(j, s) for s, j in sw_no.items()]
    links = []
    for p in sim["ports"]:
        if p["node"] in sw_no:
            to_host = p["peer"] in host_no
            switches[sw_no[p["node"]]].ports.append(SwitchPort(
                f"p{p['local']}", p["local"], p["name"], p["peer"], float(p["rate_bps"]),
                p["delay_us"] * (2 if to_host else 1), bool(p["measured"]), p.get("sim_pkts_out")))
    for p in sim["ports"]:
        a = ("h", host_no[p["node"]], "eth0") if p["node"] in host_no else ("sw", sw_no[p["node"]], f"p{p['local']}")
        b = ("h", host_no[p["peer"]], "eth0") if p["peer"] in host_no else ("sw", sw_no[p["peer"]], f"p{p['peer_local']}")
        if a < b:
            links.append((a, b))
    flows = [Flow(f["id"], f["src"], f["dst"], "tcp", f["group"], float(f["start_s"]), f["size_bytes"],
                  mapping.group_cc(sc, f["group"])) for f in sim["flows"] if not (sim["incast"] and f["group"] == "incast")]
    incast, incast_ids = None, []
    if sim["incast"]:
        incast = mapping._incast(r, sim)
        if len({c for _, c in incast.servers}) != 1:
            raise invalid("incast.dst", f"{NOT}: the testbed's incast generator runs one client host")
        incast_ids = [f["id"] for f in sim["flows"] if f["group"] == "incast"]
    if not flows and incast is None:
        raise invalid("flows", "the scenario has no TCP flows ([flows], [groups.*])")
    queue = {**(sc.get("queue") or {}), "kind": r["queue"]["kind"]}
    fairq = sc.get("fairq")
    mapping.check_fairq(r)
    tcp = r["tcp"]
    preconnect = tcp["handshake"] is False
    if preconnect:
        notes.append("tcp.handshake: false -> long-lived flows connect before the run (stream generator)")
    p = Plan(r["name"], seed, duration, window, hosts, [], flows, queue, None if fairq is None else dict(fairq), incast,
             int(tcp["rcv_buf_bytes"]) if "rcv_buf_bytes" in sc.get("tcp", {}) else None, int(tcp["mss_bytes"]),
             int(tcp["header_bytes"]), notes, preconnect)
    fp = FabricPlan(p, switches, links, str(Path(path).resolve()), overrides)
    fp.incast_ids = incast_ids
    fp.on_paths = {name for f in sim["flows"] for name in f["path"] + f["ack_path"]}
    if simulate:
        fp.sim_pkts = {pt["name"]: int(pt["sim_pkts_out"]) for pt in sim["ports"]}
        # the switches forward what the simulation's switch ports sent, per second of the run
        fp.offered_fps = sum(v for pt in sim["ports"] if pt["node"] in sw_no for v in [pt["sim_pkts_out"]]) / duration
    return fp


def listen_end(f: Flow, fp: FabricPlan) -> Tuple[str, int, str]:
    """(listening address, port, other address) of flow ``f``'s connections, as the traffic
    opens them (traffic.py): iperf3 listens at the receiver, the generators at the sender."""
    from dcfair.testbed import traffic

    hosts = {h.name: h for h in fp.plan.hosts}
    if traffic.sized(f) or traffic.streamed(f, fp.plan):
        return hosts[f.src].ip, traffic.FETCH_PORT + f.id, hosts[f.dst].ip
    return hosts[f.dst].ip, traffic.BASE_PORT + f.id, hosts[f.src].ip


PROCESS_MODES = ("each", "one")
DEFAULT_MODE = "each"


def process_mode() -> str:
    """``$DCFAIR_FABRIC_PROCESS``: ``each`` (a dcfair-switch per switch namespace) or ``one``
    (one ``dcfair-switch multi`` serving them all); default :data:`DEFAULT_MODE`."""
    m = os.environ.get("DCFAIR_FABRIC_PROCESS", DEFAULT_MODE)
    if m not in PROCESS_MODES:
        raise mapping.invalid("DCFAIR_FABRIC_PROCESS", f"one of {', '.join(PROCESS_MODES)}, got {m!r}")
    return m


#: The input lines' bound (``input_max_wait_us``) unless ``$DCFAIR_FABRIC_INPUT_LINE`` says otherwise.
INPUT_MAX_WAIT_US = 1000.0


def input_line() -> Optional[float]:
    """``$DCFAIR_FABRIC_INPUT_LINE``: ``off`` (``None``: no input lines), or the input lines'
    bound in us, 0 to 1e6 (default :data:`INPUT_MAX_WAIT_US`)."""
    m = os.environ.get("DCFAIR_FABRIC_INPUT_LINE", str(INPUT_MAX_WAIT_US))
    if m == "off":
        return None
    try:
        us = float(m)
    except ValueError:
        us = float("nan")
    if not 0.0 <= us <= 1e6:
        raise mapping.invalid("DCFAIR_FABRIC_INPUT_LINE", f"'off' or a bound in us, 0 to 1e6, got {m!r}")
    return us


def switch_configs(fp: FabricPlan, seed: int) -> Dict[str, Dict[str, Any]]:
    """Switch name -> its ``switch.toml`` document."""
    hosts = {h.ip: h.name for h in fp.plan.hosts}
    flows = []
    for f in fp.plan.flows:
        a, port, peer = listen_end(f, fp)
        flows.append({"listen": f"{a}:{port}", "peer": peer, "flow": f.id})
    ic = fp.plan.incast
    if ic is not None:
        from dcfair.testbed import traffic

        byname = {h.name: h for h in fp.plan.hosts}
        for i, ((srv, cli), fid) in enumerate(zip(ic.servers, fp.incast_ids)):
            flows.append({"listen": f"{byname[srv].ip}:{traffic.INCAST_PORT + i}", "peer": byname[cli].ip, "flow": fid})
    fq = fp.plan.fairq
    bound = input_line()
    out = {}
    for s in fp.switches:
        cfg: Dict[str, Any] = {"seed": seed}
        if fq is not None:
            on = fq.get("switches") or []
            if not on or s.name in on:
                cfg["fairq"] = {k: v for k, v in fq.items() if k != "switches"}
        cfg["fabric"] = {"scenario": fp.scenario_path, "set": [f"{k}={v}" for k, v in fp.overrides], "seed": seed,
                         "node": s.name, "hosts": hosts, "flow": flows}
        cfg["port"] = [{"iface": p.iface, "link": p.link, "rate_bps": p.rate_bps, "delay_us": p.delay_us,
                        **({} if bound is None else {"input_rate_bps": p.rate_bps, "input_max_wait_us": bound}),
                        "queue": fp.plan.queue} for p in s.ports]
        out[s.name] = cfg
    return out


__all__ = ["FabricPlan", "FabricSwitch", "SwitchPort", "plan", "switch_configs", "is_fabric", "host_ip"]
