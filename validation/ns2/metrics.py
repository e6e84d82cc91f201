#!/usr/bin/env python3
"""Metrics of one ns-2 long-flow run, from the trace written by longflows.tcl.

The definitions are CONTRACT.md's, applied to what the trace records:

* window = [duration - window_s, duration] (both ends included);
* ``pkts_in_window`` of a TCP flow = its data packets (every ``tcp`` packet of that
  flow id, retransmissions included) that arrive at the receiver within the window;
  an arrival is an ``r`` record on the switch -> receiver link, i.e. the moment the
  last bit reaches the receiver node;
* ``utilization`` = bytes of all packets (TCP and UDP) arriving at the receiver over
  the bottleneck in the window / (bottleneck capacity x window_s);
* ``jain_index`` = (sum x)^2 / (n sum x^2) over the TCP flows' pkts_in_window
  (null when every flow delivered nothing);
* ``throughput_variance_pkts`` = population variance (divide by n) of pkts_in_window;
* ``starved_fraction`` = fraction of TCP flows with pkts_in_window == 0;
* ``max_starvation_s`` = max over TCP flows of the longest gap between consecutive
  arrivals of the flow's data packets at the receiver, counting the gap from the
  flow's start to its first arrival and from its last arrival to the end of the
  simulation (a flow that never delivers has one gap: start -> end);
* ``drops`` = packets dropped at the bottleneck queue over the whole run (split by
  TCP/UDP and counted in the window too).

Usage:
    metrics.py TRACE [--duration S] [--window S] [--flows-csv PATH] [--label K=V ...]
    (TRACE may be '-' for stdin.) Prints one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from typing import IO, Iterable


class TraceError(Exception):
    """The trace is not one longflows.tcl wrote, or is incomplete."""


def _num(header: dict, key: str) -> float:
    try:
        return float(header[key])
    except KeyError:
        raise TraceError(f"trace header has no '{key}'") from None
    except ValueError:
        raise TraceError(f"trace header '{key}' is not a number: {header[key]!r}") from None


def compute(lines: Iterable[str], duration: float | None = None,
            window: float | None = None) -> dict:
    """Parse a longflows.tcl trace and return {'metrics', 'flows', 'trace'}."""
    header: dict[str, str] = {}
    starts: dict[int, float] = {}
    udp_fids: set[int] = set()
    final: dict[int, dict] = {}
    end_time = None

    # Window bounds are known only once the header is read; the header comes first.
    w_lo = w_hi = None
    # per TCP flow: [first, last, max_gap_between_arrivals, in_window, delivered]
    st: dict[int, list] = {}
    bytes_window = 0
    bytes_window_tcp = 0
    bytes_window_udp = 0
    pkts_window_udp = 0
    drops = {"tcp": 0, "udp": 0, "other": 0}
    drops_window = {"tcp": 0, "udp": 0, "other": 0}
    drop_bytes = 0
    events_r = 0
    bad_lines = 0
    other_types: dict[str, int] = {}
    sizes_tcp: dict[int, int] = {}

    for line in lines:
        c = line[:1]
        if c == "r" or c == "d":
            f = line.split()
            if len(f) < 12:
                bad_lines += 1
                continue
            if w_lo is None:
                if duration is None:
                    duration = _num(header, "duration")
                if window is None:
                    window = _num(header, "window")
                w_lo, w_hi = duration - window, duration
            t = float(f[1])
            if t > w_hi + 1e-12:
                continue  # after the end of the simulation
            ptype = f[4]
            size = int(f[5])
            fid = int(f[7])
            inw = t >= w_lo - 1e-12
            if c == "r":
                events_r += 1
                if inw:
                    bytes_window += size
                if ptype == "tcp":
                    s = st.get(fid)
                    if s is None:
                        st[fid] = s = [t, t, 0.0, 0, 0]
                    else:
                        g = t - s[1]
                        if g > s[2]:
                            s[2] = g
                        s[1] = t
                    s[4] += 1
                    sizes_tcp[size] = sizes_tcp.get(size, 0) + 1
                    if inw:
                        s[3] += 1
                        bytes_window_tcp += size
                elif fid in udp_fids:
                    if inw:
                        pkts_window_udp += 1
                        bytes_window_udp += size
                else:
                    other_types[ptype] = other_types.get(ptype, 0) + 1
            else:
                kind = "tcp" if ptype == "tcp" else ("udp" if fid in udp_fids else "other")
                drops[kind] += 1
                drop_bytes += size
                if inw:
                    drops_window[kind] += 1
        elif c == "#":
            parts = line[1:].split(None, 1)
            if len(parts) == 2:
                header[parts[0]] = parts[1].strip()
        elif c == "S":
            _, fid, _node, t0 = line.split()
            starts[int(fid)] = float(t0)
        elif c == "U":
            udp_fids.add(int(line.split()[1]))
        elif c == "F":
            f = line.split()
            final[int(f[1])] = {
                "ndatapack": int(f[2]), "nrexmitpack": int(f[3]), "nrexmit": int(f[4]),
                "ack": int(f[5]), "t_seqno": int(f[6]), "cwnd": float(f[7]),
            }
        elif c == "E":
            end_time = float(line.split()[1])
        elif line.strip():
            bad_lines += 1

    if not header:
        raise TraceError("no header: is this a longflows.tcl trace?")
    if end_time is None:
        raise TraceError("no end record 'E': the run did not finish (killed or crashed?)")
    if duration is None:
        duration = _num(header, "duration")
    if window is None:
        window = _num(header, "window")
    if not 0 < window <= duration:
        raise TraceError(f"window {window} must be in (0, duration={duration}]")
    w_lo, w_hi = duration - window, duration
    capacity_bps = _num(header, "bottleneck_rate_mbps") * 1e6
    nflows = int(_num(header, "flows"))
    if len(starts) != nflows:
        raise TraceError(f"trace has {len(starts)} flow starts, header says {nflows} flows")

    flows = []
    for fid in range(nflows):
        t0 = starts[fid]
        s = st.get(fid)
        if s is None:
            max_gap = duration - t0
            inw = delivered = 0
            first = last = None
        else:
            first, last, gap, inw, delivered = s
            max_gap = max(first - t0, gap, duration - last)
        fin = final.get(fid, {})
        flows.append({
            "flow_id": fid, "start_s": t0, "pkts_in_window": inw,
            "delivered_pkts": delivered, "first_arrival_s": first, "last_arrival_s": last,
            "max_gap_s": max_gap,
            "retransmits": fin.get("nrexmitpack"), "timeouts": fin.get("nrexmit"),
            "sent_pkts": fin.get("ndatapack"),
        })

    x = [f["pkts_in_window"] for f in flows]
    n = len(x)
    mean = sum(x) / n
    var = sum((v - mean) ** 2 for v in x) / n
    sq = sum(v * v for v in x)
    jain = (sum(x) ** 2) / (n * sq) if sq > 0 else None
    metrics = {
        "utilization": bytes_window * 8.0 / (capacity_bps * window),
        "utilization_tcp": bytes_window_tcp * 8.0 / (capacity_bps * window),
        "utilization_udp": bytes_window_udp * 8.0 / (capacity_bps * window),
        "jain_index": jain,
        "throughput_variance_pkts": var,
        "mean_pkts_in_window": mean,
        "starved_fraction": sum(1 for v in x if v == 0) / n,
        "starved_flows": sum(1 for v in x if v == 0),
        "max_starvation_s": max(f["max_gap_s"] for f in flows),
        "median_max_gap_s": _median([f["max_gap_s"] for f in flows]),
        "drops": sum(drops.values()),
        "drops_tcp": drops["tcp"],
        "drops_udp": drops["udp"],
        "drops_in_window": sum(drops_window.values()),
        "drop_bytes": drop_bytes,
        "udp_pkts_in_window": pkts_window_udp,
        "timeouts": sum(f["timeouts"] or 0 for f in flows),
        "retransmits": sum(f["retransmits"] or 0 for f in flows),
    }
    info = {
        "duration_s": duration, "window_s": window, "window": [w_lo, w_hi],
        "end_time_s": end_time, "flows": nflows, "arrivals": events_r,
        "tcp_packet_sizes": {str(k): v for k, v in sorted(sizes_tcp.items())},
        "unparsed_lines": bad_lines, "unknown_arrivals": other_types,
        "header": header,
    }
    return {"metrics": metrics, "flows": flows, "trace": info}


def _median(v: list[float]) -> float:
    s = sorted(v)
    m = len(s) // 2
    return s[m] if len(s) % 2 else 0.5 * (s[m - 1] + s[m])


FLOW_COLUMNS = ["flow_id", "start_s", "pkts_in_window", "delivered_pkts", "max_gap_s",
                "first_arrival_s", "last_arrival_s", "sent_pkts", "retransmits", "timeouts"]


def write_flows_csv(out: IO[str], flows: list[dict], labels: dict | None = None,
                    header: bool = True) -> None:
    labels = labels or {}
    w = csv.writer(out, lineterminator="\n")
    if header:
        w.writerow(list(labels) + FLOW_COLUMNS)
    for f in flows:
        row = list(labels.values())
        for k in FLOW_COLUMNS:
            v = f[k]
            row.append("" if v is None else (f"{v:.6f}" if isinstance(v, float) else v))
        w.writerow(row)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", help="trace file written by longflows.tcl, or - for stdin")
    ap.add_argument("--duration", type=float, help="override the header's duration (s)")
    ap.add_argument("--window", type=float, help="override the header's window (s)")
    ap.add_argument("--flows-csv", help="also write per-flow rows to this CSV")
    ap.add_argument("--per-flow", action="store_true", help="include per-flow rows in the JSON")
    args = ap.parse_args(argv)
    try:
        if args.trace == "-":
            res = compute(sys.stdin, args.duration, args.window)
        else:
            with open(args.trace, "r", buffering=1 << 20) as fh:
                res = compute(fh, args.duration, args.window)
    except (OSError, TraceError) as e:
        print(f"metrics.py: {e}", file=sys.stderr)
        return 2
    if args.flows_csv:
        with open(args.flows_csv, "w") as out:
            write_flows_csv(out, res["flows"])
    if not args.per_flow:
        res = {k: v for k, v in res.items() if k != "flows"}
    json.dump(res, sys.stdout, indent=2, allow_nan=False)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
