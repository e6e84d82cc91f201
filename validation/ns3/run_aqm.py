#!/usr/bin/env python3
"""FQ-CoDel and DCTCP on a dumbbell, dcfair beside ns-3 3.37 (validation/ns3/README.md, section
"FQ-CoDel and DCTCP").

Builds validation/ns3/aqm_dumbbell.cc into out/ns3/aqm_dumbbell (when missing or older than the
source), runs both simulators on each case's scenario (scenarios/fq_codel8.toml, dctcp8.toml)
for every seed, computes the same metrics from both outputs, writes
validation/results/ns3_aqm.json and, with --doc, the table into the section
`<!-- ns3-aqm:begin -->` / `<!-- ns3-aqm:end -->` of docs/validation.md.

The ns-3 options are derived from the scenario file (`ns3_args`): every key is translated,
checked against the one value the ns-3 program mirrors, or ignored as a name; any other key is an
error, so the two sides cannot drift apart silently.

Usage: run_aqm.py [--cases fq_codel8,dctcp8] [--seeds 1,2,3] [-j 2] [--doc docs/validation.md]
                  [--duration S --window S] [--out PATH]
Needs Python 3.11's standard library only. Exit status 0 all runs succeeded, 1 a run failed,
2 bad input or a simulator missing.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import csv
import json
import math
import os
import subprocess
import sys
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402
import run_ns3  # noqa: E402  (build_command: the flags that work with Debian's .pc files)

SRC = os.path.join(HERE, "aqm_dumbbell.cc")
BIN = os.environ.get("DCFAIR_NS3_AQM_BIN") or os.path.join(common.REPO, "out", "ns3", "aqm_dumbbell")
SIMRUN = os.environ.get("DCFAIR_SIMRUN") or os.path.join(common.REPO, "target", "release",
                                                         "examples", "simrun")
RAW = os.path.join(common.REPO, "out", "ns3", "aqm")
OUT = os.path.join(common.RESULTS, "ns3_aqm.json")
CASES = {
    "fq_codel8": "validation/ns3/scenarios/fq_codel8.toml",
    "dctcp8": "validation/ns3/scenarios/dctcp8.toml",
}
SEEDS = (1, 2, 3)
SECTION = "ns3-aqm"
# The keys --set may change (both sides): enough for a short run of the same cases.
SETTABLE = ("sim.duration_s", "measure.window_s", "groups.sparse.start_min_s",
            "groups.sparse.start_max_s")


class MappingError(ValueError):
    """The scenario asks for something aqm_dumbbell.cc does not mirror."""


def flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


# Keys whose value the ns-3 program has fixed (aqm_dumbbell.cc): the scenario must say the same.
FIXED = {
    "sim.tie_break": "fifo", "topology.kind": "dumbbell", "topology.receivers": 1,
    "tcp.mss_bytes": 1460, "tcp.header_bytes": 42, "tcp.init_cwnd_pkts": 10,
    "tcp.rcv_buf_bytes": 4194304, "tcp.window_scaling": True, "tcp.delayed_ack": False,
    "tcp.min_rto_ms": 200.0, "tcp.max_rto_s": 60.0, "tcp.initial_rto_s": 1.0,
    "tcp.dupack_threshold": 3, "tcp.handshake": True, "tcp.max_backoff": 512,
    "tcp.timestamps": True, "tcp.limited_transmit": True, "tcp.clock_granularity_us": 1000.0,
    "tcp.sack": True, "flows.start_min_s": 0.0, "groups.sparse.start_min_s": None,
}
IGNORED = {"name", "description", "seed", "measure.sample_interval_s"}


def ns3_args(flat: dict, seed: int) -> list[str]:
    """The aqm_dumbbell.cc options of a scenario (flattened TOML)."""
    f = dict(flat)
    for k in IGNORED:
        f.pop(k, None)
    args = [f"--run={seed}"]

    def take(key, default=None):
        if key in f:
            return f.pop(key)
        if default is None:
            raise MappingError(f"{key}: required by the ns-3 mirror")
        return default

    for k, v in FIXED.items():
        if v is None:
            continue
        got = take(k, v)
        if got != v:
            raise MappingError(f"{k} = {got!r}: the ns-3 mirror fixes it to {v!r}")
    dur = float(take("sim.duration_s"))
    args += [f"--duration={dur!r}", f"--window={float(take('measure.window_s', dur))!r}",
             "--sampleInterval=0.001",
             f"--senders={take('topology.senders')}",
             f"--accessRateMbps={float(take('topology.access_rate_mbps'))!r}",
             f"--accessDelayUs={float(take('topology.access_delay_us'))!r}",
             f"--bottleneckRateMbps={float(take('topology.bottleneck_rate_mbps'))!r}",
             f"--bottleneckDelayUs={float(take('topology.bottleneck_delay_us'))!r}",
             f"--hostBufferPkts={take('topology.host_buffer_pkts')}",
             f"--limitPkts={take('queue.limit_pkts')}",
             f"--flows={take('flows.count')}",
             f"--startMax={float(take('flows.start_max_s'))!r}"]
    kind = take("queue.kind")
    cc = take("tcp.cc")
    if kind == "fq_codel" and cc == "newreno":
        q = int(take("queue.fq_codel.quantum_bytes", 1514))
        args += ["--aqm=fq_codel", f"--fqFlows={take('queue.fq_codel.flows', 1024)}",
                 f"--quantumBytes={q - 2}",  # ns-3's items are IP packets, without the PPP header
                 f"--targetUs={float(take('queue.fq_codel.target_us', 5000.0))!r}",
                 f"--intervalUs={float(take('queue.fq_codel.interval_us', 100000.0))!r}",
                 f"--dropBatch={take('queue.fq_codel.drop_batch', 64)}",
                 # the hash salt: dcfair draws one per seed, so ns-3 gets one per seed too
                 f"--perturbation={(seed * 2654435761) % 2**32}"]
        if take("queue.fq_codel.ecn", False):
            raise MappingError("queue.fq_codel.ecn: only false is mirrored")
    elif kind == "droptail" and cc == "dctcp":
        k = int(take("queue.droptail.mark_threshold_pkts"))
        if k < 2:
            raise MappingError("queue.droptail.mark_threshold_pkts: ns-3's RED needs K >= 2")
        # RED counts the queue disc's packets only; the 1-packet device queue holds one more.
        args += ["--aqm=dctcp", f"--redThPkts={k - 1}",
                 f"--dctcpG={float(take('tcp.dctcp_g', 0.0625))!r}",
                 f"--dctcpAlphaInit={float(take('tcp.dctcp_alpha_init', 1.0))!r}"]
    else:
        raise MappingError(f"queue.kind = {kind!r} with tcp.cc = {cc!r}: mirrored are fq_codel + "
                           "newreno and droptail (mark_threshold_pkts) + dctcp")
    if "groups.sparse.count" in f:
        args += [f"--shortFlows={take('groups.sparse.count')}",
                 f"--shortBytes={int(take('groups.sparse.size_pkts')) * 1460}",
                 f"--shortStartMin={float(take('groups.sparse.start_min_s'))!r}",
                 f"--shortStartMax={float(take('groups.sparse.start_max_s'))!r}"]
    if f:
        raise MappingError(f"{sorted(f)[0]}: not mirrored by aqm_dumbbell.cc")
    return args


def load(case: str) -> dict:
    with open(os.path.join(common.REPO, CASES[case]), "rb") as fh:
        return flatten(tomllib.load(fh))


def ensure_built() -> list[str]:
    cmd = run_ns3.build_command()
    cmd[cmd.index("-o") + 1] = BIN
    cmd[cmd.index(run_ns3.SRC)] = SRC
    if not os.path.exists(BIN) or os.path.getmtime(BIN) < os.path.getmtime(SRC):
        os.makedirs(os.path.dirname(BIN), exist_ok=True)
        common.log("run_aqm", f"building {os.path.relpath(BIN, common.REPO)}")
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"run_aqm.py: compiling aqm_dumbbell.cc failed:\n{r.stderr[-4000:]}")
    return cmd


def _pctl(v: list[float], p: float) -> float | None:
    """Nearest-rank percentile."""
    if not v:
        return None
    s = sorted(v)
    return s[max(0, math.ceil(p / 100 * len(s)) - 1)]


def law_drops(by_reason: dict) -> int:
    """The drops of the control law itself, by each side's name for them: dcfair's reason
    `codel`, ns-3's CoDel "Target exceeded drop" (which FqCoDel reports as "(Dropped by child
    queue disc) Target exceeded drop"). Every other drop is an overflow (FQ-CoDel's batch from
    the fattest queue, "Overlimit drop" in ns-3; DropTail's tail drop)."""
    return sum(n for r, n in by_reason.items() if r == "codel" or r.endswith("Target exceeded drop"))


def metrics(goodput: list[float], queue: list[float], fcts: list[float], n_short: int,
            utilization: float, drops: int, marks: int, drops_law: int, drops_window: int) -> dict:
    """The same metrics from either side: goodput of the long flows in the window (bits/s),
    queue samples every 1 ms in the window (packets waiting), FCTs of the finished short flows,
    drops split into the control law's and the rest (overflow)."""
    n = len(goodput)
    s, s2 = sum(goodput), sum(x * x for x in goodput)
    return {
        "utilization": utilization,
        "goodput_mbps_mean": s / n / 1e6,
        "goodput_mbps_min": min(goodput) / 1e6,
        "goodput_mbps_max": max(goodput) / 1e6,
        "jain_index": s * s / (n * s2) if s2 else None,
        "drops": drops,
        "drops_law": drops_law,
        "drops_overflow": drops - drops_law,
        "drops_window": drops_window,
        "marks": marks,
        "queue_mean_pkts": sum(queue) / len(queue),
        "queue_p99_pkts": _pctl(queue, 99),
        "short_flows": n_short,
        "short_completed": len(fcts),
        "short_fct_mean_ms": sum(fcts) / len(fcts) * 1e3 if fcts else None,
        "short_fct_p99_ms": _pctl(fcts, 99) * 1e3 if fcts else None,
    }


def run_ns3_side(case: str, seed: int, flat: dict, _extra: list[str]) -> dict:
    raw = os.path.join(RAW, f"ns3_{case}_s{seed}")
    os.makedirs(raw, exist_ok=True)
    args = ns3_args(flat, seed)
    r = subprocess.run([BIN, *args, f"--outDir={raw}"], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"ns-3 {case} seed {seed}: exit {r.returncode}: {r.stderr[-1500:]}")
    with open(os.path.join(raw, "summary.json")) as fh:
        sm = json.load(fh)
    window = sm["window_s"]
    n_long = int(flat["flows.count"])
    good, fcts, n_short = [], [], 0
    with open(os.path.join(raw, "flows.csv")) as fh:
        for row in csv.DictReader(fh):
            if int(row["flow_id"]) < n_long:
                good.append(int(row["bytes_in_window"]) * 8 / window)
            else:
                n_short += 1
                if row["fct_s"]:
                    fcts.append(float(row["fct_s"]))
    with open(os.path.join(raw, "queue.csv")) as fh:
        queue = [float(row["queue_pkts"]) for row in csv.DictReader(fh)]
    m = metrics(good, queue, fcts, n_short, sm["utilization"], sm["drops"], sm["marks"],
                law_drops(sm.get("drops_by_reason", {})), sm["drops_in_window"])
    return {"case": case, "seed": seed, "simulator": "ns-3",
            "command": [os.path.relpath(BIN, common.REPO), *args], "metrics": m}


def run_dcfair_side(case: str, seed: int, flat: dict, extra: list[str]) -> dict:
    raw = os.path.join(RAW, f"dcfair_{case}_s{seed}")
    os.makedirs(raw, exist_ok=True)
    cmd = [SIMRUN, os.path.join(common.REPO, CASES[case]), f"seed={seed}", *extra, "--out", raw]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"dcfair {case} seed {seed}: exit {r.returncode}: {r.stderr[-1500:]}")
    sm = json.loads(r.stdout)
    dur = float(flat["sim.duration_s"])
    window = float(flat.get("measure.window_s", dur))
    w0 = dur - window
    n_long = int(flat["flows.count"])
    # delivered_bytes of every long flow at the window's start and end; the bottleneck queue
    # at every sample inside the window (the same instants as ns-3's samples)
    at: dict[int, dict[str, float]] = {}
    queue = []
    with open(os.path.join(raw, "timeseries.csv")) as fh:
        for row in csv.DictReader(fh):
            t = float(row["time_s"])
            if row["metric"] == "queue_pkts" and t >= w0 - 1e-9:
                queue.append(float(row["value"]))
            elif row["metric"] == "delivered_bytes" and (abs(t - w0) < 1e-9 or abs(t - dur) < 1e-9):
                fid = int(row["flow_id"])
                if fid < n_long:
                    at.setdefault(fid, {})["start" if abs(t - w0) < 1e-9 else "end"] = float(row["value"])
    good = [(at[i]["end"] - at[i]["start"]) * 8 / window for i in range(n_long)]
    fcts, n_short = [], 0
    with open(os.path.join(raw, "flows.csv")) as fh:
        for row in csv.DictReader(fh):
            if int(row["flow_id"]) >= n_long:
                n_short += 1
                if row["fct_s"]:
                    fcts.append(float(row["fct_s"]))
    sm_m = sm["metrics"]
    m = metrics(good, queue, fcts, n_short, sm_m["utilization"], sm_m["drops"], sm_m["marks"],
                law_drops(sm_m.get("drops_by_reason", {})), sm_m["window_drops"])
    return {"case": case, "seed": seed, "simulator": "dcfair",
            "command": [os.path.relpath(SIMRUN, common.REPO), CASES[case], f"seed={seed}", *extra],
            "events": sm.get("events"), "metrics": m}


def aggregate(runs: list[dict]) -> dict:
    """Per case and simulator: each metric's mean, min and max over the seeds."""
    out: dict = {}
    for r in runs:
        out.setdefault(r["case"], {}).setdefault(r["simulator"], []).append(r["metrics"])
    agg: dict = {}
    for case, sims in out.items():
        for sim, ms in sims.items():
            d = {}
            for k in ms[0]:
                v = [m[k] for m in ms if m[k] is not None]
                if v:
                    d[k] = {"mean": sum(v) / len(v), "min": min(v), "max": max(v), "n": len(v)}
            agg.setdefault(case, {})[sim] = d
    return agg


ROWS = [  # metric, label, format
    ("utilization", "bottleneck utilization", "{:.4f}"),
    ("goodput_mbps_mean", "long-flow goodput, mean (Mb/s)", "{:.2f}"),
    ("goodput_mbps_min", "long-flow goodput, lowest flow (Mb/s)", "{:.2f}"),
    ("jain_index", "Jain index (8 long flows)", "{:.4f}"),
    ("drops", "drops at the bottleneck (whole run)", "{:.0f}"),
    ("drops_law", "of which by the control law (CoDel)", "{:.0f}"),
    ("drops_overflow", "of which at the buffer limit (FQ-CoDel: batches from the fattest queue)", "{:.0f}"),
    ("drops_window", "drops in the measurement window (steady state)", "{:.0f}"),
    ("marks", "CE marks at the bottleneck (whole run)", "{:.0f}"),
    ("queue_mean_pkts", "queue, mean (packets waiting)", "{:.1f}"),
    ("queue_p99_pkts", "queue, p99 (packets)", "{:.0f}"),
    ("short_completed", "2-packet flows completed (of 20)", "{:.0f}"),
    ("short_fct_mean_ms", "2-packet flow FCT, mean (ms)", "{:.2f}"),
    ("short_fct_p99_ms", "2-packet flow FCT, p99 (ms)", "{:.2f}"),
]


def table(agg: dict, seeds: list[int]) -> str:
    lines = []
    for case in CASES:
        if case not in agg:
            continue
        lines += [f"**{case}** (`{CASES[case]}`), seeds {', '.join(map(str, seeds))}: "
                  "mean over the seeds [min, max]", "",
                  "| metric | dcfair | ns-3 3.37 |", "|---|---|---|"]
        for key, label, fmt in ROWS:
            cells = []
            for sim in ("dcfair", "ns-3"):
                s = agg[case].get(sim, {}).get(key)
                if s is None:
                    cells.append("-")
                elif s["min"] == s["max"]:
                    cells.append(fmt.format(s["mean"]))
                else:
                    cells.append(f"{fmt.format(s['mean'])} [{fmt.format(s['min'])}, "
                                 f"{fmt.format(s['max'])}]")
            lines.append(f"| {label} | {cells[0]} | {cells[1]} |")
        lines.append("")
    lines.append("Generated by `make validate-ns3-aqm` (`validation/ns3/run_aqm.py --doc "
                 "docs/validation.md`); raw numbers in `validation/results/ns3_aqm.json`.")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--seeds", default=",".join(map(str, SEEDS)))
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--doc", help="markdown file whose ns3-aqm section gets the table")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="override a scenario key on both sides (the keys of SETTABLE only: "
                         "a shorter run)")
    a = ap.parse_args(argv)
    cases = [c for c in a.cases.split(",") if c]
    for c in cases:
        if c not in CASES:
            print(f"run_aqm.py: unknown case {c!r} (known: {', '.join(CASES)})", file=sys.stderr)
            return 2
    seeds = [int(s) for s in a.seeds.split(",") if s]
    if not os.path.exists(SIMRUN):
        print(f"run_aqm.py: {SIMRUN} missing (cargo build --release -p dcfair-sim --example "
              "simrun)", file=sys.stderr)
        return 2
    overrides = {}
    for kv in a.set:
        k, _, v = kv.partition("=")
        if k not in SETTABLE:
            print(f"run_aqm.py: --set {k}: only {', '.join(SETTABLE)}", file=sys.stderr)
            return 2
        overrides[k] = float(v)
    build = ensure_built()
    flats = {}
    for c in cases:
        try:
            flats[c] = {**load(c), **overrides}
            ns3_args(flats[c], 1)
        except (MappingError, OSError) as e:
            print(f"run_aqm.py: case {c}: {e}", file=sys.stderr)
            return 2

    jobs = [(side, c, s) for c in cases for s in seeds for side in ("ns-3", "dcfair")]
    runs, failures = [], []
    with cf.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        futs = {ex.submit(run_ns3_side if side == "ns-3" else run_dcfair_side, c, s,
                          flats[c], [f"{k}={v!r}" for k, v in overrides.items()]): (side, c, s) for side, c, s in jobs}
        for fut in cf.as_completed(futs):
            side, c, s = futs[fut]
            try:
                r = fut.result()
            except (RuntimeError, OSError, KeyError, ValueError) as e:
                common.log("run_aqm", f"{side} {c} seed {s}: FAILED: {e}")
                failures.append({"simulator": side, "case": c, "seed": s, "error": str(e)})
                continue
            m = r["metrics"]
            common.log("run_aqm", f"{side} {c} seed {s}: util {m['utilization']:.4f} "
                       f"jain {m['jain_index']:.4f} queue {m['queue_mean_pkts']:.1f} "
                       f"drops {m['drops']} marks {m['marks']}")
            runs.append(r)
    runs.sort(key=lambda r: (r["case"], r["simulator"], r["seed"]))
    agg = aggregate(runs)
    doc = {
        "description": "FQ-CoDel and DCTCP on a dumbbell, dcfair beside ns-3 3.37 "
                       "(validation/ns3/run_aqm.py, validation/ns3/README.md)",
        "versions": run_ns3.versions(),
        "program": os.path.relpath(SRC, common.REPO),
        "program_sha256": common.sha256(SRC),
        "build_command": [os.path.basename(build[0]),
                          *[os.path.relpath(t, common.REPO) if t.startswith(common.REPO) else t
                            for t in build[1:]]],
        "overrides": overrides,
        "cases": {c: {"scenario": CASES[c], "scenario_sha256":
                      common.sha256(os.path.join(common.REPO, CASES[c]))} for c in cases},
        "generated_utc": common.now_utc(),
        "git_commit": common.git_commit(),
        "aggregate": agg,
        "runs": runs,
        "failures": failures,
    }
    if a.out != "-":
        common.write_json(a.out, doc)
        common.log("run_aqm", f"wrote {os.path.relpath(a.out, common.REPO)}")
    else:
        json.dump(doc, sys.stdout, indent=1)
    if a.doc:
        import docsection
        docsection.replace(a.doc, SECTION, table(agg, seeds))
        common.log("run_aqm", f"updated {a.doc} ({SECTION})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
