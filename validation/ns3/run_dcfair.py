#!/usr/bin/env python3
"""Run the dcfair side of the ns-3 dumbbell validation: every case x seed of cases.py.

Each run is two passes over the same scenario and seed (both deterministic, so they are the
same run): `simrun --out DIR` for summary.json and timeseries.csv, then `simtrace` for the
per-event log that gives flow 0's departures and loss events and the drops in the window.
Metrics come from metrics.py, exactly as for ns-3. Writes validation/results/ns3_dumbbell_dcfair.json.

Cases whose keys today's dcfair does not know (CUBIC, SACK, pacing: being added on other
branches) fail in the scenario loader with "unknown field" / "unknown variant"; they are
recorded under "pending" with that message, not as failures, so the pipeline runs now and
fills in once the keys exist. The NewReno cases pin `tcp.sack=false` and `tcp.pacing=false`
as soon as the engine accepts those keys (probed with a 1 ms run); until then they are left
out, and the engine has neither.

Build first: cargo build --release -p dcfair-sim --example simrun
             cargo build --release -p dcfair-sim --features trace --example simtrace
(or point DCFAIR_SIMRUN and DCFAIR_SIMTRACE at binaries built elsewhere).

Usage: run_dcfair.py [--cases ...] [--seeds 1,2] [--merge] [--out PATH] [--keep DIR]
Exit status: 0 every run succeeded or is pending, 1 some run failed, 2 bad input or binaries missing.
"""

from __future__ import annotations

import argparse
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

# DCFAIR_SIMRUN / DCFAIR_SIMTRACE: binaries built elsewhere (e.g. from a merge of the branches
# that add CUBIC, SACK and pacing, before they are in this tree).
SIMRUN = os.environ.get("DCFAIR_SIMRUN") or os.path.join(common.REPO, "target/release/examples/simrun")
SIMTRACE = (os.environ.get("DCFAIR_SIMTRACE")
            or os.path.join(common.REPO, "target/release/examples/simtrace"))
OUT = os.path.join(common.RESULTS, "ns3_dumbbell_dcfair.json")
# Pinned on every case whose scenario does not set them, once the engine knows the key.
PIN_WHEN_KNOWN = (("tcp.sack", "false"), ("tcp.pacing", "false"))
UNKNOWN = ("unknown field", "unknown variant")


def log(msg: str) -> None:
    common.log("run_dcfair", msg)


class Pending(Exception):
    """The engine does not know a key or value the case needs (yet)."""


class RunFailed(Exception):
    pass


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, cwd=common.REPO, capture_output=True, text=True)
    if r.returncode != 0:
        err = r.stderr.strip()
        if any(u in err for u in UNKNOWN):
            raise Pending(err.splitlines()[-1] if err else "unknown key")
        raise RunFailed(f"exit {r.returncode}: {err[-1500:]}")
    return r


def engine_knows(scenario: str, key: str, value: str) -> bool:
    try:
        _run([SIMRUN, scenario, f"{key}={value}", "sim.duration_s=0.001",
              "measure.window_s=0.001", "measure.sample_interval_s=0.001"])
        return True
    except Pending:
        return False
    except RunFailed:
        return False


def run_one(case: C.Case, seed: int, pins: list[str], keep: str | None, extra: list[str]) -> dict:
    sc = case.scenario
    sets = [*case.overrides, *pins, *extra, f"seed={seed}"]
    flat = tomlmap.load(os.path.join(common.REPO, sc), sets)
    duration = float(flat["sim.duration_s"])
    window = float(flat.get("measure.window_s", duration))
    tmp = tempfile.mkdtemp(prefix=f"dcf_{case.name}_")
    try:
        t0 = time.monotonic()
        r = _run([SIMRUN, sc, *sets, "--out", tmp])
        summ = json.loads(r.stdout)
        trace = os.path.join(tmp, "trace.txt")
        r2 = _run([SIMTRACE, trace, sc, *sets])
        if json.loads(r2.stdout)["metrics"] != summ["metrics"]:
            raise RunFailed("simrun and simtrace disagree on the same scenario and seed")
        mss = int(flat.get("tcp.mss_bytes", 1460))
        f0 = M.dcfair_trace(trace, duration - window, int(flat.get("tcp.header_bytes", 40)), mss)
        wall = time.monotonic() - t0
        sm = summ["metrics"]
        m = M.compute(M.Run(series_csv=os.path.join(tmp, "timeseries.csv"), flow0=f0,
                            utilization=sm["utilization"], drops=sm["drops"],
                            drops_in_window=f0.drops_in_window, retransmits=sm["retransmits"],
                            timeouts=sm["timeouts"]),
                      duration=duration, window=window,
                      interval=float(flat["measure.sample_interval_s"]), mss=mss)
        if keep:
            dst = os.path.join(keep, f"{case.name}_s{seed}")
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(tmp, dst)
        epochs = m.pop("_epochs")
        return {"case": case.name, "seed": seed, "command": ["simrun", sc, *sets],
                "engine_version": summ.get("engine_version"), "events": summ.get("events"),
                "wall_time_s": round(wall, 3), "dcfair_metrics": sm, "metrics": m,
                "epochs": epochs}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", help="comma-separated case names (default: all)")
    ap.add_argument("--seeds", help="comma-separated seeds (default: each case's own)")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--merge", action="store_true", help="keep the other cases' runs in --out")
    ap.add_argument("--keep", metavar="DIR", help="keep each run's raw output under DIR")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="scenario override on this side only (experiments; recorded in OUT)")
    a = ap.parse_args(argv)
    for b, feat in ((SIMRUN, ""), (SIMTRACE, " --features trace")):
        if not os.path.exists(b):
            print(f"run_dcfair.py: {os.path.relpath(b, common.REPO)} missing; cargo build --release "
                  f"-p dcfair-sim{feat} --example {os.path.basename(b)}", file=sys.stderr)
            return 2
    cases = C.select(a.cases)
    try:
        seeds_override = [int(s) for s in a.seeds.split(",") if s] if a.seeds else None
    except ValueError:
        print("run_dcfair.py: --seeds must be integers", file=sys.stderr)
        return 2

    probe = cases[0].scenario
    known = {k: engine_knows(probe, k, v) for k, v in PIN_WHEN_KNOWN}
    log("engine knows: " + ", ".join(f"{k} {'yes' if ok else 'no'}" for k, ok in known.items()))

    runs, failures, pending = [], [], []
    for c in cases:
        flat = tomlmap.load(os.path.join(common.REPO, c.scenario), [*c.overrides, *a.set])
        pins = [f"{k}={v}" for k, v in PIN_WHEN_KNOWN if known[k] and k not in flat]
        for s in seeds_override or c.seeds:
            try:
                r = run_one(c, s, pins, a.keep, a.set)
            except Pending as e:
                log(f"{c.name}: pending, dcfair lacks a key: {e}")
                pending.append({"case": c.name, "needs": list(c.needs), "error": str(e)})
                break
            except (RunFailed, M.MetricsError, OSError, KeyError, ValueError) as e:
                log(f"{c.name} seed {s}: FAILED: {e}")
                failures.append({"case": c.name, "seed": s, "error": str(e)})
                continue
            r["pinned"] = pins
            log(f"{c.name} seed {s}: {common.summary_line(r)}")
            runs.append(r)

    names = [c.name for c in C.CASES]
    kept_runs, kept_fail, kept_pend = (common.keep_other_cases(a.out, [c.name for c in cases])
                                       if a.merge else ([], [], []))
    all_runs = common.case_order(kept_runs + runs, names)
    doc = {
        "description": "dcfair side of the ns-3 dumbbell validation (validation/ns3/README.md); "
                       "metrics by metrics.py from simrun's time series and simtrace's event log",
        "simulator": "dcfair",
        "side_overrides": a.set,
        "generated_utc": common.now_utc(),
        "git_commit": common.git_commit(),
        "host": common.host(),
        "engine_knows": known,
        "cases": {c.name: {"scenario": c.scenario, "scenario_sha256":
                           common.sha256(os.path.join(common.REPO, c.scenario)),
                           "title": c.title, "overrides": list(c.overrides)}
                  for c in C.CASES},
        "metric_notes": M.__doc__,
        "aggregate": M.aggregate(all_runs) if all_runs else {},
        "runs": all_runs,
        "failures": common.case_order(kept_fail + failures, names),
        "pending": common.case_order(kept_pend + pending, names),
    }
    common.write_json(a.out, doc)
    log(f"wrote {os.path.relpath(a.out, common.REPO)} ({len(runs)} runs, {len(pending)} cases pending, "
        f"{len(failures)} failed)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
