"""Reproductions of the papers' experiments: ``dcfair reproduce NAME [--quick] [--out DIR]``.

Rules:

- A reproduction is a :class:`Reproduction`: a name (``hcf-fig4``), the paper and figure, a
  ``plan(quick)`` that lists the :class:`~dcfair.runner.Point` runs it needs, and an
  ``analyze(study)`` that draws the figure and returns the paper's :class:`Claim` s checked
  against dcfair's numbers. One module per paper (``reproduce/hcf.py``, ...) registers its
  reproductions with :func:`register`.
- Runs go through :func:`dcfair.runner.run_points`: local cores, each point written atomically,
  finished points skipped when the reproduction runs again.
- Every reproduction writes into its output directory ``figure.png``, ``claims.json`` (the
  claims, the paper's values, dcfair's mean/std/min/max over seeds, whether each holds and by
  what criterion) and ``results.csv`` (one row per run: labels, seed, every scalar metric).
- ``analyze`` may also fill ``study.table``: rows (dicts) of a side-by-side table, e.g. every
  discipline on the paper's scenarios. It is written to ``table.csv`` and into ``claims.json``
  under ``"table"``; it holds measurements, not claims.
- ``--quick`` runs a smaller plan (shorter runs, fewer points, fewer seeds) so tests can run
  every reproduction; its claims are still checked, and say that they come from a quick run.
- A claim *holds* by an explicit, stated criterion. Claims that do not hold are reported as
  such, never hidden; the mechanism docs explain the disagreements.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from dcfair.runner import Point

REGISTRY: Dict[str, "Reproduction"] = {}
_MODULES = ("dcfair.reproduce.hcf", "dcfair.reproduce.hcf_incast", "dcfair.reproduce.outcast", "dcfair.reproduce.fqcodel",
            "dcfair.reproduce.fairq", "dcfair.reproduce.xpass_credit", "dcfair.reproduce.xpass_fabric")


@dataclass
class Claim:
    """One statement of a paper, checked against dcfair."""

    id: str
    claim: str
    paper_value: str
    #: dcfair's per-seed values of the quantity the claim is about.
    values: List[float]
    holds: bool
    criterion: str
    unit: str = ""

    def to_json(self) -> Dict[str, Any]:
        vals = [v for v in self.values if v is not None and not (isinstance(v, float) and math.isnan(v))]
        stats = {
            "mean": statistics.fmean(vals) if vals else None,
            "std": statistics.stdev(vals) if len(vals) > 1 else (0.0 if vals else None),
            "min": min(vals) if vals else None,
            "max": max(vals) if vals else None,
            "n": len(vals),
            "values": vals,
        }
        return {"id": self.id, "claim": self.claim, "paper_value": self.paper_value, "unit": self.unit,
                "dcfair": stats, "holds": bool(self.holds), "criterion": self.criterion}


@dataclass
class Study:
    """What ``analyze`` gets: the runs, as records, with helpers to slice them."""

    name: str
    out: Path
    quick: bool
    records: List[Dict[str, Any]]
    #: Optional side-by-side table that ``analyze`` fills (see the module rules).
    table: Optional[List[Dict[str, Any]]] = None

    def rows(self, **labels) -> List[Dict[str, Any]]:
        """Successful runs whose labels match ``labels``."""
        out = []
        for r in self.records:
            lab = dict(r["point"].labels)
            if r.get("ok") and all(lab.get(k) == v for k, v in labels.items()):
                out.append(r)
        return out

    def metric(self, key: str, **labels) -> List[float]:
        """Per-seed values of ``summary.metrics[key]`` for the runs matching ``labels``."""
        vals = []
        for r in self.rows(**labels):
            v = r["summary"]["metrics"].get(key)
            vals.append(float("nan") if v is None else float(v))
        return vals

    def flows(self, **labels):
        """flows.csv of every matching run, concatenated, with the labels and seed as columns."""
        import pandas as pd

        frames = []
        for r in self.rows(**labels):
            df = pd.read_csv(Path(r["dir"]) / "flows.csv")
            for k, v in r["point"].labels:
                df[k] = v
            df["seed"] = r["point"].seed
            frames.append(df)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


@dataclass
class Reproduction:
    name: str
    paper: str
    figure: str
    title: str
    plan: Callable[[bool], List[Point]]
    analyze: Callable[[Study], List[Claim]]


def register(r: Reproduction) -> Reproduction:
    REGISTRY[r.name] = r
    return r


def load_all() -> Dict[str, Reproduction]:
    from importlib import import_module

    for m in _MODULES:
        import_module(m)
    return REGISTRY


def mean(xs: Sequence[float]) -> float:
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    return statistics.fmean(xs) if xs else float("nan")


def run(name: str, out: Path, quick: bool = False, jobs: Optional[int] = None, progress: bool = True) -> Dict[str, Any]:
    """Runs reproduction ``name`` into ``out``; returns the claims document."""
    from dcfair import runner

    reps = load_all()
    r = reps[name]
    out = Path(out)
    points = r.plan(quick)
    from dcfair import display

    # The same live line as sweeps: on a terminal only, never in pipes or CI.
    on_done = display.PointsProgress(name) if progress and display.live_progress_wanted(False) else None
    try:
        records = runner.run_points(points, out / "runs", jobs=jobs, on_done=on_done)
    finally:
        if on_done is not None:
            on_done.close()
    failed = [rec for rec in records if not rec.get("ok")]
    if failed:
        msgs = sorted({rec.get("message", "?") for rec in failed})
        raise RuntimeError(f"{len(failed)} of {len(records)} runs failed: " + "; ".join(msgs[:3]))
    study = Study(name=name, out=out, quick=quick, records=records)
    _write_results_csv(study)
    claims = r.analyze(study)
    seeds = sorted({rec["point"].seed for rec in records})
    doc = {
        "reproduction": name,
        "paper": r.paper,
        "figure": r.figure,
        "title": r.title,
        "quick": quick,
        "runs": len(records),
        "seeds": seeds,
        "figure_file": "figure.png",
        "claims": [c.to_json() for c in claims],
    }
    if study.table is not None:
        import pandas as pd

        doc["table"] = study.table
        tmp_csv = out / ".table.csv.tmp"
        pd.DataFrame(study.table).to_csv(tmp_csv, index=False)
        tmp_csv.replace(out / "table.csv")
    tmp = out / ".claims.json.tmp"
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(out / "claims.json")
    return doc


def _write_results_csv(study: Study) -> None:
    import pandas as pd

    rows = []
    for rec in study.records:
        row = dict(rec["point"].labels)
        row["seed"] = rec["point"].seed
        for k, v in rec["summary"]["metrics"].items():
            if isinstance(v, (int, float)) or v is None:
                row[k] = v
        row["events"] = rec["summary"].get("events")
        rows.append(row)
    pd.DataFrame(rows).to_csv(study.out / "results.csv", index=False)


def save_figure(fig, study: Study) -> None:
    """Saves a matplotlib figure as the reproduction's figure.png (atomically)."""
    tmp = study.out / ".figure.png.tmp"
    fig.savefig(tmp, dpi=110, bbox_inches="tight", format="png")
    tmp.replace(study.out / "figure.png")
    import matplotlib.pyplot as plt

    plt.close(fig)


def pyplot():
    """matplotlib.pyplot with a non-interactive backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
