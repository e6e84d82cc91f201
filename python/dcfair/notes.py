"""Notes where a reader of a report would stop: results that look like a mistake and are not.

Rules:

- A note states what the result files show and, where they show it, why; it never guesses.
  Each note names the numbers it rests on.
- Identical results: two values of the varied key whose runs give the same value of every
  metric in every seed are named together.
- Controls that never acted: a discipline whose own drop and mark reasons count zero in every
  run of its value (CoDel never dropped at its control law, RED never dropped or marked early,
  ...). For CoDel the note gives the largest standing delay the measured ports saw
  (``max_queue_bytes`` over the port's rate), against CoDel's target.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Dict, List, Sequence

#: queue.kind -> (its own drop reasons, whether it marks, what acting means).
CONTROLS = {
    "codel": (("codel",), True, "CoDel's control law never dropped or marked"),
    "fq_codel": (("codel",), True, "FQ-CoDel's control law never dropped or marked (it acted only as a fair queue)"),
    "red": (("red_early", "red_forced"), True, "RED never dropped or marked early"),
    "afd": (("flow_limit",), False, "AFD never dropped a flow above its fair share"),
}

#: CoDel's default target (``queue.codel.target_us``, docs/mechanisms/fq_codel.md), seconds.
CODEL_TARGET_S = 0.005


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def sweep_notes(df, keys: Sequence[str], metrics: Sequence[str], d: Path) -> List[str]:
    """Notes on a sweep's table ``df`` (one row per run) over ``keys``: identical values of the
    one varied key, and disciplines whose controls never acted."""
    varied = [k for k in keys if df[k].nunique() > 1]
    if len(varied) != 1 or not metrics:
        return []
    k = varied[0]
    out: List[str] = []
    by_value: Dict[str, Any] = {str(v): g.sort_values("seed") for v, g in df.groupby(df[k].astype(str), sort=False)}
    vals = list(by_value)
    seen = set()
    for i, a in enumerate(vals):
        twins = [b for b in vals[i + 1:] if b not in seen and _identical(by_value[a], by_value[b], metrics)]
        if twins:
            seen.update(twins)
            names = ", ".join([a, *twins])
            out.append(f"{k} = {names}: identical results, every metric of sweep.csv equal in every seed "
                       f"({len(by_value[a])} seed(s)).")
    if k == "queue.kind":
        for v, g in by_value.items():
            c = CONTROLS.get(v)
            if c is None:
                continue
            reasons, marks, what = c
            if "drops" not in g.columns:
                continue  # no drop counts at all: nothing to say
            # sweep.csv has a drops_<reason> column for every reason some run counted: one
            # that is missing counted zero everywhere
            cols = [f"drops_{r}" for r in reasons if f"drops_{r}" in g.columns]
            acted = float(g[cols].to_numpy(dtype=float).sum()) if cols else 0.0
            if marks and "marks" in g.columns:
                acted += float(g["marks"].fillna(0).sum())
            if acted == 0:
                out.append(f"{v}: {what} in any of its {len(g)} run(s)" + _codel_why(v, g, d) + ".")
    return out


def _identical(a, b, metrics: Sequence[str]) -> bool:
    if len(a) != len(b) or list(a["seed"]) != list(b["seed"]):
        return False
    return all(_same(x, y) for m in metrics for x, y in zip(a[m].tolist(), b[m].tolist()))


def _codel_why(kind: str, g, d: Path) -> str:
    """Why CoDel's law never acted, from the first run's measured ports: the largest standing
    delay against the target."""
    if kind not in ("codel", "fq_codel"):
        return ""
    from dcfair.results import read_table

    worst = None
    for rd in g["run_dir"]:
        f = d / rd / "ports.csv"
        if not f.exists():
            continue
        p = read_table(f, "ports")
        if "max_queue_bytes" not in p.columns or "rate_bps" not in p.columns:
            continue
        delay = (p["max_queue_bytes"].astype(float) * 8.0 / p["rate_bps"].astype(float)).max()
        worst = delay if worst is None else max(worst, delay)
    if worst is None:
        return ""
    target = _codel_target_s(kind, d, g["run_dir"].iloc[0])
    rel = "below" if worst < target else "at or above"
    return (f": the largest queue any measured port held would take {worst * 1e3:.3g} ms to drain at its rate, "
            f"{rel} CoDel's {target * 1e3:g} ms target")


def _codel_target_s(kind: str, d: Path, run_dir: str) -> float:
    """CoDel's target in the run ``run_dir`` of sweep ``d``: the sweep's scenario with the
    run's overrides (``point.json``), else the default."""
    from dcfair.scenario import Scenario

    sc_file, pj = d / "scenario.toml", d / run_dir / "point.json"
    if not sc_file.exists():
        return CODEL_TARGET_S
    overrides = json.loads(pj.read_text()).get("overrides", []) if pj.exists() else []
    sc = Scenario(sc_file.read_text(), os.fspath(sc_file)).with_overrides(overrides)
    return float(sc.get(f"queue.{kind}.target_us", CODEL_TARGET_S * 1e6)) / 1e6
