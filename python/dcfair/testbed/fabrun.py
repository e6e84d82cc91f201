"""``dcfair testbed run`` on a fabric: one ``dcfair-switch`` per switch namespace, real TCP
between the host namespaces, the simulator's result files, and the link-usage check.

Rules:

- Order: plan (``fabric.plan``: invalid input exits 2 before anything is created; the
  scenario is also simulated once, for the link check and the offered load), the capacity
  check (``capacity.check``: exit 2 with the numbers), fabric up, every switch started (each
  prints ``ready``), traffic servers, clients at their start times, the measured ports'
  counters at the window's edges, clients waited for, switches stopped (SIGTERM; each writes
  its statistics), fabric down. ``down`` runs whatever happens (error, Ctrl-C, SIGTERM),
  unless ``keep``; without ``keep`` the run owns its fabric as the dumbbell's run owns its
  testbed (``run.py``).
- A switch process that exits before it is stopped fails the run: ``SwitchDied`` (exit 1),
  naming the switch and its exit status; nothing of the results is written.
- One process per switch: each switch is an independent event loop in its own namespace, as
  in the dumbbell; docs/testbed.md ("Capacity") has what the machine sustains this way.
- Output (``--out``): ``summary.json``, ``flows.csv``, ``ports.csv`` (the simulator's measured
  ports) as the dumbbell's (docs/testbed.md, Output), plus ``links.csv``: every switch port
  with the frames it sent on the testbed and the packets it sent in the simulation of the
  same scenario and seed, and ``summary.json``'s ``testbed.links``: the ports that carry
  packets in one and not the other (``only_testbed``, ``only_sim``) and ``same``; and, against
  the paths the simulator's routing gives every flow's data and ACKs (``on_path``), the ports
  the testbed used off those paths (``testbed_off_paths``: a routing disagreement) and those on
  them it never used (``testbed_idle_on_paths``). Written
  through temporary names after the run has succeeded. Raw material in ``raw/``: per switch
  ``<name>.toml``, ``<name>.log``, ``<name>.stats.json``; the flows' JSON.
- ``throughput_bps_<group>``: the mean per-flow goodput of each flow group over the window,
  as the simulator's.
"""

from __future__ import annotations

import json
import os
import platform
import select
import signal
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from dcfair.procs import child_of_this_process
from dcfair.testbed import bed, capacity, fabnet, fabric, mapping, traffic
from dcfair.testbed.bed import Testbed
from dcfair.testbed.fabric import FabricPlan, FabricSwitch
from dcfair.testbed.netns import TestbedError
from dcfair.testbed.output import ETH_HEADER, FLOW_COLUMNS, PORT_COLUMNS, _atomic, _atomic_csv, incast_metrics
from dcfair.testbed.switch import find_binary, toml_dumps

LINK_COLUMNS = ("port", "switch", "iface", "testbed_frames", "sim_pkts", "testbed_share", "sim_share", "on_path",
                "differs")
PROGRESS_S = 2.0


class SwitchDied(TestbedError):
    """A switch process ended before the run stopped it."""


#: The name of the one process serving every switch namespace (``fabric.process_mode() == "one"``).
ONE = "process serving every switch namespace"


def run_file(path, text: str, overrides=(), out=None, prefix: str = bed.DEFAULT_PREFIX, seed: Optional[int] = None,
             keep: bool = False, log=None, sysctls=()) -> Dict[str, Any]:
    fp = fabric.plan(str(path), text, list(overrides or []), seed=seed)
    mapping.with_sysctls(fp.plan, mapping.extra_sysctls(list(sysctls or [])))
    capacity.check(len(fp.switches), fp.offered_fps)
    return run_fabric(fp, out or os.path.join("out", "testbed", fp.plan.name), prefix=prefix, keep=keep, log=log)


class Switches:
    """The running switch processes of a fabric."""

    def __init__(self, fp: FabricPlan, tb: Testbed, raw: Path, log=None):
        self.fp, self.tb, self.dir, self.say = fp, tb, raw, log or (lambda m: None)
        self.procs: Dict[str, subprocess.Popen] = {}
        self.logs: Dict[str, Any] = {}
        self.ready_at: Optional[float] = None

    def start(self) -> "Switches":
        binary = find_binary()
        if binary is None:
            raise TestbedError("dcfair-switch not found: build it (`cargo build --release -p dcfair-switch`)")
        self.dir.mkdir(parents=True, exist_ok=True)
        triples = []
        for s, doc in zip(self.fp.switches, fabric.switch_configs(self.fp, self.fp.plan.seed).values()):
            extra = os.environ.get("DCFAIR_SWITCH_SET", "")
            for item in filter(None, (x.strip() for x in extra.split(","))):
                key, _, value = item.partition("=")
                doc = {key.strip(): value.strip(), **doc}
            cfg = self.dir / f"{s.name}.toml"
            cfg.write_text(toml_dumps(doc))
            triples.append((s, cfg, self.dir / f"{s.name}.stats.json"))
        seed = str(self.fp.plan.seed)
        if fabric.process_mode() == "one":
            argv = [*binary, "multi", "--seed", seed]
            for s, cfg, st in triples:
                argv += ["--netns", s.ns(self.tb.prefix), "--config", str(cfg), "--stats", str(st)]
            name = ONE
            self.logs[name] = open(self.dir / "switches.log", "w")
            self.procs[name] = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.logs[name], text=True,
                                                preexec_fn=child_of_this_process())
        else:
            for s, cfg, st in triples:
                argv = ["ip", "netns", "exec", s.ns(self.tb.prefix), *binary, "--config", str(cfg), "--stats", str(st),
                        "--seed", seed]
                self.logs[s.name] = open(self.dir / f"{s.name}.log", "w")
                self.procs[s.name] = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.logs[s.name], text=True,
                                                      preexec_fn=child_of_this_process())
        deadline = time.monotonic() + 30.0
        waiting = dict(self.procs)
        while waiting:
            for name, p in list(waiting.items()):
                if p.poll() is not None:
                    raise SwitchDied(f"switch {name}: dcfair-switch exited ({p.returncode}) before it was ready; "
                                     f"see {self._log(name)}")
            r, _, _ = select.select([p.stdout for p in waiting.values()], [], [], 0.2)
            for name, p in list(waiting.items()):
                if p.stdout in r:
                    line = p.stdout.readline()
                    if line.strip() == "ready":
                        del waiting[name]
            if time.monotonic() > deadline:
                raise TestbedError(f"switches {', '.join(waiting)} did not print `ready` within 30 s")
        self.ready_at = time.monotonic()
        return self

    def _log(self, name: str) -> Path:
        return self.dir / ("switches.log" if name == ONE else f"{name}.log")

    def dead(self) -> Optional[Tuple[str, int]]:
        """The first switch that has exited, with its status, or None."""
        for name, p in self.procs.items():
            if p.poll() is not None:
                return name, p.returncode
        return None

    def check(self) -> None:
        d = self.dead()
        if d is not None:
            raise SwitchDied(f"switch {d[0]} (dcfair-switch) exited with status {d[1]} during the run; "
                             f"no results written (see {self._log(d[0])})")

    def stop(self) -> Dict[str, Dict[str, Any]]:
        """SIGTERM to every switch; their statistics by switch name."""
        self.check()
        for p in self.procs.values():
            p.send_signal(signal.SIGTERM)
        stats = {}
        for name, p in self.procs.items():
            try:
                p.wait(10.0)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                raise TestbedError(f"switch {name} did not exit within 10 s of SIGTERM")
            if p.returncode != 0:
                raise SwitchDied(f"switch {name} exited {p.returncode} when stopped; see {self._log(name)}")
        for s in self.fp.switches:
            try:
                stats[s.name] = json.loads((self.dir / f"{s.name}.stats.json").read_text())
            except (OSError, ValueError) as e:
                raise TestbedError(f"switch {s.name} wrote no readable stats: {e}") from None
        self.procs = {}
        return stats

    def kill(self) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs.values():
            try:
                p.wait(5.0)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = {}


def _counters(fp: FabricPlan, prefix: str, every: bool = False) -> Dict[str, Dict[str, int]]:
    """The kernel's counters of every measured switch port (``every``: of every switch port),
    by the simulator's port name."""
    out = {}
    switches = fp.switches if every else list({s.index: s for s, _ in fp.measured}.values())
    for s in switches:
        links = json.loads(subprocess.run(["ip", "-n", s.ns(prefix), "-s", "-j", "link", "show"], capture_output=True,
                                          text=True, check=True).stdout)
        by = {l["ifname"]: (l.get("stats64") or l.get("stats") or {}) for l in links}
        for p in s.ports:
            if p.measured or every:
                st = by.get(p.iface, {})
                out[p.name] = {"tx_packets": st.get("tx", {}).get("packets", 0), "tx_bytes": st.get("tx", {}).get("bytes", 0)}
    return out


def run_fabric(fp: FabricPlan, out, prefix: str = bed.DEFAULT_PREFIX, keep: bool = False, log=None) -> Dict[str, Any]:
    bed.check_prefix(prefix)
    plan = fp.plan
    mapping.check_cc(plan)
    out = Path(out)
    raw = out / "raw"
    say = log or (lambda msg: None)
    wall0 = time.monotonic()
    with bed.running(prefix, keep) as r:
        tb = fabnet.up(fp, prefix, log=say, owned=not keep)  # removes what it made if it fails; refuses a live testbed
        r.created = True  # from here on, down runs whatever happens
        sws = r.switch = Switches(fp, tb, raw, log=say).start()
        tr = r.traffic = traffic.Traffic(tb, plan, raw)
        tr.start_servers()
        say(f"{plan.name}: {len(plan.flows)} flows, {len(fp.switches)} switches, {plan.duration_s:g} s ({plan.queue_kind})")
        t0 = tr.launch_timed(plan.duration_s)
        counters = _drive(fp, tb, tr, sws, t0, say, r.stop)
        late = tr.wait(timeout_s=max(0.0, plan.duration_s - (time.monotonic() - t0)) + 6.0)
        sws.check()
        r.stop.check()  # an interrupt whose raise was lost still stops the run here
        stats = sws.stop()
        r.switch = None
        timeouts = {h.name: traffic.host_timeouts(tb, h) for h in tb.hosts}
        tr.stop()
        summary, rows, ports, links = _results(fp, tr, counters, stats, timeouts, late)
    summary["wall_time_s"] = round(time.monotonic() - wall0, 3)
    summary["testbed"]["out"] = str(out)
    out.mkdir(parents=True, exist_ok=True)
    _atomic(out / "summary.json", json.dumps(summary, indent=1) + "\n")
    _atomic_csv(out / "flows.csv", FLOW_COLUMNS, rows)
    _atomic_csv(out / "ports.csv", PORT_COLUMNS, ports)
    _atomic_csv(out / "links.csv", LINK_COLUMNS, links)
    return summary



def _mean_wait(stats: Dict[str, Any]) -> Optional[float]:
    """The mean wait of the frames held in any switch's input lines (us), ``None`` if none was."""
    n = sum(st.get("input_wait", {}).get("count", 0) for st in stats.values())
    total = sum(st["input_wait"]["count"] * st["input_wait"]["mean_us"] for st in stats.values() if st.get("input_wait"))
    return round(total / n, 1) if n else None


def _drive(fp: FabricPlan, tb: Testbed, tr: traffic.Traffic, sws: Switches, t0: float, say, stop: bed.Interrupts) -> Dict[str, Any]:
    plan = fp.plan
    pending = sorted((f for f in plan.flows if not (traffic.sized(f) or traffic.streamed(f, plan))),
                     key=lambda f: (f.start_s, f.id))
    w_start = plan.duration_s - plan.window_s
    c: Dict[str, Any] = {"start": _counters(fp, tb.prefix, every=True), "window_start": None, "end": None}
    if plan.incast is not None:
        tr.launch_incast(start_at=t0 + plan.incast.start_s, deadline_s=plan.duration_s - plan.incast.start_s)
    last = time.monotonic()
    while True:
        stop.check()
        sws.check()
        now = time.monotonic() - t0
        while pending and pending[0].start_s <= now:
            tr.launch(pending.pop(0), t0, plan.duration_s)
        if c["window_start"] is None and now >= w_start:
            c["window_start"], c["window_start_s"] = _counters(fp, tb.prefix, every=True), now
        if now >= plan.duration_s:
            c["end"], c["end_s"] = _counters(fp, tb.prefix, every=True), now
            if c["window_start"] is None:
                c["window_start"], c["window_start_s"] = c["start"], 0.0
            return c
        if time.monotonic() - last >= PROGRESS_S:
            say(f"  t = {now:5.1f} / {plan.duration_s:g} s  clients running {tr.running()}")
            last = time.monotonic()
        nxt = min(([pending[0].start_s] if pending else []) + [plan.duration_s])
        time.sleep(max(0.0, min(0.05, nxt - now)))


def _port_stats(stats: Dict[str, Dict[str, Any]], sw: FabricSwitch, iface: str) -> Dict[str, Any]:
    try:
        return next(p for p in stats[sw.name]["ports"] if p["iface"] == iface)
    except (KeyError, StopIteration):
        raise TestbedError(f"switch {sw.name}: no statistics for port {iface}") from None


def link_usage(fp: FabricPlan, stats: Dict[str, Dict[str, Any]]) -> Tuple[List[Dict[str, Any]], Dict[str, Any]]:
    """Every switch port's frames (testbed) against its packets (simulation); the ports that
    carry packets in only one of them."""
    rows = []
    tb_total = sum(_port_stats(stats, s, p.iface)["tx_frames"] for s in fp.switches for p in s.ports) or 1
    sim_total = sum(fp.sim_pkts.get(p.name, 0) for s in fp.switches for p in s.ports) or 1
    for s in fp.switches:
        for p in s.ports:
            t = int(_port_stats(stats, s, p.iface)["tx_frames"])
            m = int(fp.sim_pkts.get(p.name, 0))
            rows.append({"port": p.name, "switch": s.name, "iface": p.iface, "testbed_frames": t, "sim_pkts": m,
                         "testbed_share": round(t / tb_total, 6), "sim_share": round(m / sim_total, 6),
                         "on_path": int(p.name in fp.on_paths), "differs": int((t > 0) != (m > 0))})
    only_tb = [r["port"] for r in rows if r["testbed_frames"] > 0 and r["sim_pkts"] == 0]
    only_sim = [r["port"] for r in rows if r["sim_pkts"] > 0 and r["testbed_frames"] == 0]
    used = sum(1 for r in rows if r["testbed_frames"] > 0 or r["sim_pkts"] > 0)
    off = [r["port"] for r in rows if r["testbed_frames"] > 0 and not r["on_path"]]
    quiet = [r["port"] for r in rows if r["on_path"] and r["testbed_frames"] == 0]
    return rows, {"ports": len(rows), "used": used, "same": not only_tb and not only_sim,
                  "only_testbed": only_tb, "only_sim": only_sim, "on_paths": len(fp.on_paths & {r["port"] for r in rows}),
                  "testbed_off_paths": off, "testbed_idle_on_paths": quiet}


def _results(fp: FabricPlan, tr: traffic.Traffic, counters, stats, timeouts, late):
    plan = fp.plan
    w1 = plan.duration_s
    w0 = max(0.0, w1 - plan.window_s)
    win = w1 - w0
    per_host: Dict[str, List[int]] = {}
    for f in plan.flows:
        per_host.setdefault(f.src, []).append(f.id)
    streams = tr.stream_results()
    rows = []
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
        if len(per_host[f.src]) == 1:
            row["timeouts"] = timeouts.get(f.src, 0)
        if f.id in late:
            row["error"] = "late: still running 6 s after the end (stopped)"
        rows.append(row)
    x = [r["pkts_in_window"] for r in rows] or [0]
    m: Dict[str, Any] = {}
    if plan.incast is not None:
        m.update(incast_metrics(plan, tr))
    s, s2 = sum(x), sum(v * v for v in x)
    m["jain_index"] = (s * s / (len(x) * s2)) if s2 > 0 else None
    m["throughput_variance_pkts"] = statistics.pvariance(x) if len(x) > 1 else 0.0
    m["starved_fraction"] = sum(1 for v in x if v == 0) / len(x)
    m["max_starvation_s"] = max((r["max_gap_s"] for r in rows), default=None)
    m["mean_pkts_in_window"] = s / len(x)
    m["throughput_bps_tcp"] = sum(r["bytes_in_window"] for r in rows) * 8 / win / len(rows) if rows else None
    groups: Dict[str, List[int]] = {}
    for r in rows:
        groups.setdefault(r["group"], []).append(r["bytes_in_window"])
    for g, b in sorted(groups.items()):
        m[f"throughput_bps_{g}"] = sum(b) * 8 / win / len(b)
    ports = []
    util_num, util_den, drops, marks = 0.0, 0.0, 0, 0
    span = counters["end_s"] - counters["window_start_s"]
    for sw, p in fp.measured:
        a, b, z = counters["window_start"][p.name], counters["end"][p.name], counters["start"][p.name]
        wbytes = (b["tx_bytes"] - a["tx_bytes"]) - ETH_HEADER * (b["tx_packets"] - a["tx_packets"])
        util_num += wbytes * 8
        util_den += p.rate_bps * span
        q = _port_stats(stats, sw, p.iface)["queue"]
        drops += int(q["drops_pkts"])
        marks += int(q["marks"])
        pk = b["tx_packets"] - z["tx_packets"]
        ports.append({"port": p.name, "packets_out": pk, "bytes_out": b["tx_bytes"] - z["tx_bytes"] - ETH_HEADER * pk,
                      "utilization": wbytes * 8 / (p.rate_bps * span) if span > 0 else None, "drops": int(q["drops_pkts"]),
                      "marks": int(q["marks"]), "max_queue_pkts": q["max_len_pkts"], "queue_kind": q["kind"],
                      "rate_bps": p.rate_bps, "max_queue_bytes": q["max_len_bytes"]})
    m["utilization"] = util_num / util_den if util_den > 0 else None
    m["drops"], m["marks"] = drops, marks
    m["flows"] = len(rows)
    m["flows_completed"] = sum(1 for r in rows if r["fct_s"] is not None)
    m["timeouts"] = sum(timeouts.values())
    m["retransmits"] = sum(r["retransmits"] for r in rows)
    if any(st.get("fairq_rewrites") for st in stats.values()):
        m["fairq_rewrites"] = sum(int(st.get("fairq_rewrites", 0)) for st in stats.values())
    links, link_summary = link_usage(fp, stats)
    fwd = sum(sum(p["forwarded"] for p in st["ports"]) for st in stats.values())
    # every switch port's frames sent in the window: what the switches carried per second
    window_frames = sum(counters["end"][p.name]["tx_packets"] - counters["window_start"][p.name]["tx_packets"]
                        for s in fp.switches for p in s.ports
                        if p.name in counters["end"] and p.name in counters["window_start"])
    dur = max(st["duration_s"] for st in stats.values())
    per = [st.get("cpu_user_s", 0) + st.get("cpu_sys_s", 0) for st in stats.values()]
    one = any(str(st.get("process", "")).startswith("multi") for st in stats.values())
    cpu = max(per) if one else sum(per)  # one process: every file has the whole process's
    summary = {
        "scenario": plan.name, "seed": plan.seed, "source": "testbed", "engine_version": None,
        "queue_kind": plan.queue_kind, "sim_time_s": w1, "window_s": win, "events": None, "wall_time_s": None,
        "metrics": m,
        "testbed": {
            "switch": "dcfair", "fabric": True, "switches": len(fp.switches), "kernel": platform.release(),
            "switch_processes": 1 if one else len(fp.switches),
            "hosts": len(plan.hosts), "cc": sorted({h.cc for h in plan.hosts if h.cc}),
            "rto_min_ms": sorted({h.rto_min_ms for h in plan.hosts if h.rto_min_ms}),
            "measurement_interval_s": traffic.INTERVAL_S, "flows_with_errors": sum(1 for r in rows if r["error"]),
            "notes": plan.notes, "timeouts_by_host": {h: t for h, t in timeouts.items() if t},
            "links": link_summary, "frames_forwarded": fwd,
            "frames_per_s": round(fwd / dur, 1) if dur > 0 else None, "switch_cpu_s": round(cpu, 3),
            "window_frames_per_s": round(window_frames / span, 1) if span > 0 else None,
            "offered_fps_sim": round(fp.offered_fps, 1),
            "input_line": any(pt.get("input_rate_bps") for st in stats.values() for pt in st["ports"]),
            "input_max_wait_us": max((pt.get("input_max_wait_us") or 0 for st in stats.values() for pt in st["ports"]),
                                     default=0) or None,
            "input_wait_mean_us": _mean_wait(stats),
            "input_paced_frames": sum(pt.get("input_paced", 0) for st in stats.values() for pt in st["ports"]),
        },
    }
    return summary, rows, ports, links
