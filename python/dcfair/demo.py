"""`make demo`: one scenario under each queue discipline, a few seeds, side by side.

    python -m dcfair.demo [--scenario FILE] [--disciplines droptail,red,sfq,drr,hcf]
                          [--seeds 3] [--duration 20] [--jobs N] [--out out/demo]

Runs every (discipline, seed) pair in a process pool over the available cores, each into
``OUT/<discipline>/seed<N>/``, reads back the summary.json files, writes one row per run to
``OUT/runs.csv`` and prints mean +- standard deviation (over seeds) of the main metrics per
discipline. The default is the HCF paper's long-flow setting (400 TCP flows through one
20-packet bottleneck) shortened to 20 simulated seconds.

Exit status: 0 all runs succeeded; 2 invalid input; 1 some run failed; 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from dcfair.display import MAIN_METRICS, format_value, print_table

DISCIPLINES = ("droptail", "red", "sfq", "drr", "hcf")
SCENARIO = Path("scenarios/papers/hcf/longflows.toml")


def default_scenario() -> Path:
    """The scenario from the working directory, else from the source tree of this package."""
    if SCENARIO.exists():
        return SCENARIO
    return Path(__file__).resolve().parents[2] / SCENARIO


def available_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def run_one(scenario: str, discipline: str, seed: int, duration_s: float, out: str) -> Dict[str, Any]:
    """One run in a worker process; failures come back as data, never as pickled exceptions."""
    from dcfair import api

    t0 = time.perf_counter()
    try:
        api.run(scenario, overrides=[("queue.kind", discipline), ("sim.duration_s", duration_s)], seed=seed, out=out)
        return {"ok": True, "wall_s": time.perf_counter() - t0}
    except api.InvalidInput as e:
        return {"ok": False, "exit": 2, "message": f"invalid input: {e}"}
    except RuntimeError as e:
        return {"ok": False, "exit": 1, "message": f"internal error: {e}"}
    except Exception as e:  # noqa: BLE001 - reported, not hidden
        return {"ok": False, "exit": 1, "message": f"{type(e).__name__}: {e}"}


def mean_std(values: Sequence[float]) -> str:
    import numpy as np

    a = np.asarray(values, dtype=float)
    if len(a) == 0:
        return "-"
    if len(a) == 1:
        return format_value(float(a[0]), 3)
    mean, std = float(a.mean()), float(a.std(ddof=1))
    if std <= 1e-12 * max(1.0, abs(mean)):  # rounding noise of equal values
        std = 0.0
    return f"{format_value(mean, 3)} ± {format_value(std, 2)}"


def comparison(rows: List[Dict[str, Any]], disciplines: Sequence[str]):
    """(header, table rows): one row per metric, one column per discipline, mean ± std over seeds."""
    import pandas as pd

    df = pd.DataFrame(rows)
    metrics = [m for m in MAIN_METRICS if m in df.columns] + ["wall_time_s"]
    present = [d for d in disciplines if d in set(df["discipline"])]
    table = []
    for m in metrics:
        table.append([m] + [mean_std(df.loc[df["discipline"] == d, m].dropna()) for d in present])
    return ["metric"] + present, table


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m dcfair.demo", description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", type=Path, default=None, help=f"default: {SCENARIO}")
    ap.add_argument("--disciplines", default=",".join(DISCIPLINES), help="comma-separated queue.kind values")
    ap.add_argument("--seeds", type=int, default=3, help="seeds 1..N per discipline (default 3)")
    ap.add_argument("--duration", type=float, default=20.0, help="simulated seconds (default 20)")
    ap.add_argument("--jobs", type=int, default=available_cores(), help="worker processes (default: cores)")
    ap.add_argument("--out", type=Path, default=Path("out/demo"))
    args = ap.parse_args(argv)
    if args.seeds < 1 or args.jobs < 1 or args.duration <= 0:
        ap.error("--seeds and --jobs must be >= 1 and --duration > 0")
    return args


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    scenario = str(args.scenario or default_scenario())
    disciplines = [d.strip() for d in args.disciplines.split(",") if d.strip()]
    jobs = [(d, s, args.out / d / f"seed{s}") for d in disciplines for s in range(1, args.seeds + 1)]
    print(
        f"dcfair demo: {scenario}, {len(disciplines)} disciplines x {args.seeds} seeds, "
        f"{format_value(args.duration)} s simulated each, {args.jobs} worker(s)",
        file=sys.stderr,
        flush=True,
    )
    t0 = time.perf_counter()
    # Check the scenario once per discipline here: a bad file or key is one message, not 15.
    from dcfair import api

    try:
        for d in disciplines:
            api.load_scenario(scenario, overrides=[("queue.kind", d), ("sim.duration_s", args.duration)])
    except api.InvalidInput as e:
        print(f"dcfair demo: invalid input: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:
        print(f"dcfair demo: internal error: {e}", file=sys.stderr)
        return 1
    results: Dict[tuple, Dict[str, Any]] = {}
    ex = ProcessPoolExecutor(max_workers=min(args.jobs, len(jobs)))
    try:
        futures = {ex.submit(run_one, scenario, d, s, args.duration, str(out)): (d, s) for d, s, out in jobs}
        for i, fut in enumerate(as_completed(futures), 1):
            d, s = futures[fut]
            r = results[(d, s)] = fut.result()
            status = f"{r['wall_s']:.1f} s" if r["ok"] else "FAILED"
            print(f"  [{i:>{len(str(len(jobs)))}}/{len(jobs)}] {d:<9} seed {s}: {status}", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        ex.shutdown(wait=False, cancel_futures=True)
        print("dcfair demo: interrupted", file=sys.stderr)
        return 130
    ex.shutdown()

    rows = []
    for d, s, out in jobs:
        if results[(d, s)]["ok"]:
            summary = json.loads((out / "summary.json").read_text())
            rows.append({"discipline": d, "seed": s, **summary.get("metrics", {}),
                         "events": summary.get("events"), "wall_time_s": summary.get("wall_time_s")})
    failed = [r for r in results.values() if not r["ok"]]
    if rows:
        import pandas as pd

        pd.DataFrame(rows).to_csv(args.out / "runs.csv", index=False)
        header, table = comparison(rows, disciplines)
        print_table(
            f"{Path(scenario).name}: mean ± std over {args.seeds} seed(s), {format_value(args.duration)} s simulated",
            header,
            table,
            footer=f"one row per run: {args.out / 'runs.csv'}; per-run files: {args.out}/<discipline>/seed<N>/",
        )
    if failed:
        print(f"dcfair demo: {len(failed)} of {len(jobs)} runs failed:", file=sys.stderr)
        for msg, n in Counter(r["message"] for r in failed).most_common():
            print(f"  {n} x {msg}", file=sys.stderr)
        return 2 if all(r["exit"] == 2 for r in failed) else 1
    print(f"dcfair demo: {len(jobs)} runs in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
