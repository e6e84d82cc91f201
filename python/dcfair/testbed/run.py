"""``dcfair testbed run``: a scenario on real Linux TCP, with the simulator's result files.

Rules:

- Order: plan (invalid input exits 2 before anything is created), testbed up, switch, traffic
  servers, clients at their start times, counters at the window's start and end, wait for the
  clients, stop the switch (its statistics), testbed down. ``down`` runs whatever happens:
  error, Ctrl-C, SIGTERM (turned into ``KeyboardInterrupt`` for the run), unless ``keep``.
  Without ``keep`` the run owns its testbed (``bed.claim``'s owner record): after a SIGKILL,
  the next run on the prefix finds the owner gone and removes the testbed itself.
- Output (``--out``, default ``out/testbed/<name>``): ``summary.json``, ``flows.csv`` and
  ``ports.csv`` with the simulator's keys and columns where they mean the same thing
  (docs/metrics.md), plus ``"source": "testbed"`` and a ``testbed`` object (switch, kernel,
  mapping notes); ``flows.csv`` adds ``bytes_in_window``, ``snd_wnd_mean_bytes``,
  ``rtt_mean_us`` (the sender's view over the window, traffic.py) and ``error``. Raw material stays
  beside them: ``raw/flows/<id>.json`` (iperf3), ``raw/incast.json``, ``switch.toml``,
  ``switch-stats.json``, ``switch.log`` (``raw/`` fills during the run). The three result
  files are written through temporary names and renamed, after the run has succeeded.
- Metrics follow docs/metrics.md on the testbed's counters: arrivals are the receiver's bytes
  per iperf3 interval (payload, in full segments), not packets on the wire; utilization is the
  kernel's transmit counter of each measured switch port over the window, in IP bytes (the
  Ethernet header taken off, as the simulator's packets have none), over rate x window.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any, Dict, Optional

from dcfair.testbed import bed, mapping, traffic
from dcfair.testbed.bed import Testbed
from dcfair.testbed.mapping import Plan
from dcfair.testbed.netns import TestbedError
from dcfair.testbed.output import ETH_HEADER, FLOW_COLUMNS, PORT_COLUMNS, _atomic, _atomic_csv  # noqa: F401
from dcfair.testbed.output import _rank, incast_metrics as _incast_metrics  # noqa: F401
from dcfair.testbed.switch import Switch, port_counters, switch_port

PROGRESS_S = 2.0


def run_file(path, overrides=(), out=None, switch: str = "dcfair", prefix: str = bed.DEFAULT_PREFIX,
             seed: Optional[int] = None, keep: bool = False, log=None, sysctls=()) -> Dict[str, Any]:
    try:
        from dcfair import api
    except ImportError:  # pragma: no cover - without the extension: the mapping's checks only
        api = None
    if api is not None:
        text = api.read_scenario(path)
        # The engine judges the scenario's keys and values first, as `dcfair run` would.
        api.load_scenario(text=text, origin=str(path), overrides=overrides)
    else:
        text = Path(path).read_text(encoding="utf-8")
    from dcfair.testbed import fabric

    if fabric.is_fabric(text, list(overrides or [])):
        if switch != "dcfair":
            raise mapping.invalid("--switch", "a fabric runs dcfair-switch in every switch namespace; the bridge "
                                              "baseline is for dumbbells")
        from dcfair.testbed import fabrun

        return fabrun.run_file(path, text, overrides, out=out, prefix=prefix, seed=seed, keep=keep, log=log,
                               sysctls=sysctls)
    extra = mapping.extra_sysctls(list(sysctls or []))
    plan = mapping.with_sysctls(mapping.plan(text, list(overrides or []), origin=str(path), seed=seed), extra)
    return run_plan(plan, out=out or os.path.join("out", "testbed", plan.name), switch=switch, prefix=prefix,
                    keep=keep, log=log)


def run_plan(plan: Plan, out, switch: str = "dcfair", prefix: str = bed.DEFAULT_PREFIX, keep: bool = False,
             log=None) -> Dict[str, Any]:
    bed.check_prefix(prefix)
    mapping.check_cc(plan)
    out = Path(out)
    raw = out / "raw"
    tb = Testbed(prefix, plan.hosts)
    say = log or (lambda msg: None)
    if switch == "dcfair":
        from dcfair.testbed.switch import find_binary

        if find_binary() is None:
            raise TestbedError("dcfair-switch not found: build it (`cargo build --release -p dcfair-switch`), "
                               "set DCFAIR_SWITCH, or run with --switch bridge")
    wall0 = time.monotonic()
    with bed.running(prefix, keep) as r:
        bed.up(tb, log=say, owned=not keep)  # removes what it made if it fails; refuses a live testbed
        r.created = True
        sw = r.switch = Switch(switch, tb, plan, raw, log=say).start()
        tr = r.traffic = traffic.Traffic(tb, plan, raw)
        tr.start_servers()
        say(f"{plan.name}: {len(plan.flows)} flows{' + incast' if plan.incast else ''}, "
            f"{plan.duration_s:g} s, switch {switch} ({plan.queue_kind})")
        t0 = tr.launch_timed(plan.duration_s)
        counters = _drive(plan, tb, tr, t0, say, r.stop)
        incast_only = plan.incast is not None and not plan.flows
        late = tr.wait(timeout_s=5.0 if incast_only else max(0.0, plan.duration_s - (time.monotonic() - t0)) + 6.0)
        end_s = time.monotonic() - t0 if incast_only else plan.duration_s
        r.stop.check()  # an interrupt whose raise was lost still stops the run here
        stats = sw.stop()
        r.switch = None
        # the measurement window on the switch's clock (its time series)
        sw_window = None if sw.ready_at is None else (
            t0 - sw.ready_at + counters["window_start_s"], t0 - sw.ready_at + counters["end_s"])
        timeouts = {h.name: traffic.host_timeouts(tb, h) for h in tb.hosts}
        tr.stop()
        summary, flows, ports = _results(plan, tb, tr, counters, stats, timeouts, late, end_s, switch,
                                         sw_window)
    summary["wall_time_s"] = round(time.monotonic() - wall0, 3)
    summary["testbed"]["out"] = str(out)
    if (raw / "switch-stats.json").exists():
        (raw / "switch-stats.json").replace(out / "switch-stats.json")
    _write(out, summary, flows, ports)
    return summary



def _drive(plan: Plan, tb: Testbed, tr: traffic.Traffic, t0: float, say, stop: bed.Interrupts) -> Dict[str, Any]:
    """Launches the clients on schedule and samples the switch's counters at the window's edges."""
    pending = sorted((f for f in plan.flows if not (traffic.sized(f) or traffic.streamed(f, plan))),
                     key=lambda f: (f.start_s, f.id))
    w_start = plan.duration_s - plan.window_s
    counters: Dict[str, Any] = {"start": port_counters(tb), "window_start": None, "end": None}
    measured = [tb.host(p.host).port for p in plan.ports if p.measured]
    incast_only = plan.incast is not None and not plan.flows
    if plan.incast is not None:
        tr.launch_incast(start_at=t0 + plan.incast.start_s, deadline_s=plan.duration_s - plan.incast.start_s)
    last_progress, last_bytes = time.monotonic(), sum(counters["start"][p]["tx_bytes"] for p in measured)
    while True:
        stop.check()
        now = time.monotonic() - t0
        while pending and pending[0].start_s <= now:
            tr.launch(pending.pop(0), t0, plan.duration_s)
        if counters["window_start"] is None and now >= w_start:
            counters["window_start"] = port_counters(tb)
            counters["window_start_s"] = now
        if now >= plan.duration_s or (incast_only and tr.running() == 0):
            counters["end"] = port_counters(tb)
            counters["end_s"] = now
            if counters["window_start"] is None:
                counters["window_start"], counters["window_start_s"] = counters["start"], 0.0
            return counters
        if time.monotonic() - last_progress >= PROGRESS_S:
            c = port_counters(tb)
            b = sum(c[p]["tx_bytes"] for p in measured)
            rate = (b - last_bytes) * 8 / (time.monotonic() - last_progress) / 1e6
            say(f"  t = {now:5.1f} / {plan.duration_s:g} s  clients running {tr.running()}  bottleneck {rate:7.1f} Mbit/s")
            last_progress, last_bytes = time.monotonic(), b
        nxt = min(([pending[0].start_s] if pending else []) + [plan.duration_s])
        time.sleep(max(0.0, min(0.05, nxt - now)))


def _results(plan: Plan, tb: Testbed, tr: traffic.Traffic, counters, stats, timeouts, late, end_s, switch,
             sw_window=None):
    w1 = min(plan.duration_s, end_s)
    w0 = max(0.0, w1 - plan.window_s)
    per_host = {}
    for f in plan.flows:
        per_host.setdefault(f.src, []).append(f.id)
    rows = []
    streams = tr.stream_results()
    for f in plan.flows:
        data = traffic.load_flow_json(tr.dir / "flows" / f"{f.id}.json")
        if traffic.sized(f):
            row = traffic.fetch_row(f, data, tr.t0, (w0, w1), w1, plan.mss_bytes)
        elif traffic.streamed(f, plan):
            sender = traffic.load_flow_json(tr.dir / "flows" / f"{f.id}.sender.json")
            row = traffic.stream_row(f, streams.get(f.id), sender, tr.t0, (w0, w1), w1, plan.mss_bytes)
        else:
            server = traffic.load_flow_json(tr.dir / "flows" / f"{f.id}.server.json")
            row = traffic.flow_row(f, data, tr.launched_at.get(f.id), (w0, w1), w1, plan.mss_bytes, server)
        if f.kind == "tcp" and len(per_host[f.src]) == 1:
            row["timeouts"] = timeouts.get(f.src, 0)
        if f.id in late:  # iperf3's own message would only say it was interrupted
            row["error"] = "late: still running 6 s after the end (stopped; receiver counts from its server)"
        rows.append(row)
    tcp = [r for r in rows if r["kind"] == "tcp"]
    udp = [r for r in rows if r["kind"] == "udp"]
    x = [r["pkts_in_window"] for r in tcp]
    win = w1 - w0
    m: Dict[str, Any] = {}
    if tcp:
        s, s2 = sum(x), sum(v * v for v in x)
        m["jain_index"] = (s * s / (len(x) * s2)) if s2 > 0 else None
        m["throughput_variance_pkts"] = statistics.pvariance(x) if len(x) > 1 else 0.0
        m["starved_fraction"] = sum(1 for v in x if v == 0) / len(x)
        m["max_starvation_s"] = max(r["max_gap_s"] for r in tcp)
        m["mean_pkts_in_window"] = s / len(x)
        wnd = [r["snd_wnd_mean_bytes"] for r in tcp if r["snd_wnd_mean_bytes"] is not None]
        rtt = [r["rtt_mean_us"] for r in tcp if r["rtt_mean_us"] is not None]
        m["snd_wnd_median_bytes"] = statistics.median(wnd) if wnd else None
        m["rtt_mean_us"] = statistics.fmean(rtt) if rtt else None
        m["throughput_bps_tcp"] = sum(r["bytes_in_window"] for r in tcp) * 8 / win / len(tcp) if win > 0 else None
    if udp:
        m["throughput_bps_udp"] = sum(r["bytes_in_window"] for r in udp) * 8 / win if win > 0 else None
    ports = []
    util_num, util_den, drops, marks = 0.0, 0.0, 0, 0
    switch_ports: Dict[str, Any] = {}
    for p in plan.ports:
        if not p.measured:
            continue
        iface = tb.host(p.host).port
        a, b, z = counters["window_start"][iface], counters["end"][iface], counters["start"][iface]
        wbytes = (b["tx_bytes"] - a["tx_bytes"]) - ETH_HEADER * (b["tx_packets"] - a["tx_packets"])
        span = counters["end_s"] - counters["window_start_s"]
        util = wbytes * 8 / (p.rate_bps * span) if span > 0 else None
        util_num += wbytes * 8
        util_den += p.rate_bps * span
        sq = switch_port(stats, iface, sw_window) if switch == "dcfair" else None
        if sq is not None:
            switch_ports[f"sw->{p.host}"] = sq
            d, mk = sq["drops_pkts"], sq["marks"]
        else:  # the bridge: its FIFO's drops (tc), no marks, no occupancy figures
            d, mk = stats.get("ports", {}).get(iface, {}).get("drops", 0), 0
        drops += int(d)
        marks += int(mk)
        pk = b["tx_packets"] - z["tx_packets"]
        ports.append({
            "port": f"sw->{p.host}", "packets_out": pk, "bytes_out": b["tx_bytes"] - z["tx_bytes"] - ETH_HEADER * pk,
            "utilization": util, "drops": int(d), "marks": int(mk),
            "max_queue_pkts": sq["max_len_pkts"] if sq else None,
            "queue_kind": plan.queue_kind if switch == "dcfair" else "bridge_fifo", "rate_bps": p.rate_bps,
            "max_queue_bytes": sq["max_len_bytes"] if sq else None,
        })
    m["utilization"] = util_num / util_den if util_den > 0 else None
    m["drops"], m["marks"] = drops, marks
    m["flows"] = len(tcp)
    m["flows_completed"] = sum(1 for r in tcp if r["fct_s"] is not None)
    m["timeouts"] = sum(t for h, t in timeouts.items() if h.startswith("s"))
    m["retransmits"] = sum(r["retransmits"] for r in tcp)
    fct = sorted(r["fct_s"] for r in tcp if r["fct_s"] is not None)
    if fct:
        m.update(fct_mean_s=statistics.fmean(fct), fct_p50_s=_rank(fct, 0.5), fct_p99_s=_rank(fct, 0.99),
                 fct_max_s=fct[-1], fct_std_s=statistics.pstdev(fct))
    if plan.incast is not None:
        m.update(_incast_metrics(plan, tr))
    if any(sq["fairq"] is not None for sq in switch_ports.values()):
        m["fairq_rewrites"] = int(stats["fairq_rewrites"])
    errors = [r for r in rows if r["error"]]
    summary = {
        "scenario": plan.name, "seed": plan.seed, "source": "testbed", "engine_version": None,
        "queue_kind": plan.queue_kind if switch == "dcfair" else "bridge_fifo", "sim_time_s": w1, "window_s": win,
        "events": None, "wall_time_s": None, "metrics": m,
        "testbed": {
            "switch": switch, "kernel": platform.release(), "hosts": len(tb.hosts),
            "cc": sorted({h.cc for h in tb.hosts if h.cc}), "rto_min_ms": sorted({h.rto_min_ms for h in tb.hosts if h.rto_min_ms}),
            "measurement_interval_s": traffic.INTERVAL_S, "flows_with_errors": len(errors),
            "notes": plan.notes + ([] if switch == "dcfair" else [
                "switch bridge: a Linux bridge with a token bucket and a FIFO per port; queue.kind, fairq and "
                "the ports' delay are not applied"]),
            "timeouts_by_host": {h: t for h, t in timeouts.items() if t},
            "switch_ports": switch_ports,
        },
    }
    return summary, rows, ports


def _write(out: Path, summary, flows, ports) -> None:
    out.mkdir(parents=True, exist_ok=True)
    _atomic(out / "summary.json", json.dumps(summary, indent=1) + "\n")
    _atomic_csv(out / "flows.csv", FLOW_COLUMNS, flows)
    _atomic_csv(out / "ports.csv", PORT_COLUMNS, ports)
