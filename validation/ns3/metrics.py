"""The metrics of one dumbbell run, computed the same way for ns-3 and for dcfair.

Both simulators hand over the same three things:

* a time series in dcfair's long format (``time_s,metric,port,flow_id,value``, docs/metrics.md):
  ``queue_pkts`` of the bottleneck port and ``delivered_bytes`` of every flow, sampled at
  exactly 0, T, 2T, ...;
* the events of flow 0: the times its sender hands data segments to the network ("departures";
  dcfair's trace ``x`` lines, ns-3's socket ``Tx`` trace) and its loss events (entries into
  fast recovery and retransmission timeouts, with the window before and ssthresh after);
* counters: utilization (bytes whose serialization ended in the window / capacity x window),
  drops at the bottleneck over the whole run and inside the window, retransmitted segments and
  timeouts over all flows.

Window: ``[duration - window, duration]``. Definitions:

``goodput_mbps``   mean over flows of in-order payload delivered in the window x 8 / window
``jain``           Jain's index of the flows' delivered bytes in the window
``queue_*``        over the samples of queue_pkts in the window (packets waiting, the one in
                   transmission not counted): mean, standard deviation, 99th percentile (nearest
                   rank), fraction of samples with an empty queue
``loss_events``    flow 0's loss events in the window (a timeout already being repaired is not a
                   new event: ns-3 stays in CA_LOSS until the recovery point is acknowledged)
``period_s``       time between flow 0's consecutive loss events in the window (per epoch)
``wmax_pkts``      flow 0's congestion window at each loss, in segments (per epoch)
``reduction``      ssthresh after / window at the loss, fast-recovery entries only (per epoch)
``spurious``       retransmitted segments minus drops, all flows, whole run (drops at the
                   bottleneck are all data segments: retransmissions beyond them resend data
                   that was not lost)
``dup_arrivals``   flow 0's data segments that reach the receiver in the window a second time
``in_recovery``    fraction of the window flow 0 spends in fast recovery
``recovery_send_ratio``  data segments flow 0 sends per ACK it receives while in fast recovery
                   (RFC 5681 / 6582 recovery: about one half, the window having been halved)
``outstanding``    flow 0's data sent and not cumulatively acknowledged (highest byte sent -
                   cumulative ACK), in segments, averaged over the ACKs it receives in the
                   window (whatever the window or the sender's own estimate says)
``in_network_recovery``  flow 0's segments in the network (sent - arrived at the receiver -
                   dropped at the bottleneck, all exact from the event logs) at the ACKs it
                   receives while in fast recovery, mean over the window
``gap_*``          gaps between flow 0's consecutive departures in the window: median (us),
                   coefficient of variation, and ``burst_frac`` = fraction of gaps under 1 us
                   (segments sent back to back at the same instant)

Per-epoch metrics are pooled over epochs (and seeds) by ``aggregate``; the others over seeds.
"""

from __future__ import annotations

import bisect
import csv
import math
from dataclasses import dataclass, field

BURST_GAP_S = 1e-6

# key -> (label, format, pooled over epochs?)
METRICS: dict[str, tuple[str, str, bool]] = {
    "utilization": ("utilization", "{:.4f}", False),
    "goodput_mbps": ("goodput per flow (Mb/s)", "{:.2f}", False),
    "jain": ("Jain index", "{:.4f}", False),
    "drops": ("drops (whole run)", "{:.0f}", False),
    "drops_in_window": ("drops in window", "{:.0f}", False),
    "retransmits": ("retransmitted segments (whole run)", "{:.0f}", False),
    "timeouts": ("timeouts (whole run)", "{:.1f}", False),
    "spurious": ("retransmits - drops (whole run)", "{:.0f}", False),
    "dup_arrivals": ("flow 0 duplicate arrivals", "{:.0f}", False),
    "in_recovery": ("flow 0 time in fast recovery", "{:.3f}", False),
    "recovery_send_ratio": ("flow 0 sends per ACK in recovery", "{:.3f}", False),
    "outstanding": ("flow 0 outstanding (pkts)", "{:.1f}", False),
    "in_network_recovery": ("flow 0 in the network in recovery (pkts)", "{:.1f}", False),
    "queue_mean": ("queue mean (pkts)", "{:.2f}", False),
    "queue_std": ("queue std (pkts)", "{:.2f}", False),
    "queue_p99": ("queue p99 (pkts)", "{:.1f}", False),
    "queue_empty": ("queue empty (fraction)", "{:.4f}", False),
    "loss_events": ("flow 0 loss events", "{:.1f}", False),
    "period_s": ("flow 0 epoch (s)", "{:.4g}", True),
    "wmax_pkts": ("flow 0 W at loss (pkts)", "{:.2f}", True),
    "reduction": ("flow 0 ssthresh / W", "{:.3f}", True),
    "gap_median_us": ("flow 0 send gap median (us)", "{:.2f}", False),
    "gap_cv": ("flow 0 send gap CV", "{:.3f}", False),
    "burst_frac": ("flow 0 back-to-back sends", "{:.4f}", False),
}


@dataclass
class Loss:
    t: float
    kind: str        # "recovery" or "timeout"
    before: int      # cwnd (bytes) at the loss
    ssthresh: int    # ssthresh (bytes) after it
    after: int       # cwnd (bytes) after it


@dataclass
class Flow0:
    """Flow 0's events, from either simulator's event log."""
    departures: list[float] = field(default_factory=list)          # data segments sent
    arrivals: list[tuple[float, int]] = field(default_factory=list)  # (t, seq) at the receiver
    acks: list[float] = field(default_factory=list)                # ACKs back at the sender
    losses: list[Loss] = field(default_factory=list)
    recovery: list[tuple[float, float]] = field(default_factory=list)  # fast-recovery intervals
    outstanding: list[tuple[float, float]] = field(default_factory=list)  # (t, segments) per ACK
    # (t, segments sent - arrived at the receiver - dropped at the bottleneck) per ACK
    in_network: list[tuple[float, int]] = field(default_factory=list)
    drops_in_window: int = 0  # dcfair's trace only: drops at the bottleneck, all flows


@dataclass
class Run:
    """What one simulator run hands over (see the module doc)."""
    series_csv: str
    flow0: Flow0 = field(default_factory=Flow0)
    utilization: float = 0.0
    drops: int = 0
    drops_in_window: int = 0
    retransmits: int = 0
    timeouts: int = 0


class MetricsError(ValueError):
    pass


def read_series(path: str, interval: float) -> dict[str, dict[str, dict[int, float]]]:
    """metric -> key (port name or flow id) -> sample index k -> value."""
    out: dict[str, dict[str, dict[int, float]]] = {}
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            m = row["metric"]
            if m not in ("queue_pkts", "delivered_bytes"):
                continue
            key = row["port"] if m.startswith("queue") else row["flow_id"]
            k = round(float(row["time_s"]) / interval)
            out.setdefault(m, {}).setdefault(key, {})[k] = float(row["value"])
    return out


def _pctl(sorted_v: list[float], p: float) -> float:
    """Nearest-rank percentile of sorted values."""
    i = max(0, math.ceil(p / 100.0 * len(sorted_v)) - 1)
    return sorted_v[i]


def compute(run: Run, *, duration: float, window: float, interval: float, mss: int,
            port: str = "sw->r0") -> dict:
    """The metrics of one run, plus ``_epochs`` (per-epoch lists) for pooling."""
    ws = duration - window
    k0, k1 = round(ws / interval), round(duration / interval)
    if abs(k0 * interval - ws) > 1e-9 or abs(k1 * interval - duration) > 1e-9:
        raise MetricsError("the sample interval must divide the window's start and end")
    s = read_series(run.series_csv, interval)

    deliv = s.get("delivered_bytes", {})
    if not deliv:
        raise MetricsError("no delivered_bytes in the time series")
    x = []
    for fid in sorted(deliv, key=int):
        d = deliv[fid]
        if k0 not in d or k1 not in d:
            raise MetricsError(f"flow {fid}: no sample at the window's start or end")
        x.append(d[k1] - d[k0])
    n = len(x)
    sq = sum(v * v for v in x)

    q = s.get("queue_pkts", {}).get(port)
    if not q:
        raise MetricsError(f"no queue_pkts samples for port {port}")
    qs = sorted(v for k, v in q.items() if k0 <= k <= k1)
    qmean = sum(qs) / len(qs)
    qstd = math.sqrt(sum((v - qmean) ** 2 for v in qs) / len(qs))

    f0 = run.flow0
    losses = [e for e in f0.losses if ws <= e.t <= duration]
    periods = [b.t - a.t for a, b in zip(losses, losses[1:])]
    wmax = [e.before / mss for e in losses]
    red = [e.ssthresh / e.before for e in losses if e.kind == "recovery" and e.before > 0]

    dep = [t for t in f0.departures if ws <= t <= duration]
    gaps = [b - a for a, b in zip(dep, dep[1:])]
    if gaps:
        g_sorted = sorted(gaps)
        gmean = sum(gaps) / len(gaps)
        gstd = math.sqrt(sum((g - gmean) ** 2 for g in gaps) / len(gaps))
        gap_median_us = _pctl(g_sorted, 50) * 1e6
        gap_cv = gstd / gmean if gmean > 0 else None
        burst = sum(1 for g in gaps if g < BURST_GAP_S) / len(gaps)
    else:
        gap_median_us = gap_cv = burst = None

    seen: set[int] = set()
    dups = 0
    for t, seq in f0.arrivals:
        if seq in seen:
            dups += t >= ws and t <= duration
        else:
            seen.add(seq)

    in_rec = sum(max(0.0, min(b, duration) - max(a, ws)) for a, b in f0.recovery) / window
    rec_sends = rec_acks = 0
    for a, b in f0.recovery:
        a, b = max(a, ws), min(b, duration)
        if b > a:
            rec_sends += bisect.bisect_right(f0.departures, b) - bisect.bisect_right(f0.departures, a)
            rec_acks += bisect.bisect_right(f0.acks, b) - bisect.bisect_right(f0.acks, a)
    outs = [o for t, o in f0.outstanding if ws <= t <= duration]
    inrec = []
    for a, b in f0.recovery:
        lo = bisect.bisect_right(f0.in_network, (max(a, ws), math.inf))
        hi = bisect.bisect_right(f0.in_network, (min(b, duration), math.inf))
        inrec.extend(n for _, n in f0.in_network[lo:hi])

    mean_of = lambda v: sum(v) / len(v) if v else None  # noqa: E731
    return {
        "utilization": run.utilization,
        "goodput_mbps": sum(x) / n * 8.0 / window / 1e6,
        "jain": (sum(x) ** 2) / (n * sq) if sq > 0 else None,
        "drops": run.drops,
        "drops_in_window": run.drops_in_window,
        "retransmits": run.retransmits,
        "timeouts": run.timeouts,
        "spurious": run.retransmits - run.drops,
        "dup_arrivals": dups,
        "in_recovery": in_rec,
        "recovery_send_ratio": rec_sends / rec_acks if rec_acks else None,
        "outstanding": mean_of(outs),
        "in_network_recovery": mean_of(inrec),
        "queue_mean": qmean,
        "queue_std": qstd,
        "queue_p99": _pctl(qs, 99),
        "queue_empty": sum(1 for v in qs if v == 0) / len(qs),
        "loss_events": len(losses),
        "period_s": mean_of(periods),
        "wmax_pkts": mean_of(wmax),
        "reduction": mean_of(red),
        "gap_median_us": gap_median_us,
        "gap_cv": gap_cv,
        "burst_frac": burst,
        "_epochs": {"period_s": periods, "wmax_pkts": wmax, "reduction": red},
    }


def _stats(v: list[float]) -> dict | None:
    if not v:
        return None
    mean = sum(v) / len(v)
    std = math.sqrt(sum((a - mean) ** 2 for a in v) / (len(v) - 1)) if len(v) > 1 else 0.0
    return {"mean": mean, "std": std, "min": min(v), "max": max(v), "n": len(v)}


def aggregate(runs: list[dict]) -> dict:
    """Per case: mean, sample std (n - 1), min, max, n of every metric; over seeds, or over the
    epochs of all seeds for the per-epoch metrics (``over`` says which)."""
    out: dict = {}
    for case in dict.fromkeys(r["case"] for r in runs):
        rs = [r for r in runs if r["case"] == case]
        agg: dict = {"n_runs": len(rs), "seeds": [r["seed"] for r in rs]}
        for key, (_, _, pooled) in METRICS.items():
            if pooled:
                v = [e for r in rs for e in r["epochs"].get(key, [])]
                st = _stats(v)
                if st:
                    st["over"] = "epochs"
            else:
                v = [r["metrics"][key] for r in rs if r["metrics"].get(key) is not None]
                st = _stats(v)
                if st:
                    st["over"] = "seeds"
            agg[key] = st
        out[case] = agg
    return out


# ----- readers of each simulator's event log --------------------------------------------------


def ns3_events(path: str, mss: int, flow: int = 0) -> Flow0:
    """Flow `flow`'s events from dumbbell.cc's events.txt (formats in dumbbell.cc)."""
    f0 = Flow0()
    fid = str(flow)
    highest = 0
    ack = 0
    rec_start = None
    last_t = 0.0
    net = 0
    with open(path) as fh:
        for line in fh:
            f = line.split()
            if len(f) < 3 or f[2] != fid:
                continue
            c, t = f[0], float(f[1])
            last_t = t
            if c == "x":
                f0.departures.append(t)
                highest = max(highest, int(f[3]) + int(f[4]))
                net += 1
            elif c == "r":
                f0.arrivals.append((t, int(f[3])))
                net -= 1
            elif c == "d":
                net -= 1
            elif c == "a":
                f0.acks.append(t)
                f0.in_network.append((t, net))
                ack = max(ack, int(f[3]))
                if highest:
                    f0.outstanding.append((t, max(0, highest - ack) / mss))
            elif c == "l":
                f0.losses.append(Loss(t, f[3], int(f[4]), int(f[5]), int(f[6])))
            elif c == "g":
                if f[3] == "CA_RECOVERY":
                    rec_start = t
                elif rec_start is not None:
                    f0.recovery.append((rec_start, t))
                    rec_start = None
    if rec_start is not None:
        f0.recovery.append((rec_start, max(last_t, rec_start)))
    return f0


def dcfair_trace(path: str, window_start: float, header_bytes: int, mss: int,
                 flow: int = 0) -> Flow0:
    """Flow `flow`'s events, and the drops at measured ports from `window_start` on, from
    simtrace's event log (crates/sim/src/engine.rs, module `trace`).

    A loss event is an ``s`` line whose recovery flag turns on (fast recovery) or whose timeout
    counter grows while the flow is not already repairing an earlier timeout (snd_una has not
    passed the snd_max of that timeout), as ns-3 enters CA_LOSS once per such episode."""
    f0 = Flow0()
    fid = str(flow)
    prev = None  # (cwnd, recovery, timeouts)
    loss_recover = -1
    rec_start = None
    last_t = 0.0
    net = 0
    with open(path) as fh:
        for line in fh:
            c = line[:1]
            if c == "d":  # d t port fid seq size
                f = line.split()
                if float(f[1]) >= window_start:
                    f0.drops_in_window += 1
                if f[3] == fid and int(f[5]) > header_bytes:
                    net -= 1
                continue
            if c not in "xrs":
                continue
            f = line.split()
            if f[2] != fid:
                continue
            t = float(f[1])
            last_t = t
            if c == "x":
                f0.departures.append(t)
                net += 1
            elif c == "r":  # r t fid seq size flags ack: data (and ACKs) at their host
                if int(f[4]) > header_bytes:
                    f0.arrivals.append((t, int(f[3])))
                    net -= 1
                else:
                    f0.acks.append(t)
                    f0.in_network.append((t, net))
            else:  # s t fid why cwnd ssthresh una nxt max dupacks recovery rto backoff timeouts
                cwnd, ss, una, mx = int(f[4]), int(f[5]), int(f[6]), int(f[8])
                rec, tos = int(f[10]), int(f[13])
                if f[3] == "ack":
                    f0.outstanding.append((t, max(0, mx - una) / mss))
                if prev is not None:
                    if rec == 1 and prev[1] == 0:
                        f0.losses.append(Loss(t, "recovery", prev[0], ss, cwnd))
                    elif tos > prev[2]:
                        if una > loss_recover:
                            f0.losses.append(Loss(t, "timeout", prev[0], ss, cwnd))
                        loss_recover = max(loss_recover, mx)
                if rec == 1 and rec_start is None:
                    rec_start = t
                elif rec == 0 and rec_start is not None:
                    f0.recovery.append((rec_start, t))
                    rec_start = None
                prev = (cwnd, rec, tos)
    if rec_start is not None:
        f0.recovery.append((rec_start, max(last_t, rec_start)))
    return f0
