"""Simulation beside real Linux TCP: the HCF long-flow setting scaled to the testbed.

Runs ``scenarios/papers/hcf/longflows.toml`` with fewer flows (default 100), the buffer scaled
with them (20 packets for 400 flows -> 5 for 100: the same buffer per flow), a shorter run
(30 s, measured over the last 10 s), for DropTail and HCF:

- in the simulator (``dcfair.api.run``, seeds 1..``--seeds``), as the scenario stands (ns-2's
  TCP, timers that fire when due) and with Linux's timers and Linux-like TCP rules
  (:data:`LINUX_TIMERS`: ``tcp.timer_wheel_hz = 250``, timers due at once in a seeded random
  order, and the ``L3`` keys of ``starvation.py``), DropTail and HCF;
- on the testbed (``dcfair testbed run``: Linux TCP in namespaces through the dcfair switch
  running the same queue code), ``--reps`` runs each;

then FairQ on real TCP (DropTail under ``[fairq]`` with ``wscale = "off"``, 10 flows opened with a handshake, a
100-packet buffer and a 25-packet target: with 100 flows their minimum windows of one MSS
alone would exceed it): the receive windows the senders see (iperf3's ``snd_wnd``), the queue the switch
reports, the queue implied by the senders' RTT, against FairQ's target; and the simulator's
queue (time series) beside it.

Writes ``validation/results/testbed_longflows.json`` and, with ``--doc``, the table into
docs/validation.md between ``<!-- testbed:begin -->`` and ``<!-- testbed:end -->``. Needs
root, iproute2, ethtool, iperf3 and the switch binary (``cargo build --release -p
dcfair-switch``); ``--switch bridge`` runs the testbed side with the Linux bridge baseline
(DropTail only: its HCF and FairQ rows are left out). ``--from-json`` rewrites the table from
an earlier results file without running anything; ``--resim`` reruns only the simulations and
keeps the testbed runs of the results file (no root needed).

    sudo .venv/bin/python validation/testbed/compare.py --doc docs/validation.md
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "validation"))
sys.path.insert(0, str(REPO / "python"))

import docsection  # noqa: E402
from starvation import LINUXISH  # noqa: E402

SCENARIO = REPO / "scenarios" / "papers" / "hcf" / "longflows.toml"
RESULTS = REPO / "validation" / "results" / "testbed_longflows.json"
METRICS = ("starved_fraction", "throughput_variance_pkts", "jain_index", "utilization", "timeouts", "drops")
FAIRQ_BUFFER_PKTS = 100
FAIRQ_TARGET = 0.25
#: The simulator with the testbed's timers: Linux's timer wheel at this kernel's 250 Hz, timers
#: due at the same instant in a seeded random order, and the Linux-like TCP keys (L3) of
#: starvation.py (docs/validation.md, "What makes real TCP starve more").
LINUX_TIMERS = [tuple(kv.split("=", 1)) for kv in LINUXISH] + [("tcp.timer_wheel_hz", "250"),
                                                               ("sim.tie_break", "random_timers")]


def overrides(a, kind: str, fairq: bool = False):
    buf = a.buffer_pkts if a.buffer_pkts else max(2, round(20 * a.flows / 400))
    n = a.fairq_flows if fairq else a.flows
    ov = [("flows.count", str(n)), ("topology.senders", str(n)), ("queue.kind", kind),
          ("queue.limit_pkts", str(FAIRQ_BUFFER_PKTS if fairq else buf)), ("sim.duration_s", str(a.duration)),
          ("measure.window_s", str(a.window))]
    if fairq:
        # FairQ counts flows from SYN-ACK / FIN / RST: the flows must open with a handshake
        # (which rules out ns-2's handshake-less first-segment details).
        # Linux does not tag ACKs with its window scale (fairq.wscale = reserved_bits): the
        # switch strips the option instead, in both runs, so nobody scales (windows <= 65535).
        ov += [("fairq.target_fraction", str(FAIRQ_TARGET)), ("fairq.wscale", "off"), ("tcp.handshake", "true"),
               ("tcp.headerless_first_segment", "false"), ("tcp.first_ack_resets_cwnd", "false")]
    return ov


def sim_runs(a, kind, fairq=False, extra=()):
    from dcfair import api

    out = []
    for seed in range(1, a.seeds + 1):
        ov = overrides(a, kind, fairq) + list(extra)
        if fairq:
            ov.append(("measure.sample_interval_s", "0.001"))
            ov.append(("measure.sample_flows", "false"))
            res = api.run_scenario(SCENARIO, seed=seed, overrides=ov)
            m = dict(res.summary["metrics"])
            ts = res.timeseries
            q = ts[(ts["metric"] == "queue_pkts") & (ts["time_s"] >= a.duration - a.window)]
            m["queue_mean_pkts"] = float(q["value"].mean()) if len(q) else None
        else:
            m = api.run(SCENARIO, overrides=ov, seed=seed)["metrics"]
        out.append({k: m.get(k) for k in METRICS + ("queue_mean_pkts", "fairq_rewrites")})
    return out


def testbed_runs(a, kind, fairq=False):
    out = []
    for rep in range(1, a.reps + 1):
        d = Path(a.work) / f"{kind}{'-fairq' if fairq else ''}-{rep}"
        argv = [sys.executable, "-m", "dcfair", "testbed", "run", str(SCENARIO), "--out", str(d), "--switch", a.switch,
                "--seed", str(rep), "--prefix", a.prefix]
        for k, v in overrides(a, kind, fairq):
            argv += ["--set", f"{k}={v}"]
        t = time.monotonic()
        p = subprocess.run(argv, text=True, capture_output=True)
        if p.returncode != 0:
            raise SystemExit(f"compare.py: testbed run failed ({p.returncode}): {p.stderr.strip()[-800:]}")
        s = json.loads((d / "summary.json").read_text())
        m = s["metrics"]
        row = {k: m.get(k) for k in METRICS + ("fairq_rewrites", "snd_wnd_median_bytes", "rtt_mean_us")}
        sp = s["testbed"].get("switch_ports") or {}
        if sp:  # the dcfair switch's own figures for the bottleneck port (run.py, switch.switch_port)
            q = row["switch"] = sp["sw->r0"]
            row["queue_mean_pkts"] = q["window_queue_mean_pkts"]
            if q["fairq"] is not None:
                row["fairq_window_bytes"] = q["window_fairq_window_mean_bytes"]
                row["fairq_target_pkts"] = q["fairq"]["target_bytes"] / 1500
        row["wall_s"] = round(time.monotonic() - t, 1)
        print(f"  testbed {kind}{' fairq' if fairq else ''} rep {rep}: "
              + ", ".join(f"{k} {fmt(row.get(k))}" for k in METRICS), flush=True)
        out.append(row)
    return out


def simulate(a, res, kind):
    """Both simulation columns of `kind`: the scenario as it stands, and with Linux's timers."""
    print(f"simulation {kind}: {a.seeds} seeds, as the scenario and with Linux's timers", flush=True)
    res["sim"][kind] = sim_runs(a, kind)
    res.setdefault("sim_linux", {})[kind] = sim_runs(a, kind, extra=LINUX_TIMERS)


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1e4 else f"{v:.3e}"
    return str(v)


def cell(runs, key):
    vals = [r[key] for r in runs if r.get(key) is not None]
    if not vals:
        return "-"
    if len(vals) == 1:
        return fmt(float(vals[0]))
    return f"{fmt(statistics.fmean(vals))} ± {fmt(statistics.stdev(vals))} ({len(vals)})"


def table(res) -> str:
    lines = ["| qdisc | metric | simulation | simulation, Linux's timers | testbed (Linux TCP) |", "|---|---|---|---|---|"]
    for kind in ("droptail", "hcf"):
        sim, tb = res["sim"].get(kind), res["testbed"].get(kind)
        lin = res.get("sim_linux", {}).get(kind)
        if not sim:
            continue
        for key in METRICS:
            lines.append(f"| {kind} | {key} | {cell(sim, key)} | {cell(lin, key) if lin else 'not run'} | "
                         f"{cell(tb, key) if tb else 'not run'} |")
    fq_sim, fq_tb = res["sim"].get("fairq"), res["testbed"].get("fairq")
    if fq_sim:
        target = FAIRQ_TARGET * FAIRQ_BUFFER_PKTS
        lines += ["", f"FairQ (DropTail, {res['setting'].get('fairq_flows', 10)} flows, {FAIRQ_BUFFER_PKTS}-packet buffer, "
                      f"target {target:g} packets):", "",
                  "| metric | simulation | testbed (Linux TCP) |", "|---|---|---|"]
        rate = 100e6
        for r in fq_tb or []:
            if r.get("rtt_mean_us") is not None:
                r["queue_from_rtt_pkts"] = max(0.0, (r["rtt_mean_us"] - res["base_rtt_us"]) * 1e-6 * rate / 8 / 1500)
        for key, label in [("queue_mean_pkts", "queue, mean in the window (packets; simulation 1 ms samples, switch 10 ms)"),
                           ("fairq_target_pkts", "FairQ's target as the switch computes it (packets of 1500 bytes)"),
                           ("queue_from_rtt_pkts", "queue implied by the senders' mean RTT (packets)"),
                           ("fairq_window_bytes", "per-flow window FairQ writes into ACKs, mean over the window (bytes)"),
                           ("snd_wnd_median_bytes", "receive window the senders see, median over flows (bytes)"),
                           ("fairq_rewrites", "ACK windows rewritten"), ("utilization", "utilization"),
                           ("jain_index", "jain_index"), ("starved_fraction", "starved_fraction")]:
            lines.append(f"| {label} | {cell(fq_sim, key)} | {cell(fq_tb, key) if fq_tb else 'not run'} |")
        for r in fq_tb or []:
            if r.get("switch"):
                q = r["switch"]
                lines.append(f"\nThe switch's own figures for the bottleneck port (first run, whole run): "
                             f"max queue {q['max_len_pkts']} packets, mean {fmt(q['mean_len_pkts'])} packets "
                             f"(sampled at every dequeue), {q['drops_pkts']} drops.")
                break
    return "\n".join(lines)


def _args(st) -> str:
    """The options that made a results file, as a command line suffix."""
    out = ""
    for key, opt, default in [("switch", "--switch", "dcfair"), ("flows", "--flows", 100), ("reps", "--reps", 1),
                              ("seeds", "--seeds", 3), ("duration_s", "--duration", 30.0), ("window_s", "--window", 10.0)]:
        if st.get(key, default) != default:
            out += f" {opt} {st[key]:g}" if isinstance(st[key], float) else f" {opt} {st[key]}"
    return out


def git_commit() -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, text=True, capture_output=True).stdout.strip()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", type=int, default=100)
    ap.add_argument("--buffer-pkts", type=int, help="bottleneck buffer (default: 20 x flows / 400)")
    ap.add_argument("--duration", type=float, default=30.0)
    ap.add_argument("--window", type=float, default=10.0)
    ap.add_argument("--seeds", type=int, default=3, help="simulation seeds")
    ap.add_argument("--reps", type=int, default=1, help="testbed runs per discipline")
    ap.add_argument("--switch", choices=("dcfair", "bridge"), default="dcfair")
    ap.add_argument("--prefix", default="dcfv-")
    ap.add_argument("--work", default=str(REPO / "out" / "testbed-compare"))
    ap.add_argument("--fairq-flows", type=int, default=10,
                    help="flows of the FairQ rows (every flow keeps at least one MSS in flight, so the "
                         "flows times 1 MSS must stay below the target)")
    ap.add_argument("--no-fairq", action="store_true")
    ap.add_argument("--from-json", help="only rewrite the table from this results file")
    ap.add_argument("--resim", action="store_true",
                    help="rerun the simulations only, keeping the testbed runs of the results file")
    ap.add_argument("--doc", help="also write the table into this markdown file, between the markers")
    a = ap.parse_args(argv)
    if a.from_json:
        res = json.loads(Path(a.from_json).read_text())
    elif a.resim:
        res = json.loads(RESULTS.read_text())
        st = res["setting"]
        a.flows, a.buffer_pkts, a.duration, a.window = st["flows"], st["buffer_pkts"], st["duration_s"], st["window_s"]
        a.seeds, a.fairq_flows = st["seeds"], st["fairq_flows"]
        for kind in ("droptail", "hcf"):
            simulate(a, res, kind)
        if "fairq" in res["sim"]:
            res["sim"]["fairq"] = sim_runs(a, "droptail", fairq=True)
        res["sim_commit"] = git_commit()
        RESULTS.write_text(json.dumps(res, indent=1) + "\n")
    else:
        res = {"setting": {"flows": a.flows, "buffer_pkts": a.buffer_pkts or max(2, round(20 * a.flows / 400)),
                           "duration_s": a.duration, "window_s": a.window, "seeds": a.seeds, "reps": a.reps,
                           "fairq_flows": a.fairq_flows,
                           "switch": a.switch},
               "base_rtt_us": 100.0, "sim": {}, "testbed": {}}
        kinds = ("droptail",) if a.switch == "bridge" else ("droptail", "hcf")
        for kind in ("droptail", "hcf"):
            simulate(a, res, kind)
            if kind in kinds:
                print(f"testbed {kind}: {a.reps} runs ({a.switch})", flush=True)
                res["testbed"][kind] = testbed_runs(a, kind)
        if not a.no_fairq:
            print("simulation fairq", flush=True)
            res["sim"]["fairq"] = sim_runs(a, "droptail", fairq=True)
            if a.switch == "dcfair":
                print("testbed fairq", flush=True)
                res["testbed"]["fairq"] = testbed_runs(a, "droptail", fairq=True)
        res["git_commit"] = res["sim_commit"] = git_commit()
        res["kernel"] = os.uname().release
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(res, indent=1) + "\n")
    t = table(res)
    print(t)
    if a.doc:
        st = res["setting"]
        note = (f"{st['flows']} flows, buffer {st['buffer_pkts']} packets, {st['duration_s']:g} s measured over the last "
                f"{st['window_s']:g} s; simulation seeds 1..{st['seeds']}, testbed {st['reps']} run(s) per row through "
                f"the `{st['switch']}` switch on Linux {res.get('kernel', '?')}, dcfair at {(res.get('git_commit') or '?')[:7]}"
                + (f" (simulations rerun at {res['sim_commit'][:7]} with `--resim`)"
                   if res.get("sim_commit", res.get("git_commit")) != res.get("git_commit") else "")
                + ". \"Linux's timers\": `tcp.timer_wheel_hz = 250`, `sim.tie_break = \"random_timers\"` and the L3 keys "
                "of `starvation.py` (below). Cells: mean ± sample std (n), or one run. Made by "
                f"`sudo .venv/bin/python validation/testbed/compare.py{_args(st)} --doc docs/validation.md`; "
                "raw numbers in `validation/results/testbed_longflows.json`.")
        if docsection.write(a.doc, "testbed", t + "\n\n" + note, "compare.py"):
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
