"""What the command line shows a person: the live progress line and the summary table.

Rules: progress goes to stderr, only on a terminal, never with --quiet or when ``CI`` is set;
tables go to stdout, drawn with rich on a terminal and as plain aligned text otherwise (pipes,
files, CI logs), so scripts see no escape codes. Scripts should read summary.json, not this.
"""

from __future__ import annotations

import math
import os
import sys
from typing import Any, Dict, List, Optional, Sequence, TextIO, Tuple

#: The metrics shown after a run, in this order, when the scenario reports them.
MAIN_METRICS = (
    "utilization",
    "jain_index",
    "starved_fraction",
    "throughput_variance_pkts",
    "max_starvation_s",
    "drops",
)


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def live_progress_wanted(quiet: bool, stream: Optional[TextIO] = None) -> bool:
    """A live progress line only on a terminal, not with --quiet, not under CI."""
    stream = sys.stderr if stream is None else stream
    if quiet or os.environ.get("CI") or os.environ.get("TERM") == "dumb":
        return False
    return is_terminal(stream)


def format_value(v: Any, digits: int = 4) -> str:
    """Short, exact-enough numbers: integers with thousands separators, floats to `digits`."""
    if isinstance(v, bool) or v is None:
        return str(v).lower()
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return str(v)
        if v == 0:
            return "0"
        if abs(v) >= 1000:
            return f"{v:,.1f}"
        return f"{v:.{digits}g}"
    return str(v)


def format_rate(per_s: float) -> str:
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if per_s >= div:
            return f"{per_s / div:.2f} {unit}"
    return f"{per_s:.0f} "


class _LiveLine:
    """One stderr line redrawn in place (``\\r`` + erase); ``close()`` erases it."""

    def __init__(self, label: str, stream: Optional[TextIO] = None):
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        self._drawn = False

    def _draw(self, text: str) -> None:
        self.stream.write("\r\x1b[K" + text)
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False


class ProgressLine(_LiveLine):
    """``progress(sim_time_s, duration_s, events, wall_time_s)`` drawing one live stderr line."""

    def __init__(self, label: str, stream: Optional[TextIO] = None):
        super().__init__(label, stream)
        self._last: Optional[Tuple[float, int]] = None  # (wall, events) at the previous call

    def __call__(self, sim_time_s: float, duration_s: float, events: int, wall_time_s: float) -> None:
        if self._last is not None and wall_time_s > self._last[0]:
            rate = (events - self._last[1]) / (wall_time_s - self._last[0])
        else:
            rate = events / wall_time_s if wall_time_s > 0 else 0.0
        self._last = (wall_time_s, events)
        pct = 100.0 * sim_time_s / duration_s if duration_s > 0 else 0.0
        line = (
            f"{self.label}: {sim_time_s:,.2f} / {duration_s:,.2f} s simulated ({pct:3.0f}%)"
            f"  {format_rate(rate)}events/s  {wall_time_s:,.1f} s"
        )
        self._draw(line)


def format_duration(seconds: float) -> str:
    """``75.2`` -> ``1:15``; ``3725`` -> ``1:02:05``; under a minute ``42 s``."""
    s = int(round(max(0.0, seconds)))
    if s < 60:
        return f"{s} s"
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


class PointsProgress(_LiveLine):
    """``on_done(done, total, point, record)`` for :func:`dcfair.runner.run_points`: one live
    stderr line (points done, reused, failed, elapsed, time left). Construct it only when
    :func:`live_progress_wanted`; failures are also printed as lines of their own.

    Time left is the remaining points times the mean wall time per point run so far (points
    reused from an earlier sweep do not count), which already reflects the parallelism."""

    def __init__(self, label: str, stream: Optional[TextIO] = None, clock=None):
        import time

        super().__init__(label, stream)
        self._clock = clock or time.monotonic
        self._t0 = self._clock()
        self._first_run: Optional[int] = None  # points done when the first real run ended
        self.cached = 0
        self.failed = 0

    def __call__(self, done: int, total: int, point: Any, rec: Dict[str, Any]) -> None:
        now = self._clock()
        if rec.get("cached"):
            self.cached += 1
        elif not rec.get("ok"):
            self.failed += 1
            self.stream.write("\r\x1b[K" + f"{self.label}: FAILED {_point_name(point)}: {rec.get('message')}\n")
        ran = done - self.cached
        parts = [f"{self.label}: {done}/{total} points"]
        if self.cached:
            parts.append(f"{self.cached} reused")
        if self.failed:
            parts.append(f"{self.failed} failed")
        el = now - self._t0
        parts.append(f"{format_duration(el)} elapsed")
        if 0 < ran and done < total and el > 0:
            parts.append(f"~{format_duration(el / ran * (total - done))} left")
        self._draw(", ".join(parts))


def _point_name(point: Any) -> str:
    labels = getattr(point, "labels", ())
    seed = getattr(point, "seed", None)
    return ", ".join([f"{k}={v}" for k, v in labels] + ([f"seed {seed}"] if seed is not None else []))


def mean_std(values: Sequence[float]) -> str:
    """``"mean ± std"`` (sample std over seeds); one value as itself; ``-`` for none."""
    import numpy as np

    a = np.asarray(list(values), dtype=float)
    if len(a) == 0:
        return "-"
    if len(a) == 1:
        return format_value(float(a[0]), 3)
    mean, std = float(a.mean()), float(a.std(ddof=1))
    if std <= 1e-12 * max(1.0, abs(mean)):  # rounding noise of equal values
        std = 0.0

    def fmt(x: float, digits: int) -> str:
        return f"{x:,.0f}" if abs(x) >= 100 else format_value(x, digits)

    return f"{fmt(mean, 3)} ± {fmt(std, 2)}"


def summary_rows(summary: Dict[str, Any]) -> List[Tuple[str, str]]:
    """(name, value) rows for the main metrics present in a summary, then events and wall time."""
    metrics = summary.get("metrics") or {}
    rows = [(k, format_value(metrics[k])) for k in MAIN_METRICS if k in metrics]
    for k in ("events", "wall_time_s"):
        if k in summary:
            rows.append((k, format_value(summary[k])))
    return rows


def summary_title(summary: Dict[str, Any]) -> str:
    parts = [str(summary.get("scenario", "?"))]
    if "seed" in summary:
        parts.append(f"seed {summary['seed']}")
    if "sim_time_s" in summary:
        parts.append(f"{format_value(float(summary['sim_time_s']))} s simulated")
    return ", ".join(parts)


def print_table(
    title: str,
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    stream: Optional[TextIO] = None,
    footer: Optional[str] = None,
) -> None:
    """A table with a title: rich on a terminal, plain aligned columns otherwise."""
    stream = sys.stdout if stream is None else stream
    if is_terminal(stream) and not os.environ.get("CI"):
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title, title_justify="left")
        for i, h in enumerate(header):
            table.add_column(h, justify="left" if i == 0 else "right", no_wrap=True)
        for r in rows:
            table.add_row(*r)
        console = Console(file=stream)
        console.print(table)
        if footer:
            console.print(footer, style="dim", highlight=False)
        return
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    fmt = lambda r: "  ".join(  # noqa: E731
        (str(x).ljust(w) if i == 0 else str(x).rjust(w)) for i, (x, w) in enumerate(zip(r, widths))
    ).rstrip()
    lines = [title, fmt(header)] + [fmt(r) for r in rows]
    if footer:
        lines.append(footer)
    stream.write("\n".join(lines) + "\n")
    stream.flush()


def print_summary(summary: Dict[str, Any], out_dir: Optional[str], stream: Optional[TextIO] = None) -> None:
    from dcfair.results import OPTIONAL_FILES, RUN_FILES

    files = "summary.json, flows.csv, ports.csv"
    for name in (*RUN_FILES, *OPTIONAL_FILES):
        if out_dir and os.path.exists(os.path.join(out_dir, name)):
            files += f", {name}"
    footer = f"results: {out_dir}/ ({files})" if out_dir else None
    print_table(summary_title(summary), ("metric", "value"), summary_rows(summary), stream, footer)


#: The columns of jobs.csv shown after a run with jobs, and their headings.
JOB_COLUMNS = (
    ("job", "job"),
    ("collective", "collective"),
    ("hosts", "hosts"),
    ("iterations_done", "iterations"),
    ("iteration_mean_s", "iteration mean (s)"),
    ("completion_s", "completion (s)"),
    ("alone_completion_s", "alone (s)"),
    ("slowdown", "slowdown"),
)


def job_rows(jobs_csv: str) -> List[Tuple[str, ...]]:
    """The rows of the job table from the text of jobs.csv: an empty field (no value) is "-"."""
    import csv
    import io

    def cell(col: str, v: str) -> str:
        if v == "":
            return "-"
        if col in ("job", "collective"):
            return v
        if col == "iterations_done" or col == "hosts":
            return format_value(int(v))
        return format_value(float(v))

    out = []
    for r in csv.DictReader(io.StringIO(jobs_csv)):
        row = tuple(cell(c, r[c]) for c, _ in JOB_COLUMNS)
        if "iterations" in r:
            row = row[:3] + (f"{row[3]} of {r['iterations']}",) + row[4:]
        out.append(row)
    return out


def print_jobs(summary: Dict[str, Any], out_dir: Optional[str], stream: Optional[TextIO] = None) -> None:
    """The job table (jobs.csv), after the summary of a run with jobs; nothing without."""
    path = os.path.join(out_dir, "jobs.csv") if out_dir else None
    if not path or not os.path.exists(path):
        return
    with open(path) as f:
        rows = job_rows(f.read())
    jain = (summary.get("metrics") or {}).get("jobs_jain_slowdown")
    footer = "slowdown: completion time over the job's completion time alone; Jain's index of the slowdowns: " + (
        format_value(jain) if jain is not None else "-")
    print_table("jobs (jobs.csv)", [h for _, h in JOB_COLUMNS], rows, stream, footer)
