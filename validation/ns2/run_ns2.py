#!/usr/bin/env python3
"""Run the ns-2 mirror of the HCF long-flow scenario for each discipline x seed.

For every run, ns-2 (longflows.tcl) streams its trace into a FIFO that metrics.py
reads while the simulation runs, so no trace touches the disk (unless
--keep-traces DIR). One ns process runs at a time.

Writes (default paths, relative to the repository root):
  validation/results/ns2_longflows.json       per run and aggregated metrics, the ns-2
                                              version and the exact command lines
  validation/results/ns2_longflows_flows.csv  per-flow rows of every run

Usage:
  run_ns2.py [--qdiscs droptail,red,sfq,drr] [--seeds 1,2,3,4,5 | --nseeds 5]
             [--duration 180] [--window 10] [--flows 400] [--timeout 1800]
             [--out PATH] [--flows-csv PATH] [--keep-traces DIR] [--ns ns] [--merge]
             [--set key=value ...]   (extra longflows.tcl options, e.g. --set limit_pkts=40)
  --merge keeps the runs of the other disciplines already in OUT (and their rows in the
  flows CSV) and replaces only those of --qdiscs; each run records the sha256 of the
  longflows.tcl that made it.
Exit status: 0 all runs succeeded, 1 some run failed, 2 bad input or ns missing.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import math
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import metrics as M  # noqa: E402

TCL = os.path.join(HERE, "longflows.tcl")
SCENARIO = "scenarios/papers/hcf/longflows.toml"
QDISCS = ("droptail", "red", "sfq", "drr")
AGG_METRICS = ("starved_fraction", "throughput_variance_pkts", "jain_index", "utilization",
               "max_starvation_s", "median_max_gap_s", "mean_pkts_in_window", "drops",
               "drops_in_window", "drops_tcp", "drops_udp", "timeouts", "retransmits",
               "utilization_udp")
DRR_COLLISION = "Collisions between"


def log(msg: str) -> None:
    print(f"[run_ns2 {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def ns_version(ns: str) -> dict:
    """ns-2's own version string and, where known, the Debian package version."""
    info = {"ns_path": shutil.which(ns)}
    with tempfile.NamedTemporaryFile("w", suffix=".tcl", delete=False) as f:
        f.write("puts [ns-version]; exit 0\n")
        probe = f.name
    try:
        r = subprocess.run([ns, probe], capture_output=True, text=True, timeout=60)
        info["ns_version"] = r.stdout.strip() or None
    finally:
        os.unlink(probe)
    try:
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "ns2"],
                           capture_output=True, text=True, timeout=30)
        if r.returncode == 0:
            info["debian_package"] = f"ns2 {r.stdout.strip()}"
    except (OSError, subprocess.SubprocessError):
        pass
    return info


class RunFailed(Exception):
    pass


def run_one(ns: str, qdisc: str, seed: int, duration: float, window: float, flows: int,
            extra: list[str], timeout: float, keep_dir: str | None) -> dict:
    """One ns-2 run; returns its record (metrics, flows, command, timing)."""
    tmp = tempfile.mkdtemp(prefix="ns2lf")
    try:
        if keep_dir:
            os.makedirs(keep_dir, exist_ok=True)
            trace = os.path.join(keep_dir, f"longflows_{qdisc}_s{seed}_{duration:g}s.tr")
        else:
            trace = os.path.join(tmp, "trace.fifo")
            os.mkfifo(trace)
        progress = max(duration / 6.0, 0.001)
        cmd = [ns, TCL, "--qdisc", qdisc, "--seed", str(seed), "--duration", repr(duration),
               "--window", repr(window), "--flows", str(flows), "--trace", trace,
               "--progress_s", repr(progress)] + extra
        shown_cmd = [os.path.basename(ns), os.path.relpath(TCL, REPO)] + cmd[2:]
        if not keep_dir:
            shown_cmd[shown_cmd.index(trace)] = "<fifo>"
        t0 = time.monotonic()
        ru0 = _children_rusage()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)

        # stderr: progress lines are relayed; DRR's per-packet collision warnings are
        # only counted; everything else is kept (last 50 lines) for the error report.
        err_tail: deque[str] = deque(maxlen=50)
        counters = {"drr_collision_warnings": 0}

        def read_stderr():
            for line in proc.stderr:
                if line.startswith(DRR_COLLISION):
                    counters["drr_collision_warnings"] += 1
                elif line.startswith("ns2 longflows"):
                    log("  " + line.strip())
                else:
                    err_tail.append(line.rstrip("\n"))

        out_lines: list[str] = []

        def read_stdout():
            for line in proc.stdout:
                out_lines.append(line.rstrip("\n"))

        result: dict = {}

        def parse():
            try:
                with open(trace, "r", buffering=1 << 20) as fh:
                    result["res"] = M.compute(fh, duration, window)
            except Exception as e:  # reported below with ns's own stderr
                result["err"] = e

        th = [threading.Thread(target=read_stderr, daemon=True),
              threading.Thread(target=read_stdout, daemon=True)]
        parser = threading.Thread(target=parse, daemon=True)
        for t in th:
            t.start()
        if not keep_dir:
            parser.start()
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        wall = time.monotonic() - t0
        ru1 = _children_rusage()
        if not keep_dir and parser.is_alive():
            # ns exited without ever opening the FIFO: open its write end so the
            # parser's open() returns and it sees end-of-file.
            try:
                fd = os.open(trace, os.O_WRONLY | os.O_NONBLOCK)
                os.close(fd)
            except OSError:
                pass
            parser.join(timeout=600)
        for t in th:
            t.join(timeout=10)
        if keep_dir:
            parse()

        where = f"{qdisc} seed {seed}"
        if timed_out:
            raise RunFailed(f"{where}: ns did not finish within {timeout:g} s (killed)")
        if proc.returncode != 0:
            tail = "\n    ".join(list(err_tail)[-15:] + out_lines[-5:])
            raise RunFailed(f"{where}: ns exited with status {proc.returncode}:\n    {tail}")
        if "err" in result:
            raise RunFailed(f"{where}: cannot read the trace: {result['err']}")
        if "res" not in result:
            raise RunFailed(f"{where}: the trace parser did not finish")
        res = result["res"]
        return {
            "qdisc": qdisc, "seed": seed, "duration_s": duration, "window_s": window,
            "flows": flows, "command": shown_cmd, "wall_time_s": round(wall, 3),
            "cpu_time_s": round(ru1[0] - ru0[0], 3),
            "metrics": res["metrics"],
            "trace_summary": {k: res["trace"][k] for k in
                              ("arrivals", "end_time_s", "tcp_packet_sizes",
                               "unparsed_lines", "unknown_arrivals")},
            "drr_collision_warnings": counters["drr_collision_warnings"],
            "ns_stderr_other": list(err_tail),
            "ns_stdout": out_lines[-20:],
            "trace_file": trace if keep_dir else None,
            "_flows": res["flows"],
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _children_rusage():
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r.ru_utime + r.ru_stime, r.ru_maxrss)


def aggregate(runs: list[dict], metrics=None) -> dict:
    """mean, sample std (n-1), min, max and n of each metric (default AGG_METRICS), per
    discipline. run_dcfair.py uses it too, so both simulators are summarized alike."""
    out: dict = {}
    for q in dict.fromkeys(r["qdisc"] for r in runs):
        rs = [r for r in runs if r["qdisc"] == q]
        agg = {"n_runs": len(rs), "seeds": [r["seed"] for r in rs]}
        for m in metrics or AGG_METRICS:
            v = [r["metrics"][m] for r in rs if r["metrics"].get(m) is not None]
            if not v:
                agg[m] = None
                continue
            mean = sum(v) / len(v)
            std = math.sqrt(sum((x - mean) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0
            agg[m] = {"mean": mean, "std": std, "min": min(v), "max": max(v), "n": len(v)}
        out[q] = agg
    return out


def _ints(s: str) -> list[int]:
    try:
        return [int(x) for x in s.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {s!r}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Run longflows.tcl in ns-2 for each discipline x seed.")
    ap.add_argument("--qdiscs", default=",".join(QDISCS))
    ap.add_argument("--seeds", type=_ints, help="comma-separated seeds (default 1..nseeds)")
    ap.add_argument("--nseeds", type=int, default=5)
    ap.add_argument("--duration", type=float, default=180.0)
    ap.add_argument("--window", type=float, default=10.0)
    ap.add_argument("--flows", type=int, default=400)
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per ns run")
    ap.add_argument("--out", default=os.path.join(REPO, "validation/results/ns2_longflows.json"))
    ap.add_argument("--flows-csv", default=None,
                    help="per-flow CSV (default: OUT with _flows.csv)")
    ap.add_argument("--keep-traces", metavar="DIR", help="write traces as files in DIR")
    ap.add_argument("--ns", default="ns", help="ns-2 executable")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="extra longflows.tcl option, e.g. limit_pkts=40")
    ap.add_argument("--merge", action="store_true",
                    help="keep the other disciplines' runs already in --out")
    a = ap.parse_args(argv)

    qdiscs = [q.strip() for q in a.qdiscs.split(",") if q.strip()]
    bad = [q for q in qdiscs if q not in QDISCS]
    if bad or not qdiscs:
        print(f"run_ns2.py: --qdiscs: unknown discipline(s) {bad}; choose from {QDISCS}",
              file=sys.stderr)
        return 2
    seeds = a.seeds or list(range(1, a.nseeds + 1))
    if not seeds or min(seeds) < 1:
        print("run_ns2.py: seeds must be integers >= 1", file=sys.stderr)
        return 2
    if not (a.duration > 0 and 0 < a.window <= a.duration):
        print("run_ns2.py: need duration > 0 and 0 < window <= duration", file=sys.stderr)
        return 2
    extra: list[str] = []
    for kv in a.set:
        if "=" not in kv:
            print(f"run_ns2.py: --set expects KEY=VALUE, got {kv!r}", file=sys.stderr)
            return 2
        k, v = kv.split("=", 1)
        extra += [f"--{k.strip()}", v.strip()]
    if shutil.which(a.ns) is None:
        print(f"run_ns2.py: ns-2 executable {a.ns!r} not found on PATH. Install it "
              "(Debian/Ubuntu: apt-get install ns2) or pass --ns /path/to/ns.", file=sys.stderr)
        return 2
    if not os.path.exists(TCL):
        print(f"run_ns2.py: {TCL} is missing", file=sys.stderr)
        return 2

    with open(TCL, "rb") as fh:
        tcl_sha = hashlib.sha256(fh.read()).hexdigest()
    flows_csv = a.flows_csv or (os.path.splitext(a.out)[0] + "_flows.csv")
    kept_runs, kept_rows, kept_extra = [], [], {}
    if a.merge and os.path.exists(a.out):
        with open(a.out) as fh:
            old = json.load(fh)
        for r in old.get("runs", []):
            if r["qdisc"] not in qdiscs:
                r.setdefault("tcl_script_sha256", old.get("tcl_script_sha256"))
                r.setdefault("extra_tcl_options", old.get("parameters", {}).get("extra_tcl_options", []))
                kept_runs.append(r)
        if os.path.exists(flows_csv):
            with open(flows_csv) as fh:
                lines = fh.read().splitlines()
            if lines:
                col = lines[0].split(",").index("qdisc")
                kept_rows = [ln for ln in lines[1:] if ln.split(",")[col] not in qdiscs]
        kept_extra = {q: old["parameters"].get("extra_tcl_options", [])
                      for q in {r["qdisc"] for r in kept_runs}}
        log(f"--merge: keeping {len(kept_runs)} runs of {sorted(kept_extra)} from {a.out}")

    version = ns_version(a.ns)
    log(f"ns-2 {version.get('ns_version')} ({version.get('debian_package', '?')}) at "
        f"{version['ns_path']}; {len(qdiscs)} disciplines x {len(seeds)} seeds, "
        f"{a.duration:g} s simulated each")

    runs, failures = [], []
    total = len(qdiscs) * len(seeds)
    k = 0
    for q in qdiscs:
        for s in seeds:
            k += 1
            log(f"run {k}/{total}: {q} seed {s}")
            try:
                r = run_one(a.ns, q, s, a.duration, a.window, a.flows, extra, a.timeout,
                            a.keep_traces)
            except RunFailed as e:
                log(f"FAILED: {e}")
                failures.append({"qdisc": q, "seed": s, "error": str(e)})
                continue
            r["tcl_script_sha256"] = tcl_sha
            r["extra_tcl_options"] = extra
            m = r["metrics"]
            log(f"  done in {r['wall_time_s']:.1f} s: starved {m['starved_fraction']:.3f}, "
                f"variance {m['throughput_variance_pkts']:.4g}, jain {m['jain_index']:.3f}, "
                f"util {m['utilization']:.4f}, max starvation {m['max_starvation_s']:.2f} s, "
                f"drops {m['drops']}")
            runs.append(r)

    if not runs:
        log("no run succeeded; nothing written")
        return 1
    order = {q: i for i, q in enumerate(QDISCS)}
    all_runs = sorted(kept_runs + runs, key=lambda r: (order.get(r["qdisc"], 99), r["seed"]))
    doc = {
        "description": "ns-2 mirror of the HCF paper's long-flow setting (section V-B); "
                       "metrics as defined in CONTRACT.md, computed by validation/ns2/metrics.py "
                       "from the receiver-side trace of the bottleneck link",
        "scenario": SCENARIO,
        "simulator": "ns-2",
        **version,
        "tcl_script": os.path.relpath(TCL, REPO),
        "tcl_script_sha256": tcl_sha,
        "generated_utc": datetime.datetime.now(datetime.timezone.utc)
                         .strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": {"python": platform.python_version(), "machine": platform.machine(),
                 "system": platform.system()},
        "parameters": {"qdiscs": sorted({r["qdisc"] for r in all_runs}, key=lambda q: order.get(q, 99)),
                       "seeds": seeds, "duration_s": a.duration,
                       "window_s": a.window, "flows": a.flows, "extra_tcl_options": extra,
                       "merged_from_previous_file": sorted(kept_extra)},
        "metric_notes": {
            "window": "[duration - window_s, duration]",
            "pkts_in_window": "TCP data packets (incl. retransmissions) of a flow arriving at "
                              "the receiver in the window",
            "utilization": "bytes of all packets (TCP+UDP) arriving at the receiver over the "
                           "bottleneck in the window / (capacity x window)",
            "throughput_variance_pkts": "population variance of pkts_in_window",
            "max_starvation_s": "longest gap between consecutive data-packet arrivals of a flow, "
                                "counting [start, first] and [last, end of simulation]; max over flows",
            "drops": "packets dropped at the bottleneck queue over the whole run",
            "aggregate_std": "sample standard deviation over seeds (n - 1)",
        },
        "aggregate": aggregate(all_runs),
        "runs": [{k2: v for k2, v in r.items() if k2 != "_flows"} for r in all_runs],
        "failures": failures,
        "flows_csv": os.path.relpath(flows_csv, REPO),
    }
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    tmp_out = a.out + ".tmp"
    with open(tmp_out, "w") as fh:
        json.dump(doc, fh, indent=2, allow_nan=False)
        fh.write("\n")
    os.replace(tmp_out, a.out)
    tmp_csv = flows_csv + ".tmp"
    with open(tmp_csv, "w") as fh:
        import io
        new_rows = {}
        for r in runs:
            buf = io.StringIO()
            M.write_flows_csv(buf, r["_flows"], {"qdisc": r["qdisc"], "seed": r["seed"]},
                              header=True)
            head, *rows = buf.getvalue().splitlines()
            new_rows.setdefault("header", head)
            new_rows[(r["qdisc"], r["seed"])] = rows
        fh.write(new_rows["header"] + "\n")
        by_q = {}
        for ln in kept_rows:
            by_q.setdefault(ln.split(",")[0], []).append(ln)
        for q in sorted(set(by_q) | {k[0] for k in new_rows if k != "header"},
                        key=lambda q: order.get(q, 99)):
            for ln in by_q.get(q, []):
                fh.write(ln + "\n")
            for (rq, _s), rows in sorted((k, v) for k, v in new_rows.items() if k != "header"):
                if rq == q:
                    fh.write("\n".join(rows) + "\n")
    os.replace(tmp_csv, flows_csv)
    log(f"wrote {a.out} and {flows_csv}")
    _print_table(doc["aggregate"])
    return 1 if failures else 0


def _print_table(agg: dict) -> None:
    cols = ("starved_fraction", "throughput_variance_pkts", "jain_index", "utilization",
            "max_starvation_s")
    print(f"{'qdisc':9s} " + " ".join(f"{c:>28s}" for c in cols), file=sys.stderr)
    for q, a in agg.items():
        cells = []
        for c in cols:
            v = a.get(c)
            cells.append(f"{'-':>28s}" if v is None else
                         f"{v['mean']:>12.4g} ± {v['std']:<9.3g} (n={v['n']})")
        print(f"{q:9s} " + " ".join(cells), file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
