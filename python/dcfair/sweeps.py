"""Sweeps: one scenario over the product of varied keys and seeds, as one tidy table.

    dcfair sweep SCENARIO.toml --vary queue.kind=droptail,hcf --vary queue.limit_pkts=10,20,50 \\
                 --seeds 3 [--jobs N] [--ray ADDRESS] [--out DIR]

    table = dcfair.sweep("scenarios/papers/hcf/longflows.toml",
                         vary={"queue.kind": ["droptail", "hcf"], "queue.limit_pkts": [10, 20, 50]},
                         seeds=3, overrides={"sim.duration_s": 20}, out="out/buffers")

Rules:

- The points are the product of the varied values (in the order given, first key outermost)
  and the seeds ``1..N`` (``--seeds N``; the API also takes a list). Every point's scenario is
  validated before anything runs, so a bad key or value stops the sweep with exit status 2
  and the point named, and nothing runs.
- Points run through :func:`dcfair.runner.run_points`: on all local cores by default, or on Ray
  (``--ray ADDRESS``, ``--ray local``). Each finished point is written atomically under
  ``OUT/runs/``; a killed sweep loses no finished point and, run again, skips them.
- The directory holds ``scenario.toml`` (the base scenario's text), ``sweep.json`` (what was
  varied, the seeds, the base overrides), ``runs/<point>/`` (each run's files), and the table,
  written when every point is done: ``sweep.parquet`` and ``sweep.csv``, one row per point and
  seed: the varied keys (one column each, named by the key), ``seed``, every scalar metric of
  ``summary.json`` (``drops_by_reason`` flattened to ``drops_<reason>``, 0 where absent),
  ``events``, ``sim_time_s``, ``wall_time_s`` and ``run_dir`` (relative to the sweep's directory).
- ``--vary`` syntax: ``KEY=V1,V2,...``; values are TOML literals (bare words are strings);
  commas inside ``[...]`` or quotes do not split. A missing ``=``, an empty key, an empty list
  or value, or a key varied twice is invalid input naming the ``--vary`` at fault.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from dcfair.outdir import atomic_write, temp_for
from dcfair.overrides import Overrides, to_literal
from dcfair.scenario import Scenario, parse_literal

#: A varied key and its values as override literals (strings).
Vary = List[Tuple[str, List[str]]]


def split_values(text: str) -> List[str]:
    """``"a,[1, 2],'x,y'"`` -> ``["a", "[1, 2]", "'x,y'"]``: commas split outside brackets and quotes."""
    out, cur, depth, quote = [], [], 0, None
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    out.append("".join(cur).strip())
    return out


def parse_vary(items: Iterable[str]) -> Vary:
    """``["queue.kind=droptail,hcf", ...]`` -> ``[("queue.kind", ["droptail", "hcf"]), ...]``;
    :class:`dcfair.InvalidInput` naming the ``--vary`` at fault."""
    from dcfair.errors import InvalidInput

    out: Vary = []
    for item in items:
        key, sep, values = item.partition("=")
        key = key.strip()
        where = f"--vary {item}"
        if not sep or not key:
            raise InvalidInput(where, "expected KEY=V1,V2,... (e.g. --vary queue.kind=droptail,hcf)")
        if any(c.isspace() for c in key) or key.startswith(".") or key.endswith(".") or ".." in key:
            raise InvalidInput(where, f"{key!r} is not a dotted key such as queue.kind")
        vals = split_values(values)
        if not values.strip():
            raise InvalidInput(where, f"no values for {key} (expected {key}=V1,V2,...)")
        if any(v == "" for v in vals):
            raise InvalidInput(where, f"an empty value in the list for {key}")
        out.append((key, vals))
    return _check_keys(out)


def _check_keys(vary: Vary) -> Vary:
    from dcfair.errors import InvalidInput

    seen = set()
    for key, vals in vary:
        if key in seen:
            raise InvalidInput(f"--vary {key}", "the key is varied twice; give all its values in one --vary")
        if key == "seed":
            raise InvalidInput("--vary seed", "use --seeds N to vary the seed")
        if not vals:
            raise InvalidInput(f"--vary {key}", f"no values for {key}")
        seen.add(key)
    return vary


def normalize_vary(vary: Union[Mapping[str, Sequence[Any]], Iterable[Any]]) -> Vary:
    """The API's ``vary``: a mapping key -> values (Python values or literals), or ``--vary``
    strings, or ``(key, values)`` pairs."""
    from dcfair.errors import InvalidInput

    if isinstance(vary, Mapping):
        items: Iterable[Any] = vary.items()
    else:
        items = list(vary)
        if all(isinstance(x, str) for x in items):
            return parse_vary(items)
    out: Vary = []
    for key, values in items:
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise InvalidInput(f"vary {key}", f"expected a list of values, got {values!r}")
        out.append((str(key), [to_literal(v) for v in values]))
    return _check_keys(out)


def _seeds(seeds: Union[int, Iterable[int]]) -> List[int]:
    from dcfair.errors import InvalidInput

    if isinstance(seeds, bool):
        raise InvalidInput("--seeds", f"expected a number of seeds, got {seeds!r}")
    if isinstance(seeds, int):
        if seeds < 1:
            raise InvalidInput("--seeds", f"must be at least 1, got {seeds}")
        return list(range(1, seeds + 1))
    out = [int(s) for s in seeds]
    if not out:
        raise InvalidInput("--seeds", "no seeds")
    if len(set(out)) != len(out) or any(not 0 <= s < 2**64 for s in out):
        raise InvalidInput("--seeds", f"seeds must be distinct integers in [0, 2^64), got {out}")
    return out


def _label(v: str) -> Any:
    """A varied value as it goes into the table: its TOML value (number, bool, string)."""
    x = parse_literal(v)
    return x if isinstance(x, (int, float, bool, str)) else v


def plan(scenario: Scenario, vary: Vary, seeds: Sequence[int], scenario_file: Path):
    """``(points, name)``: the :class:`~dcfair.runner.Point` s of a sweep, every combination
    validated (combos outermost, seeds inner), and the scenario's name."""
    import itertools

    from dcfair import _engine
    from dcfair.errors import InvalidInput
    from dcfair.runner import Point

    keys = [k for k, _ in vary]
    points = []
    name = None
    for combo in itertools.product(*[vals for _, vals in vary]):
        ov = list(scenario.overrides) + list(zip(keys, combo))
        try:
            info = _engine.load_scenario(scenario.text, scenario.origin, ov, True)  # network built too
            name = name or info["name"]
        except InvalidInput as e:
            where = ", ".join(f"{k}={v}" for k, v in zip(keys, combo))
            raise InvalidInput(e.key, f"{e.reason} (in the sweep point {where})") from None
        labels = {k: _label(v) for k, v in zip(keys, combo)}
        for s in seeds:
            points.append(Point.make(str(scenario_file), ov, s, origin=_origin(scenario), **labels))
    return points, name


def _origin(scenario: Scenario) -> str:
    """Where the scenario's relative paths resolve from: its own file (absolute, since runs
    read the sweep's copy of the text), else its origin as given."""
    return os.path.abspath(scenario.path) if scenario.path is not None else scenario.origin


def table(records: List[Dict[str, Any]], keys: Sequence[str], base: Path):
    """The tidy table (a DataFrame) of the successful records."""
    import pandas as pd

    rows = []
    reasons = set()
    for rec in records:
        if not rec.get("ok"):
            continue
        lab = dict(rec["point"].labels)
        row: Dict[str, Any] = {k: lab.get(k) for k in keys}
        row["seed"] = rec["point"].seed
        summary = rec["summary"]
        for k, v in summary.get("metrics", {}).items():
            if k == "drops_by_reason" and isinstance(v, dict):
                for reason, n in v.items():
                    row[f"drops_{reason}"] = n
                    reasons.add(f"drops_{reason}")
            elif isinstance(v, (int, float)) or v is None:
                row[k] = v
        for k in ("events", "sim_time_s", "wall_time_s"):
            row[k] = summary.get(k)
        row["run_dir"] = os.path.relpath(rec["dir"], base)
        row["engine_build"] = summary.get("engine_build")
        rows.append(row)
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    for r in reasons:
        df[r] = df[r].fillna(0).astype("int64")
    tail = ["events", "sim_time_s", "wall_time_s", "run_dir", "engine_build"]
    from dcfair.display import MAIN_METRICS

    metric_cols = [c for c in df.columns if c not in keys and c != "seed" and c not in tail]
    first = [m for m in MAIN_METRICS if m in metric_cols]
    rest = sorted(c for c in metric_cols if c not in first)
    df = df[list(keys) + ["seed"] + first + rest + tail]
    for k in keys:  # a key with mixed types (20 and "baseline") becomes text, for parquet
        kinds = {type(v) for v in df[k] if v is not None}
        if len(kinds) > 1 and not kinds <= {int, float}:
            df[k] = df[k].astype(str)
    return df


def write_table(df, out: Path) -> None:
    """``sweep.parquet`` and ``sweep.csv`` in ``out``, each atomically."""
    tmp = temp_for(out / "sweep.parquet")
    df.to_parquet(tmp, index=False)
    os.replace(tmp, out / "sweep.parquet")
    atomic_write(out / "sweep.csv", df.to_csv(index=False))


def default_out(name: str) -> Path:
    return Path("out") / f"{name}-sweep"


def sweep(
    scenario: Union[Scenario, str, "os.PathLike[str]"],
    vary: Union[Mapping[str, Sequence[Any]], Iterable[Any]],
    seeds: Union[int, Iterable[int]] = 1,
    *,
    overrides: Overrides = None,
    jobs: Optional[int] = None,
    ray: Optional[str] = None,
    out: Union[str, "os.PathLike[str]", None] = None,
    progress: Union[bool, Callable, None] = None,
    meta: Optional[Dict[str, Any]] = None,
):
    """Runs a sweep (see the module docstring) and returns its table as a DataFrame, with
    ``df.attrs["dir"]`` the sweep's directory. ``progress``: ``None`` a live line on a
    terminal only, ``False`` nothing, or an ``on_done(done, total, point, record)`` callable.
    ``meta``: extra keys for ``sweep.json`` (the report shows ``title`` and ``description``).
    ``df.attrs["tally"]`` (a :class:`dcfair.runner.Tally`) counts the points run, reused, rerun
    as stale and repaired. Raises :class:`dcfair.InvalidInput` before running anything if any
    point is invalid, and ``RuntimeError`` (after writing every point that succeeded, with the
    table as ``.table``) if some point failed."""
    from dcfair import api, display, runner
    from dcfair.errors import InvalidInput

    sc = api.as_scenario(scenario, overrides)
    vary_ = normalize_vary(vary)
    seed_list = _seeds(seeds)
    if jobs is not None and (isinstance(jobs, bool) or int(jobs) < 1):
        raise InvalidInput("--jobs", f"must be at least 1, got {jobs}")
    if out is None:  # the name comes from the engine, so validate one point first
        _, name = plan(sc, [(k, v[:1]) for k, v in vary_], seed_list[:1], Path("scenario.toml"))
        out = default_out(name)
    out_dir = Path(out)
    scenario_file = (out_dir / "scenario.toml").resolve()
    points, name = plan(sc, vary_, seed_list, scenario_file)  # raises before anything is written
    if ray is not None:
        runner.check_ray(ray)
    from dcfair.outdir import check_out_dir

    check_out_dir(out_dir, "--out", keep=True)  # makes it; before any run: a result that cannot be written is not computed
    if not scenario_file.exists() or scenario_file.read_text() != sc.text:
        atomic_write(scenario_file, sc.text)
    info = {
        **(meta or {}),
        "scenario": name,
        "scenario_file": os.fspath(sc.path) if sc.path is not None else sc.origin,
        "overrides": [list(o) for o in sc.overrides],
        "vary": [[k, [_label(v) for v in vals]] for k, vals in vary_],
        "seeds": seed_list,
        "points": len(points),
        "backend": "ray" if ray is not None else "local",
        "engine_version": _engine_version(),
        "engine_build": runner.engine_build(),
    }
    atomic_write(out_dir / "sweep.json", json.dumps(info, indent=1) + "\n")

    if progress is None:
        on_done = display.PointsProgress(f"sweep {name}") if display.live_progress_wanted(False) else None
    elif progress is False:
        on_done = None
    else:
        on_done = progress
    tally = runner.Tally()
    try:
        records = runner.run_points(points, out_dir / "runs", jobs=jobs, on_done=on_done, ray=ray, tally=tally)
    finally:
        if isinstance(on_done, display.PointsProgress):
            on_done.close()
    keys = [k for k, _ in vary_]
    df = table(records, keys, out_dir)
    if not df.empty:
        write_table(df, out_dir)
    df.attrs["dir"] = os.fspath(out_dir)
    df.attrs["name"] = name
    df.attrs["cached"] = tally.reused
    df.attrs["tally"] = tally
    failed = [r for r in records if not r.get("ok")]
    if failed:
        msgs = Counter(r.get("message", "?") for r in failed)
        detail = "; ".join(f"{n} x {m}" for m, n in msgs.most_common(3))
        err = RuntimeError(f"{len(failed)} of {len(records)} sweep points failed: {detail}")
        err.table = df  # type: ignore[attr-defined]
        raise err
    return df


def _engine_version() -> str:
    from dcfair._engine import version

    return version()


def summarize(df, keys: Sequence[str]):
    """(header, rows) for the terminal: one row per combination of the varied values, the main
    metrics as mean ± std over seeds."""
    from dcfair.display import MAIN_METRICS, mean_std

    metrics = [m for m in MAIN_METRICS if m in df.columns]
    rows = []
    for combo, g in df.groupby(list(keys), sort=False, dropna=False):
        combo = combo if isinstance(combo, tuple) else (combo,)
        rows.append([str(v) for v in combo] + [mean_std(g[m].dropna()) for m in metrics])
    return list(keys) + metrics, rows
