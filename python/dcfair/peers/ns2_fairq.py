"""The ns-2 runner of the FairQ paper's incast reproductions (``fairq-incast-mild``, ``-heavy``,
``-lowfreq``, ``-highfreq``): ``validation/ns2/fairq_incast.tcl`` in the module build of
ns-2.35 (``validation/ns2/modules/fairq/``: FairQ written from the paper and the authors'
public switch code, and the TCP endpoints it needs).

Rules:

- Every point runs in the module build (:func:`dcfair.peers.ns2.ns_modules`), FairQ or not, so
  that the DropTail baseline and FairQ use the same TCP endpoints (ns-2's one-way TCP with a
  receive-window field, SYN/FIN and a new connection per answer; ``modules/fairq/rwnd_tcp.h``).
- The script's options come from the engine's resolved scenario (:meth:`Job.get`), never from
  re-reading the TOML; what the script cannot run raises :class:`~dcfair.peers.Unsupported`:
  another topology than the paper's testbed, FairQ on another switch than ``core``, FairQ keys
  other than ``switches`` and ``gain``, RFC 3168 ECN without DCTCP, FairQ with DCTCP, SACK,
  delayed ACKs, pacing, persistent connections (the reproduction's readings that need them).
- DCTCP (the reproductions' third baseline) runs as the module's DCTCP sender and receiver
  over ``Queue/DropTail/Mark`` ports (``--cc dctcp --mark_k K``; ns-2.35 has no DCTCP).
- Measures follow ``docs/metrics.md``: an answer's time runs from its request (the client's
  SYN) to its last byte in order at the client; its statistics cover the answers completed;
  ``drops`` are those of the port core -> tor4 over the whole run; ``timeouts`` are the RTO
  expirations of every sender (incast servers over all their connections, SYN-ACK timeouts
  included, and elephants); the elephants' goodput is their in-order payload in the window
  (``[duration - window_s, duration]``) x 8 / window.
- The seed of the point seeds ns-2's default RNG (the script's only randomness: the TCP
  timers' phase and the elephants' start times).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

from dcfair.peers import Job, Unsupported
from dcfair.peers import measure as M
from dcfair.peers.ns2 import PEER, ns_modules, run_ns

SCRIPT = "validation/ns2/fairq_incast.tcl"
MODULE = "validation/ns2/modules/fairq"
FILES = (SCRIPT, f"{MODULE}/fairq.h", f"{MODULE}/fairq.cc", f"{MODULE}/fairq.tcl", f"{MODULE}/rwnd_tcp.h",
         f"{MODULE}/rwnd_tcp.cc")
SERVERS = [f"r{r}h{h}" for r in (1, 2, 3) for h in range(1, 8)]
RACK4 = [f"r4h{h}" for h in range(1, 8)]
MEASURED = "core->tor4"


def _as_list(v: Any) -> List[str]:
    return [v] if isinstance(v, str) else list(v or [])


def options(job: Job) -> List[str]:
    """The script's command line for the point; Unsupported for what it cannot run."""
    g = job.get
    sc = job.resolved()["scenario"]
    topo = sc.get("topology") or {}
    hosts = topo.get("hosts") or []
    if topo.get("kind") != "custom" or sorted(hosts) != sorted(SERVERS + RACK4) or \
            sorted(topo.get("switches") or []) != ["core", "tor1", "tor2", "tor3", "tor4"]:
        raise Unsupported("the ns-2 FairQ script builds the paper's testbed only (4 racks of 7 hosts, tor1..tor4, core)")
    rates = {(l.get("rate_mbps"), l.get("delay_us")) for l in topo.get("links") or []}
    if len(rates) != 1:
        raise Unsupported("the ns-2 FairQ script gives every link the same rate and delay")
    rate, delay = rates.pop()
    for l in topo.get("links") or []:
        if any(l.get(k) is not None for k in ("a_buffer_pkts", "b_buffer_pkts", "buffer_pkts", "queue", "a_queue",
                                               "b_queue", "loss_rate", "a_loss_rate", "b_loss_rate")):
            raise Unsupported("per-link buffers, queues or losses are not run in the ns-2 FairQ script")
    if sc.get("ports"):
        raise Unsupported("per-port queue settings ([ports]) are not run in the ns-2 FairQ script")
    q = sc.get("queue") or {}
    if q.get("kind") != "droptail" or q.get("limit_bytes") is not None:
        raise Unsupported(f"the ns-2 FairQ script runs DropTail switch ports only (got {q.get('kind')})")
    dt = q.get("droptail") or {}
    if dt.get("mark_threshold_bytes") is not None:
        raise Unsupported("a marking threshold in bytes is not run in the ns-2 FairQ script (packets only)")
    mark_k = dt.get("mark_threshold_pkts")
    if sc.get("groups") or sc.get("poisson") or sc.get("udp"):
        raise Unsupported("the ns-2 FairQ script runs the incast and [flows] elephants only")

    tcp = sc.get("tcp") or {}
    cc = tcp.get("cc")
    if cc not in ("reno", "newreno", "cubic", "dctcp"):
        raise Unsupported(f"the ns-2 FairQ script runs Reno, NewReno, CUBIC and DCTCP (not {cc})")
    if cc == "dctcp":
        if not mark_k:
            raise Unsupported("DCTCP without a marking threshold (queue.droptail.mark_threshold_pkts) is not run")
        if (tcp.get("dctcp_g", 0.0625), tcp.get("dctcp_alpha_init", 1.0)) != (0.0625, 1.0):
            raise Unsupported("the ns-2 FairQ script's DCTCP runs g = 1/16 and alpha_init = 1")
    elif tcp.get("ecn") or mark_k:
        raise Unsupported("RFC 3168 ECN (marking without DCTCP) is not run in the ns-2 FairQ script")
    defaults = {"sack": False, "delayed_ack": False, "pacing": False, "timestamps": False,
                "limited_transmit": False, "handshake": True, "max_cwnd_pkts": 0, "priority": "none",
                "profile": None, "dupack_threshold": 3, "quickack_segments": 0}
    for k, want in defaults.items():
        if tcp.get(k, want) != want:
            raise Unsupported(f"tcp.{k} = {tcp.get(k)!r} is not run in the ns-2 FairQ script")
    if (tcp.get("mptcp") or {}).get("subflows", 1) != 1:
        raise Unsupported("MPTCP is not run in the ns-2 FairQ script")

    inc = sc.get("incast") or {}
    if inc:
        if inc.get("connection") != "per_request":
            raise Unsupported("the ns-2 FairQ script opens a connection per request only (no persistent connections)")
        if inc.get("transport", "tcp") != "tcp" or inc.get("block_bytes") is not None:
            raise Unsupported("the ns-2 FairQ script runs TCP answers of a fixed size per server only")
        if _as_list(inc.get("src")) != SERVERS:
            raise Unsupported("the ns-2 FairQ script's servers are r1h1..r3h7 in order")
        clients = _as_list(inc.get("dst"))
        if clients != RACK4[:len(clients)]:
            raise Unsupported("the ns-2 FairQ script's clients are r4h1.. in order")
    fl = sc.get("flows") or {}
    elephants = 0
    if fl:
        if fl.get("size_bytes") is not None or fl.get("size_pkts") is not None or fl.get("pattern") or \
                fl.get("via") or fl.get("start_min_s") or fl.get("tcp") or fl.get("transport", "tcp") != "tcp":
            raise Unsupported("the ns-2 FairQ script's elephants are long-lived, src[j % 21] -> rack 4")
        if _as_list(fl.get("src")) != SERVERS or _as_list(fl.get("dst")) != RACK4:
            raise Unsupported("the ns-2 FairQ script's elephants run r1h1..r3h7 -> r4h1..r4h7")
        elephants = int(fl.get("count") or 0)

    fq = sc.get("fairq") or {}
    switches = _as_list(fq.get("switches"))
    if switches and switches != ["core"]:
        raise Unsupported("the ns-2 FairQ script runs FairQ at the core switch only")
    if switches and cc == "dctcp":
        raise Unsupported("FairQ with DCTCP's marking is not run in the ns-2 FairQ script")

    duration = float(g("sim.duration_s"))
    window = float(g("measure.window_s", duration))
    args = {
        "seed": job.seed, "cc": cc, "fairq": 1 if switches else 0,
        "rate_mbps": rate, "delay_us": delay,
        "limit_pkts": q.get("limit_pkts"), "host_buffer_pkts": topo.get("host_buffer_pkts", 1000),
        "mss_bytes": tcp.get("mss_bytes"), "header_bytes": tcp.get("header_bytes"),
        "init_cwnd_pkts": tcp.get("init_cwnd_pkts"), "rcv_buf_bytes": tcp.get("rcv_buf_bytes"),
        "min_rto_s": float(tcp.get("min_rto_ms")) / 1e3, "max_rto_s": tcp.get("max_rto_s"),
        "initial_rto_s": tcp.get("initial_rto_s"),
        "mark_k": int(mark_k) if cc == "dctcp" else 0,
        "duration_s": duration, "window_s": window if elephants else 0,
        "servers": int(inc.get("servers") or 0) if inc else 0,
        "elephants": elephants,
    }
    if cc == "cubic":
        beta, c = tcp.get("cubic_beta", 0.7), tcp.get("cubic_c", 0.4)
        if (beta, c) != (0.7, 0.4) or not tcp.get("cubic_fast_convergence", True) or \
                not tcp.get("cubic_reno_friendly", True):
            raise Unsupported("the ns-2 FairQ script's CUBIC runs beta 0.7, C 0.4, fast convergence, TCP-friendly")
    if tcp.get("window_scaling") is False:
        args["wscale"] = 0
        args["rcv_buf_bytes"] = min(int(args["rcv_buf_bytes"]), 65535)
    if inc:
        args.update({"clients": len(_as_list(inc.get("dst"))), "server_bytes": inc.get("server_bytes"),
                     "rounds": inc.get("rounds"), "epochs": inc.get("epochs", 1),
                     "epoch_interval_s": inc.get("epoch_interval_s", 0.0), "start_s": inc.get("start_s", 0.01),
                     "gap_s": inc.get("gap_s", 0.0)})
    if elephants:
        args["elephant_start_max_s"] = fl.get("start_max_s", 0.0) or 0.0
    if switches:
        known = {"switches", "gain"}
        # keys the point changed from the resolved defaults are only those the overrides name
        for k, _ in job.overrides:
            if k.startswith("fairq.") and k.split(".", 1)[1] not in known:
                raise Unsupported(f"{k} is not mapped to the ns-2 FairQ module (it runs the paper's parameters)")
        for k, _ in job.overrides:
            if k == "fairq.gain":
                args["fq_gain"] = float(fq.get("gain"))
        args["fq_buffer_bytes"] = int(q.get("limit_pkts")) * (int(tcp.get("mss_bytes")) + int(tcp.get("header_bytes")))
    out: List[str] = []
    for k, v in args.items():
        out += [f"--{k}", str(v)]
    return out


def parse(path: Path) -> Dict[str, Any]:
    """The script's result file as lists of records."""
    r: Dict[str, Any] = {"P": {}, "A": [], "R": [], "L": [], "W": {}, "S": [], "D": {}, "M": {}, "F": [], "X": None}
    with open(path) as f:
        for line in f:
            p = line.split()
            if not p:
                continue
            t = p[0]
            if t == "P":
                r["P"][p[1]] = " ".join(p[2:])
            elif t == "A":
                r["A"].append((int(p[1]), int(p[2]), int(p[3]), float(p[4])))
            elif t == "R":
                r["R"].append((int(p[1]), int(p[2]), float(p[3]), float(p[4])))
            elif t == "L":
                r["L"].append({"flow": int(p[1]), "src": p[2], "dst": p[3], "start_s": float(p[4]),
                               "delivered": float(p[5]), "timeouts": int(p[6])})
            elif t == "W":
                r["W"][int(p[1])] = float(p[2])
            elif t == "S":
                r["S"].append({"server": int(p[1]), "timeouts": int(p[2]), "syn_retries": int(p[3])})
            elif t == "D":
                r["D"][p[1]] = int(p[2])
            elif t == "M":
                r["M"][p[1]] = int(p[2])
            elif t == "F":
                r["F"].append({"port": p[1], "rewrites": int(p[2]), "synacks": int(p[3]), "fins": int(p[4]),
                               "resets": int(p[5]), "flows": int(p[6])})
            elif t == "X":
                r["X"] = (float(p[1]), int(p[2]), int(p[3]))
    if r["X"] is None:
        raise RuntimeError(f"{path}: the run did not finish (no X record)")
    return r


def metrics(r: Dict[str, Any]) -> Dict[str, Any]:
    """docs/metrics.md's measures from a parsed result file."""
    P = r["P"]
    times = [a[3] for a in r["A"]]
    m: Dict[str, Any] = dict(M.answer_stats(times))
    servers = int(P.get("servers", 0))
    if servers:
        m.update(M.rounds(int(P["server_bytes"]) * servers, [e - s for _, _, s, e in r["R"]]))
    m["drops"] = r["D"].get(MEASURED, 0)
    m["drops_elsewhere"] = sum(v for k, v in r["D"].items() if k != MEASURED)
    m["marks"] = r["M"].get(MEASURED, 0)
    incast_to = sum(s["timeouts"] for s in r["S"])
    ele_to = sum(e["timeouts"] for e in r["L"])
    m["timeouts"] = incast_to + ele_to
    m["timeouts_incast"] = incast_to
    m["syn_retries"] = sum(s["syn_retries"] for s in r["S"])
    if r["L"]:
        duration = float(P["duration_s"])
        window = float(P.get("window_s") or 0) or duration
        per = [(e["delivered"] - r["W"].get(e["flow"], 0.0)) * 8 / window for e in r["L"]]
        m["aggregate_throughput_bps_flows"] = sum(per)
        m["throughput_bps_flows"] = M.mean(per)
        m["jain_index_flows"] = M.jain(per)
        m["timeouts_flows"] = ele_to
    for f in r["F"]:
        if f["port"] == MEASURED:
            m["fairq_rewrites"] = f["rewrites"]
            m["fairq_synacks"] = f["synacks"]
            m["fairq_fins"] = f["fins"]
            m["fairq_idle_resets"] = f["resets"]
    m["sim_end_s"] = r["X"][0]
    return M.clean(m)


def flows_rows(r: Dict[str, Any]) -> List[Dict[str, Any]]:
    """flows.csv rows: the elephants, then one row per incast server (its connections summed,
    docs/metrics.md), with CONTRACT's columns where the script measures them."""
    P = r["P"]
    rows: List[Dict[str, Any]] = []
    for e in r["L"]:
        rows.append({"flow_id": e["flow"], "src": e["src"], "dst": e["dst"], "kind": "tcp", "group": "flows",
                     "start_s": e["start_s"], "bytes_delivered": int(e["delivered"]), "timeouts": e["timeouts"]})
    nsrc = len(SERVERS)
    clients = int(P.get("clients", 6))
    done: Dict[int, List[float]] = {}
    for _, _, srv, t in r["A"]:
        done.setdefault(srv, []).append(t)
    base = len(rows)
    for s in r["S"]:
        i = s["server"]
        ts = done.get(i, [])
        rows.append({"flow_id": base + i, "src": SERVERS[i % nsrc], "dst": RACK4[(i // nsrc) % clients],
                     "kind": "tcp", "group": "incast", "start_s": float(P["start_s"]),
                     "bytes_delivered": len(ts) * int(P["server_bytes"]), "size_bytes": int(P["server_bytes"]),
                     "timeouts": s["timeouts"], "fct_s": max(ts) if ts else None})
    return rows


COLUMNS = ["flow_id", "src", "dst", "kind", "group", "start_s", "end_s", "bytes_sent", "bytes_delivered",
           "pkts_in_window", "fct_s", "max_gap_s", "retransmits", "timeouts", "size_bytes"]


@PEER.reproduces("fairq-incast-mild", "fairq-incast-heavy", "fairq-incast-lowfreq", "fairq-incast-highfreq",
                 files=FILES)
def incast(job: Job) -> Dict[str, Any]:
    from dcfair.peers import REPO

    args = options(job)
    ns = ns_modules()
    result = job.out / "ns2_fairq.txt"
    run_ns(ns, REPO / SCRIPT, ["--out", str(result), *args], cwd=job.out)
    r = parse(result)
    (job.out / "flows.csv").write_text(M.flows_csv(flows_rows(r), COLUMNS))
    return metrics(r)
