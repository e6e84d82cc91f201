"""`Result`: one run's summary and tables as pandas DataFrames.

    res = dcfair.run(scenario, seed=2)              # or dcfair.Result.load("out/hcf")
    res.summary["metrics"]["jain_index"]            # the parsed summary.json
    res.metrics["jain_index"]                       # the same, shorter
    res.flows                                       # flows.csv as a DataFrame
    res.ports                                       # ports.csv
    res.fabric                                      # fabric.csv (every port of the network)
    res.port_drops                                  # port_drops.csv (each flow's drops per port)
    res.timeseries                                  # timeseries.csv (empty unless sampled)
    res.series("queue_pkts")                        # one metric, wide: time x port (or flow)
    res.groups, res.group_windows                   # groups.csv, group_windows.csv
    res.group_goodput(window=True)                  # wide: end_s x group, bits/s
    res.drop_runs                                   # drop_runs.csv (port blackout)
    res.drop_run_histogram(by="input")              # wide: run_length x input port
    res.trace                                       # trace.csv (packet events at one port)
    res.subflows                                    # subflows.csv (MPTCP subflows)
    res.jobs, res.job_iterations                    # jobs.csv, job_iterations.csv (collectives)
    res.paths                                       # paths.csv (the ports each flow crosses)

Rules:

- After a run the columns come from the engine as numpy arrays that own the engine's buffers
  (no row-by-row copy); strings arrive as categorical codes plus their levels and become
  pandas ``category`` columns. Integer counters are ``int64``; optional floats are NaN where the
  CSV has an empty field; the time series' ``flow_id`` and the fabric's ``level`` are nullable
  ``Int64``.
- :meth:`Result.load` reads the same files back with the same dtypes, so code that works on a
  fresh run works on a finished one.
- ``result["metrics"]`` (any summary key) still works, so code written when ``dcfair.run``
  returned the summary dict keeps working.
- The optional tables (:data:`OPTIONAL_TABLES`: only when the scenario asks for them,
  docs/metrics.md) are empty DataFrames with their columns when absent, so code can filter and
  pivot them without checking first. So are the tables every run writes (:data:`RUN_TABLES`)
  when read from a directory (or an engine) from before they were.
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
    "fabric": ("port", "node", "tier", "peer", "queue_kind"),
    "port_drops": ("port", "group", "reason"),
    "timeseries": ("metric", "port"),
    "groups": ("group",),
    "group_windows": ("group",),
    "drop_runs": ("port", "by", "key"),
    "trace": ("event", "input", "group", "reason"),
    "subflows": ("src", "dst", "path"),
    "jobs": ("job", "collective", "placed_hosts"),
    "job_iterations": ("job",),
    "paths": ("port", "note"),
}
#: Columns that are floats even when every value in a file happens to be whole.
FLOATS = {
    "flows": ("start_s", "end_s", "fct_s", "max_gap_s", "size_bytes"),
    "ports": ("utilization",),
    "fabric": ("delay_s",),
    "timeseries": ("time_s", "value"),
    "groups": ("start_s", "end_s", "goodput_bps", "goodput_bps_per_flow"),
    "group_windows": ("start_s", "end_s", "goodput_bps", "goodput_bps_per_flow"),
    "drop_runs": ("share",),
    "trace": ("time_s",),
    "jobs": ("start_s", "iteration_mean_s", "iteration_p50_s", "iteration_max_s", "completion_s", "alone_completion_s",
             "slowdown"),
    "job_iterations": ("start_s", "end_s", "time_s"),
}
TIMESERIES_COLUMNS = ("time_s", "metric", "port", "flow_id", "value")
#: The tables every run writes beside flows.csv and ports.csv (``<name>.csv``), and their columns.
RUN_TABLES = {
    "fabric": ("port", "node", "tier", "level", "peer", "rate_bps", "delay_s", "queue_kind", "measured"),
    "port_drops": ("port", "flow_id", "group", "reason", "pkts", "bytes"),
}
#: Their file names.
RUN_FILES = tuple(f"{name}.csv" for name in RUN_TABLES)
#: The optional tables a run may have, by file stem (``<name>.csv``), and their columns.
OPTIONAL_TABLES = {
    "timeseries": TIMESERIES_COLUMNS,
    "groups": ("start_s", "end_s", "group", "flows", "delivered_bytes", "goodput_bps", "goodput_bps_per_flow"),
    "group_windows": ("start_s", "end_s", "group", "flows", "delivered_bytes", "goodput_bps", "goodput_bps_per_flow"),
    "drop_runs": ("port", "by", "key", "flows", "run_length", "episodes", "share"),
    "trace": ("time_s", "event", "input", "flow_id", "group", "seq", "size_bytes", "reason", "queue_pkts", "queue_bytes"),
    "subflows": ("connection_id", "subflow", "flow_id", "src", "dst", "sport", "path", "bytes_sent", "bytes_delivered",
                 "retransmits", "timeouts"),
    "jobs": ("job", "collective", "hosts", "size_bytes", "iterations", "iterations_done", "start_s", "iteration_mean_s",
             "iteration_p50_s", "iteration_max_s", "completion_s", "alone_completion_s", "slowdown", "placed_hosts"),
    "job_iterations": ("job", "iteration", "start_s", "end_s", "time_s"),
    "paths": ("flow_id", "hop", "port", "note"),
}
#: Their file names: written when a run has the table, removed from its directory when not.
OPTIONAL_FILES = tuple(f"{name}.csv" for name in OPTIONAL_TABLES)

#: The time-series metrics in the engine's code order (its categories, present or not).
TIMESERIES_METRICS = ("queue_pkts", "queue_bytes", "delivered_bytes", "cwnd_bytes")
#: Categories in the engine's code order, present in a file or not.
FIXED_LEVELS = {
    ("timeseries", "metric"): TIMESERIES_METRICS,
    ("trace", "event"): ("arrive", "enqueue", "drop", "dequeue"),
}
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
    if table == "fabric":
        dtype["level"] = "Int64"  # empty for a switch no host reaches
    # Exact floats: pandas < 3 needs "round_trip" (its default parser may be 1 ulp off); pandas
    # 3 parses exactly by default and deprecates the argument.
    exact = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
    df = pd.read_csv(path, dtype=dtype, keep_default_na=False, na_values=[""], **exact)
    for c in cats:
        if c in df.columns:
            values = df[c]
            # Categories in order of first appearance, like the engine's codes.
            levels = [v for v in pd.unique(values) if isinstance(v, str)]
            fixed = FIXED_LEVELS.get((table, c), ())
            levels = list(fixed) + [v for v in levels if v not in fixed]
            df[c] = pd.Categorical(values, categories=levels)
    return df


def empty_table(table: str):
    """An optional table (or one of :data:`RUN_TABLES`) with no rows: its columns with the
    dtypes a run gives."""
    import pandas as pd

    cats, floats = CATEGORICAL.get(table, ()), FLOATS.get(table, ())
    cols = {}
    for c in {**OPTIONAL_TABLES, **RUN_TABLES}[table]:
        if c in cats:
            cols[c] = pd.Categorical([])
        elif c in floats:
            cols[c] = pd.Series([], dtype="float64")
        elif (table, c) in (("timeseries", "flow_id"), ("fabric", "level")):
            cols[c] = pd.Series([], dtype="Int64")
        else:
            cols[c] = pd.Series([], dtype="int64")
    return pd.DataFrame(cols)


def empty_timeseries():
    return empty_table("timeseries")


class Result:
    """What one run produced; see the module docstring."""

    def __init__(self, summary: Dict[str, Any], flows, ports, timeseries=None, dir: Optional[Path] = None,
                 scenario=None, optional: Optional[Dict[str, Any]] = None):
        self.summary = summary
        self.flows = flows
        self.ports = ports
        tables = dict(optional or {})
        if timeseries is not None:
            tables["timeseries"] = timeseries
        #: fabric.csv: every port of the network as built, with its node's tier and its link.
        self.fabric = tables.get("fabric", None)
        #: port_drops.csv: the packets each flow lost at each measured port, by reason.
        self.port_drops = tables.get("port_drops", None)
        #: timeseries.csv: queues, flows' delivered bytes, cwnd (``measure.sample_interval_s``).
        self.timeseries = tables.get("timeseries", None)
        #: groups.csv: each flow group's goodput per sample interval.
        self.groups = tables.get("groups", None)
        #: group_windows.csv: the same averaged over ``measure.group_window_s``.
        self.group_windows = tables.get("group_windows", None)
        #: drop_runs.csv: consecutive-drop runs at ``measure.drop_runs_ports``.
        self.drop_runs = tables.get("drop_runs", None)
        #: trace.csv: packet events at ``measure.trace.port``.
        self.trace = tables.get("trace", None)
        #: subflows.csv: the subflows of the MPTCP connections (``tcp.mptcp.subflows > 1``).
        self.subflows = tables.get("subflows", None)
        #: jobs.csv: one row per job (a collective pattern): iterations, completion, slowdown.
        self.jobs = tables.get("jobs", None)
        #: job_iterations.csv: every iteration of every job that started.
        self.job_iterations = tables.get("job_iterations", None)
        #: paths.csv: the ports each flow's data crosses (``measure.sample_interval_s``).
        self.paths = tables.get("paths", None)
        for name in (*OPTIONAL_TABLES, *RUN_TABLES):
            if getattr(self, name) is None:
                setattr(self, name, empty_table(name))
        #: Where the files are (``out=`` of the run, or the directory loaded), else None.
        self.dir = None if dir is None else Path(dir)
        #: The :class:`dcfair.Scenario` that ran, when known.
        self.scenario = scenario

    @classmethod
    def from_engine(cls, summary_json: str, tables: Dict[str, Any], dir=None, scenario=None) -> "Result":
        optional = {name: frame_from_columns(tables[name]) for name in (*OPTIONAL_TABLES, *RUN_TABLES) if name in tables}
        return cls(
            json.loads(summary_json),
            frame_from_columns(tables["flows"]),
            frame_from_columns(tables["ports"]),
            None,
            dir,
            scenario,
            optional,
        )

    @classmethod
    def load(cls, dir: "str | os.PathLike[str]") -> "Result":
        """Reads a run's directory (``summary.json``, ``flows.csv``, ``ports.csv``, and the
        files of :data:`RUN_FILES` and :data:`OPTIONAL_FILES` present)."""
        d = Path(dir)
        summary = json.loads((d / "summary.json").read_text())
        optional = {name: read_table(d / f"{name}.csv", name) for name in (*OPTIONAL_TABLES, *RUN_TABLES)
                    if (d / f"{name}.csv").exists()}
        return cls(
            summary,
            read_table(d / "flows.csv", "flows"),
            read_table(d / "ports.csv", "ports"),
            None,
            d,
            None,
            optional,
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

    def group_goodput(self, window: bool = False, per_flow: bool = False):
        """Each flow group's goodput in bits/s, wide: index ``end_s`` (the end of each sample
        interval, or of each window with ``window=True``), one column per group; the group's
        aggregate, or its mean per flow with ``per_flow=True``."""
        t = self.group_windows if window else self.groups
        wide = t.pivot(index="end_s", columns="group", values="goodput_bps_per_flow" if per_flow else "goodput_bps")
        wide.columns = [str(c) for c in wide.columns]
        return wide

    def drop_run_histogram(self, by: str = "input", port: Optional[str] = None, share: bool = False):
        """Consecutive-drop runs at one port, wide: index ``run_length`` (every length from 1 to
        the longest), one column per input port (``by="input"``) or flow group (``by="group"``),
        values the number of runs (their share of the key's runs with ``share=True``; divide by
        ``flows`` for a per-flow mean).
        ``port`` may be left out when only one port was probed."""
        runs = self.drop_runs
        ports = [str(p) for p in runs["port"].unique()]
        if port is None:
            if len(ports) > 1:
                raise ValueError(f"drop runs were counted at {len(ports)} ports ({', '.join(ports)}): name one")
            port = ports[0] if ports else None
        part = runs[(runs["port"] == port) & (runs["by"] == by)]
        keys = [str(k) for k in part["key"].unique()]
        wide = part.pivot(index="run_length", columns="key", values="share" if share else "episodes")
        wide.columns = [str(c) for c in wide.columns]
        # The file lists only the lengths that occurred: every length from 1 gets a row here.
        longest = int(part["run_length"].max()) if len(part) else 0
        return wide[keys].reindex(range(1, longest + 1)).rename_axis("run_length").fillna(0)

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
