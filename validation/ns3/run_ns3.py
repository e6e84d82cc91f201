#!/usr/bin/env python3
"""Run the ns-3 side of the dumbbell validation: every case x seed of cases.py.

Builds validation/ns3/dumbbell.cc against the installed libns3-dev (Debian packages ns3 and
libns3-dev 3.37) into out/ns3/dumbbell when the binary is missing or older than the source,
translates each case's dcfair scenario into the program's options (tomlmap.py), runs it, and
computes the metrics with metrics.py. Writes validation/results/ns3_dumbbell_ns3.json: the
runs (metrics, per-epoch values, the exact command), their aggregate per case, the package
versions and the build command.

Usage:
  run_ns3.py [--cases newreno1,newreno8,...] [--seeds 1,2] [-j 2] [--merge] [--recompute]
             [--raw DIR] [--out PATH] [--set KEY=VALUE] [--build-only] [--print-args CASE]
Each run's raw output (summary.json, flows.csv, timeseries.csv, events.txt, run.json) stays in
RAW/<case>_s<seed>/ (default out/ns3/runs, not committed); --recompute measures those again
without running ns-3 (after a change to metrics.py). --merge keeps the other cases' runs
already in OUT.
Exit status: 0 all runs succeeded, 1 some run failed, 2 bad input or ns-3 missing.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cases as C  # noqa: E402
import common  # noqa: E402
import metrics as M  # noqa: E402
import tomlmap  # noqa: E402

SRC = os.path.join(HERE, "dumbbell.cc")
BIN = os.environ.get("DCFAIR_NS3_BIN") or os.path.join(common.REPO, "out", "ns3", "dumbbell")
OUT = os.path.join(common.RESULTS, "ns3_dumbbell_ns3.json")
RAW = os.path.join(common.REPO, "out", "ns3", "runs")
MODULES = ("ns3-core", "ns3-network", "ns3-internet", "ns3-point-to-point",
           "ns3-applications", "ns3-traffic-control")
CXX = os.environ.get("CXX", "g++")


def log(msg: str) -> None:
    common.log("run_ns3", msg)


def build_command() -> list[str]:
    """The compile command. Debian's 3.37-2 .pc files carry a stray `-I/usr;` and name
    /usr/lib/.../libgsl.so and libgslcblas.so, which only libgsl-dev installs (the ns-3
    libraries already link libgsl.so.27 themselves): such tokens are dropped."""
    r = subprocess.run(["pkg-config", "--cflags", "--libs", *MODULES], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise SystemExit(f"run_ns3.py: pkg-config {' '.join(MODULES)} failed: {r.stderr.strip()}"
                         " (install the Debian packages ns3 and libns3-dev: make peers)")
    flags = []
    for tok in r.stdout.split():
        if tok.startswith("-I") and not os.path.isdir(tok[2:]):
            continue
        if tok.startswith("/") and not os.path.exists(tok):
            continue
        if tok not in flags or tok.startswith("-l"):
            flags.append(tok)
    return [CXX, "-O2", "-std=c++17", "-Wall", "-o", BIN, SRC, *flags]


def ensure_built(force: bool = False) -> list[str]:
    cmd = build_command()
    if force or not os.path.exists(BIN) or os.path.getmtime(BIN) < os.path.getmtime(SRC):
        os.makedirs(os.path.dirname(BIN), exist_ok=True)
        log(f"building {os.path.relpath(BIN, common.REPO)}")
        tmp = BIN + ".tmp"
        r = subprocess.run([*cmd[:5], tmp, *cmd[6:]], capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"run_ns3.py: compiling dumbbell.cc failed:\n{r.stderr[-4000:]}")
        os.replace(tmp, BIN)
    return cmd


def versions() -> dict:
    v = {}
    for pkg in ("ns3", "libns3-dev"):
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg], capture_output=True,
                           text=True)
        v[pkg] = r.stdout.strip() if r.returncode == 0 else None
    r = subprocess.run([CXX, "--version"], capture_output=True, text=True)
    v["compiler"] = r.stdout.splitlines()[0] if r.returncode == 0 and r.stdout else None
    return v


class RunFailed(Exception):
    pass


def measure(flat: dict, raw: str, sm: dict) -> tuple[dict, dict]:
    """The metrics (and per-epoch lists) of one run from its raw output directory."""
    duration = float(flat["sim.duration_s"])
    window = float(flat.get("measure.window_s", duration))
    mss = int(flat.get("tcp.mss_bytes", 1460))
    f0 = M.ns3_events(os.path.join(raw, "events.txt"), mss)
    m = M.compute(M.Run(series_csv=os.path.join(raw, "timeseries.csv"), flow0=f0,
                        utilization=sm["utilization"], drops=sm["drops"],
                        drops_in_window=sm["drops_in_window"],
                        retransmits=sm["retransmits"], timeouts=sm["timeouts"]),
                  duration=duration, window=window,
                  interval=float(flat["measure.sample_interval_s"]), mss=mss)
    return m, m.pop("_epochs")


def run_one(case: C.Case, seed: int, raw_root: str, timeout: float, extra: list[str],
            recompute: bool, ns3_extra: list[str]) -> dict:
    """Runs ns-3 for one case and seed into RAW_ROOT/<case>_s<seed>/ (or, with `recompute`,
    reads what an earlier run left there) and measures it."""
    flat = tomlmap.load(os.path.join(common.REPO, case.scenario),
                        [*case.overrides, *extra, f"seed={seed}"])
    args = tomlmap.ns3_args(flat) + ns3_extra
    raw = os.path.join(raw_root, f"{case.name}_s{seed}")
    cmd = [BIN, *args, "--eventFlows=1", f"--outDir={raw}"]
    if recompute:
        try:
            with open(os.path.join(raw, "run.json")) as fh:
                rec = json.load(fh)
        except OSError as e:
            raise RunFailed(f"--recompute: no earlier run in {raw}: {e}")
        if rec["command"][1:] != [*args, "--eventFlows=1"]:
            raise RunFailed(f"--recompute: {raw} was made with other options; rerun it")
    else:
        tmp = raw + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        t0 = time.monotonic()
        try:
            r = subprocess.run([*cmd[:-1], f"--outDir={tmp}"], capture_output=True, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RunFailed(f"timed out after {timeout:g} s")
        wall = time.monotonic() - t0
        if r.returncode != 0:
            raise RunFailed(f"exit {r.returncode}: {(r.stderr or r.stdout).strip()[-1500:]}")
        rec = {"case": case.name, "seed": seed,
               "command": [os.path.relpath(BIN, common.REPO), *args, "--eventFlows=1"],
               "wall_time_s": round(wall, 3)}
        with open(os.path.join(tmp, "run.json"), "w") as fh:
            json.dump(rec, fh)
        shutil.rmtree(raw, ignore_errors=True)
        os.replace(tmp, raw)
    with open(os.path.join(raw, "summary.json")) as fh:
        sm = json.load(fh)["metrics"]
    m, epochs = measure(flat, raw, sm)
    return {**rec, "ns3_counters": sm, "metrics": m, "epochs": epochs}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", help="comma-separated case names (default: all)")
    ap.add_argument("--seeds", help="comma-separated seeds (default: each case's own)")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="ns-3 processes at a time")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--merge", action="store_true", help="keep the other cases' runs in --out")
    ap.add_argument("--raw", metavar="DIR", default=RAW, help="raw outputs (default out/ns3/runs)")
    ap.add_argument("--recompute", action="store_true",
                    help="measure the raw outputs of earlier runs again instead of running ns-3")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="scenario override on this side only (experiments; recorded in OUT)")
    ap.add_argument("--ns3-arg", action="append", default=[], metavar="--OPTION=VALUE",
                    help="extra dumbbell.cc option after the translated ones, e.g. "
                         "--ns3-arg=--recovery=prr (experiments; recorded in OUT)")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds per ns-3 run")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--rebuild", action="store_true", help="compile even if up to date")
    ap.add_argument("--print-args", metavar="CASE", help="print the ns-3 options of CASE (seed 1)")
    a = ap.parse_args(argv)

    if a.print_args:
        case = C.select(a.print_args)[0]
        flat = tomlmap.load(os.path.join(common.REPO, case.scenario), [*case.overrides, *a.set])
        print(" ".join(tomlmap.ns3_args(flat)))
        return 0
    if shutil.which("pkg-config") is None or shutil.which(CXX) is None:
        print("run_ns3.py: needs pkg-config and a C++ compiler (make peers)", file=sys.stderr)
        return 2
    build = build_command() if a.recompute else ensure_built(a.rebuild)
    if a.build_only:
        return 0
    cases = C.select(a.cases)
    try:
        seeds_override = [int(s) for s in a.seeds.split(",") if s] if a.seeds else None
    except ValueError:
        print("run_ns3.py: --seeds must be integers", file=sys.stderr)
        return 2
    for c in cases:  # refuse untranslatable scenarios before spending any time
        try:
            tomlmap.ns3_args(tomlmap.load(os.path.join(common.REPO, c.scenario),
                                          [*c.overrides, *a.set]))
        except (tomlmap.MappingError, OSError) as e:
            print(f"run_ns3.py: case {c.name}: {e}", file=sys.stderr)
            return 2

    jobs = [(c, s) for c in cases for s in (seeds_override or c.seeds)]
    log(f"ns-3 {versions().get('ns3')}: {len(jobs)} runs of {len(cases)} cases, {a.jobs} at a time")
    runs, failures = [], []
    with cf.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        futs = {ex.submit(run_one, c, s, a.raw, a.timeout, a.set, a.recompute, a.ns3_arg): (c, s)
                for c, s in jobs}
        for fut in cf.as_completed(futs):
            c, s = futs[fut]
            try:
                r = fut.result()
            except (RunFailed, M.MetricsError, tomlmap.MappingError, OSError, KeyError,
                    ValueError) as e:
                log(f"{c.name} seed {s}: FAILED: {e}")
                failures.append({"case": c.name, "seed": s, "error": str(e)})
                continue
            log(f"{c.name} seed {s}: {common.summary_line(r)}")
            runs.append(r)

    names = [c.name for c in C.CASES]
    kept_runs, kept_fail, _ = (common.keep_other_cases(a.out, [c.name for c in cases])
                               if a.merge else ([], [], []))
    all_runs = common.case_order(kept_runs + runs, names)
    doc = {
        "description": "ns-3 side of dcfair's dumbbell validation (validation/ns3/README.md): "
                       "each case's dcfair scenario translated by tomlmap.py and run by dumbbell.cc; "
                       "metrics by metrics.py",
        "simulator": "ns-3",
        "versions": versions(),
        "program": os.path.relpath(SRC, common.REPO),
        "program_sha256": common.sha256(SRC),
        "build_command": [os.path.basename(build[0]), *[os.path.relpath(t, common.REPO)
                          if t.startswith(common.REPO) else t for t in build[1:]]],
        "side_overrides": a.set,
        "extra_ns3_options": a.ns3_arg,
        "generated_utc": common.now_utc(),
        "git_commit": common.git_commit(),
        "host": common.host(),
        "cases": {c.name: {"scenario": c.scenario, "scenario_sha256":
                           common.sha256(os.path.join(common.REPO, c.scenario)),
                           "title": c.title, "overrides": list(c.overrides)}
                  for c in C.CASES if c.name in {r["case"] for r in all_runs}},
        "metric_notes": M.__doc__,
        "aggregate": M.aggregate(all_runs),
        "runs": all_runs,
        "failures": common.case_order(kept_fail + failures, names),
    }
    if not all_runs:
        log("no run succeeded; nothing written")
        return 1
    common.write_json(a.out, doc)
    log(f"wrote {os.path.relpath(a.out, common.REPO)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
