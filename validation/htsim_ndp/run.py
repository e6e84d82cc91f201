#!/usr/bin/env python3
"""Run NDP in htsim (Broadcom/csg-htsim, datacenter/htsim_ndp) on two scenarios and write
one JSON file with every parameter and per-flow results.

  A  permutation: k=8 fat-tree (128 hosts), every host sends one long flow to a distinct
     host (a random derangement, seeded), goodput of each flow over a fixed window.
  B  incast: N senders (hosts 1..N) each send one flow of a fixed size to host 0, all
     starting at t=0; completion time of each flow.

Both run once per (initial window, seed).  Python 3 standard library only.  htsim's binary
log (-log sink) is read directly (format: Logfile::transposeLog in sim/logfile.cpp), so
htsim's parse_output tool is not needed.  See README.md beside this file.
"""
import argparse
import json
import math
import os
import random
import re
import resource
import shutil
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BINARY = "/work/scratch/htsim_ndp/src/sim/datacenter/htsim_ndp"
DEFAULT_WORK = "/work/scratch/htsim_ndp/runs"
DEFAULT_OUT = "/work/scratch/htsim_ndp/results.json"
HTSIM_COMMIT = "841d9e7be46bb968eece766aa4b6c044c7799f67"

# ---- fixed setting (htsim's main_ndp.cpp defaults unless stated) -----------------------
K = 8
NODES = K ** 3 // 4             # 128 hosts
MTU = 9000                      # -mtu: NDP payload bytes per data packet (main_ndp default)
HDR = 64                        # NdpPacket::ACKSIZE: header added to every data packet,
                                # and the size of a trimmed header / ACK / NACK / PULL
QUEUE_PKTS = 15                 # -q (main_ndp DEFAULT_QUEUE_SIZE), x MTU bytes
LINK_MBPS = 100000              # HOST_NIC (main.h), every link
HOP_US = 1                      # -hop_latency (main_ndp default)
STRAT = "perm"                  # -strat perm = SCATTER_PERMUTE


def percentile(sorted_vals, p):
    """Nearest-rank percentile of an ascending list."""
    if not sorted_vals:
        return None
    k = max(1, math.ceil(p / 100.0 * len(sorted_vals)))
    return sorted_vals[k - 1]


def locality(a, b):
    """Path class between hosts a and b in htsim's k-ary fat-tree (host h is on ToR h//(k/2),
    pod h//(k*k/4)); returns (name, number of paths get_bidir_paths gives)."""
    if a // (K // 2) == b // (K // 2):
        return "same_tor", 1
    if a // (K * K // 4) == b // (K * K // 4):
        return "same_pod", K // 2
    return "inter_pod", (K // 2) ** 2


def derangement(n, seed):
    rng = random.Random(seed)
    while True:
        d = list(range(n))
        rng.shuffle(d)
        if all(d[i] != i for i in range(n)):
            return d


def write_cm(path, conns):
    """htsim connection matrix (ConnectionMatrix::load): start in picoseconds, size in bytes."""
    with open(path, "w") as f:
        f.write("Nodes %d\nConnections %d\n" % (NODES, len(conns)))
        for i, (s, d, size) in enumerate(conns):
            f.write("%d->%d id %d start 0 size %d\n" % (s, d, i + 1, size))


def run_htsim(binary, args, rundir):
    """Run htsim in rundir (it writes idmap.txt into its cwd), niced; return stdout text and
    resource figures.  CPU from getrusage(RUSAGE_CHILDREN) before/after, peak RSS from wait4."""
    os.makedirs(rundir, exist_ok=True)
    cmd = [binary] + args
    with open(os.path.join(rundir, "cmd.txt"), "w") as f:
        f.write(" ".join(cmd) + "\n")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    with open(os.path.join(rundir, "stdout.txt"), "w") as out:
        p = subprocess.Popen(cmd, cwd=rundir, stdout=out, stderr=subprocess.STDOUT,
                             preexec_fn=lambda: os.nice(10))
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.time() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise RuntimeError("htsim failed (exit %d), see %s/stdout.txt" % (p.returncode, rundir))
    with open(os.path.join(rundir, "stdout.txt")) as f:
        text = f.read()
    res = {
        "cpu_s": round((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), 3),
        "wall_s": round(wall, 3),
        "peak_rss_kb": ru.ru_maxrss,
        "command": " ".join(cmd),
    }
    return text, res


def counters(text):
    m = re.search(r"^New: (\d+) Rtx: (\d+) Bounced: (\d+)", text, re.M)
    c = {"new_pkts": None, "rtx_pkts": None, "bounced_pkts": None}
    if m:
        c = {"new_pkts": int(m.group(1)), "rtx_pkts": int(m.group(2)),
             "bounced_pkts": int(m.group(3))}
    # retransmit_packet() (the RTO path) prints "Total RTOs: n" once per timed-out packet.
    c["rto_lines"] = len(re.findall(r"^Total RTOs: ", text, re.M))
    return c


def read_sink_log(path):
    """htsim logfile after Logfile::transposeLog: text preamble (': name=id' lines), then
    '# TRACE\\n', then 44-byte records <double time_s, u32 type, u32 id, u32 ev, double v1,
    double v2, double v3>.  NdpSinkLoggerSampling writes v1 = NdpSink::cumulative_ack() =
    _cumulative_ack + reorder_buffer * 9000, v2 = reorder buffer (packets), v3 = rate."""
    with open(path, "rb") as f:
        data = f.read()
    i = data.index(b"# TRACE\n")
    names = {}
    for line in data[:i].decode().splitlines():
        m = re.match(r"^: (\S+)=(\d+)$", line)
        if m:
            names[int(m.group(2))] = m.group(1)
    recs = data[i + len(b"# TRACE\n"):]
    assert len(recs) % 44 == 0, "unexpected record size"
    series = {}
    for off in range(0, len(recs), 44):
        t, typ, ident, ev, v1, v2, v3 = struct.unpack_from("<dIIIddd", recs, off)
        name = names.get(ident, "")
        if not name.startswith("ndp_sink_"):
            continue
        # in-order bytes: cumulative_ack() adds 9000 per buffered out-of-order packet
        series.setdefault(name, []).append((t, v1 - v2 * 9000.0, v1))
    return series


def sample_at(series, t):
    best = min(series, key=lambda r: abs(r[0] - t))
    assert abs(best[0] - t) < 1e-9, "no sample at %g s" % t
    return best


def scenario_a(args, cwnd, seed):
    dst = derangement(NODES, seed)
    size = 2000000000  # bytes; 'size' is an int in htsim, and no flow gets near it
    conns = [(s, dst[s], size) for s in range(NODES)]
    rundir = os.path.join(args.work, "a_cwnd%d_seed%d" % (cwnd, seed))
    shutil.rmtree(rundir, ignore_errors=True)
    os.makedirs(rundir)
    write_cm(os.path.join(rundir, "perm.cm"), conns)
    t1, t2 = args.a_window
    end_us = int(round(t2 * 1000)) + 50  # events at exactly -end do not run
    hargs = ["-nodes", str(NODES), "-strat", STRAT, "-cwnd", str(cwnd), "-q", str(QUEUE_PKTS),
             "-mtu", str(MTU), "-linkspeed", str(LINK_MBPS), "-hop_latency", str(HOP_US),
             "-seed", str(seed), "-end", str(end_us), "-log", "sink",
             "-logtime", str(args.logtime_ms), "-tm", "perm.cm", "-o", "sink.log"]
    text, res = run_htsim(args.binary, hargs, rundir)
    series = read_sink_log(os.path.join(rundir, "sink.log"))
    flows = []
    line = LINK_MBPS * 1e6
    for s, d, _ in conns:
        ser = series["ndp_sink_%d_%d" % (s, d)]
        a = sample_at(ser, t1 / 1000.0)
        b = sample_at(ser, t2 / 1000.0)
        gp = (b[1] - a[1]) * 8.0 / ((t2 - t1) / 1000.0)
        loc, npaths = locality(s, d)
        flows.append({"src": s, "dst": d, "locality": loc, "paths": npaths,
                      "goodput_bps": gp, "frac_line": gp / line,
                      "inorder_bytes_t1": a[1], "inorder_bytes_t2": b[1]})
    gps = sorted(f["goodput_bps"] for f in flows)
    by_loc = {}
    for f in flows:
        by_loc.setdefault(f["locality"], []).append(f["frac_line"])
    out = {
        "scenario": "a", "cwnd_pkts": cwnd, "seed": seed,
        "window_ms": [t1, t2], "end_us": end_us,
        "mean_frac_line": sum(gps) / len(gps) / line,
        "min_frac_line": gps[0] / line,
        "max_frac_line": gps[-1] / line,
        "p1_frac_line": percentile(gps, 1) / line,
        "by_locality": {k: {"flows": len(v), "mean_frac_line": sum(v) / len(v),
                            "min_frac_line": min(v)} for k, v in sorted(by_loc.items())},
        "counters": counters(text),
        "resources": res,
        "flows": flows,
    }
    if not args.keep_logs:
        os.remove(os.path.join(rundir, "sink.log"))
    return out


def scenario_b(args, cwnd, seed):
    n = args.b_senders
    conns = [(s, 0, args.b_size) for s in range(1, n + 1)]
    rundir = os.path.join(args.work, "b_cwnd%d_seed%d" % (cwnd, seed))
    shutil.rmtree(rundir, ignore_errors=True)
    os.makedirs(rundir)
    write_cm(os.path.join(rundir, "incast.cm"), conns)
    end_us = int(round(args.b_end_ms * 1000))
    hargs = ["-nodes", str(NODES), "-strat", STRAT, "-cwnd", str(cwnd), "-q", str(QUEUE_PKTS),
             "-mtu", str(MTU), "-linkspeed", str(LINK_MBPS), "-hop_latency", str(HOP_US),
             "-seed", str(seed), "-end", str(end_us), "-tm", "incast.cm", "-o", "log.dat"]
    text, res = run_htsim(args.binary, hargs, rundir)
    # NdpSrc::processAck prints this when an ACK's cumulative ack covers the flow (us, 6
    # significant digits); later ACKs of the same flow may print it again: keep the first.
    fin = {}
    for m in re.finditer(r"^Flow ndp_(\d+)_(\d+) flow_id \d+ finished at (\S+) total bytes",
                         text, re.M):
        key = (int(m.group(1)), int(m.group(2)))
        fin.setdefault(key, float(m.group(3)) * 1e-6)
    flows = []
    for s, d, size in conns:
        loc, npaths = locality(s, d)
        flows.append({"src": s, "dst": d, "size_bytes": size, "locality": loc,
                      "paths": npaths, "fct_s": fin.get((s, d))})
    fcts = sorted(f["fct_s"] for f in flows if f["fct_s"] is not None)
    out = {
        "scenario": "b", "cwnd_pkts": cwnd, "seed": seed, "end_us": end_us,
        "senders": n, "flow_bytes": args.b_size,
        "finished": len(fcts), "unfinished": n - len(fcts),
        "fct_p50_s": percentile(fcts, 50), "fct_p90_s": percentile(fcts, 90),
        "fct_p99_s": percentile(fcts, 99), "fct_max_s": fcts[-1] if fcts else None,
        "fct_min_s": fcts[0] if fcts else None,
        "counters": counters(text),
        "resources": res,
        "flows": flows,
    }
    if not args.keep_logs:
        os.remove(os.path.join(rundir, "log.dat"))
    return out


def parameters(args):
    wire = MTU + HDR
    q_bytes = QUEUE_PKTS * MTU
    drain_ps = int(wire * 1e12 * 8 / (LINK_MBPS * 1e6)) / 0.99
    return {
        "htsim_commit": HTSIM_COMMIT,
        "binary": args.binary,
        "topology": {"type": "3-tier fat-tree (FatTreeTopology)", "k": K, "hosts": NODES,
                     "tors": K * K // 2, "aggs": K * K // 2, "cores": K * K // 4,
                     "hosts_per_tor": K // 2, "hosts_per_pod": K * K // 4,
                     "host h on ToR": "h // 4", "host h in pod": "h // 16"},
        "link_rate_bps": LINK_MBPS * 1e6,
        "per_hop_delay_s": HOP_US * 1e-6,
        "switch_latency_s": 0.0,
        "mtu_payload_bytes": MTU,
        "header_bytes": HDR,
        "data_packet_wire_bytes": wire,
        "control_packet_bytes": HDR,
        "switch_queue": {
            "type": "CompositeQueue (NDP trimming), every switch port",
            "data_queue_limit_bytes": q_bytes,
            "data_queue_limit_pkts_nominal": QUEUE_PKTS,
            "data_queue_full_packets_that_fit": q_bytes // wire,
            "trim_rule": "arriving data packet that does not fit: with prob. 0.5 it is trimmed, "
                         "else the last-enqueued data packet is trimmed and the arrival enqueued",
            "header_queue_limit_bytes": 2 * q_bytes,
            "header_queue_limit_headers": 2 * q_bytes // HDR,
            "header_queue_service": "strict priority over data (ratio 100000:1)",
            "header_overflow": "dropped (return-to-sender off)",
        },
        "host_nic_queue": {"type": "FairPriorityQueue: 3 strict levels (ACK/PULL/headers high, "
                                   "data and NACK low), per-flow round robin within a level",
                           "limit": "none enforced (FEEDER_BUFFER 1000 pkts only prints)"},
        "pull_pacer": {"per_receiver_host": True, "rate_modifier": 0.99,
                       "spacing_s": drain_ps * 1e-12,
                       "payload_rate_cap_bps": MTU * 8 / (drain_ps * 1e-12),
                       "queue": "PrioPullQueue, all flows one priority -> per-flow round robin"},
        "route_strategy": "SCATTER_PERMUTE (-strat perm): each flow cycles through a random "
                          "permutation of all its paths (16 inter-pod, 4 same-pod, 1 same-ToR), "
                          "reshuffled after each cycle; ACK/NACK/PULL likewise on reverse paths",
        "rto": "never fires: NdpSrc::rtx_timer_hook returns at once unless RESEND_ON_TIMEOUT "
               "is defined (it is not); setMinRTO(50 ms) and the 9 us scanner are inert",
        "return_to_sender": False,
        "seeding": "-seed s: srand(s) and srandom(s) (trim coin, path permutations); the "
                   "permutation of scenario A is a derangement from Python random.Random(s)",
        "cwnds_pkts": args.cwnds,
        "scenario_a": {"flow_bytes": 2000000000, "start_s": 0.0,
                       "window_ms": args.a_window, "sample_period_ms": args.logtime_ms,
                       "goodput": "in-order payload bytes (NdpSink _cumulative_ack) delivered "
                                  "between the window's two samples x 8 / window length"},
        "scenario_b": {"senders": "hosts 1..%d" % args.b_senders, "receiver": "host 0",
                       "flow_bytes": args.b_size, "start_s": 0.0, "end_ms": args.b_end_ms,
                       "fct": "time the sender receives the ACK whose cumulative ack covers the "
                              "flow (htsim's 'finished at' line), start 0",
                       "percentiles": "nearest rank"},
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=DEFAULT_BINARY)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--scenario", choices=["a", "b", "all"], default="all")
    ap.add_argument("--cwnds", default="15,23,40",
                    help="initial windows in packets (-cwnd), each run for every seed")
    ap.add_argument("--work", default=DEFAULT_WORK, help="run directories")
    ap.add_argument("--a-window", default="2,20", help="goodput window, ms (A)")
    ap.add_argument("--logtime-ms", type=float, default=0.1, help="sink sample period (A)")
    ap.add_argument("--b-senders", type=int, default=64)
    ap.add_argument("--b-size", type=int, default=450000)
    ap.add_argument("--b-end-ms", type=float, default=20.0)
    ap.add_argument("--keep-logs", action="store_true")
    args = ap.parse_args()
    args.binary = os.path.abspath(args.binary)
    args.seeds = [int(x) for x in args.seeds.split(",")]
    args.cwnds = [int(x) for x in args.cwnds.split(",")]
    args.a_window = [float(x) for x in args.a_window.split(",")]
    if not os.access(args.binary, os.X_OK):
        sys.exit("run.py: no htsim_ndp at %s (run build.sh)" % args.binary)
    if not 1 <= args.b_senders < NODES:
        sys.exit("run.py: --b-senders must be 1..%d" % (NODES - 1))
    os.makedirs(args.work, exist_ok=True)

    result = {"parameters": parameters(args), "a": [], "b": []}
    todo = []
    if args.scenario in ("a", "all"):
        todo += [("a", c, s) for c in args.cwnds for s in args.seeds]
    if args.scenario in ("b", "all"):
        todo += [("b", c, s) for c in args.cwnds for s in args.seeds]
    for sc, cwnd, seed in todo:
        r = (scenario_a if sc == "a" else scenario_b)(args, cwnd, seed)
        result[sc].append(r)
        if sc == "a":
            print("A cwnd=%d seed=%d mean=%.4f min=%.4f max=%.4f of line rate; rtx=%s cpu=%.1fs"
                  % (cwnd, seed, r["mean_frac_line"], r["min_frac_line"], r["max_frac_line"],
                     r["counters"]["rtx_pkts"], r["resources"]["cpu_s"]), flush=True)
        else:
            f = lambda v: "n/a" if v is None else "%.2f" % (v * 1e6)
            print("B cwnd=%d seed=%d FCT us p50=%s p90=%s p99=%s max=%s unfinished=%d rto=%d "
                  "rtx=%s cpu=%.2fs" % (cwnd, seed, f(r["fct_p50_s"]), f(r["fct_p90_s"]),
                                        f(r["fct_p99_s"]), f(r["fct_max_s"]), r["unfinished"],
                                        r["counters"]["rto_lines"], r["counters"]["rtx_pkts"],
                                        r["resources"]["cpu_s"]), flush=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
