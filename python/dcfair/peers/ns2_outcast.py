"""The ns-2 runner of the TCP Outcast reproductions (paper 004: ``outcast-case1``, ``-fig2``,
``-case2`` .. ``-case6``, ``-mitigations``, ``-drops``, ``-blackout``):
``validation/ns2/outcast_cases.tcl`` in Debian's stock ns-2.35.

Rules:

- The script builds the point from the engine's resolved view (:meth:`Job.resolved`), never
  from the TOML: the nodes in dcfair's id order (ns-2's flat addresses equal dcfair's node ids,
  which ns-2's SFQ hashes), one simplex link per port with its rate and delay, and every flow
  with dcfair's start time. Each flow's data and ACKs are routed over the exact ports of its
  ``path`` / ``ack_path`` (per-input-link hash classifiers in the script), so routing (dcfair's
  draw of ECMP, waypoints, equal-length routing with a core by destination bits or at random
  per flow) is not a difference between the two simulators.
- Queues: switch ports run the point's discipline, host NICs DropTail of
  ``topology.host_buffer_pkts``. DropTail in packets or in bytes (ns-2's ``queue_in_bytes_``
  with ``mean_pktsize_ 1`` stores a packet iff the bytes waiting plus its size fit, as dcfair
  does); RED and SFQ count packets in ns-2, so a byte limit becomes ``floor(limit_bytes / mtu)``
  packets (dcfair's SFQ early rule does the same; for RED it is exact while the port carries only
  full-size data packets, as every bottleneck here does). ns-2's ``Queue/SFQ`` is dcfair's
  ``drop_rule = "early"``, ``hash = "addresses"`` only. The blackout device is a DropTail port
  behind ns-2's ``ErrorModel/TwoState`` in time units (OFF exponential of mean ``mean_off_s``,
  ON the transmission time of ``drop_pkts`` packets of ``packet_bytes``, every arrival in ON
  dropped), which is the paper's section 4.3 model as dcfair's ``queue.kind = "blackout"``
  defines it.
- TCP: NewReno (``Agent/TCP/Newreno`` + ``TCPSink``), with SACK ``Agent/TCP/Sack1`` +
  ``TCPSink/Sack1``, CUBIC with SACK ``Agent/TCP/Linux`` with ns-2's Linux CUBIC module set to
  the scenario's beta, + ``TCPSink/Sack1``. The scenario's segment size, initial
  window, receive window, minimum / initial / maximum RTO, handshake and limited transmit are
  set; ns-2's own loss recovery is kept (it is the peer's TCP). The TCP clock (``tcpTick_``) is
  10 us unless ``tcp.clock_granularity_us`` says otherwise, so that the 2 ms minimum RTO acts
  (``validation/ns2/README.md``, "The Outcast fat-tree").
- Unsupported (the reason in one line): a discipline stock ns-2.35 does not have (HCF, AFD,
  DRR as dcfair defines it, Linux's SFQ, FairQ), TCP pacing (ns-2.35's only paced senders, the
  RBP agents, pace only the first window after an idle period), MPTCP, CUBIC without SACK (ns-2's
  Linux TCP recovers from SACK blocks only), delayed ACKs, per-packet routing, UDP sources,
  incast, per-group TCP settings.
- Measures (``docs/metrics.md``): a flow's in-order payload is its sink's ``bytes_`` (wire
  sizes, the SYN included) in whole segments x ``mss_bytes``, capped at its size;
  ``throughput_bps_<group>`` is the group's mean of that over the window x 8 / window;
  ``utilization`` the bytes the measured ports dequeued in the window over their capacity
  (ns-2 counts a packet when its serialization starts, dcfair when it ends: one packet at each
  end of the window); ``timeouts`` and ``retransmits`` the senders' ``nrexmit_`` and
  ``nrexmitpack_``; ``drops`` the measured ports' drops. ``timeseries.csv`` holds every flow's
  ``delivered_bytes`` every ``measure.sample_interval_s``; ``drop_runs.csv`` the runs of
  consecutive drops at ``measure.drop_runs_ports``, by input port and by group, from ns-2's
  trace of every arrival and drop there (the input of a packet is the port before that one on
  its flow's path).
- The point's seed picks the MRG32k3a substreams of the script's randomness (RED's coin, the
  TCP timers' phase, the blackout's OFF times).
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from dcfair.peers import REPO, Job, Unsupported
from dcfair.peers import measure as M
from dcfair.peers.ns2 import PEER, ns_stock, run_ns

SCRIPT = "validation/ns2/outcast_cases.tcl"
REPRODUCTIONS = ("outcast-case1", "outcast-fig2", "outcast-case2", "outcast-case3", "outcast-case4", "outcast-case5",
                 "outcast-case6", "outcast-mitigations", "outcast-drops", "outcast-blackout")
FLOW_COLUMNS = ("flow_id", "src", "dst", "kind", "start_s", "end_s", "bytes_sent", "bytes_delivered", "pkts_in_window",
                "fct_s", "max_gap_s", "retransmits", "timeouts", "group", "size_bytes", "pkts_sent_in_window")
#: Why each discipline stock ns-2.35 lacks cannot run.
NO_QDISC = {
    "hcf": "HCF is not in stock ns-2.35 (only in the project's module build)",
    "afd": "ns-2.35 has no AFD",
    "drr": "ns-2.35's Queue/DRR classifies by the source address without a salt, not by dcfair's salted 5-tuple hash",
    "fq_codel": "ns-2.35 has no FQ-CoDel",
    "codel": "ns-2.35 has no CoDel",
    "pfabric": "ns-2.35 has no pFabric queue",
}
#: TCP keys the script cannot set, with the value it runs (anything else is Unsupported).
TCP_FIXED = {"timestamps": False, "ecn": False, "max_cwnd_pkts": 0, "dupack_threshold": 3, "priority": "none",
             "profile": None, "quickack_segments": 0, "headerless_first_segment": False, "first_ack_resets_cwnd": False}


def _q(s: str) -> str:
    """A Tcl word (braced)."""
    if any(c in s for c in "{}\\ \n\t\"[]$;"):
        raise ValueError(f"unexpected character in {s!r}")
    return s


def _tcp(job: Job) -> Tuple[str, Dict[str, Any], List[str]]:
    """The TCP variant name for the script, its params and extra Tcl (CUBIC's module defaults)."""
    tcp = job.resolved()["scenario"].get("tcp") or {}
    if tcp.get("pacing"):
        raise Unsupported("TCP pacing: ns-2.35 has no pacing sender (its RBP agents, tcp-rbp.cc, pace only the first "
                          "window after an idle period; the paper's pacing is D. X. Wei's patch, not in the release)")
    if int((tcp.get("mptcp") or {}).get("subflows", 1) or 1) > 1:
        raise Unsupported("MPTCP is not in stock ns-2.35")
    if tcp.get("delayed_ack"):
        raise Unsupported("delayed ACKs with Linux's quick-ACK start are not mapped to ns-2.35's DelAck sink")
    for k, want in TCP_FIXED.items():
        if tcp.get(k, want) != want:
            raise Unsupported(f"tcp.{k} = {tcp.get(k)!r} is not run in the ns-2 Outcast script")
    cc = tcp.get("cc", "newreno")
    extra: List[str] = []
    if cc == "newreno":
        name = "sack" if tcp.get("sack") else "newreno"
    elif cc == "cubic":
        if not tcp.get("sack"):
            raise Unsupported("CUBIC without SACK: ns-2.35's CUBIC is its Linux TCP (Agent/TCP/Linux), whose loss "
                              "recovery works from SACK blocks only (the release pairs it with SACK sinks)")
        name = "cubic_sack"
        # ns-2.35's Linux CUBIC (tcp/linux/src/tcp_cubic.c): beta in 1/1024 (its default 819 = 0.8;
        # the TCP-friendly estimate keeps the slope it computed at load for 0.8)
        extra.append(f"oc_cubic beta {round(float(tcp.get('cubic_beta', 0.7)) * 1024)}")
        if round(float(tcp.get("cubic_c", 0.4)) * 1024 / 10) != 41:
            raise Unsupported("CUBIC with C other than 0.4: ns-2's Linux module fixes C when it loads (bic_scale 41)")
        extra.append(f"oc_cubic fast_convergence {1 if tcp.get('cubic_fast_convergence', True) else 0}")
        extra.append(f"oc_cubic tcp_friendliness {1 if tcp.get('cubic_reno_friendly', True) else 0}")
    else:
        raise Unsupported(f"tcp.cc = {cc!r}: the ns-2 Outcast script runs NewReno and CUBIC")
    mss = int(tcp["mss_bytes"])
    rcv = int(tcp["rcv_buf_bytes"])
    if tcp.get("window_scaling") is False:
        rcv = min(rcv, 65535)
    gran = float(tcp.get("clock_granularity_us") or 0.0)
    params = {
        "mss": mss, "hdr": int(tcp["header_bytes"]), "rcv_window_pkts": max(1, rcv // mss),
        "init_cwnd": int(tcp["init_cwnd_pkts"]), "min_rto": float(tcp["min_rto_ms"]) / 1e3,
        "max_rto": float(tcp["max_rto_s"]), "initial_rto": float(tcp["initial_rto_s"]),
        "tick": gran / 1e6 if gran > 0 else 1e-5, "syn": 1 if tcp.get("handshake", True) else 0,
        "singledup": 1 if tcp.get("limited_transmit") else 0,
    }
    return name, params, extra


def _pkt_cap(q: Dict[str, Any], mtu: int) -> int:
    if q.get("limit_pkts") is not None:
        return int(q["limit_pkts"])
    if q.get("limit_bytes") is not None:
        return max(1, int(q["limit_bytes"]) // mtu)
    raise Unsupported("a switch buffer without queue.limit_pkts or queue.limit_bytes")


def spec(job: Job) -> Tuple[str, Dict[str, Any]]:
    """The script's SPEC for the point, and what the measures need (flows, ports, window)."""
    r = job.resolved()
    sc = r["scenario"]
    if sc.get("fairq"):
        raise Unsupported("FairQ is not in stock ns-2.35 (only in the project's module build, for the FairQ paper's testbed)")
    if sc.get("ports"):
        raise Unsupported("per-port queue settings ([ports]) are not run in the ns-2 Outcast script")
    if sc.get("host_queue"):
        raise Unsupported("a host queue discipline ([host_queue]) is not run in the ns-2 Outcast script")
    if r.get("udp_sources") or sc.get("udp"):
        raise Unsupported("UDP sources are not run in the ns-2 Outcast script")
    if r.get("incast") or sc.get("incast"):
        raise Unsupported("incast is not run in the ns-2 Outcast script")
    routing = sc.get("routing") or {}
    if routing.get("core") == "random_packet" and routing.get("equal_length"):
        raise Unsupported("a random core per packet: the script routes each flow over one path")
    if routing.get("mode") in ("spray", "packet_spray", "random_packet"):
        raise Unsupported(f"routing.mode = {routing.get('mode')!r}: the script routes each flow over one path")
    for g, gd in (sc.get("groups") or {}).items():
        if gd and gd.get("tcp"):
            raise Unsupported(f"per-group TCP settings (groups.{g}.tcp) are not run in the ns-2 Outcast script")
        if gd and gd.get("transport", "tcp") != "tcp":
            raise Unsupported(f"groups.{g}.transport = {gd.get('transport')!r}: the script runs TCP only")
    fl = sc.get("flows") or {}
    if fl and (fl.get("tcp") or fl.get("transport", "tcp") != "tcp"):
        raise Unsupported("per-flow TCP settings or non-TCP [flows] are not run in the ns-2 Outcast script")
    tcpname, params, extra = _tcp(job)

    q = sc["queue"]
    kind = q["kind"]
    if kind in NO_QDISC:
        raise Unsupported(NO_QDISC[kind])
    if kind not in ("droptail", "red", "sfq", "blackout"):
        raise Unsupported(f"queue.kind = {kind!r} is not in stock ns-2.35")
    mtu = params["mss"] + params["hdr"]
    if (q.get("droptail") or {}).get("mark_threshold_pkts") is not None or \
            (q.get("droptail") or {}).get("mark_threshold_bytes") is not None:
        raise Unsupported("ECN marking thresholds are not run in the ns-2 Outcast script")
    if kind == "red":
        red = q["red"]
        if red.get("ecn"):
            raise Unsupported("RED with ECN is not run in the ns-2 Outcast script")
        params.update(red_min=float(red["min_thresh_pkts"]), red_max=float(red["max_thresh_pkts"]),
                      red_weight=float(red["q_weight"]), red_max_p=float(red["max_p"]),
                      red_gentle=1 if red.get("gentle") else 0, red_bytes=1 if red.get("byte_mode") else 0,
                      red_wait=1 if red.get("wait", True) else 0, red_mean_pktsize=int(red.get("mean_pkt_bytes", 1500)))
    if kind == "sfq":
        sfq = q["sfq"]
        if sfq.get("drop_rule") != "early" or sfq.get("hash") != "addresses" or float(sfq.get("perturb_s") or 0) > 0:
            raise Unsupported("ns-2.35's Queue/SFQ is dcfair's SFQ with drop_rule = \"early\" and hash = \"addresses\" "
                              "only (not Linux's push-out and flow hash)")
        params["sfq_buckets"] = int(sfq["buckets"])
    topo = sc.get("topology") or {}
    host_buf = int(topo.get("host_buffer_pkts") or 1000)
    kinds = {n["name"]: n["kind"] for n in r["nodes"]}

    def switch_queue(p: Dict[str, Any]) -> str:
        pk = p.get("qdisc") or kind
        if pk != kind:
            if pk == "droptail":  # a plain FIFO the topology keeps (the dumbbell's reverse ports)
                return f"droptail_pkts {host_buf}"
            raise Unsupported(f"a port running {pk!r} beside the scenario's {kind!r} is not run in the ns-2 Outcast script")
        if kind == "droptail":
            if q.get("limit_pkts") is not None:
                return f"droptail_pkts {int(q['limit_pkts'])}"
            if q.get("limit_bytes") is not None:
                return f"droptail_bytes {int(q['limit_bytes'])}"
            raise Unsupported("a DropTail port without a limit")
        if kind == "red":
            return f"red {_pkt_cap(q, mtu)}"
        if kind == "sfq":
            return f"sfq {_pkt_cap(q, mtu)}"
        # blackout
        b = q["blackout"]
        cap = _pkt_cap(q, mtu) if q.get("limit_pkts") is None else int(q["limit_pkts"])
        if q.get("limit_pkts") is None and q.get("limit_bytes") is not None:
            raise Unsupported("the blackout port's buffer in bytes is not run in the ns-2 Outcast script")
        m = int(b["drop_pkts"])
        if m == 0:
            return f"droptail_pkts {cap}"
        on = m * int(b.get("packet_bytes", 1500)) * 8 / float(p["rate_bps"])
        return f"blackout {cap} {float(b['mean_off_s']):.12g} {on:.12g}"

    lines: List[str] = []
    duration = float(sc["sim"]["duration_s"])
    meas = sc.get("measure") or {}
    window = float(meas.get("window_s") or duration)
    sample = float(meas.get("sample_interval_s") or 0.0)
    params.update(seed=job.seed, duration=duration, window_start=round(duration - window, 12), sample_s=sample)
    for k, v in params.items():
        lines.append(f"oc_param {k} {v}")
    lines += extra
    for n in r["nodes"]:
        lines.append(f"oc_node {_q(n['name'])}")
    ports = {p["name"]: p for p in r["ports"]}
    blackout_ports = []
    for p in r["ports"]:
        if kinds[p["node"]] == "host":
            qs = f"nic {host_buf}"
        else:
            qs = switch_queue(p)
            if qs.startswith("blackout"):
                blackout_ports.append(p["name"])
        lines.append(f"oc_port {_q(p['node'])} {_q(p['peer'])} {int(p['rate_bps'])} {float(p['delay_us']) / 1e6:.12g} {qs}")

    flows = sorted(r["flows"], key=lambda f: int(f["id"]))
    if not flows:
        raise Unsupported("a point without flows")
    if blackout_ports:
        inp = (q.get("blackout") or {}).get("input")
        for f in flows:
            path = list(f["path"])
            for bp in blackout_ports:
                if bp in path:
                    i = path.index(bp)
                    if inp and (i == 0 or path[i - 1] != inp):
                        raise Unsupported("the blackout's input filter with data from another input is not run in "
                                          "the ns-2 Outcast script")
                if bp in f["ack_path"] and inp:
                    raise Unsupported("ACKs through a blackout port with an input filter are not run in the ns-2 "
                                      "Outcast script")
    mss = params["mss"]
    for f in flows:
        size = f.get("size_bytes")
        pkts = 0 if size is None else max(1, math.ceil(int(size) / mss))
        path = " ".join(_q(x) for x in f["path"])
        ack = " ".join(_q(x) for x in f["ack_path"])
        lines.append(f"oc_flow {int(f['id'])} {_q(f['group'])} {_q(f['src'])} {_q(f['dst'])} "
                     f"{float(f['start_s']):.12g} {pkts} {tcpname} {{{path}}} {{{ack}}}")
    measured = [p["name"] for p in r["ports"] if p.get("measured")]
    for name in measured:
        p = ports[name]
        lines.append(f"oc_measure {_q(p['node'])} {_q(p['peer'])}")
    dr = list(meas.get("drop_runs_ports") or [])
    for name in dr:
        if name not in ports:
            raise Unsupported(f"measure.drop_runs_ports names {name!r}, not a port")
        p = ports[name]
        lines.append(f"oc_droprun {_q(p['node'])} {_q(p['peer'])}")
    info = {"flows": flows, "ports": ports, "measured": measured, "drop_runs": dr, "duration": duration,
            "window": window, "sample": sample, "mss": mss, "mtu": mtu}
    return "\n".join(lines) + "\n", info


def parse(path: Path) -> Dict[str, Any]:
    res: Dict[str, Any] = {"head": {}, "T": [], "W": None, "F": {}, "Q": {}, "E": None}
    with open(path) as fh:
        for line in fh:
            p = line.split()
            if not p:
                continue
            t = p[0]
            if t == "#" and len(p) >= 3:
                res["head"][p[1]] = " ".join(p[2:])
            elif t == "T":
                res["T"].append((float(p[1]), [int(x) for x in p[2:]]))
            elif t == "W":
                res["W"] = (float(p[1]), [int(x) for x in p[2:]])
            elif t == "F":
                res["F"][int(p[1])] = {"ack": int(p[2]), "ndatapack": int(p[3]), "nrexmitpack": int(p[4]),
                                       "nrexmit": int(p[5]), "sink_bytes": int(p[6]), "cwnd": float(p[7]),
                                       "backoff": int(p[8])}
            elif t == "Q":
                res["Q"][f"{p[1]}->{p[2]}"] = {"drops": int(p[3]), "arrivals": int(p[4]), "bdep0": float(p[5]),
                                              "bdep1": float(p[6])}
            elif t == "E":
                res["E"] = float(p[1])
    if res["E"] is None:
        raise RuntimeError(f"{path}: no E record, the ns-2 run did not finish")
    return res


def _payload(sink_bytes: int, mtu: int, mss: int, size: Optional[int]) -> int:
    """In-order payload from a TCPSink's bytes_ (whole segments of mtu bytes; the 40-byte SYN,
    counted too, is below one segment)."""
    b = (sink_bytes // mtu) * mss
    return min(b, int(size)) if size is not None else b


def drop_runs(trace: Path, port: str, flows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """drop_runs.csv rows of ``port`` from ns-2's trace of its link (``+`` arrivals, ``d``
    drops), as ``docs/metrics.md`` defines them."""
    by_fid = {int(f["id"]): f for f in flows}
    prev: Dict[Tuple[int, bool], str] = {}
    for fid, f in by_fid.items():
        for is_ack, path in ((False, f["path"]), (True, f["ack_path"])):
            if port in path:
                i = path.index(port)
                prev[(fid, is_ack)] = path[i - 1] if i > 0 else f["dst" if is_ack else "src"]
    events: List[Tuple[int, str, int]] = []  # (uid, input, fid) in arrival order
    dropped = set()
    with open(trace) as fh:
        for line in fh:
            p = line.split()
            if not p or p[0] not in "+d":
                continue
            fid, uid, is_ack = int(p[7]), int(p[11]), p[4] == "ack"
            if p[0] == "+":
                inp = prev.get((fid, is_ack))
                if inp is None:
                    raise RuntimeError(f"{trace}: a packet of flow {fid} at {port}, off its path")
                events.append((uid, inp, fid))
            else:
                dropped.add(uid)
    group = {fid: f["group"] for fid, f in by_fid.items()}
    in_run: Dict[str, int] = defaultdict(int)
    fl_run: Dict[int, int] = defaultdict(int)
    in_hist: Dict[str, Dict[int, int]] = defaultdict(lambda: defaultdict(int))
    gr_hist: Dict[str, Dict[int, int]] = defaultdict(lambda: defaultdict(int))
    in_flows: Dict[str, set] = defaultdict(set)
    gr_flows: Dict[str, set] = defaultdict(set)
    order_in: List[str] = []
    for uid, inp, fid in events:
        if inp not in in_flows:
            order_in.append(inp)
        in_flows[inp].add(fid)
        gr_flows[group[fid]].add(fid)
        if uid in dropped:
            in_run[inp] += 1
            fl_run[fid] += 1
        else:
            if in_run[inp]:
                in_hist[inp][in_run[inp]] += 1
                in_run[inp] = 0
            if fl_run[fid]:
                gr_hist[group[fid]][fl_run[fid]] += 1
                fl_run[fid] = 0
    for inp, n in in_run.items():
        if n:
            in_hist[inp][n] += 1
    for fid, n in fl_run.items():
        if n:
            gr_hist[group[fid]][n] += 1
    rows: List[Dict[str, Any]] = []

    def key(by: str, k: str, nflows: int, h: Dict[int, int]) -> None:
        total = sum(h.values())
        items = sorted(h.items()) if total else [(1, 0)]
        for n, e in items:
            rows.append({"port": port, "by": by, "key": k, "flows": nflows, "run_length": n, "episodes": e,
                         "share": e / total if total else None})

    for inp in order_in:
        key("input", inp, len(in_flows[inp]), in_hist[inp])
    groups = []
    for f in flows:
        if f["group"] not in groups:
            groups.append(f["group"])
    for g in groups:
        if gr_flows.get(g):
            key("group", g, len(gr_flows[g]), gr_hist[g])
    return rows


@PEER.reproduces(*REPRODUCTIONS, files=(SCRIPT,))
def outcast(job: Job) -> Dict[str, Any]:
    text, info = spec(job)
    out = Path(job.out).resolve()
    specf = out / "spec.tcl"
    specf.write_text(text)
    for old in out.glob("droprun-*.tr"):
        old.unlink()
    run_ns(ns_stock(), REPO / SCRIPT, [specf, out], cwd=out)
    res = parse(out / "result.txt")
    flows, mtu, mss = info["flows"], info["mtu"], info["mss"]
    duration, window = info["duration"], info["window"]
    nflow = len(flows)
    syn = int(res["head"].get("syn", "1") != "0")  # ndatapack_ counts the SYN
    w0 = duration - window
    if res["W"] is not None:
        start_bytes = res["W"][1]
    else:
        start_bytes = [0] * nflow
    rows: List[Dict[str, Any]] = []
    good: Dict[str, List[float]] = defaultdict(list)
    allgood: List[float] = []
    timeouts = retransmits = 0
    for i, f in enumerate(flows):
        fid = int(f["id"])
        fr = res["F"][fid]
        size = f.get("size_bytes")
        end_b = _payload(fr["sink_bytes"], mtu, mss, size)
        start_b = _payload(start_bytes[i], mtu, mss, size) if w0 > 0 else 0
        g = (end_b - start_b) * 8 / window
        good[f["group"]].append(g)
        allgood.append(g)
        timeouts += fr["nrexmit"]
        retransmits += fr["nrexmitpack"]
        rows.append({"flow_id": fid, "src": f["src"], "dst": f["dst"], "kind": "tcp", "start_s": float(f["start_s"]),
                     "bytes_sent": max(0, fr["ndatapack"] - syn) * mss, "bytes_delivered": end_b,
                     "retransmits": fr["nrexmitpack"], "timeouts": fr["nrexmit"], "group": f["group"],
                     "size_bytes": size})
    (out / "flows.csv").write_text(M.flows_csv(rows, FLOW_COLUMNS))
    metrics: Dict[str, Any] = {"flows": nflow, "timeouts": timeouts, "retransmits": retransmits,
                               "throughput_bps_tcp": M.mean(allgood)}
    if len(good) > 1:
        for g, xs in good.items():
            metrics[f"throughput_bps_{g}"] = M.mean(xs)
            metrics[f"aggregate_throughput_bps_{g}"] = sum(xs)
    if info["measured"]:
        cap = sum(float(info["ports"][n]["rate_bps"]) for n in info["measured"]) * window / 8
        sent = sum(res["Q"][n]["bdep1"] - res["Q"][n]["bdep0"] for n in info["measured"])
        metrics["utilization"] = sent / cap if cap > 0 else None
        metrics["drops"] = sum(res["Q"][n]["drops"] for n in info["measured"])
    if res["T"]:
        lines = ["time_s,metric,port,flow_id,value"]
        for t, bs in res["T"]:
            ts = f"{round(t, 9):.9g}"
            for i, f in enumerate(flows):
                lines.append(f"{ts},delivered_bytes,,{int(f['id'])},{_payload(bs[i], mtu, mss, f.get('size_bytes'))}")
        (out / "timeseries.csv").write_text("\n".join(lines) + "\n")
    if info["drop_runs"]:
        drows: List[Dict[str, Any]] = []
        for name in info["drop_runs"]:
            p = info["ports"][name]
            tr = out / f"droprun-{p['node']}-{p['peer']}.tr"
            drows += drop_runs(tr, name, flows)
            if not os.environ.get("DCFAIR_NS2_KEEP_TRACE"):
                tr.unlink()
        cols = ("port", "by", "key", "flows", "run_length", "episodes", "share")
        (out / "drop_runs.csv").write_text(M.flows_csv(drows, cols))
    return M.clean(metrics)

