"""The ns-2 runner of the HCF paper's long-flow reproductions (``hcf-throughput``,
``hcf-starvation``, ``hcf-buffer``, ``hcf-credits``, ``hcf-bins``, ``hcf-period``):
``validation/ns2/longflows.tcl``, FIFO in Debian's ns-2.35 and HCF in the module build
(``validation/ns2/modules/hcf/``: ``Queue/HCF``, written from the paper alone).

Rules:

- The script's options come from the engine's resolved scenario (:meth:`Job.get`), never from
  re-reading the TOML. The point must be the long-flow scenario (``hcf-longflows``) and may
  differ from it (resolved with the same ``queue.kind``, no other override) only in the keys of
  :data:`MAPPED`, which become options of the script; any other difference raises
  :class:`~dcfair.peers.Unsupported` naming the key (the variants beyond the paper: FairQ with
  its handshake, ExpressPass, AFD; the readings with delayed ACKs or CBR background). The keys
  of :data:`EXPECT` must hold the values the script mirrors (ns-2's one-way NewReno, Poisson
  UDP, ...), so that an edit of the TOML cannot silently part the two.
- ``queue.kind`` droptail runs in Debian's ns (:func:`~dcfair.peers.ns2.ns_stock`), hcf in the
  module build (:func:`~dcfair.peers.ns2.ns_modules`); the two binaries give byte-identical
  DropTail traces (checked on this scenario). Other disciplines are not needed by the HCF
  reproductions (``validation/ns2/run_ns2.py`` compares RED, SFQ, DRR).
- HCF's keys: ``bins``, ``credits``, ``hp_fraction``, ``swap``, ``zero_on_lp``, ``hashes`` map
  one to one to ``Queue/HCF``; ``period = "fixed"`` with ``period_us`` becomes a fixed period
  (``dynamic``: 0); ``credit_unit`` must be ``packets`` and ``hp_limit_pkts`` unset. HP holds
  floor(hp_fraction x limit_pkts + 0.5) packets (hcf.cc, D3). The hash functions are seeded
  from the point's seed, as ns-2's RNG (the flows' start times, the UDP gaps, the TCP timers).
- Measures follow ``docs/metrics.md`` with ``validation/ns2/metrics.py`` (packets delivered in
  the window, the longest gap, drops at the bottleneck); the packets each flow *sent* in the
  window are its TCP agent's ``ndatapack_`` (every data packet it sends, retransmissions
  included) at the end minus at the window's start (the script's ``--window_snapshot``).
  The trace streams through a FIFO: nothing big is written to disk.
- ``flows.csv`` has the engine's columns: one row per TCP flow (``bytes_sent`` = packets sent x
  MSS; ``bytes_delivered``, ``end_s``, ``fct_s`` empty: long flows never finish) and one for the
  UDP source (its packets delivered in the window).

Standalone (the same code, outside ``dcfair reproduce``)::

    .venv/bin/python -m dcfair.peers.ns2_hcf --set queue.kind=hcf --set sim.duration_s=20 --seed 1 [--out DIR]
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections import deque
from pathlib import Path
from typing import Any, Dict, Iterable, List, Tuple

from dcfair.peers import REPO, Job, Unsupported
from dcfair.peers import measure as M
from dcfair.peers.ns2 import PEER, ns_modules, ns_stock

SCRIPT = "validation/ns2/longflows.tcl"
METRICS = "validation/ns2/metrics.py"
MODULE = "validation/ns2/modules/hcf"
#: What a point's result depends on besides the runner (the cache key): the scripts, HCF's
#: sources and the build recipe of the module build.
FILES = (SCRIPT, METRICS, f"{MODULE}/hcf.h", f"{MODULE}/hcf.cc", f"{MODULE}/hcf.tcl", "validation/ns2/build.py")
SCENARIO_NAME = "hcf-longflows"
REPRODUCTIONS = ("hcf-throughput", "hcf-starvation", "hcf-buffer", "hcf-credits", "hcf-bins", "hcf-period")

#: Resolved-scenario keys the script takes as options (their values may differ from the TOML's).
MAPPED = {
    "seed", "sim.duration_s", "measure.window_s", "queue.kind", "queue.limit_pkts",
    "queue.hcf.bins", "queue.hcf.credits", "queue.hcf.hp_fraction", "queue.hcf.swap", "queue.hcf.zero_on_lp",
    "queue.hcf.hashes", "queue.hcf.period", "queue.hcf.period_us",
    "flows.count", "topology.senders", "flows.start_min_s", "flows.start_max_s",
    "topology.access_rate_mbps", "topology.access_delay_us", "topology.bottleneck_rate_mbps",
    "topology.bottleneck_delay_us", "topology.host_buffer_pkts",
    "tcp.rcv_buf_bytes", "tcp.init_cwnd_pkts", "tcp.min_rto_ms", "tcp.max_rto_s", "tcp.initial_rto_s",
    "tcp.mss_bytes", "tcp.header_bytes", "udp.rate_fraction", "udp.packet_bytes",
}
#: Measurement-only keys (what the engine records, not what it simulates).
IGNORED_PREFIXES = ("measure.",)
#: Values the script mirrors and cannot change.
EXPECT = {
    "topology.kind": "dumbbell", "topology.receivers": 1, "sim.tie_break": "float_clock",
    "flows.transport": "tcp", "udp.pattern": "poisson", "queue.limit_bytes": None,
    "tcp.cc": "newreno", "tcp.delayed_ack": False, "tcp.handshake": False, "tcp.sack": False,
    "tcp.timestamps": False, "tcp.pacing": False, "tcp.ecn": False, "tcp.headerless_first_segment": True,
    "tcp.first_ack_resets_cwnd": True, "tcp.max_backoff": 1024, "tcp.limited_transmit": True,
    "tcp.ssthresh_from": "cwnd", "tcp.recovery_cwnd": "half_window", "tcp.recovery_exit": "deflated",
    "tcp.recovery_max_burst": 2, "tcp.dupack_threshold": 3,
}
HCF_EXPECT = {"queue.hcf.credit_unit": "packets", "queue.hcf.hp_limit_pkts": None}
KINDS = ("droptail", "hcf")


def _metrics_module():
    spec = importlib.util.spec_from_file_location("dcfair_ns2_metrics", REPO / METRICS)
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def _flat(d: Any, prefix: str = "") -> Dict[str, Any]:
    if isinstance(d, dict):
        out: Dict[str, Any] = {}
        for k, v in d.items():
            out.update(_flat(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: d}


def _check(job: Job, names: Tuple[str, ...], mapped: set, expect: Dict[str, Any], script: str) -> str:
    """The point's queue kind, after checking that the point is one of the scenarios ``names``
    differing from its own file (resolved with the same queue.kind) only in ``mapped`` keys and
    holding the ``expect``ed values; Unsupported otherwise."""
    sc = job.resolved()["scenario"]
    if sc.get("name") not in names:
        raise Unsupported(f"{script} mirrors scenario {' or '.join(names)} only (got {sc.get('name')})")
    kind = job.get("queue.kind")
    if kind not in KINDS:
        raise Unsupported(f"queue.kind = {kind}: the HCF reproductions' ns-2 runner runs droptail and hcf only")
    base = Job(job.reproduction, job.scenario, job.text, (("queue.kind", kind),), job.seed, {}, job.out)
    mine, ref = _flat(sc), _flat(base.resolved()["scenario"])
    for key in sorted(set(mine) | set(ref)):
        if key in mapped or key.startswith(IGNORED_PREFIXES) and key != "measure.window_s":
            continue
        if mine.get(key) != ref.get(key):
            raise Unsupported(f"{key} = {json.dumps(mine.get(key))} has no counterpart in {script}")
    for key, want in dict(expect, **(HCF_EXPECT if kind == "hcf" else {})).items():
        if mine.get(key) != want:
            raise Unsupported(f"{key} = {json.dumps(mine.get(key))}: {script} mirrors {json.dumps(want)}")
    return kind


def _hcf_options(job: Job) -> Dict[str, Any]:
    g = job.get
    period = g("queue.hcf.period", "dynamic")
    period_us = g("queue.hcf.period_us")
    if period == "fixed":
        if not period_us or float(period_us) <= 0:
            raise Unsupported("queue.hcf.period = fixed needs queue.hcf.period_us > 0")
        p_us = float(period_us)
    elif period == "dynamic":
        p_us = 0.0
    else:
        raise Unsupported(f"queue.hcf.period = {period!r}: Queue/HCF has dynamic and fixed periods")
    return {
        "hcf_bins": int(g("queue.hcf.bins")), "hcf_credits": int(g("queue.hcf.credits")),
        "hcf_hp_fraction": float(g("queue.hcf.hp_fraction")), "hcf_swap": int(bool(g("queue.hcf.swap"))),
        "hcf_zero_on_lp": int(bool(g("queue.hcf.zero_on_lp"))), "hcf_hashes": int(g("queue.hcf.hashes", 1)),
        "hcf_period_us": p_us,
    }


def _args(opts: Dict[str, Any]) -> List[str]:
    args: List[str] = []
    for k, v in opts.items():
        args += [f"--{k}", repr(float(v)) if isinstance(v, float) else str(v)]
    return args


def options(job: Job) -> Tuple[str, List[str]]:
    """(queue kind, longflows.tcl's options) for the point; Unsupported for what it cannot run."""
    kind = _check(job, (SCENARIO_NAME,), MAPPED, EXPECT, SCRIPT)

    g = job.get
    flows = int(g("flows.count"))
    if int(g("topology.senders")) != flows:
        raise Unsupported("the ns-2 long-flow script gives every flow its own sender (topology.senders = flows.count)")
    mss, rcv = int(g("tcp.mss_bytes")), int(g("tcp.rcv_buf_bytes"))
    if rcv % mss:
        raise Unsupported(f"tcp.rcv_buf_bytes = {rcv} is not a whole number of segments (ns-2's window_ counts packets)")
    duration = float(g("sim.duration_s"))
    opts = {
        "qdisc": kind, "seed": job.seed, "duration": duration, "window": float(g("measure.window_s")),
        "flows": flows, "limit_pkts": int(g("queue.limit_pkts")),
        "access_rate_mbps": g("topology.access_rate_mbps"), "access_delay_us": g("topology.access_delay_us"),
        "access_limit_pkts": int(g("topology.host_buffer_pkts")),
        "bottleneck_rate_mbps": g("topology.bottleneck_rate_mbps"),
        "bottleneck_delay_us": g("topology.bottleneck_delay_us"),
        "mss_bytes": mss, "header_bytes": int(g("tcp.header_bytes")), "rcv_window_pkts": rcv // mss,
        "init_cwnd_pkts": int(g("tcp.init_cwnd_pkts")), "min_rto_s": float(g("tcp.min_rto_ms")) / 1000.0,
        "max_rto_s": g("tcp.max_rto_s"), "initial_rto_s": g("tcp.initial_rto_s"),
        "start_min_s": g("flows.start_min_s"), "start_max_s": g("flows.start_max_s"),
        "udp_rate_fraction": g("udp.rate_fraction"), "udp_pkt_bytes": int(g("udp.packet_bytes")),
        "pkt_bytes": mss + int(g("tcp.header_bytes")), "window_snapshot": 1,
    }
    if kind == "hcf":
        opts.update(_hcf_options(job))
    return kind, _args(opts)


def run_script(binary: str, args: List[str], timeout_s: float = 6 * 3600) -> Tuple[dict, Dict[int, Tuple[int, int]]]:
    """Runs longflows.tcl with ``args``, its trace streamed through a FIFO into metrics.py;
    returns (metrics.py's result, the W records: fid -> (ndatapack, nrexmitpack))."""
    mm = _metrics_module()
    tmp = tempfile.mkdtemp(prefix="dcfair-ns2-hcf-")
    try:
        fifo = os.path.join(tmp, "trace.fifo")
        os.mkfifo(fifo)
        cmd = [binary, str(REPO / SCRIPT), *args, "--trace", fifo]
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, start_new_session=True, cwd=tmp)
        tail: deque = deque(maxlen=20)
        snap: Dict[int, Tuple[int, int]] = {}
        result: Dict[str, Any] = {}

        def lines(fh) -> Iterable[str]:
            for line in fh:
                if line[:1] == "W":
                    _, fid, nd, nr = line.split()
                    snap[int(fid)] = (int(nd), int(nr))
                    continue
                yield line

        def parse() -> None:
            try:
                with open(fifo, "r", buffering=1 << 20) as fh:
                    result["res"] = mm.compute(lines(fh))
            except Exception as e:  # noqa: BLE001 - reported with ns's own output
                result["err"] = e

        def out() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                tail.append(line.rstrip("\n"))

        threads = [threading.Thread(target=parse, daemon=True), threading.Thread(target=out, daemon=True)]
        for t in threads:
            t.start()
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            raise RuntimeError(f"ns-2 did not finish in {timeout_s:g} s: {' '.join(cmd)}")
        if threads[0].is_alive():       # ns exited without opening the FIFO: unblock the reader
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        for t in threads:
            t.join(timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"ns-2 exited with {proc.returncode}: {' '.join(cmd)}\n" + "\n".join(tail))
        if "err" in result:
            raise RuntimeError(f"cannot read the trace of {' '.join(cmd)}: {result['err']}")
        return result["res"], snap
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


COLUMNS = ["flow_id", "src", "dst", "kind", "start_s", "end_s", "bytes_sent", "bytes_delivered", "pkts_in_window",
           "fct_s", "max_gap_s", "retransmits", "timeouts", "group", "size_bytes", "pkts_sent_in_window"]


def measure_run(res: dict, snap: Dict[int, Tuple[int, int]], mss: int) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    """The metrics (docs/metrics.md names) and flows.csv rows of one run."""
    m = res["metrics"]
    rows, sent = [], []
    for f in res["flows"]:
        fid = f["flow_id"]
        if fid not in snap or f.get("sent_pkts") is None:
            raise RuntimeError(f"flow {fid}: no window snapshot or final record in the trace")
        s = f["sent_pkts"] - snap[fid][0]
        sent.append(s)
        rows.append({"flow_id": fid, "src": f"s{fid}", "dst": "r0", "kind": "tcp", "start_s": f["start_s"],
                     "bytes_sent": f["sent_pkts"] * mss, "pkts_in_window": f["pkts_in_window"], "max_gap_s": f["max_gap_s"],
                     "retransmits": f["retransmits"], "timeouts": f["timeouts"], "group": "flows",
                     "pkts_sent_in_window": s})
    rows.append({"flow_id": len(res["flows"]), "src": "udp", "dst": "r0", "kind": "udp", "start_s": 0.0,
                 "pkts_in_window": m["udp_pkts_in_window"], "group": "udp"})
    metrics = {k: m[k] for k in ("utilization", "jain_index", "throughput_variance_pkts", "mean_pkts_in_window",
                                 "starved_fraction", "max_starvation_s", "drops", "timeouts", "retransmits")}
    metrics.update(M.window_counts(sent, prefix="sent_"))
    metrics["flows"] = len(res["flows"])
    return M.clean(metrics), rows


@PEER.reproduces(*REPRODUCTIONS, files=FILES)
def longflows(job: Job) -> Dict[str, Any]:
    kind, args = options(job)
    binary = ns_modules() if kind == "hcf" else ns_stock()
    res, snap = run_script(binary, args)
    metrics, rows = measure_run(res, snap, int(job.get("tcp.mss_bytes")))
    (job.out / "flows.csv").write_text(M.flows_csv(rows, COLUMNS))
    (job.out / "ns2_command.txt").write_text(" ".join([Path(binary).name, SCRIPT, *args, "--trace", "<fifo>"]) + "\n")
    return metrics


# --- incast (figures 2 and 3) -----------------------------------------------------------------

INCAST_SCRIPT = "validation/ns2/hcf_incast.tcl"
INCAST_FILES = (INCAST_SCRIPT, f"{MODULE}/hcf.h", f"{MODULE}/hcf.cc", f"{MODULE}/hcf.tcl", "validation/ns2/build.py")
INCAST_NAMES = ("hcf-incast-typical", "hcf-incast-nextgen", "hcf-incast-fixed")
INCAST_MAPPED = {
    "seed", "sim.duration_s", "queue.kind", "queue.limit_pkts",
    "queue.hcf.bins", "queue.hcf.credits", "queue.hcf.hp_fraction", "queue.hcf.swap", "queue.hcf.zero_on_lp",
    "queue.hcf.hashes", "queue.hcf.period", "queue.hcf.period_us",
    "incast.servers", "topology.senders", "incast.block_bytes", "incast.server_bytes", "incast.rounds",
    "incast.start_s", "incast.gap_s",
    "topology.access_rate_mbps", "topology.bottleneck_rate_mbps", "topology.access_delay_us",
    "topology.bottleneck_delay_us", "topology.host_buffer_pkts",
    "tcp.rcv_buf_bytes", "tcp.init_cwnd_pkts", "tcp.min_rto_ms", "tcp.max_rto_s", "tcp.initial_rto_s",
    "tcp.mss_bytes", "tcp.header_bytes",
}
INCAST_EXPECT = {
    "topology.kind": "dumbbell", "topology.receivers": 1, "sim.tie_break": "float_clock", "queue.limit_bytes": None,
    "tcp.cc": "reno", "tcp.delayed_ack": False, "tcp.handshake": True, "tcp.sack": False, "tcp.timestamps": False,
    "tcp.pacing": False, "tcp.ecn": False, "tcp.max_backoff": 1024, "tcp.limited_transmit": True,
    "tcp.ssthresh_from": "cwnd", "tcp.recovery_cwnd": "half_window", "tcp.recovery_exit": "deflated",
    "tcp.dupack_threshold": 3, "incast.connection": "persistent", "incast.transport": "tcp", "incast.epochs": 1,
    "incast.src": None, "incast.dst": None, "flows": None, "udp": None, "poisson": None,
}


def incast_options(job: Job) -> Tuple[str, List[str]]:
    """(queue kind, hcf_incast.tcl's options) for the point; Unsupported for what it cannot run."""
    kind = _check(job, INCAST_NAMES, INCAST_MAPPED, INCAST_EXPECT, INCAST_SCRIPT)
    g = job.get
    n = int(g("incast.servers"))
    if int(g("topology.senders")) != n:
        raise Unsupported("the ns-2 incast script runs one server per sender host (topology.senders = incast.servers)")
    rate, delay = g("topology.access_rate_mbps"), g("topology.access_delay_us")
    if g("topology.bottleneck_rate_mbps") != rate or g("topology.bottleneck_delay_us") != delay:
        raise Unsupported("the ns-2 incast script gives every link the same rate and delay")
    flows = job.resolved()["flows"]
    for i, f in enumerate(flows):
        want = i * float(g("incast.start_s")) / n
        if abs(float(f["start_s"]) - want) > 1e-12:
            raise Unsupported(f"connection {i} opens at {f['start_s']} s, the script at i x start_s / servers = {want}")
    mss = int(g("tcp.mss_bytes"))
    opts: Dict[str, Any] = {
        "qdisc": kind, "seed": job.seed, "servers": n,
        "block_bytes": int(g("incast.block_bytes") or 0), "server_bytes": int(g("incast.server_bytes") or 0),
        "rounds": int(g("incast.rounds")), "start_s": float(g("incast.start_s")), "gap_s": float(g("incast.gap_s")),
        "duration_s": float(g("sim.duration_s")), "rate_mbps": float(rate), "delay_us": float(delay),
        "limit_pkts": int(g("queue.limit_pkts")), "host_buffer_pkts": int(g("topology.host_buffer_pkts")),
        "mss_bytes": mss, "header_bytes": int(g("tcp.header_bytes")),
        # whole segments fit the receive buffer: ns-2's window_ counts full segments
        "rcv_window_pkts": int(g("tcp.rcv_buf_bytes")) // mss,
        "init_cwnd_pkts": int(g("tcp.init_cwnd_pkts")), "min_rto_s": float(g("tcp.min_rto_ms")) / 1000.0,
        "max_rto_s": float(g("tcp.max_rto_s")), "initial_rto_s": float(g("tcp.initial_rto_s")),
    }
    if kind == "hcf":
        opts.update(_hcf_options(job))
    return kind, _args(opts)


def run_incast(binary: str, args: List[str], timeout_s: float = 6 * 3600) -> Dict[str, Any]:
    """Runs hcf_incast.tcl; returns the records of its result file, parsed."""
    tmp = tempfile.mkdtemp(prefix="dcfair-ns2-incast-")
    try:
        trace = os.path.join(tmp, "incast.tr")
        cmd = [binary, str(REPO / INCAST_SCRIPT), *args, "--trace", trace]
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout_s, cwd=tmp)
        if r.returncode != 0:
            raise RuntimeError(f"ns-2 exited with {r.returncode}: {' '.join(cmd)}\n{(r.stderr or r.stdout)[-2000:]}")
        with open(trace) as fh:
            return parse_incast(fh)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def parse_incast(lines: Iterable[str]) -> Dict[str, Any]:
    """The result file of hcf_incast.tcl: header, opens, requests, answers, rounds, the
    bottleneck's arrivals (per flow, tcp packets) and drops, the servers' counters, the end."""
    res: Dict[str, Any] = {"header": {}, "open": {}, "requests": {}, "answers": [], "rounds": [], "arrivals": {},
                           "drops": 0, "final": {}, "end": None}
    for line in lines:
        c = line[:1]
        if c == "r":
            f = line.split()
            if f[4] == "tcp":
                res["arrivals"].setdefault(int(f[7]), []).append(float(f[1]))
        elif c == "d":
            res["drops"] += 1
        elif c == "#":
            parts = line[1:].split(None, 1)
            if len(parts) == 2:
                res["header"][parts[0]] = parts[1].strip()
        elif c == "S":
            _, fid, _node, t = line.split()
            res["open"][int(fid)] = float(t)
        elif c == "Q":
            _, rnd, t = line.split()
            res["requests"][int(rnd)] = float(t)
        elif c == "A":
            _, rnd, fid, t = line.split()
            res["answers"].append((int(rnd), int(fid), float(t)))
        elif c == "R":
            _, rnd, t0, t1 = line.split()
            res["rounds"].append((int(rnd), float(t0), float(t1)))
        elif c == "F":
            _, fid, nd, nr, nto = line.split()
            res["final"][int(fid)] = (int(nd), int(nr), int(nto))
        elif c == "E":
            _, t, _done = line.split()
            res["end"] = float(t)
    if res["end"] is None:
        raise RuntimeError("the incast result file has no end record (the run did not finish)")
    return res


def measure_incast(res: Dict[str, Any], block_bytes: int, mss: int) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    """docs/metrics.md's incast measures and flows.csv rows of one run."""
    end = res["end"]
    metrics: Dict[str, Any] = dict(M.rounds(block_bytes, [t1 - t0 for _, t0, t1 in res["rounds"]]))
    metrics.update(M.answer_stats([t - res["requests"][rnd] for rnd, _, t in res["answers"]]))
    rows, gaps = [], []
    for fid in sorted(res["open"]):
        gap = M.max_gap(res["open"][fid], res["arrivals"].get(fid, []), end)
        gaps.append(gap)
        nd, nr, nto = res["final"].get(fid, (None, None, None))
        rows.append({"flow_id": fid, "src": f"s{fid}", "dst": "r0", "kind": "tcp", "start_s": res["open"][fid],
                     "bytes_sent": None if nd is None else nd * mss, "max_gap_s": gap, "retransmits": nr,
                     "timeouts": nto, "group": "incast"})
    metrics["max_starvation_s"] = max(gaps) if gaps else None
    metrics["drops"] = res["drops"]
    metrics["timeouts"] = sum(r["timeouts"] or 0 for r in rows)
    metrics["retransmits"] = sum(r["retransmits"] or 0 for r in rows)
    metrics["flows"] = len(rows)
    return M.clean(metrics), rows


@PEER.reproduces(*INCAST_NAMES, files=INCAST_FILES)
def incast(job: Job) -> Dict[str, Any]:
    kind, args = incast_options(job)
    binary = ns_modules() if kind == "hcf" else ns_stock()
    res = run_incast(binary, args)
    g = job.get
    block = int(g("incast.block_bytes") or 0) or int(g("incast.server_bytes")) * int(g("incast.servers"))
    metrics, rows = measure_incast(res, block, int(g("tcp.mss_bytes")))
    (job.out / "flows.csv").write_text(M.flows_csv(rows, COLUMNS))
    (job.out / "ns2_command.txt").write_text(" ".join([Path(binary).name, INCAST_SCRIPT, *args, "--trace", "<tmp>"]) + "\n")
    return metrics


def main(argv=None) -> int:
    import argparse
    import sys

    ap = argparse.ArgumentParser(description="Run one point of the HCF reproductions (long flows or incast) in ns-2.35")
    ap.add_argument("--scenario", default=str(REPO / "scenarios/papers/hcf/longflows.toml"))
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="scenario override (as dcfair --set)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="write flows.csv and summary-like metrics.json here")
    args = ap.parse_args(argv)
    text = Path(args.scenario).read_text()
    overrides = tuple(tuple(s.split("=", 1)) for s in args.set)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="ns2-hcf-"))
    out.mkdir(parents=True, exist_ok=True)
    job = Job("hcf-throughput", args.scenario, text, overrides, args.seed, {}, out)  # type: ignore[arg-type]
    name = job.resolved()["scenario"].get("name")
    try:
        metrics = incast(job) if name in INCAST_NAMES else longflows(job)
    except Unsupported as e:
        print(f"unsupported: {e}", file=sys.stderr)
        return 2
    (out / "metrics.json").write_text(json.dumps(metrics, indent=1, sort_keys=True) + "\n")
    print(json.dumps({"out": str(out), "command": (out / "ns2_command.txt").read_text().strip(), "metrics": metrics},
                     indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
