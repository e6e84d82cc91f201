"""`Result`: one run's summary and tables as pandas DataFrames.

    res = dcfair.run(scenario, seed=2)              # or dcfair.Result.load("out/hcf")
    res.summary["metrics"]["jain_index"]            # the parsed summary.json
    res.metrics["jain_index"]                       # the same, shorter
    res.flows                                       # flows.csv as a DataFrame
    res.ports                                       # ports.csv
    res.timeseries                                  # timeseries.csv (empty unless sampled)
    res.series("queue_pkts")                        # one metric, wide: time x port (or flow)

Rules:

- After a run the columns come from the engine as numpy arrays that own the engine's buffers
  (no row-by-row copy); strings arrive as categorical codes plus their levels and become
  pandas ``category`` columns. Integer counters are ``int64``; optional floats are NaN where the
  CSV has an empty field; the time series' ``flow_id`` is a nullable ``Int64``.
- :meth:`Result.load` reads the same files back with the same dtypes, so code that works on a
  fresh run works on a finished one.
- ``result["metrics"]`` (any summary key) still works, so code written when ``dcfair.run``
  returned the summary dict keeps working.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

#: Columns that hold names (categorical), by table.
CATEGORICAL = {
    "flows": ("src", "dst", "kind", "group"),
    "ports": ("port", "queue_kind"),
    "timeseries": ("metric", "port"),
}
#: Columns that are floats even when every value in a file happens to be whole.
FLOATS = {
    "flows": ("start_s", "end_s", "fct_s", "max_gap_s"),
    "ports": ("utilization",),
    "timeseries": ("time_s", "value"),
}
TIMESERIES_COLUMNS = ("time_s", "metric", "port", "flow_id", "value")
#: The time-series metrics in the engine's code order (its categories, present or not).
TIMESERIES_METRICS = ("queue_pkts", "queue_bytes", "delivered_bytes", "cwnd_bytes")
_U64_MAX = 2**64 - 1


def frame_from_columns(columns: List[Tuple[str, str, Any]]):
    """A DataFrame from the engine's ``(name, kind, data)`` columns (see ``_engine.run_tables``)."""
    import numpy as np
    import pandas as pd

    data: Dict[str, Any] = {}
    for name, kind, col in columns:
        if kind == "cat":
            codes, levels = col
            # u32::MAX (missing) reads as -1 in int32, which is pandas' code for NaN.
            data[name] = pd.Categorical.from_codes(codes.view(np.int32), categories=list(levels))
        elif kind == "u64":
            data[name] = col.view(np.int64)
        elif kind == "opt_u64":
            missing = col == np.uint64(_U64_MAX)
            data[name] = pd.arrays.IntegerArray(col.view(np.int64), missing)
        elif kind in ("f64", "opt_f64"):
            data[name] = col
        else:  # pragma: no cover - a newer engine than this package
            raise RuntimeError(f"unknown column kind {kind!r} for {name!r}")
    return pd.DataFrame(data, copy=False)


def read_table(path: Path, table: str):
    """A result CSV as a DataFrame with the dtypes a fresh run gives."""
    import pandas as pd

    cats = CATEGORICAL.get(table, ())
    dtype = {c: "str" for c in cats}
    dtype.update({c: "float64" for c in FLOATS.get(table, ())})
    if table == "timeseries":
        dtype["flow_id"] = "Int64"
    # Exact floats: pandas < 3 needs "round_trip" (its default parser may be 1 ulp off); pandas
    # 3 parses exactly by default and deprecates the argument.
    exact = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
    df = pd.read_csv(path, dtype=dtype, keep_default_na=False, na_values=[""], **exact)
    for c in cats:
        if c in df.columns:
            values = df[c]
            # Categories in order of first appearance, like the engine's codes.
            levels = [v for v in pd.unique(values) if isinstance(v, str)]
            if (table, c) == ("timeseries", "metric"):
                levels = list(TIMESERIES_METRICS) + [v for v in levels if v not in TIMESERIES_METRICS]
            df[c] = pd.Categorical(values, categories=levels)
    return df


def empty_timeseries():
    import pandas as pd

    return pd.DataFrame({
        "time_s": pd.Series([], dtype="float64"),
        "metric": pd.Categorical([]),
        "port": pd.Categorical([]),
        "flow_id": pd.Series([], dtype="Int64"),
        "value": pd.Series([], dtype="float64"),
    })


class Result:
    """What one run produced; see the module docstring."""

    def __init__(self, summary: Dict[str, Any], flows, ports, timeseries=None, dir: Optional[Path] = None,
                 scenario=None):
        self.summary = summary
        self.flows = flows
        self.ports = ports
        self.timeseries = empty_timeseries() if timeseries is None else timeseries
        #: Where the files are (``out=`` of the run, or the directory loaded), else None.
        self.dir = None if dir is None else Path(dir)
        #: The :class:`dcfair.Scenario` that ran, when known.
        self.scenario = scenario

    @classmethod
    def from_engine(cls, summary_json: str, tables: Dict[str, Any], dir=None, scenario=None) -> "Result":
        ts = tables.get("timeseries")
        return cls(
            json.loads(summary_json),
            frame_from_columns(tables["flows"]),
            frame_from_columns(tables["ports"]),
            None if ts is None else frame_from_columns(ts),
            dir,
            scenario,
        )

    @classmethod
    def load(cls, dir: "str | os.PathLike[str]") -> "Result":
        """Reads a run's directory (``summary.json``, ``flows.csv``, ``ports.csv``, and
        ``timeseries.csv`` if present)."""
        d = Path(dir)
        summary = json.loads((d / "summary.json").read_text())
        ts = d / "timeseries.csv"
        return cls(
            summary,
            read_table(d / "flows.csv", "flows"),
            read_table(d / "ports.csv", "ports"),
            read_table(ts, "timeseries") if ts.exists() else None,
            d,
        )

    # ------------------------------------------------------------------ conveniences

    @property
    def metrics(self) -> Dict[str, Any]:
        return self.summary.get("metrics", {})

    @property
    def seed(self) -> Optional[int]:
        return self.summary.get("seed")

    def series(self, metric: str):
        """One time-series metric in wide form: index ``time_s``, one column per port
        (``queue_pkts``, ``queue_bytes``) or per flow id (``delivered_bytes``, ``cwnd_bytes``)."""
        ts = self.timeseries
        part = ts[ts["metric"] == metric]
        by = "port" if metric.startswith("queue_") else "flow_id"
        wide = part.pivot(index="time_s", columns=by, values="value")
        if by == "port":
            wide.columns = [str(c) for c in wide.columns]
        return wide

    def __getitem__(self, key: str) -> Any:
        """``result["metrics"]`` is ``result.summary["metrics"]`` (the pre-Result API)."""
        return self.summary[key]

    def __contains__(self, key: str) -> bool:
        return key in self.summary

    def get(self, key: str, default: Any = None) -> Any:
        return self.summary.get(key, default)

    def __repr__(self) -> str:
        s = self.summary
        where = f", dir={os.fspath(self.dir)!r}" if self.dir else ""
        return (f"<Result {s.get('scenario')!r} seed={s.get('seed')} {len(self.flows)} flows, "
                f"{len(self.ports)} ports, {len(self.timeseries)} samples{where}>")
