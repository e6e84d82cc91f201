"""The ns-3 peer: Debian's ns-3.37 (``libns3-dev``), through the project's own program
``validation/ns3/fqcodel_leafspine.cc`` (compiled on first use into ``out/peers/ns3/``).

Rules:

- The program is compiled with g++ against the installed ns-3 (pkg-config ``ns3-core`` and the
  other modules; the command is in ``validation/ns3/README.md``) when its binary is missing or
  older than its source, under a lock, into a temporary name renamed into place.
- A point runs dcfair's own draw of the workload: the flows of :meth:`Job.resolved` (the same
  hosts, sizes and start times), each on the data and ACK paths dcfair's ECMP gave it. A host
  has addresses that name a path code (data spine, ACK spine): static routes send a packet
  through the spine its destination address names, so a flow's data goes through the spine of
  its ``path`` and its ACKs through the spine of its ``ack_path``. The program checks that
  each socket got the sender address it was given.
- Every port runs the discipline dcfair gives it: switch ports ``[queue]``, host NICs
  ``[host_queue]`` (or, without it, a DropTail FIFO of ``topology.host_buffer_pkts``).
  DropTail (with DCTCP's marking threshold) is the program's own queue disc, written from
  dcfair's rules (not-ECT packets are never marked, nor dropped below the limit; ns-3's RED with
  MinTh = MaxTh = K would drop them); FQ-CoDel is ns-3's ``FqCoDelQueueDisc``; RED is ns-3's
  ``RedQueueDisc``. pFabric, SFQ, DRR, HCF, ExpressPass and the rest have no ns-3.37 model:
  :class:`~dcfair.peers.Unsupported`.
- TCP: ns-3's ``TcpNewReno`` or ``TcpDctcp`` (ECN on) with classic recovery, every Table II
  setting dcfair resolved for the point: minimum RTO, initial RTO (the SYN's timeout is
  dcfair's first RTO, the initial RTO clamped to [min RTO, max RTO]), clock granularity,
  delayed ACKs (every second segment) and their timeout, initial window. The receive window
  (``tcp.rcv_buf_bytes``, ns-2's ``window_``) and the window cap (``tcp.max_cwnd_pkts``,
  ns-2's ``maxcwnd_``) act as one cap on ns-3's congestion window (the program clamps it after
  every change its congestion control and recovery make), ns-3's own receive buffer being
  1 GiB: ns-3.37 crashes (TcpRateLinux::SkbSent on a null item) when a receive window binds
  during fast recovery. The cap bounds the window, not the sequence space: in recovery ns-3 may
  send new data past SND.UNA + cap while dupACKed segments leave its pipe.
  ns-3 caps the RTO at 60 s (hard-coded): Table II's 2 s maximum is not applied (it matters
  only after 11 back-to-back timeouts from a 1 ms RTO).
- Measures: ``docs/metrics.md``'s Poisson size classes (:func:`dcfair.peers.measure.size_classes`)
  over the flows' completion times (the last byte delivered in order at the receiver minus the
  start); the ideal FCT from dcfair's network (the propagation delay of the flow's path and ACK
  path plus its size at the source NIC's rate); ``timeouts`` and ``retransmits`` summed over the
  senders (the RTO doublings of ns-3's ``RTO`` trace, SYN retransmissions included).
"""

from __future__ import annotations

import fcntl
import functools
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from dcfair.peers import REPO, Job, Peer, PeerMissing, Unsupported, register, run_checked, which
from dcfair.peers import measure as M

SOURCE = "validation/ns3/fqcodel_leafspine.cc"
BINARY = REPO / "out" / "peers" / "ns3" / "fqcodel_leafspine"
MODULES = ("ns3-core", "ns3-network", "ns3-internet", "ns3-point-to-point", "ns3-applications", "ns3-traffic-control")
INSTALL = "make peers"
#: ns-3's receive buffer: large enough never to bind (the window caps act on cwnd instead).
RCV_BUF_UNBOUND = 1 << 30
CXX = "g++"


@functools.lru_cache(maxsize=None)
def _debian_version() -> str:
    try:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libns3-dev"], capture_output=True, text=True,
                           timeout=30)
        if r.returncode == 0 and r.stdout.strip():
            return r.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        r = subprocess.run(["pkg-config", "--modversion", "ns3-core"], capture_output=True, text=True, timeout=30)
        if r.returncode == 0:
            return r.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return "unknown"


def _missing() -> Optional[str]:
    if which(CXX) is None:
        return f"{CXX} is not installed (the ns-3 peer compiles {SOURCE})"
    if which("pkg-config") is None:
        return "pkg-config is not installed"
    r = subprocess.run(["pkg-config", "--exists", "ns3-core"], capture_output=True)
    if r.returncode != 0:
        return "pkg-config cannot find ns3-core (Debian package libns3-dev)"
    return None


PEER = register(Peer(
    name="ns3",
    title=f"ns-3.37 (Debian libns3-dev {_debian_version()})",
    install=INSTALL,
    missing=_missing,
    version=lambda: _debian_version(),
    # a full fqcodel-fig3 point takes about 74 s of a core in ns-3 against 2 s in dcfair: the
    # first two seeds of five (about 1.6 CPU-hours for fig3 and 0.9 for the breakdown)
    seeds=2,
))


# --- the program -----------------------------------------------------------------------------

def compile_command(out: Path = BINARY) -> List[str]:
    """g++ against the installed ns-3. Debian's 3.37-2 .pc files carry a stray ``-I/usr;`` and
    name libgsl.so / libgslcblas.so, which only libgsl-dev installs (the ns-3 libraries link
    libgsl themselves): such tokens are dropped, as validation/ns3/run_ns3.py does."""
    r = subprocess.run(["pkg-config", "--cflags", "--libs", *MODULES], capture_output=True, text=True)
    if r.returncode != 0:
        raise PeerMissing("ns3", f"pkg-config {' '.join(MODULES)} failed: {r.stderr.strip()}", INSTALL)
    flags: List[str] = []
    for tok in r.stdout.split():
        if tok.startswith("-I") and not os.path.isdir(tok[2:]):
            continue
        if tok.startswith("/") and not os.path.exists(tok):
            continue
        if tok not in flags:
            flags.append(tok)
    return [CXX, "-O2", "-std=c++17", "-Wall", "-o", str(out), str(REPO / SOURCE), *flags]


def ensure_built() -> Path:
    src = REPO / SOURCE
    if BINARY.is_file() and BINARY.stat().st_mtime >= src.stat().st_mtime:
        return BINARY
    BINARY.parent.mkdir(parents=True, exist_ok=True)
    with open(BINARY.parent / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if BINARY.is_file() and BINARY.stat().st_mtime >= src.stat().st_mtime:
            return BINARY
        tmp = BINARY.with_name(BINARY.name + f".tmp{os.getpid()}")
        r = subprocess.run(["nice", "-n", "10", *compile_command(tmp)], capture_output=True, text=True)
        if r.returncode != 0:
            tail = "\n".join(r.stderr.strip().splitlines()[-20:])
            raise RuntimeError(f"compiling {SOURCE} failed:\n{tail}")
        os.replace(tmp, BINARY)
    return BINARY


# --- the point as the program's input --------------------------------------------------------

#: dcfair's TCP keys the program cannot mirror unless they hold these values.
_TCP_FIXED = {"handshake": True, "pacing": False, "first_ack_resets_cwnd": False, "headerless_first_segment": False,
              "recovery_cwnd": "ssthresh", "recovery_exit": "ssthresh", "recovery_max_burst": 0,
              "ssthresh_from": "flight_size", "quickack_segments": 0, "priority": "none", "header_bytes": 40}


def _check(plan: Dict[str, Any]) -> None:
    sc = plan["scenario"]
    t = sc["tcp"]
    if t["cc"] == "pfabric" or sc["queue"]["kind"] == "pfabric" or (sc.get("host_queue") or {}).get("kind") == "pfabric":
        raise Unsupported("ns-3.37 has no pFabric")
    if (sc.get("poisson") or {}).get("transport", "tcp") != "tcp":
        raise Unsupported(f"ns-3.37 has no {sc['poisson']['transport']} transport (ExpressPass)")
    if sc["topology"]["kind"] != "leaf_spine":
        raise Unsupported("the ns-3 program runs the leaf-spine only")
    for key in ("incast", "udp", "xpass", "fairq", "flows"):
        if sc.get(key):
            raise Unsupported(f"[{key}] is not run in the ns-3 program (Poisson flows only)")
    if sc.get("groups") or sc.get("ports"):
        raise Unsupported("flow groups and per-port settings are not run in the ns-3 program")
    if sc["routing"]["mode"] != "ecmp":
        raise Unsupported(f"routing.mode = {sc['routing']['mode']} is not run in the ns-3 program")
    if t["cc"] not in ("newreno", "dctcp"):
        raise Unsupported(f"tcp.cc = {t['cc']}: the ns-3 program runs NewReno and DCTCP")
    for k, v in _TCP_FIXED.items():
        if t.get(k) != v:
            raise Unsupported(f"tcp.{k} = {t.get(k)!r} is not mirrored in ns-3.37 (only {v!r})")
    if (t.get("mptcp") or {}).get("subflows", 1) != 1:
        raise Unsupported("ns-3.37 has no MPTCP")
    for q in (sc["queue"], sc.get("host_queue")):
        if q is None:
            continue
        if q["kind"] not in ("droptail", "fq_codel", "red"):
            raise Unsupported(f"ns-3.37 has no {q['kind']} queue disc")
        if q.get("limit_bytes"):
            raise Unsupported("byte limits are not run in the ns-3 program")
        if q["kind"] == "droptail" and (q.get("droptail") or {}).get("mark_threshold_bytes"):
            raise Unsupported("a byte marking threshold is not run in the ns-3 program")
        if q["kind"] == "fq_codel" and (q.get("fq_codel") or {}).get("ce_threshold_us") is not None:
            raise Unsupported("FQ-CoDel's ce_threshold is not run in the ns-3 program")
        if q["kind"] == "red" and (q.get("red") or {}).get("byte_mode"):
            raise Unsupported("RED's byte mode is not run in the ns-3 program")


def _port_line(name: str, q: Optional[Dict[str, Any]], host_buffer: int, rate_bps: int) -> str:
    if q is None:
        return f"port {name} fifo {host_buffer} 0"
    limit = int(q.get("limit_pkts") or 100)
    if q["kind"] == "droptail":
        k = (q.get("droptail") or {}).get("mark_threshold_pkts") or 0
        return f"port {name} fifo {limit} {int(k)}"
    if q["kind"] == "fq_codel":
        f = q["fq_codel"]
        return (f"port {name} fq_codel {limit} {int(f['flows'])} {int(f['quantum_bytes'])} "
                f"{float(f['target_us']) * 1e-6!r} {float(f['interval_us']) * 1e-6!r} {int(f['drop_batch'])} "
                f"{int(bool(f['ecn']))}")
    r = q["red"]
    return (f"port {name} red {limit} {float(r['min_thresh_pkts'])!r} {float(r['max_thresh_pkts'])!r} "
            f"{float(r['q_weight'])!r} {float(r['max_p'])!r} {int(bool(r['gentle']))} {int(bool(r['wait']))} "
            f"{int(bool(r['ecn']))} {int(r['mean_pkt_bytes'])} {rate_bps}")


def _recv_addr(code: int, leaf: int, slot: int) -> str:
    """A host's receiver-side address for path code ``code`` (/32)."""
    return f"10.{100 + code}.{leaf}.{slot + 1}"


def _send_addr(code: int, leaf: int, slot: int) -> str:
    """A host's sender-side address for path code ``code`` (/16: ns-3 picks it as the source
    of a connection to any receiver-side address of the same code)."""
    return f"10.{100 + code}.{128 + leaf}.{slot + 1}"


def program_input(job: Job, plan: Dict[str, Any]) -> Tuple[str, Dict[int, Dict[str, Any]]]:
    """The program's input text, and per flow id its size and ideal FCT."""
    sc = plan["scenario"]
    t = sc["tcp"]
    kinds = {n["name"]: n["kind"] for n in plan["nodes"]}
    ports = plan["ports"]
    by_name = {p["name"]: p for p in ports}
    hosts = [n["name"] for n in plan["nodes"] if n["kind"] == "host"]
    leaf_of = {p["node"]: p["peer"] for p in ports if kinds[p["node"]] == "host"}
    leaves = sorted({v for v in leaf_of.values()}, key=lambda n: [p["name"] for p in plan["nodes"]].index(n))
    spines = [n["name"] for n in plan["nodes"] if n["kind"] != "host" and n["name"] not in leaves]
    nsp = max(1, len(spines))
    if len(leaves) > 127 or nsp * nsp > 150:
        raise Unsupported("more than 127 leaves or 12 spines")
    lidx = {l: i for i, l in enumerate(leaves)}
    sidx = {s: i for i, s in enumerate(spines)}
    slot: Dict[str, int] = {}
    for h in hosts:
        slot[h] = sum(1 for x in slot if leaf_of[x] == leaf_of[h])
        if slot[h] > 250:
            raise Unsupported("more than 250 hosts per leaf")

    min_rto = float(t["min_rto_ms"]) / 1000.0
    max_rto = float(t["max_rto_s"])
    init_rto = float(t["initial_rto_s"])
    rcv = int(t["rcv_buf_bytes"])
    cap = rcv
    if t.get("max_cwnd_pkts"):
        cap = min(cap, int(t["max_cwnd_pkts"]) * int(t["mss_bytes"]))
    lines = [f"# {job.reproduction} {dict(job.labels)} seed {job.seed}", f"seed {job.seed}",
             f"duration_s {float(sc['sim']['duration_s'])!r}"]
    tcp = {"cc": t["cc"], "mss": int(t["mss_bytes"]), "init_cwnd": int(t["init_cwnd_pkts"]), "min_rto_s": min_rto,
           "initial_rto_s": init_rto, "conn_timeout_s": min(max(init_rto, min_rto), max_rto),
           "clock_granularity_s": float(t["clock_granularity_us"]) * 1e-6, "delayed_ack": int(bool(t["delayed_ack"])),
           "delack_timeout_s": float(t["delack_timeout_ms"]) / 1000.0,
           # the receive window and the window cap as a cap on cwnd (the program's ClampCwnd);
           # ns-3's own receive buffer is then never the limit
           "rcv_buf_bytes": max(rcv, RCV_BUF_UNBOUND), "cwnd_cap_bytes": cap if cap < RCV_BUF_UNBOUND else 0,
           "dupack_threshold": int(t["dupack_threshold"]), "limited_transmit": int(bool(t["limited_transmit"])),
           "sack": int(bool(t["sack"])), "ecn": int(bool(t["ecn"])), "dctcp_g": float(t["dctcp_g"]),
           "dctcp_alpha_init": float(t["dctcp_alpha_init"])}
    lines += [f"tcp {k} {v!r}" if isinstance(v, float) else f"tcp {k} {v}" for k, v in tcp.items()]
    lines += [f"node {n['name']}" for n in plan["nodes"]]
    done = set()
    for p in ports:
        pair = tuple(sorted((p["node"], p["peer"])))
        if pair in done:
            continue
        done.add(pair)
        back = by_name[f"{p['peer']}->{p['node']}"]
        if (back["rate_bps"], back["delay_us"]) != (p["rate_bps"], p["delay_us"]):
            raise Unsupported(f"link {p['name']} has different rates or delays in its two directions")
        lines.append(f"link {p['node']} {p['peer']} {int(p['rate_bps'])} {float(p['delay_us']) * 1e-6!r}")
    host_buffer = int(sc["topology"].get("host_buffer_pkts") or 1000)
    hq = sc.get("host_queue")
    for p in ports:
        q = (hq if hq and hq.get("kind") else None) if kinds[p["node"]] == "host" else sc["queue"]
        lines.append(_port_line(p["name"], q, host_buffer, int(p["rate_bps"])))
    # Path code c = d x S + a: data through spine d, ACKs through spine a. Receiver-side
    # addresses 10.(100+c).L.x route through spine d, sender-side 10.(100+c).(128+L).x through a.
    codes = range(nsp * nsp)
    for h in hosts:
        L, k = lidx[leaf_of[h]], slot[h]
        for c in codes:
            lines.append(f"addr {h} {_recv_addr(c, L, k)} 255.255.255.255")
        for c in codes:
            lines.append(f"addr {h} {_send_addr(c, L, k)} 255.255.0.0")
        lines.append(f"route {h} 0.0.0.0 0.0.0.0 {leaf_of[h]}")
    for l in leaves:
        if spines:
            for c in codes:
                lines.append(f"route {l} 10.{100 + c}.0.0 255.255.128.0 {spines[c // nsp]}")
                lines.append(f"route {l} 10.{100 + c}.128.0 255.255.128.0 {spines[c % nsp]}")
        for h in hosts:
            if leaf_of[h] == l:
                for c in codes:
                    lines.append(f"route {l} {_recv_addr(c, lidx[l], slot[h])} 255.255.255.255 {h}")
                    lines.append(f"route {l} {_send_addr(c, lidx[l], slot[h])} 255.255.255.255 {h}")
    for sp in spines:
        for c in codes:
            for l in leaves:
                lines.append(f"route {sp} 10.{100 + c}.{lidx[l]}.0 255.255.255.0 {l}")
                lines.append(f"route {sp} 10.{100 + c}.{128 + lidx[l]}.0 255.255.255.0 {l}")

    def spine_on(path: List[str]) -> int:
        on = [sidx[x] for name in path for x in name.split("->") if x in sidx]
        return on[0] if on else 0

    info: Dict[int, Dict[str, Any]] = {}
    sport: Dict[str, int] = {}
    for f in plan["flows"]:
        if f["group"] not in ("poisson", "poisson_1pkt") or not f.get("size_bytes"):
            raise Unsupported(f"flow group {f['group']}: the ns-3 program runs sized Poisson flows only")
        for a, b in zip(f["path"], f["path"][1:]):
            if a.split("->")[1] != b.split("->")[0]:
                raise RuntimeError(f"flow {f['id']}: path {f['path']} is not contiguous")
        c = spine_on(f["path"]) * nsp + spine_on(f["ack_path"])
        src, dst = f["src"], f["dst"]
        sport[src] = sport.get(src, 1023) + 1
        if sport[src] > 65535:
            raise Unsupported(f"more than 64512 flows from host {src}")
        lines.append(f"flow {f['id']} {src} {dst} {_send_addr(c, lidx[leaf_of[src]], slot[src])} "
                     f"{_recv_addr(c, lidx[leaf_of[dst]], slot[dst])} {sport[src]} {float(f['start_s'])!r} "
                     f"{int(f['size_bytes'])}")
        rtt = sum(by_name[n]["delay_us"] for n in f["path"]) + sum(by_name[n]["delay_us"] for n in f["ack_path"])
        nic = by_name[f["path"][0]]["rate_bps"]
        info[int(f["id"])] = {"size": int(f["size_bytes"]), "ideal": rtt * 1e-6 + 8.0 * int(f["size_bytes"]) / nic,
                              "group": f["group"], "src": src, "dst": dst, "start": float(f["start_s"])}
    return "\n".join(lines) + "\n", info


def run_program(job: Job, text: str) -> Dict[str, Any]:
    b = ensure_built()
    inp, outp = job.out / "ns3.in", job.out / "ns3.out"
    inp.write_text(text)
    run_checked([b, inp, outp], job.out, "ns-3", log=job.out / "ns3.log")
    flows: Dict[int, Dict[str, float]] = {}
    ports: Dict[str, Tuple[int, int]] = {}
    events = 0
    with open(outp) as fh:
        for line in fh:
            w = line.split()
            if not w:
                continue
            if w[0] == "flow":
                flows[int(w[1])] = {"start": float(w[2]), "end": float(w[3]), "rx": int(w[4]), "timeouts": int(w[5]),
                                    "retransmits": int(w[6]), "segments": int(w[7])}
            elif w[0] == "port":
                ports[w[1]] = (int(w[2]), int(w[3]))
            elif w[0] == "events":
                events = int(w[1])
    return {"flows": flows, "ports": ports, "events": events}


FLOW_COLUMNS = ["flow_id", "src", "dst", "kind", "start_s", "end_s", "bytes_sent", "bytes_delivered", "fct_s",
                "retransmits", "timeouts", "group", "size_bytes"]


def run_point(job: Job) -> Dict[str, Any]:
    plan = job.resolved()
    _check(plan)
    text, info = program_input(job, plan)
    res = run_program(job, text)
    sc = plan["scenario"]
    mss = int(sc["tcp"]["mss_bytes"])
    rows, per = [], []
    for fid in sorted(info):
        i, o = info[fid], res["flows"][fid]
        fct = o["end"] - i["start"] if o["end"] >= 0 else None
        per.append({"size": i["size"], "fct": fct, "ideal": i["ideal"]})
        rows.append({"flow_id": fid, "src": i["src"], "dst": i["dst"], "kind": "tcp", "start_s": i["start"],
                     "end_s": o["end"] if o["end"] >= 0 else None, "bytes_sent": o["segments"] * mss,
                     "bytes_delivered": min(o["rx"], i["size"]), "fct_s": fct, "retransmits": o["retransmits"],
                     "timeouts": o["timeouts"], "group": i["group"], "size_bytes": i["size"]})
    (job.out / "flows.csv").write_text(M.flows_csv(rows, FLOW_COLUMNS))
    measured = {p["name"] for p in plan["ports"] if p["measured"]}
    fcts = [r["fct_s"] for r in rows if r["fct_s"] is not None]
    total = sum(i["size"] for i in info.values())
    one = sum(i["size"] for i in info.values() if i["group"] == "poisson_1pkt")
    metrics: Dict[str, Any] = {
        "flows": len(rows), "flows_completed": len(fcts),
        "timeouts": sum(r["timeouts"] for r in rows), "retransmits": sum(r["retransmits"] for r in rows),
        "drops": sum(d for n, (d, _) in res["ports"].items() if n in measured),
        "marks": sum(m for n, (_, m) in res["ports"].items() if n in measured),
        "drops_all_ports": sum(d for d, _ in res["ports"].values()),
        "marks_all_ports": sum(m for _, m in res["ports"].values()),
        "poisson_flows": len(rows),
        "poisson_one_packet_byte_fraction": one / total if total else None,
        "ns3_events": res["events"],
    }
    metrics.update(M.fct_stats(fcts))
    metrics.update(M.size_classes(per, mss))
    return M.clean(metrics)


@PEER.reproduces("fqcodel-breakdown", "fqcodel-fig3", files=(SOURCE,))
def fqcodel(job: Job) -> Dict[str, Any]:
    return run_point(job)
