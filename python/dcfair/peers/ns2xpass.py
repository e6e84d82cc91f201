"""The ns2-xpass peer: ExpressPass as its authors implemented it, in their ns-2.35 overlay
kaist-ina/ns2-xpass (commit f4e38bc), which the user builds and names in ``DCFAIR_NS2_XPASS``
(the path of its ``ns``). The project ships no build of it: only the Tcl scripts of
``validation/ns2xpass/`` (its own, written for dcfair's scenarios) and this runner.

Rules:

- The binary is ``$DCFAIR_NS2_XPASS``; unset or not an executable file, the peer is missing
  (:class:`~dcfair.peers.PeerMissing`, saying to build kaist-ina/ns2-xpass per its README).
  Its version is the commit and the SHA-256 of the binary.
- A point runs dcfair's resolved network (:meth:`Job.resolved`): ``leaf_spine`` with one spine
  in ``leafspine.tcl``, ``parking_lot`` in ``parkinglot.tcl``; the same hosts, link rates and
  delays, the flows with dcfair's sources, destinations, start times (the seed's draw) and
  sizes; the runner checks that the script built exactly dcfair's ports. Every port is the
  code's ``Queue/XPassDropTail`` (host NICs too, as in the authors' scripts).
- The ExpressPass settings the paper gives or the figure varies come from the point (credit
  queue, credit sizes, jitter, initial rate, ``w_init``, ``w_min``, timeouts); those the paper
  leaves open are the authors' (``validation/ns2xpass/README.md`` lists each with where it
  comes from): the token bucket ``max_tokens_`` 840 B, the code's own target loss
  (``target_loss_scaling_`` 0.125) and, for figures 10 and 11, the initial rate 1/32 of their
  ``parking-lot.tcl`` and ``multi-bottleneck.tcl``.
- The code has one feedback law, its own: points of the paper's law (Algorithm 1, dcfair's
  default) and of the code's law both run it (this peer *is* the paper's simulator); "no
  feedback" runs it with the rate pinned at the maximum (README, "No feedback"). Settings the
  code has no counterpart for are :class:`~dcfair.peers.Unsupported` (``stale_echoes = "skip"``,
  ``rate_floor = "elapsed"``, ``update_period_us``, another ``target_loss`` or ``w_max``, ...).
- The seed sets ns-2's RNG and the C library's ``rand()`` that Agent/XPass draws jitter and
  credit sizes from (common.tcl's burner), so the same point gives the same files.
- Measures (``docs/metrics.md``'s names): a utilization is rescaled so that the analyses'
  ceiling 1500/1584 stands for ns-2's own, 1538/(1538 + mean credit) (ns-2 frames are 1538 B
  with 78 B of headers): ``utilization`` and ``ports.csv``'s ``utilization`` are the fraction of
  ns-2's data ceiling times 1500/1584 (``utilization_ns2_raw``: the link's plain share); goodputs
  likewise map ns-2's payload ceiling onto 1460/1584 of the link. Delivered bytes are payload
  (1460 B a full packet) leaving the port into the receiver, one frame time plus the link delay
  earlier. Credits: sent = packets the receivers put on their NICs, lost = packets dropped
  anywhere but the data queues' drops (which ns-2 prints), wasted = the code's own count
  (``outputs/waste.out``, written when a finished flow closes).
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from dcfair.peers import REPO, Job, Peer, Unsupported, register
from dcfair.peers import measure as M

ENV = "DCFAIR_NS2_XPASS"
COMMIT = "f4e38bc"
HERE = "validation/ns2xpass"
INSTALL = (f"build kaist-ina/ns2-xpass (commit {COMMIT}, an ns-2.35 tree) per its README, then set {ENV} to the "
           "path of its ns binary")

#: ns-2 frame accounting of Agent/XPass (ns-default.tcl: max_ethernet_size_, xpass_hdr_size_).
FRAME, HDR = 1538, 78
MSS = FRAME - HDR
#: The analyses' data ceiling (xpass_credit.MAX_DATA, xpass_fabric.CEILING).
DCFAIR_CEILING = 1500.0 / 1584.0
#: The authors' initial rate (alpha_) of their figure 10 and 11 scripts (scripts/parking-lot.tcl,
#: scripts/multi-bottleneck.tcl: ALPHA 1/32); the other figures keep the point's (the code's
#: default alpha_ 0.5 is dcfair's default initial_rate).
AUTHORS_INITIAL_RATE = {"xpass-fig10": 1.0 / 32.0, "xpass-fig11": 1.0 / 32.0}
#: The token bucket of every port: ns-default.tcl's max_tokens_ (84 x 10 bytes), or the bytes
#: ``DCFAIR_NS2_XPASS_BUCKET_BYTES`` names (92: one credit, dcfair's depth), which enter the
#: peer's build identity.
BUCKET_BYTES = int(os.environ.get("DCFAIR_NS2_XPASS_BUCKET_BYTES") or 840)
LONG_FLOW = 0


def _binary() -> Optional[Path]:
    v = os.environ.get(ENV)
    return Path(v) if v else None


def _missing() -> Optional[str]:
    b = _binary()
    if b is None:
        return f"{ENV} is not set (it names the ns binary of a build of kaist-ina/ns2-xpass)"
    if not (b.is_file() and os.access(b, os.X_OK)):
        return f"{ENV}={b} is not an executable file"
    return None


@functools.lru_cache(maxsize=None)
def _digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:12]


def _version() -> str:
    b = _binary()
    bucket = "" if BUCKET_BYTES == 840 else f"-bucket{BUCKET_BYTES}"
    return f"{COMMIT}-ns.{_digest(str(b)) if b and b.is_file() else 'missing'}{bucket}"


PEER = register(Peer(
    name="ns2-xpass",
    title=f"ns-2.35 with ExpressPass, kaist-ina/ns2-xpass commit {COMMIT} (the authors' code, user-built)",
    install=INSTALL,
    missing=_missing,
    version=_version,
    files=(f"{HERE}/common.tcl",),
))


# --- the point's settings -----------------------------------------------------------------------

def xpass_options(job: Job) -> List[str]:
    """The ExpressPass options of common.tcl for the point; Unsupported for settings the code
    has no counterpart for."""
    x = job.get("xpass", {})
    law = x.get("feedback_law", "paper")
    if x.get("stale_echoes", "count") != "count":
        raise Unsupported("stale_echoes = skip is dcfair's own variant of Algorithm 1; the ns-2 code counts every echo")
    if x.get("rate_floor", "rtt") != "rtt":
        raise Unsupported("rate_floor = elapsed: the ns-2 code's floor is one credit per RTT")
    if x.get("update_period_us") is not None:
        raise Unsupported("update_period_us: the ns-2 code updates once per measured RTT")
    if law != "none" and abs(float(x.get("target_loss", 0.1)) - 0.1) > 1e-12:
        raise Unsupported("target_loss other than 0.1: the ns-2 code's target is (1 - rate/max) x 0.125, "
                          "not a parameter")
    if abs(float(x.get("w_max", 0.5)) - 0.5) > 1e-12:
        raise Unsupported("w_max other than 0.5: fixed in the ns-2 code")
    if x.get("data_frame_bytes") is not None:
        raise Unsupported("data_frame_bytes: ns-2 frames are 1538 B (Agent/XPass max_ethernet_size_)")
    if int(x.get("control_bytes", 84)) != 84:
        raise Unsupported("control_bytes other than 84: the ns-2 code's control packets are min_ethernet_size_ (84 B)")
    cmin, cmax = int(x.get("credit_min_bytes", 84)), int(x.get("credit_max_bytes", 92))
    if x.get("credit_tokens", "bytes") == "count" and cmin != cmax:
        raise Unsupported("credit_tokens = count with random credit sizes: the ns-2 shaper charges each credit "
                          "its bytes")
    rate = float(x.get("initial_rate", 0.5))
    if job.reproduction in AUTHORS_INITIAL_RATE and abs(rate - 0.5) < 1e-12:
        rate = AUTHORS_INITIAL_RATE[job.reproduction]
    return ["-feedback", "none" if law == "none" else "code",
            "-credit_queue", str(int(x.get("credit_queue_pkts", 8))),
            "-credit_min", str(cmin), "-credit_max", str(cmax),
            "-bucket_bytes", str(BUCKET_BYTES),
            "-jitter", repr(float(x.get("jitter", 0.1))),
            "-initial_rate", repr(rate),
            "-air", "0",
            "-w_init", repr(float(x.get("w_init", 0.5))),
            "-min_w", repr(float(x.get("w_min", 0.01))),
            "-retransmit_timeout", repr(float(x.get("retransmit_timeout_us", 100000.0)) * 1e-6),
            "-stop_timeout", repr(float(x.get("stop_timeout_us", 2000.0)) * 1e-6)]


def _uniform_delay(res: Dict[str, Any], delay_us: float) -> None:
    for p in res["ports"]:
        if abs(float(p["delay_us"]) - delay_us) > 1e-9:
            raise Unsupported(f"port {p['name']} has its own delay ({p['delay_us']} us): the scripts give every "
                              "link one")


def topology_options(job: Job) -> Tuple[str, List[str]]:
    """The script and its topology options for the point's network."""
    res = job.resolved()
    sc = res["scenario"]
    topo = sc["topology"]
    if sc.get("incast") or sc.get("poisson") or res.get("udp_sources"):
        raise Unsupported("incast, Poisson or UDP workloads: the ns2-xpass scripts run long-lived or sized flows only")
    q = sc["queue"]
    if q.get("kind", "droptail") != "droptail":
        raise Unsupported(f"queue.kind = {q.get('kind')}: ns2-xpass's data queue is XPassDropTail's FIFO")
    if q.get("limit_bytes") is not None:
        raise Unsupported("queue.limit_bytes: the scripts take the data buffer in packets")
    if sc.get("host_queue"):
        raise Unsupported("[host_queue]: host NICs are XPassDropTail FIFOs of topology.host_buffer_pkts")
    groups = [sc.get("flows") or {}] + list((sc.get("groups") or {}).values())
    if any(g and g.get("transport", "tcp") != "xpass" for g in groups if g.get("count", 1)):
        raise Unsupported("a flow that is not ExpressPass (transport = xpass): ns2-xpass runs Agent/XPass flows only")
    delay = float(topo["link_delay_us"])
    _uniform_delay(res, delay)
    common = ["-queue_pkts", str(int(q["limit_pkts"])),
              "-host_buffer_pkts", str(int(topo.get("host_buffer_pkts", 1000))),
              "-delay_us", repr(delay), "-host_rate_mbps", repr(float(topo["host_rate_mbps"]))]
    if topo["kind"] == "leaf_spine":
        if int(topo.get("spines", 1)) != 1 or topo.get("oversubscription") is not None:
            raise Unsupported("a leaf-spine with more than one spine (ECMP): the scripts route one path per pair")
        return "leafspine.tcl", common + ["-leaves", str(int(topo["leaves"])), "-hosts_per_leaf",
                                          str(int(topo["hosts_per_leaf"])), "-fabric_rate_mbps",
                                          repr(float(topo["fabric_rate_mbps"]))]
    if topo["kind"] == "parking_lot":
        return "parkinglot.tcl", common + ["-bottlenecks", str(int(topo["bottlenecks"])), "-bottleneck_rate_mbps",
                                           repr(float(topo["bottleneck_rate_mbps"]))]
    raise Unsupported(f"topology.kind = {topo['kind']}: the ns2-xpass scripts build leaf_spine and parking_lot")


def run_options(job: Job) -> List[str]:
    res = job.resolved()
    flows = " ".join(f"{f['src']},{f['dst']},{float(f['start_s'])!r},{int(f['size_bytes'] or LONG_FLOW)}"
                     for f in res["flows"])
    measured = [p["name"] for p in res["ports"] if p["measured"]]
    duration = float(job.get("sim.duration_s"))
    window = float(job.get("measure.window_s", duration))
    interval = float(job.get("measure.sample_interval_s", 0.0) or 0.0)
    return ["-seed", str(job.seed), "-duration", repr(duration), "-window", repr(window), "-sample_interval",
            repr(interval), "-measure", " ".join(measured), "-flows", flows]


def command(job: Job) -> List[str]:
    """The ns command line of the point (``ns SCRIPT options...``), run in ``job.out``."""
    script, topo = topology_options(job)
    b = _binary()
    return [str(b), str(REPO / HERE / script), *topo, *xpass_options(job), *run_options(job)]


# --- running and measuring ------------------------------------------------------------------------

def _read_csv(path: Path) -> List[Dict[str, str]]:
    import csv

    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def run(job: Job) -> Dict[str, Any]:
    """Runs the point in ns2-xpass; returns the metrics and writes flows.csv, ports.csv and
    (with samples) timeseries.csv."""
    cmd = command(job)
    out = job.out
    for stale in ("ns2xpass_flows.csv", "ns2xpass_ports.csv", "ns2xpass_samples.csv", "ns2xpass_run.txt",
                  "timeseries.csv"):
        (out / stale).unlink(missing_ok=True)
    with open(out / "ns2xpass_stdout.txt", "w") as so:
        r = subprocess.run(cmd, cwd=out, stdout=so, stderr=subprocess.PIPE, text=True, timeout=24 * 3600)
    if r.returncode != 0 or not (out / "ns2xpass_flows.csv").is_file():
        tail = "\n".join((r.stderr or "").strip().splitlines()[-8:])
        raise RuntimeError(f"ns2-xpass exited with {r.returncode}: {' '.join(cmd[:2])} ...\n{tail}")
    (out / "ns2xpass_command.txt").write_text(" ".join(_quote(c) for c in cmd) + "\n")
    return measure(job, out)


def _quote(s: str) -> str:
    import shlex

    return shlex.quote(s)


def _stdout_counts(out: Path) -> Tuple[int, int]:
    """Data-queue drops ("Data packet will be dropped.") and data losses the receivers saw."""
    drops = losses = 0
    with open(out / "ns2xpass_stdout.txt") as f:
        for line in f:
            if line.startswith("Data packet will be dropped."):
                drops += 1
            elif "data loss detected" in line:
                losses += 1
    return drops, losses


def _waste(out: Path) -> Dict[int, int]:
    w: Dict[int, int] = {}
    p = out / "outputs" / "waste.out"
    if p.is_file():
        for line in p.read_text().splitlines():
            parts = line.strip().split(",")
            if len(parts) == 3 and int(parts[0]) < 1000000:
                w[int(parts[0])] = w.get(int(parts[0]), 0) + int(parts[2])
    return w


def _fct(out: Path) -> Dict[int, float]:
    d: Dict[int, float] = {}
    p = out / "outputs" / "fct.out"
    if p.is_file():
        for line in p.read_text().splitlines():
            parts = line.strip().split(",")
            if len(parts) == 3 and parts[0].isdigit() and int(parts[0]) < 1000000:
                d[int(parts[0])] = float(parts[2])
    return d


def measure(job: Job, out: Path) -> Dict[str, Any]:
    res = job.resolved()
    ran = dict(line.split("=", 1) for line in (out / "ns2xpass_run.txt").read_text().splitlines() if "=" in line)
    avg_credit = (float(ran["credit_min"]) + float(ran["credit_max"])) / 2.0
    ns2_ceiling = FRAME / (FRAME + avg_credit)
    util_scale = DCFAIR_CEILING / ns2_ceiling
    goodput_scale = (FRAME + avg_credit) / 1584.0
    duration = float(job.get("sim.duration_s"))
    window = float(job.get("measure.window_s", duration))

    ports = _read_csv(out / "ns2xpass_ports.csv")
    built = {p["port"]: p for p in ports}
    want = {p["name"]: p for p in res["ports"]}
    if set(built) != set(want):
        raise RuntimeError(f"the script built other ports than dcfair's: {sorted(set(built) ^ set(want))[:6]}")
    for name, p in want.items():
        b = built[name]
        if abs(float(b["rate_bps"]) - float(p["rate_bps"])) > 1e-6 * float(p["rate_bps"]) or \
                abs(float(b["delay_s"]) * 1e6 - float(p["delay_us"])) > 1e-6:
            raise RuntimeError(f"port {name}: ns2-xpass has {b['rate_bps']} b/s, {b['delay_s']} s; dcfair "
                               f"{p['rate_bps']} b/s, {p['delay_us']} us")
    measured = [p["name"] for p in res["ports"] if p["measured"]]
    data_drops, losses = _stdout_counts(out)

    # ports.csv (the measured ports)
    prow = []
    for name in measured:
        b = built[name]
        raw = int(b["window_bytes_out"]) * 8.0 / (float(b["rate_bps"]) * window)
        prow.append({"port": name, "packets_out": int(b["pkts_out"]), "bytes_out": int(b["bytes_out"]),
                     "utilization": raw * util_scale, "utilization_ns2_raw": raw, "drops": int(b["drops_pkts"]),
                     "marks": 0, "max_queue_pkts": None, "rate_bps": int(float(b["rate_bps"])),
                     "window_pkts_out": int(b["window_pkts_out"])})
    (out / "ports.csv").write_text(M.flows_csv(prow, ["port", "packets_out", "bytes_out", "utilization", "drops",
                                                      "marks", "max_queue_pkts", "rate_bps", "utilization_ns2_raw",
                                                      "window_pkts_out"]))
    cap = sum(float(built[n]["rate_bps"]) for n in measured) * window
    raw_util = sum(int(built[n]["window_bytes_out"]) for n in measured) * 8.0 / cap if cap > 0 else None

    # flows.csv
    fl = _read_csv(out / "ns2xpass_flows.csv")
    fct = _fct(out)
    waste = _waste(out)
    rows = []
    groups: Dict[str, List[Tuple[float, int]]] = {}
    for f, r in zip(res["flows"], fl):
        fid = int(r["flow_id"])
        assert fid == int(f["id"]) and r["src"] == f["src"] and r["dst"] == f["dst"]
        wbytes = int(r["window_delivered_bytes"])
        pkts = int(round(wbytes / MSS))
        tput = wbytes * 8.0 / window * goodput_scale
        groups.setdefault(f["group"], []).append((tput, pkts))
        size = f["size_bytes"]
        done = fid in fct and size is not None
        rows.append({"flow_id": fid, "src": f["src"], "dst": f["dst"], "kind": "xpass", "start_s": float(f["start_s"]),
                     "end_s": float(f["start_s"]) + fct[fid] if done else None, "bytes_sent": None,
                     "bytes_delivered": int(r["delivered_bytes"]), "pkts_in_window": pkts,
                     "fct_s": fct[fid] if done else None, "max_gap_s": None, "retransmits": None, "timeouts": None,
                     "group": f["group"], "size_bytes": size, "xpass_credits_wasted": waste.get(fid)})
    (out / "flows.csv").write_text(M.flows_csv(rows, ["flow_id", "src", "dst", "kind", "start_s", "end_s", "bytes_sent",
                                                      "bytes_delivered", "pkts_in_window", "fct_s", "max_gap_s",
                                                      "retransmits", "timeouts", "group", "size_bytes",
                                                      "xpass_credits_wasted"]))

    # timeseries.csv (delivered_bytes of every flow at every sample)
    samples = out / "ns2xpass_samples.csv"
    if samples.is_file():
        with open(samples) as src, open(out / "timeseries.csv", "w") as dst:
            next(src)
            dst.write("time_s,metric,port,flow_id,value\n")
            for line in src:
                t, fid, v = line.strip().split(",")
                dst.write(f"{t},delivered_bytes,,{fid},{v}\n")

    # credits: the receivers' NICs (a host that receives and never sends puts only credits and
    # NACKs on its NIC); lost: every drop but the data queues'
    dsts = {f["dst"] for f in res["flows"]}
    srcs = {f["src"] for f in res["flows"]}
    nic = [p for p in built if p.split("->")[0] in dsts]
    sent = sum(int(built[p]["arrivals_pkts"]) for p in nic) if not (dsts & srcs) else None
    all_drops = sum(int(p["drops_pkts"]) for p in ports)

    pkts_all = [p for g in groups.values() for _, p in g]
    metrics: Dict[str, Any] = {
        "utilization": raw_util * util_scale if raw_util is not None else None,
        "utilization_ns2_raw": raw_util,
        "drops": sum(int(built[n]["drops_pkts"]) for n in measured),
        "drops_by_reason": {"overflow": data_drops} if data_drops else {},
        "marks": 0,
        "flows": len(rows),
        "flows_completed": sum(1 for r in rows if r["fct_s"] is not None),
        "xpass_credits_sent": sent,
        "xpass_credits_lost": all_drops - data_drops,
        "xpass_credits_wasted": sum(waste.values()),
        "xpass_data_losses_seen": losses,
        "ns2_data_ceiling": ns2_ceiling,
        "sim_time_s": duration,
        "window_s": window,
    }
    metrics.update(M.window_counts(pkts_all))
    for g, v in groups.items():
        tp = [t for t, _ in v]
        metrics[f"throughput_bps_{g}"] = M.mean(tp)
        metrics[f"aggregate_throughput_bps_{g}"] = sum(tp)
        metrics[f"jain_index_{g}"] = M.jain([p for _, p in v])
        metrics[f"starved_fraction_{g}"] = sum(1 for _, p in v if p == 0) / len(v)
    done = [r["fct_s"] for r in rows if r["fct_s"] is not None]
    if done:
        metrics.update(M.fct_stats(done))
    return M.clean(metrics)


@PEER.reproduces("xpass-fig6a", "xpass-fig8", "xpass-fig9", files=(f"{HERE}/leafspine.tcl",))
def credit_mechanisms(job: Job) -> Dict[str, Any]:
    """Figures 6(a), 8 and 9 on dcfair's two-leaf, one-spine fabric (leafspine.tcl)."""
    return run(job)


@PEER.reproduces("xpass-fig10", "xpass-fig11", files=(f"{HERE}/parkinglot.tcl",))
def parking_lots(job: Job) -> Dict[str, Any]:
    """Figures 10 and 11 on dcfair's parking lots (parkinglot.tcl)."""
    return run(job)
