#!/usr/bin/env python3
"""Drive the HPCC authors' ns-3 fork (alibaba-edu/High-Precision-Congestion-Control,
folder simulation/) on one shared setting and turn its outputs into JSON.

Setting: one switch, N senders and 1 receiver, every link 100 Gbit/s with 1 us
propagation delay, N in {2, 16}; each sender starts one flow to the receiver at
the same instant t0.  Congestion control DCQCN (CC_MODE 1) or HPCC (CC_MODE 3),
each with the fork's own production parameters: the values its simulation/run.py
writes for --bw 100 (that script is how the authors produce the paper's runs).

Measurement window: [t0 + 2 ms, t0 + 10 ms].  The flows are sized (160 MB in
total, split evenly) so that, at a fair share, every flow is still sending at
t0 + 10 ms; the run goes on until every flow completes so that each flow's
completion time is known too.

Outputs read (all written by the fork's scratch/third.cc):
  * FCT_OUTPUT_FILE   one line per finished flow
  * PFC_OUTPUT_FILE   one line per PFC frame received by a device (1 pause, 0 resume)
  * QLEN_MON_FILE     the fork's own queue sampler: every 100 ns, per switch port,
                      a histogram in 1 KB bins, dumped at multiples of 100 ms.  t0 is
                      placed at 2.09 s so that the window ends exactly at the 2.1 s dump.
  * TRACE_OUTPUT_FILE binary packet-event trace of the switch and the receiver
                      (format: analysis/trace-format.h of the fork); used for per-flow
                      bytes received in the window and an exact egress queue trajectory.

This script is our own code; it only writes the fork's input files and reads its
output files.  It needs Python 3 and nothing else.

Usage:
  python3 validation/hpcc/run.py [--build out/peers/hpcc] [--work DIR] [--json FILE]
                                 [--cases dcqcn:2,dcqcn:16,hpcc:2,hpcc:16]
"""
import argparse
import json
import math
import os
import resource
import struct
import subprocess
import sys
import time

# ----------------------------------------------------------------------------
# The shared setting
# ----------------------------------------------------------------------------
LINK_RATE = "100Gbps"
LINK_BPS = 100_000_000_000
LINK_DELAY = "0.001ms"           # 1 us propagation delay
TOTAL_BYTES = 160_000_000        # split evenly over the N flows
T0_S = "2.09"                    # flow start (s); see module docstring
T0_NS = 2_090_000_000
WIN_START_NS = T0_NS + 2_000_000
WIN_END_NS = T0_NS + 10_000_000  # = 2.1 s, a multiple of the fork's 100 ms qlen dump period
STOP_S = 2.2                     # run until all flows are done (checked afterwards)
QLEN_SAMPLE_NS = 100             # the fork's qlen_mon_interval (hard-coded in third.cc)
PG = 3                           # priority group used by the fork's examples
DPORT = 100

# ----------------------------------------------------------------------------
# The fork's production parameters, as its simulation/run.py writes them for
# --bw 100 (Python 2 integer arithmetic):
#   kmax_map = "2 %d %d %d %d" % (bw*1e9, 400*bw/25, bw*4*1e9, 400*bw*4/25)  (KB)
#   kmin_map = "2 %d %d %d %d" % (bw*1e9, 100*bw/25, bw*4*1e9, 100*bw*4/25)  (KB)
#   pmax_map = 0.2 for both rates;  bfsz = 16*bw/50 MB
#   dcqcn: ai = 5*bw/25 Mb/s, hai = 50*bw/25 Mb/s, t_alpha=1, t_dec=4, t_inc=300,
#          g=1/256, has_win=0, vwin=0, fast_react=0, ack_prio=1
#   hp:    ai = 10*bw/25 Mb/s (hai = ai, unused), int_multi = bw/25, has_win=1,
#          vwin=1, fast_react=1, u_target=0.95, mi=0, ack_prio=0
# ----------------------------------------------------------------------------
BW = 100
COMMON = {
    "ENABLE_QCN": "1",
    "USE_DYNAMIC_PFC_THRESHOLD": "1",
    "PACKET_PAYLOAD_SIZE": "1000",
    "SIMULATOR_STOP_TIME": "%.2f" % STOP_S,
    "CLAMP_TARGET_RATE": "0",
    "FAST_RECOVERY_TIMES": "1",
    "MIN_RATE": "1000Mb/s",
    "DCTCP_RATE_AI": "1000Mb/s",
    "ERROR_RATE_PER_LINK": "0.0000",
    "L2_CHUNK_SIZE": "4000",
    "L2_ACK_INTERVAL": "1",
    "L2_BACK_TO_ZERO": "0",
    "GLOBAL_T": "1",
    "MULTI_RATE": "0",
    "SAMPLE_FEEDBACK": "0",
    "PINT_LOG_BASE": "1.01",
    "PINT_PROB": "1.0",
    "RATE_BOUND": "1",
    "LINK_DOWN": "0 0 0",
    "ENABLE_TRACE": "1",
    "KMAX_MAP": "2 %d %d %d %d" % (BW * 10**9, 400 * BW // 25, BW * 4 * 10**9, 400 * BW * 4 // 25),
    "KMIN_MAP": "2 %d %d %d %d" % (BW * 10**9, 100 * BW // 25, BW * 4 * 10**9, 100 * BW * 4 // 25),
    "PMAX_MAP": "2 %d %.2f %d %.2f" % (BW * 10**9, 0.2, BW * 4 * 10**9, 0.2),
    "BUFFER_SIZE": str(16 * BW // 50),
    "QLEN_MON_START": str(WIN_START_NS),
    "QLEN_MON_END": str(WIN_END_NS),
}
CC = {
    "dcqcn": {
        "CC_MODE": "1",
        "ALPHA_RESUME_INTERVAL": "1",
        "RATE_DECREASE_INTERVAL": "4",
        "RP_TIMER": "300",
        "EWMA_GAIN": "0.00390625",
        "RATE_AI": "%dMb/s" % (5 * BW // 25),
        "RATE_HAI": "%dMb/s" % (50 * BW // 25),
        "HAS_WIN": "0",
        "VAR_WIN": "0",
        "FAST_REACT": "0",
        "U_TARGET": "0.95",
        "MI_THRESH": "0",
        "INT_MULTI": "1",
        "ACK_HIGH_PRIO": "1",
    },
    "hpcc": {
        "CC_MODE": "3",
        "ALPHA_RESUME_INTERVAL": "1",
        "RATE_DECREASE_INTERVAL": "4",
        "RP_TIMER": "300",
        "EWMA_GAIN": "0.00390625",
        "RATE_AI": "%dMb/s" % (10 * BW // 25),
        "RATE_HAI": "%dMb/s" % (10 * BW // 25),
        "HAS_WIN": "1",
        "VAR_WIN": "1",
        "FAST_REACT": "1",
        "U_TARGET": "0.95",
        "MI_THRESH": "0",
        "INT_MULTI": "%d" % (BW // 25),
        "ACK_HIGH_PRIO": "0",
    },
}
# Sensitivity variant: the README's example command (run.py --cc hp --bw 100 --hpai 50)
# and mix/config.txt use an HPCC additive increase of 50 Mb/s instead of 40 Mb/s.
CC["hpcc_ai50"] = dict(CC["hpcc"], RATE_AI="50Mb/s", RATE_HAI="50Mb/s")

KEY_ORDER = [
    "ENABLE_QCN", "USE_DYNAMIC_PFC_THRESHOLD", "PACKET_PAYLOAD_SIZE",
    "TOPOLOGY_FILE", "FLOW_FILE", "TRACE_FILE", "TRACE_OUTPUT_FILE",
    "FCT_OUTPUT_FILE", "PFC_OUTPUT_FILE", "SIMULATOR_STOP_TIME",
    "CC_MODE", "ALPHA_RESUME_INTERVAL", "RATE_DECREASE_INTERVAL",
    "CLAMP_TARGET_RATE", "RP_TIMER", "EWMA_GAIN", "FAST_RECOVERY_TIMES",
    "RATE_AI", "RATE_HAI", "MIN_RATE", "DCTCP_RATE_AI",
    "ERROR_RATE_PER_LINK", "L2_CHUNK_SIZE", "L2_ACK_INTERVAL", "L2_BACK_TO_ZERO",
    "HAS_WIN", "GLOBAL_T", "VAR_WIN", "FAST_REACT", "U_TARGET", "MI_THRESH",
    "INT_MULTI", "MULTI_RATE", "SAMPLE_FEEDBACK", "PINT_LOG_BASE", "PINT_PROB",
    "RATE_BOUND", "ACK_HIGH_PRIO", "LINK_DOWN", "ENABLE_TRACE",
    "KMAX_MAP", "KMIN_MAP", "PMAX_MAP", "BUFFER_SIZE",
    "QLEN_MON_FILE", "QLEN_MON_START", "QLEN_MON_END",
]


BUFFER_OVERRIDE = None


def config_values(cc):
    v = dict(COMMON)
    v.update(CC[cc])
    if BUFFER_OVERRIDE is not None:
        v["BUFFER_SIZE"] = str(BUFFER_OVERRIDE)
    return v


# ----------------------------------------------------------------------------
# Input files
# ----------------------------------------------------------------------------
def write_inputs(d, cc, n, trace=True):
    """Node 0 is the switch, nodes 1..n the senders, node n+1 the receiver.
    Links are listed switch-first, so switch port j faces node j."""
    os.makedirs(d, exist_ok=True)
    recv = n + 1
    with open(os.path.join(d, "topology.txt"), "w") as f:
        f.write("%d 1 %d\n0\n" % (n + 2, n + 1))
        for h in range(1, n + 2):
            f.write("0 %d %s %s 0\n" % (h, LINK_RATE, LINK_DELAY))
    size = TOTAL_BYTES // n
    with open(os.path.join(d, "flow.txt"), "w") as f:
        f.write("%d\n" % n)
        for s in range(1, n + 1):
            f.write("%d %d %d %d %d %s\n" % (s, recv, PG, DPORT, size, T0_S))
    with open(os.path.join(d, "trace.txt"), "w") as f:
        f.write("2\n0 %d\n" % recv)
    v = config_values(cc)
    v.update({
        "TOPOLOGY_FILE": os.path.join(d, "topology.txt"),
        "FLOW_FILE": os.path.join(d, "flow.txt"),
        "TRACE_FILE": os.path.join(d, "trace.txt"),
        "TRACE_OUTPUT_FILE": os.path.join(d, "mix.tr"),
        "FCT_OUTPUT_FILE": os.path.join(d, "fct.txt"),
        "PFC_OUTPUT_FILE": os.path.join(d, "pfc.txt"),
        "QLEN_MON_FILE": os.path.join(d, "qlen.txt"),
    })
    if not trace:
        v["ENABLE_TRACE"] = "0"
    assert set(v) == set(KEY_ORDER), set(v) ^ set(KEY_ORDER)
    with open(os.path.join(d, "config.txt"), "w") as f:
        for k in KEY_ORDER:
            f.write("%s %s\n" % (k, v[k]))
    return size


def node_ip(i):
    # third.cc: node_id_to_ip(id) = 11.0.0.1 + (id/256)<<16 + (id%256)<<8
    return 0x0B000001 + ((i // 256) << 16) + ((i % 256) << 8)


def ip_node(ip):
    return (ip >> 8) & 0xFFFF


# ----------------------------------------------------------------------------
# Output parsers
# ----------------------------------------------------------------------------
def parse_fct(path):
    out = []
    if not os.path.exists(path):
        return out
    for line in open(path):
        p = line.split()
        if len(p) < 8:
            continue
        out.append({
            "src": ip_node(int(p[0], 16)), "dst": ip_node(int(p[1], 16)),
            "sport": int(p[2]), "dport": int(p[3]), "size_bytes": int(p[4]),
            "start_ns": int(p[5]), "fct_ns": int(p[6]), "standalone_fct_ns": int(p[7]),
        })
    return out


def overlap(a0, a1, b0, b1):
    return max(0, min(a1, b1) - max(a0, b0))


def parse_pfc(path, end_ns):
    """Lines: time node nodetype ifindex type (1: pause received, 0: resume)."""
    ev = []
    if os.path.exists(path):
        for line in open(path):
            p = line.split()
            if len(p) == 5:
                ev.append(tuple(int(x) for x in p))
    ev.sort()
    open_at = {}
    intervals = []
    pauses = pauses_win = 0
    for t, node, ntype, intf, typ in ev:
        key = (node, intf)
        if typ == 1:
            pauses += 1
            if WIN_START_NS <= t < WIN_END_NS:
                pauses_win += 1
            if key not in open_at:
                open_at[key] = t
        else:
            if key in open_at:
                intervals.append((key, open_at.pop(key), t))
    for key, t in open_at.items():
        intervals.append((key, t, end_ns))
    per_dev = {}
    for key, a, b in intervals:
        k = "node%d/if%d" % key
        per_dev.setdefault(k, 0)
        per_dev[k] += b - a
    return {
        "pause_frames_total": pauses,
        "resume_frames_total": sum(1 for e in ev if e[4] == 0),
        "pause_frames_in_window": pauses_win,
        "pause_time_total_ns": sum(b - a for _, a, b in intervals),
        "pause_time_in_window_ns": sum(overlap(a, b, WIN_START_NS, WIN_END_NS) for _, a, b in intervals),
        "pause_time_by_device_ns": per_dev,
        "devices_paused": sorted(per_dev),
    }


def parse_qlen_mon(path, switch, port):
    """The fork's sampler: 'time: T' then lines 'switch port c0 c1 ...' where ci is
    the number of 100 ns samples with egress bytes in [i KB, i+1 KB)."""
    if not os.path.exists(path):
        return None
    blocks = []
    cur = None
    for line in open(path):
        if line.startswith("time:"):
            cur = {"time": int(line.split()[1]), "rows": {}}
            blocks.append(cur)
        elif cur is not None:
            p = [int(x) for x in line.split()]
            cur["rows"][(p[0], p[1])] = p[2:]
    blk = [b for b in blocks if b["time"] == WIN_END_NS]
    if not blk:
        return {"error": "no dump at %d ns" % WIN_END_NS, "dumps": [b["time"] for b in blocks]}
    cnt = blk[0]["rows"].get((switch, port))
    if cnt is None:
        return {"error": "port not in dump"}
    total = sum(cnt)
    mean = sum((i + 0.5) * 1000 * c for i, c in enumerate(cnt)) / total
    mean_lo = sum(i * 1000 * c for i, c in enumerate(cnt)) / total
    acc = 0
    p99 = None
    for i, c in enumerate(cnt):
        acc += c
        if acc >= 0.99 * total:
            p99 = (i + 1) * 1000
            break
    return {
        "samples": total,
        "sample_interval_ns": QLEN_SAMPLE_NS,
        "bin_bytes": 1000,
        "mean_bytes_binmid": mean,
        "mean_bytes_bounds": [mean_lo, mean_lo + 1000],
        "p99_bytes_bin_upper": p99,
        "max_bytes_bin_upper": len(cnt) * 1000,
        "note": "fork's monitor_buffer(): sum of MMU egress_bytes of the port, 1 KB bins",
    }


# analysis/trace-format.h: struct TraceFormat, natural alignment, 56 bytes
REC = struct.Struct("<QHBBIIIHBBBB2x" + "24s")
DATA = struct.Struct("<HHIQHH4x")


def read_trace(path):
    with open(path, "rb") as f:
        buf = f.read()
    (n,) = struct.unpack_from("<I", buf, 0)
    off = 4 + n * 11 + 4          # SimSetting: n x (u16 node, u8 intf, u64 bps) + u32 win
    body = len(buf) - off
    if body % REC.size:
        raise RuntimeError("trace size %d not a multiple of %d" % (body, REC.size))
    return buf, off


def analyse_trace(path, n):
    recv = n + 1
    port = n + 1                  # switch port that faces the receiver
    buf, off = read_trace(path)
    win_s = (WIN_END_NS - WIN_START_NS) * 1e-9
    payload = {s: 0 for s in range(1, n + 1)}
    wire = {s: 0 for s in range(1, n + 1)}
    payload_all = {s: 0 for s in range(1, n + 1)}
    series_ms = {s: [0] * 30 for s in range(1, n + 1)}   # payload bytes per 1 ms after t0
    ecn_marked = 0
    data_pkts = 0
    qev = []                      # (time, queue bytes after the event)
    first_t = None
    for (t, node, intf, qidx, qlen, sip, dip, size, l3, ev, ecn, ntype, u) in REC.iter_unpack(memoryview(buf)[off:]):
        if first_t is None or t < first_t:
            first_t = t
        if l3 != 0x11:
            continue
        if node == recv and ev == 0:              # Recv at the receiver NIC
            sport, dport, seq, ts, pg, pl = DATA.unpack(u)
            s = ip_node(sip)
            payload_all[s] += pl
            b = (t - T0_NS) // 1_000_000
            if 0 <= b < 30:
                series_ms[s][b] += pl
            if WIN_START_NS <= t < WIN_END_NS:
                payload[s] += pl
                wire[s] += size
                data_pkts += 1
                if ecn == 3:
                    ecn_marked += 1
        elif node == 0 and intf == port and qidx == PG and ev in (1, 2):
            # Enqu is traced before the packet is queued, Dequ after it left
            qev.append((t, qlen + size if ev == 1 else qlen))
    qev.sort(key=lambda x: x[0])
    peak = max(qev, key=lambda x: x[1]) if qev else (None, 0)
    # sample the step function every 100 ns in the window
    samples = []
    j = 0
    cur = 0
    t = WIN_START_NS
    while t < WIN_END_NS:
        while j < len(qev) and qev[j][0] <= t:
            cur = qev[j][1]
            j += 1
        samples.append(cur)
        t += QLEN_SAMPLE_NS
    s_sorted = sorted(samples)
    p99 = s_sorted[min(len(s_sorted) - 1, int(math.ceil(0.99 * len(s_sorted))) - 1)]
    gbps = {s: payload[s] * 8 / win_s / 1e9 for s in payload}
    wire_gbps = {s: wire[s] * 8 / win_s / 1e9 for s in wire}
    x = list(gbps.values())
    jain = (sum(x) ** 2) / (len(x) * sum(v * v for v in x)) if sum(x) > 0 else None
    return {
        "first_event_ns": first_t,
        "aggregate_goodput_gbps": sum(x),
        "aggregate_wire_gbps": sum(wire_gbps.values()),
        "per_flow_goodput_gbps": {str(s): gbps[s] for s in gbps},
        "per_flow_wire_gbps": {str(s): wire_gbps[s] for s in wire_gbps},
        "jain_goodput": jain,
        "data_packets_in_window": data_pkts,
        "ecn_marked_packets_in_window": ecn_marked,
        "payload_bytes_received_total": {str(s): payload_all[s] for s in payload_all},
        "per_flow_goodput_gbps_per_ms": {str(s): [round(b * 8 / 1e-3 / 1e9, 3) for b in series_ms[s]]
                                         for s in series_ms},
        "queue_trace": {
            "samples": len(samples),
            "sample_interval_ns": QLEN_SAMPLE_NS,
            "mean_bytes": sum(samples) / len(samples),
            "p99_bytes": p99,
            "max_bytes": s_sorted[-1],
            "whole_run_max_bytes": peak[1],
            "whole_run_max_at_ms_after_start": (peak[0] - T0_NS) / 1e6 if peak[0] else None,
            "note": "egress queue (PG %d) of switch port %d from the Enqu/Dequ trace" % (PG, port),
        },
    }


# ----------------------------------------------------------------------------
# A small Python process starts the simulator and reports that child's rusage.  On
# Linux a child's ru_maxrss keeps the high-water mark of the process it was forked
# from, so forking the simulator straight from this (large) driver would report the
# driver's memory instead of the simulator's.
_RUSAGE_WRAPPER = r"""
import json, os, subprocess, sys, time
w0 = time.monotonic()
with open(sys.argv[1], "w") as so:
    p = subprocess.Popen(sys.argv[2:], stdout=so, stderr=subprocess.STDOUT)
    _, st, ru = os.wait4(p.pid, 0)
print(json.dumps({"rc": os.waitstatus_to_exitcode(st), "wall_s": time.monotonic() - w0,
                  "cpu_user_s": ru.ru_utime, "cpu_sys_s": ru.ru_stime, "max_rss_kib": ru.ru_maxrss}))
"""


def timed_run(binary, d, env):
    """Run the simulator once; wall, CPU time and peak RSS of the simulator alone."""
    out = subprocess.run([sys.executable, "-c", _RUSAGE_WRAPPER, os.path.join(d, "stdout.txt"),
                          binary, os.path.join(d, "config.txt")],
                         env=env, cwd=d, check=True, stdout=subprocess.PIPE, text=True).stdout
    t = json.loads(out.strip().splitlines()[-1])
    return t.pop("rc"), t


def run_case(binary, libdir, work, cc, n, keep_trace, timing_run, seed=1):
    env = dict(os.environ)
    # third.cc has no seed key; ns-3 reads the run number from NS_GLOBAL_VALUE.  It
    # drives the RED-like ECN marking (SwitchMmu::ShouldSendCN) and PFC frame ids.
    env["NS_GLOBAL_VALUE"] = "RngRun=%d" % seed
    env["LD_LIBRARY_PATH"] = libdir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    timing = None
    if timing_run:
        # same case without the packet trace: the simulator's own cost
        dn = os.path.join(work, "%s_n%d_s%d_notrace" % (cc, n, seed))
        write_inputs(dn, cc, n, trace=False)
        rc0, timing = timed_run(binary, dn, env)
        timing["exit_code"] = rc0
        timing["max_fct_ns"] = max((f["fct_ns"] for f in parse_fct(os.path.join(dn, "fct.txt"))), default=None)
    d = os.path.join(work, "%s_n%d_s%d" % (cc, n, seed))
    size = write_inputs(d, cc, n)
    rc, t = timed_run(binary, d, env)
    res = {
        "cc": cc, "n_senders": n, "rng_run": seed, "flow_size_bytes": size, "run_dir": d, "exit_code": rc,
        "config": config_values(cc),
    }
    res.update(t)
    res["timing_without_trace"] = timing
    if rc != 0:
        res["error"] = "simulator exited with %d, see %s/stdout.txt" % (rc, d)
        return res
    fct = parse_fct(os.path.join(d, "fct.txt"))
    res["flows_completed"] = len(fct)
    res["fct"] = fct
    res["max_fct_ns"] = max((f["fct_ns"] for f in fct), default=None)
    res["pfc"] = parse_pfc(os.path.join(d, "pfc.txt"), int(STOP_S * 1e9))
    res["queue_fork_monitor"] = parse_qlen_mon(os.path.join(d, "qlen.txt"), 0, n + 1)
    res.update(analyse_trace(os.path.join(d, "mix.tr"), n))
    if not keep_trace:
        os.remove(os.path.join(d, "mix.tr"))
    return res


def _fmt(vals, nd=1, scale=1.0):
    vals = [v * scale for v in vals if v is not None]
    if not vals:
        return "-"
    m = sum(vals) / len(vals)
    if len(vals) == 1 or max(vals) - min(vals) < 0.5 * 10 ** (-nd):
        return "%.*f" % (nd, m)
    return "%.*f (%.*f..%.*f)" % (nd, m, nd, min(vals), nd, max(vals))


def table(results):
    """Markdown table: mean over RngRun seeds, (min..max) when they differ."""
    cases = []
    for r in results["runs"]:
        k = (r["cc"], r["n_senders"])
        if k not in cases:
            cases.append(k)
    rows = ["| CC | N | seeds | agg goodput Gb/s | agg wire Gb/s | Jain | min/max flow Gb/s "
            "| queue mean KB | queue p99 KB | queue max KB (window / whole run) "
            "| fork monitor mean / p99 KB | PFC pauses | pause time us | FCT min..max ms "
            "| CPU s (trace / no trace) | wall s (no trace) |",
            "|" + "---|" * 16]
    for cc, n in cases:
        rs = [r for r in results["runs"] if (r["cc"], r["n_senders"]) == (cc, n) and r["exit_code"] == 0]
        if not rs:
            rows.append("| %s | %d | failed |" % (cc, n))
            continue
        g = lambda f: [f(r) for r in rs]
        fl = lambda r: list(r["per_flow_goodput_gbps"].values())
        tnt = [r["timing_without_trace"] for r in rs if r.get("timing_without_trace")]
        rows.append("| %s | %d | %d | %s | %s | %s | %s / %s | %s | %s | %s / %s | %s / %s | %s | %s | %s..%s | %s / %s | %s |" % (
            cc, n, len(rs),
            _fmt(g(lambda r: r["aggregate_goodput_gbps"]), 2),
            _fmt(g(lambda r: r["aggregate_wire_gbps"]), 2),
            _fmt(g(lambda r: r["jain_goodput"]), 4),
            _fmt(g(lambda r: min(fl(r))), 2), _fmt(g(lambda r: max(fl(r))), 2),
            _fmt(g(lambda r: r["queue_trace"]["mean_bytes"]), 1, 1e-3),
            _fmt(g(lambda r: r["queue_trace"]["p99_bytes"]), 1, 1e-3),
            _fmt(g(lambda r: r["queue_trace"]["max_bytes"]), 1, 1e-3),
            _fmt(g(lambda r: r["queue_trace"]["whole_run_max_bytes"]), 1, 1e-3),
            _fmt(g(lambda r: (r["queue_fork_monitor"] or {}).get("mean_bytes_binmid")), 1, 1e-3),
            _fmt(g(lambda r: (r["queue_fork_monitor"] or {}).get("p99_bytes_bin_upper")), 0, 1e-3),
            _fmt(g(lambda r: r["pfc"]["pause_frames_total"]), 0),
            _fmt(g(lambda r: r["pfc"]["pause_time_total_ns"]), 1, 1e-3),
            _fmt(g(lambda r: min(f["fct_ns"] for f in r["fct"]) if r["fct"] else None), 2, 1e-6),
            _fmt(g(lambda r: max(f["fct_ns"] for f in r["fct"]) if r["fct"] else None), 2, 1e-6),
            _fmt(g(lambda r: r["cpu_user_s"] + r["cpu_sys_s"]), 2),
            _fmt([t["cpu_user_s"] + t["cpu_sys_s"] for t in tnt], 2),
            _fmt([t["wall_s"] for t in tnt], 2)))
    return "\n".join(rows) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.environ.get("DCFAIR_HPCC_BUILD", "out/peers/hpcc"),
                    help="directory build.sh built into (holds simulation/)")
    ap.add_argument("--work", default=None, help="where to write run folders (default BUILD/runs)")
    ap.add_argument("--json", default=None, help="output JSON (default WORK/results.json)")
    ap.add_argument("--cases", default="dcqcn:2,dcqcn:16,hpcc:2,hpcc:16")
    ap.add_argument("--buffer-mb", type=int, default=None,
                    help="override the switch BUFFER_SIZE (MiB; the fork's 100G default is 32)")
    ap.add_argument("--seeds", default="1", help="comma-separated ns-3 RngRun values (default 1)")
    ap.add_argument("--keep-trace", action="store_true", help="keep the binary mix.tr files")
    ap.add_argument("--no-timing-run", action="store_true",
                    help="skip the extra run of each case without the packet trace (used for CPU time)")
    a = ap.parse_args()
    global BUFFER_OVERRIDE
    BUFFER_OVERRIDE = a.buffer_mb
    sim = os.path.join(os.path.abspath(a.build), "simulation")
    binary = None
    for cand in ("build/scratch/third", "build/scratch/ns3-dev-third-optimized",
                 "build/scratch/ns3.17-third-optimized", "build/scratch/ns3.18-third-optimized"):
        if os.path.exists(os.path.join(sim, cand)):
            binary = os.path.join(sim, cand)
            break
    if binary is None:
        cands = [f for f in os.listdir(os.path.join(sim, "build", "scratch"))
                 if "third" in f and os.access(os.path.join(sim, "build", "scratch", f), os.X_OK)] \
            if os.path.isdir(os.path.join(sim, "build", "scratch")) else []
        if not cands:
            sys.exit("no built scratch/third under %s: run validation/hpcc/build.sh first" % sim)
        binary = os.path.join(sim, "build", "scratch", cands[0])
    work = os.path.abspath(a.work or os.path.join(a.build, "runs"))
    out = a.json or os.path.join(work, "results.json")
    commit = None
    stamp = os.path.join(a.build, "FORK_COMMIT")
    if os.path.exists(stamp):
        commit = open(stamp).read().strip()
    results = {
        "peer": "alibaba-edu/High-Precision-Congestion-Control simulation/ (ns-3 fork)",
        "fork_commit": commit,
        "binary": binary,
        "setting": {
            "topology": "1 switch, N senders + 1 receiver", "link_rate": LINK_RATE,
            "link_delay": LINK_DELAY, "total_bytes": TOTAL_BYTES, "flow_start_s": T0_S,
            "window_ns": [WIN_START_NS, WIN_END_NS], "window_rel_ms": [2, 10],
            "payload_bytes": 1000, "pg": PG,
        },
        "runs": [],
    }
    for case, seed in [(c, int(k)) for c in a.cases.split(",") for k in a.seeds.split(",")]:
        cc, n = case.split(":")
        print("running %s N=%s RngRun=%d ..." % (cc, n, seed), flush=True)
        r = run_case(binary, os.path.join(sim, "build"), work, cc, int(n), a.keep_trace,
                     not a.no_timing_run, seed)
        print("  wall %.1fs cpu %.1fs agg %.2f Gb/s jain %s" % (
            r["wall_s"], r["cpu_user_s"] + r["cpu_sys_s"], r.get("aggregate_goodput_gbps", float("nan")),
            r.get("jain_goodput")), flush=True)
        results["runs"].append(r)
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out, "w") as f:
            json.dump(results, f, indent=1)
    md = os.path.splitext(out)[0] + ".md"
    with open(md, "w") as f:
        f.write(table(results))
    print(table(results))
    print("wrote", out, "and", md)


if __name__ == "__main__":
    main()
