"""The htsim peer: Broadcom/csg-htsim, the simulator of the MPTCP data-center paper (Raiciu et
al., SIGCOMM 2011), with its authors' TCP and MPTCP (``tcp.cpp``, ``mtcp.cpp``).

Rules:

- The user builds htsim per its README and compiles the project's driver
  ``validation/htsim/dcfair_htsim.cpp`` against that build (``validation/htsim/README.md``);
  ``DCFAIR_HTSIM`` names the directory holding the driver's binary ``dcfair_htsim``. The project
  ships no htsim source and no recipe that builds it.
- htsim's own experiment binaries cannot run these points: its MPTCP binaries take no seed (they
  seed from the clock), their packet sizes, buffers, rates and run lengths are fixed in their
  sources, and the MPTCP permutation binary (``old_tests/htsim_tcp_permutation``) does not link
  at the commit used. The driver runs dcfair's resolved network instead: every port a queue
  (``Queue`` or ``RandomQueue``) and a ``Pipe``, every subflow an htsim ``TcpSrc`` / ``TcpSink``
  on the data and ACK paths dcfair's routing gave it (the same ECMP draw per seed), coupled by
  htsim's ``MultipathTcpSrc``.
- A point whose setting htsim cannot run raises :class:`~dcfair.peers.Unsupported`: queue
  disciplines other than DropTail, TCPs other than NewReno, OLIA, delayed ACKs, pacing, ECN,
  sized flows, UDP, incast and Poisson workloads, per-port queue settings.
- What htsim does differently and runs anyway (no SACK, no limited transmit, subflows open
  together, no MPTCP data level) is listed in ``validation/htsim/README.md``; the driver sets
  what htsim exposes: packet size (MSS + header), initial window, unbounded initial ssthresh,
  initial and minimum RTO.
- Three environment variables run htsim's own choices instead, and enter the build identity
  (so the cache keeps them apart): ``DCFAIR_HTSIM_STOCK_RTO=1`` keeps htsim's 250 ms RTO floor
  and 10 ms timer scan, as its experiment binaries run; ``DCFAIR_HTSIM_QUEUE=random`` gives the
  switch ports htsim's RandomQueue (its data-center queue) instead of DropTail;
  ``DCFAIR_HTSIM_LIA=epsilon1`` runs LIA as COUPLED_EPSILON with epsilon 1 instead of
  COUPLED_INC.
- Measures follow ``docs/metrics.md``: a connection's goodput is its subflows' in-order
  deliveries in the window (whole data packets x MSS), Jain's index over connections, the
  utilization of the measured ports from the bytes they finished serializing in the window.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from dcfair.peers import REPO, Job, Peer, PeerMissing, Unsupported, register, run_checked
from dcfair.peers import measure as M

ENV = "DCFAIR_HTSIM"
#: Keeps htsim's own RTO floor (250 ms) and timer scan (10 ms) instead of the scenario's.
ENV_STOCK_RTO = "DCFAIR_HTSIM_STOCK_RTO"
#: ``random``: the switch ports (not the host NICs and FIFOs) run htsim's RandomQueue, the queue
#: its data-center topologies build (DropTail of ``limit_pkts`` x packet bytes, dropping 10 % of
#: arrivals in the last 3 packets of room), instead of DropTail.
ENV_QUEUE = "DCFAIR_HTSIM_QUEUE"
#: ``epsilon1``: LIA runs as htsim's COUPLED_EPSILON with epsilon 1 (the NSDI 2011 family, RTTs
#: in whole ms) instead of COUPLED_INC (RFC 6356's form, RTTs in 10 us units).
ENV_LIA = "DCFAIR_HTSIM_LIA"
BINARY = "dcfair_htsim"
DRIVER = "validation/htsim/dcfair_htsim.cpp"
#: The commit of Broadcom/csg-htsim the driver was written and checked against.
COMMIT = "841d9e7be46bb968eece766aa4b6c044c7799f67"
INSTALL = (f"build Broadcom/csg-htsim (commit {COMMIT[:7]}) per its README (cd sim && make), compile "
           f"{DRIVER} against that build as validation/htsim/README.md says, and set {ENV} to the directory "
           f"holding {BINARY}")
#: The algorithms of htsim's MultipathTcpSrc each dcfair coupling runs as.
COUPLINGS = {"lia": "lia", "uncoupled": "uncoupled"}


def _driver_version() -> str:
    m = re.search(r'#define DCFAIR_HTSIM_DRIVER "([^"]+)"', (REPO / DRIVER).read_text())
    return m.group(1) if m else "?"


def binary() -> Optional[Path]:
    d = os.environ.get(ENV)
    if not d:
        return None
    p = Path(d) / BINARY
    return p if p.is_file() and os.access(p, os.X_OK) else None


@functools.lru_cache(maxsize=None)
def _built_version(path: str, mtime: float) -> str:
    try:
        r = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
        return r.stdout.strip().rsplit(" ", 1)[-1] if r.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def _missing() -> Optional[str]:
    d = os.environ.get(ENV)
    if not d:
        return f"{ENV} is not set (the directory holding {BINARY}, the project's driver built against htsim)"
    if not Path(d).is_dir():
        return f"{ENV}={d} is not a directory"
    b = binary()
    if b is None:
        return f"{ENV}={d} holds no executable {BINARY}"
    have, want = _built_version(str(b), b.stat().st_mtime), _driver_version()
    if have != want:
        return f"{b} is driver version {have or 'unknown'}, {DRIVER} is version {want}: compile it again"
    return None


def stock_rto() -> bool:
    return os.environ.get(ENV_STOCK_RTO, "") not in ("", "0")


def switch_queue() -> str:
    q = os.environ.get(ENV_QUEUE, "") or "droptail"
    if q not in ("droptail", "random"):
        raise PeerMissing("htsim", f"{ENV_QUEUE}={q}: droptail or random", INSTALL)
    return q


def lia_algo() -> str:
    a = os.environ.get(ENV_LIA, "") or "lia"
    if a not in ("lia", "epsilon1"):
        raise PeerMissing("htsim", f"{ENV_LIA}={a}: lia or epsilon1", INSTALL)
    return a


def options() -> str:
    """The driver options the environment sets, as they enter the build identity."""
    opts = (["stock-rto"] if stock_rto() else []) + (["random-queue"] if switch_queue() == "random" else []) + \
        (["lia-epsilon1"] if lia_algo() == "epsilon1" else [])
    return "".join("-" + o for o in opts)


def _version() -> str:
    b = binary()
    digest = "missing"
    if b is not None:
        h = hashlib.sha256()
        h.update(b.read_bytes())
        digest = h.hexdigest()[:12]
    return f"{COMMIT[:7]}-driver{_driver_version()}-{digest}{options()}"


PEER = register(Peer(
    name="htsim",
    title=f"htsim (Broadcom/csg-htsim {COMMIT[:7]}, the MPTCP authors' TcpSrc and MultipathTcpSrc, "
          f"through dcfair's driver)",
    install=INSTALL,
    missing=_missing,
    version=_version,
    files=(DRIVER,),
))


# --- the point as the driver's input -------------------------------------------------------------

def _tcp_of(sc: Dict[str, Any], group: str) -> Dict[str, Any]:
    if group == "flows":
        t = (sc.get("flows") or {}).get("tcp")
    else:
        t = ((sc.get("groups") or {}).get(group) or {}).get("tcp")
    return t or sc["tcp"]


def _check(job: Job, plan: Dict[str, Any]) -> None:
    """Unsupported unless htsim can run the point's setting."""
    sc = plan["scenario"]
    q = sc["queue"]
    if q["kind"] != "droptail":
        raise Unsupported(f"htsim has no {q['kind']} queue for TCP (its queues: FIFO, RandomQueue, ECN, "
                          "composite/NDP, lossless)")
    if (q.get("droptail") or {}).get("mark_threshold_pkts") or (q.get("droptail") or {}).get("mark_threshold_bytes"):
        raise Unsupported("ECN marking: htsim's TcpSrc does not react to ECN")
    if sc.get("fairq"):
        raise Unsupported("FairQ is not in htsim")
    for key in ("poisson", "incast", "udp", "xpass", "host_queue"):
        if sc.get(key):
            raise Unsupported(f"[{key}] is not run in the htsim driver")
    if sc.get("ports"):
        raise Unsupported("per-port queue settings ([ports]) are not run in the htsim driver")
    topo = sc["topology"]
    for link in topo.get("links") or []:
        plain = ("a", "b", "rate_mbps", "delay_us", "measured")
        extra = {k: v for k, v in link.items() if k not in plain and v is not None}
        if extra:
            raise Unsupported(f"custom link settings {sorted(extra)} are not run in the htsim driver")
    if plan.get("udp_sources"):
        raise Unsupported("UDP sources are not run in the htsim driver")
    for g in {f["group"] for f in plan["flows"]}:
        t = _tcp_of(sc, g)
        if t["cc"] != "newreno":
            raise Unsupported(f"htsim's TCP is NewReno only (group {g} runs {t['cc']})")
        if t["delayed_ack"]:
            raise Unsupported("htsim's TcpSink acknowledges every packet (no delayed ACKs)")
        if t["pacing"]:
            raise Unsupported("htsim's TcpSrc does not pace")
        if t["ecn"]:
            raise Unsupported("htsim's TcpSrc does not react to ECN")
        if t["max_cwnd_pkts"]:
            raise Unsupported("a window cap (tcp.max_cwnd_pkts) is not run in the htsim driver")
        mp = t.get("mptcp") or {}
        if mp.get("subflows", 1) > 1 and mp.get("coupling") not in COUPLINGS:
            raise Unsupported(f"htsim's MPTCP has no {mp.get('coupling')} (mtcp.h: UNCOUPLED, FULLY_COUPLED, "
                              "COUPLED_INC = LIA, COUPLED_TCP, COUPLED_EPSILON, COUPLED_SCALABLE_TCP)")
    for f in plan["flows"]:
        if f.get("size_bytes"):
            raise Unsupported("sized flows are not run in the htsim driver (long-lived flows only)")
    tcps = [_tcp_of(sc, g) for g in {f["group"] for f in plan["flows"]}]
    if len({(t["mss_bytes"], t["header_bytes"], t["init_cwnd_pkts"], t["min_rto_ms"], t["initial_rto_s"])
            for t in tcps}) > 1:
        raise Unsupported("groups with different MSS, initial window or RTO are not run in the htsim driver")


def connections(plan: Dict[str, Any]) -> List[Dict[str, Any]]:
    """dcfair's connections: the consecutive flows of a group, ``subflows`` at a time (one
    subflow: a single-path flow). Each: id (its first subflow's), group, src, dst, start_s,
    n, algo, and its subflows (the plan's flows)."""
    sc = plan["scenario"]
    flows = sorted(plan["flows"], key=lambda f: f["id"])
    out: List[Dict[str, Any]] = []
    i = 0
    while i < len(flows):
        f = flows[i]
        mp = _tcp_of(sc, f["group"]).get("mptcp") or {}
        n = int(mp.get("subflows", 1) or 1)
        subs = flows[i:i + n]
        if len(subs) != n or any((s["group"], s["src"], s["dst"], s["start_s"]) != (f["group"], f["src"], f["dst"],
                                                                                     f["start_s"]) for s in subs):
            raise RuntimeError(f"htsim: flows {[s['id'] for s in subs]} are not one connection of {n} subflows")
        algo = "tcp" if n == 1 else COUPLINGS[mp["coupling"]]
        if algo == "lia":
            algo = lia_algo()
        out.append({"id": f["id"], "group": f["group"], "src": f["src"], "dst": f["dst"], "start_s": f["start_s"],
                    "n": n, "algo": algo, "subflows": subs})
        i += n
    return out


def port_queues(plan: Dict[str, Any]) -> Dict[str, Tuple[int, int, bool]]:
    """Per port name: (limit_pkts, limit_bytes, fifo), 0 for no limit, as dcfair builds them (fifo:
    a host NIC or the dumbbell's reverse port, not a ``[queue]`` port): host NICs and
    the dumbbell's unmeasured switch ports are FIFOs of ``host_buffer_pkts``; every other switch
    port has ``[queue]``'s buffer."""
    sc = plan["scenario"]
    kinds = {n["name"]: n["kind"] for n in plan["nodes"]}
    host = int(sc["topology"].get("host_buffer_pkts") or 1000)
    q = sc["queue"]
    sw = (int(q.get("limit_pkts") or 0), int(q.get("limit_bytes") or 0))
    if sw == (0, 0):
        sw = (100, 0)
    out = {}
    for p in plan["ports"]:
        fifo = kinds[p["node"]] == "host" or (sc["topology"]["kind"] == "dumbbell" and not p["measured"])
        out[p["name"]] = (host, 0, True) if fifo else (*sw, False)
    return out


def driver_input(job: Job, plan: Dict[str, Any], conns: List[Dict[str, Any]]) -> str:
    sc = plan["scenario"]
    t = _tcp_of(sc, conns[0]["group"]) if conns else sc["tcp"]
    dur = float(sc["sim"]["duration_s"])
    win = sc["measure"].get("window_s")
    win = dur if win is None else min(float(win), dur)
    sample = sc["measure"].get("sample_interval_s") or (0.01 if sc["measure"].get("cwnd") else 0)
    min_rto = float(t["min_rto_ms"])
    stock = stock_rto()
    lines = [
        f"# {job.reproduction} {dict(job.labels)} seed {job.seed}",
        f"seed {job.seed}",
        f"end_s {dur!r}",
        f"window_start_s {dur - win!r}",
        f"sample_s {float(sample)!r}",
        f"pkt_bytes {int(t['mss_bytes']) + int(t['header_bytes'])}",
        f"init_cwnd_pkts {int(t['init_cwnd_pkts'])}",
        "ssthresh_pkts 1000000",
        f"min_rto_ms {-1 if stock else min_rto!r}",
        f"init_rto_ms {1000.0 * float(t['initial_rto_s'])!r}",
        f"scan_us {10000.0 if stock else max(10.0, min(10000.0, 1000.0 * min_rto / 10))!r}",
    ]
    limits = port_queues(plan)
    ids = {p["name"]: p["id"] for p in plan["ports"]}
    pkt = int(t["mss_bytes"]) + int(t["header_bytes"])
    for p in plan["ports"]:
        lp, lb, fifo = limits[p["name"]]
        kind = "droptail"
        if switch_queue() == "random" and not fifo:
            # RandomQueue counts bytes only: the smaller of the two buffers, in bytes
            kind, lb, lp = "random", min(x for x in (lp * pkt, lb) if x), 0
        lines.append(f"port {p['id']} {int(p['rate_bps'])} {float(p['delay_us'])!r} {kind} {lp} {lb}")
    for c in conns:
        lines.append(f"conn {c['id']} {c['algo']} {float(c['start_s'])!r}")
        for s in c["subflows"]:
            path, ack = [ids[n] for n in s["path"]], [ids[n] for n in s["ack_path"]]
            lines.append(f"sub {s['id']} {c['id']} {len(path)} {' '.join(map(str, path))} {len(ack)} "
                         f"{' '.join(map(str, ack))}")
    return "\n".join(lines) + "\n"


def run_driver(job: Job, text: str) -> Dict[str, Any]:
    """Runs the driver on ``text`` in ``job.out``; returns its output parsed: ``subs`` (fid ->
    counters), ``ports`` (id -> counters), ``samples`` (list of (t, fid, cwnd, delivered))."""
    b = binary()
    if b is None:
        raise PeerMissing("htsim", _missing() or f"{BINARY} is missing", INSTALL)
    inp, outp = job.out / "htsim.in", job.out / "htsim.out"
    inp.write_text(text)
    run_checked([b, inp, outp], job.out, "htsim driver", log=job.out / "htsim.log")
    subs: Dict[int, Dict[str, float]] = {}
    ports: Dict[int, Dict[str, float]] = {}
    samples: List[Tuple[float, int, int, int]] = []
    with open(outp) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "sub":
                k = ("deliv_t0", "deliv", "sent_t0", "sent", "highest", "fast_rtx", "timeouts", "max_gap_s", "first_s")
                subs[int(w[1])] = dict(zip(k, map(float, w[2:])))
            elif w[0] == "port":
                k = ("bytes_t0", "bytes", "pkts_t0", "pkts", "drops_t0", "drops", "max_queue_pkts")
                ports[int(w[1])] = dict(zip(k, map(float, w[2:])))
            elif w[0] == "sample":
                samples.append((float(w[1]), int(w[2]), int(w[3]), int(w[4])))
    return {"subs": subs, "ports": ports, "samples": samples}


def _csv(path: Path, columns: List[str], rows: List[Dict[str, Any]]) -> None:
    def cell(v: Any) -> str:
        if v is None:
            return ""
        if isinstance(v, float):
            return repr(round(v, 9))
        return str(v)

    with open(path, "w") as f:
        f.write(",".join(columns) + "\n")
        for r in rows:
            f.write(",".join(cell(r.get(c)) for c in columns) + "\n")


FLOW_COLUMNS = ["flow_id", "src", "dst", "kind", "start_s", "end_s", "bytes_sent", "bytes_delivered", "pkts_in_window",
                "fct_s", "max_gap_s", "retransmits", "timeouts", "group", "size_bytes", "pkts_sent_in_window"]
SUBFLOW_COLUMNS = ["connection_id", "subflow", "flow_id", "src", "dst", "sport", "path", "bytes_sent",
                   "bytes_delivered", "retransmits", "timeouts"]
PORT_COLUMNS = ["port", "packets_out", "bytes_out", "utilization", "drops", "marks", "max_queue_pkts", "drops_overflow",
                "queue_kind", "rate_bps", "window_drops"]


def run_point(job: Job) -> Dict[str, Any]:
    """Runs ``job`` in htsim; writes flows.csv, subflows.csv, ports.csv (and timeseries.csv with
    samples); returns the metrics of ``docs/metrics.md`` the reproductions read."""
    plan = job.resolved()
    _check(job, plan)
    conns = connections(plan)
    res = run_driver(job, driver_input(job, plan, conns))
    sc = plan["scenario"]
    t = _tcp_of(sc, conns[0]["group"]) if conns else sc["tcp"]
    pkt, mss = int(t["mss_bytes"]) + int(t["header_bytes"]), int(t["mss_bytes"])
    dur = float(sc["sim"]["duration_s"])
    win = sc["measure"].get("window_s")
    win = dur if win is None else min(float(win), dur)
    subs, ports = res["subs"], res["ports"]

    def retx(s: Dict[str, float]) -> int:
        # data packets sent beyond the highest sequence: the retransmissions (the SYN excluded)
        return max(0, int(round((s["sent"] - max(0.0, s["highest"] - 1)) / pkt)))

    flow_rows, sub_rows = [], []
    per_conn: List[Tuple[Dict[str, Any], int]] = []
    timeouts = retransmits = 0
    for c in conns:
        ss = [subs[s["id"]] for s in c["subflows"]]
        pkts = sum(int(round((s["deliv"] - s["deliv_t0"]) / pkt)) for s in ss)
        sent = sum(int(round((s["sent"] - s["sent_t0"]) / pkt)) for s in ss)
        to = sum(int(s["timeouts"]) for s in ss)
        rt = sum(retx(s) for s in ss)
        timeouts += to
        retransmits += rt
        per_conn.append((c, pkts))
        flow_rows.append({"flow_id": c["id"], "src": c["src"], "dst": c["dst"], "kind": "tcp", "start_s": c["start_s"],
                          "end_s": None, "bytes_sent": sum(int(s["sent"] // pkt) for s in ss) * mss,
                          "bytes_delivered": sum(int(s["deliv"] // pkt) for s in ss) * mss, "pkts_in_window": pkts,
                          "fct_s": None, "max_gap_s": ss[0]["max_gap_s"] if c["n"] == 1 else None,
                          "retransmits": rt, "timeouts": to, "group": c["group"], "size_bytes": None,
                          "pkts_sent_in_window": sent})
        if c["n"] > 1:
            for k, (f, s) in enumerate(zip(c["subflows"], ss)):
                switches = ">".join(n.split("->")[1] for n in f["path"][:-1])
                sub_rows.append({"connection_id": c["id"], "subflow": k, "flow_id": f["id"], "src": f["src"],
                                 "dst": f["dst"], "sport": f.get("sport"), "path": switches,
                                 "bytes_sent": int(s["sent"] // pkt) * mss,
                                 "bytes_delivered": int(s["deliv"] // pkt) * mss,
                                 "retransmits": retx(s), "timeouts": int(s["timeouts"])})
    _csv(job.out / "flows.csv", FLOW_COLUMNS, flow_rows)
    if sub_rows:
        _csv(job.out / "subflows.csv", SUBFLOW_COLUMNS, sub_rows)

    port_rows, util_bytes, util_cap, drops = [], 0.0, 0.0, 0
    for p in plan["ports"]:
        if not p["measured"]:
            continue
        c = ports[p["id"]]
        u = (c["bytes"] - c["bytes_t0"]) * 8 / (p["rate_bps"] * win) if win > 0 else None
        util_bytes += (c["bytes"] - c["bytes_t0"]) * 8
        util_cap += p["rate_bps"] * win
        drops += int(c["drops"])
        port_rows.append({"port": p["name"], "packets_out": int(c["pkts"]), "bytes_out": int(c["bytes"]),
                          "utilization": u, "drops": int(c["drops"]), "marks": 0,
                          "max_queue_pkts": int(c["max_queue_pkts"]), "drops_overflow": int(c["drops"]),
                          "queue_kind": switch_queue(), "rate_bps": int(p["rate_bps"]),
                          "window_drops": int(c["drops"] - c["drops_t0"])})
    _csv(job.out / "ports.csv", PORT_COLUMNS, port_rows)

    if res["samples"]:
        conn_of = {s["id"]: c["id"] for c in conns for s in c["subflows"]}
        deliv: Dict[Tuple[float, int], int] = {}
        with open(job.out / "timeseries.csv", "w") as f:
            f.write("time_s,metric,port,flow_id,value\n")
            for ts, fid, cwnd, d in res["samples"]:
                f.write(f"{ts!r},cwnd_bytes,,{fid},{cwnd}\n")
                key = (ts, conn_of[fid])
                deliv[key] = deliv.get(key, 0) + (d // pkt) * mss
            for (ts, cid), v in sorted(deliv.items()):
                f.write(f"{ts!r},delivered_bytes,,{cid},{v}\n")

    pk = [p for _, p in per_conn]
    metrics: Dict[str, Any] = {"flows": len(conns), "timeouts": timeouts, "retransmits": retransmits, "drops": drops,
                               "marks": 0, "drops_by_reason": {"overflow": drops} if drops else {},
                               "utilization": util_bytes / util_cap if util_cap > 0 else None}
    metrics.update(M.window_counts(pk))
    metrics["throughput_bps_tcp"] = M.mean([x * mss * 8 / win for x in pk]) if win > 0 else None
    gaps = [r["max_gap_s"] for r in flow_rows if r["max_gap_s"] is not None]
    metrics["max_starvation_s"] = max(gaps) if gaps else None
    groups = sorted({c["group"] for c in conns})
    if len(groups) > 1:
        for g in groups:
            gp = [p for c, p in per_conn if c["group"] == g]
            metrics[f"throughput_bps_{g}"] = M.mean([x * mss * 8 / win for x in gp])
            metrics[f"aggregate_throughput_bps_{g}"] = sum(gp) * mss * 8 / win
            metrics[f"jain_index_{g}"] = M.jain(gp)
            metrics[f"starved_fraction_{g}"] = sum(1 for x in gp if x == 0) / len(gp)
    return M.clean(metrics)


@PEER.reproduces("mptcp-permutation", "mptcp-goals", "outcast-case6")
def longflows(job: Job) -> Dict[str, Any]:
    return run_point(job)
