"""The report's interactive views: Bokeh models, their runtime inlined into the page.

Rules:

- Offline: Bokeh's JavaScript is inlined into the page (only the bundles the page's models
  need: :func:`inline_bundle`), and nothing in a view fetches a URL.
- Every view is drawn from result files only, like the rest of the report.
- Bounded: a page keeps at most :data:`MAX_TABLE_ROWS` flow rows and :data:`MAX_SERIES_POINTS`
  samples of delivered bytes. Larger results are downsampled (every k-th flow, every k-th
  sample, the last one always kept), and the view says so and by how much.
- Every interactive model carries a ``name`` (``flows_table``, ``flows_filter``, ``flows_run``,
  ``flow_delivered``, ``sweep_metric``, ``sweep_points``), which is how the browser test and a
  user's script find it (``get_model_by_name`` of the page's Bokeh documents).
- A view that has no data says so in a sentence instead of drawing an empty plot.
"""

from __future__ import annotations

import json
import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

#: Flow rows kept in one page's flows table, over all runs it shows.
MAX_TABLE_ROWS = 20_000
#: Samples of delivered bytes kept in one page, over all flows and runs.
MAX_SERIES_POINTS = 200_000

#: The flows table's columns: (flows.csv column, title, number format or None for text).
FLOW_COLUMNS = (
    ("flow_id", "flow", "0"),
    ("group", "group", None),
    ("kind", "kind", None),
    ("src", "src", None),
    ("dst", "dst", None),
    ("pkts_in_window", "packets in window", "0,0"),
    ("window_rate", "packets/s in window", "0,0"),
    ("bytes_delivered", "bytes delivered", "0,0"),
    ("fct_s", "FCT (s)", "0.000000"),
    ("max_gap_s", "longest gap (s)", "0.0000"),
    ("retransmits", "retransmits", "0"),
    ("timeouts", "timeouts", "0"),
)


def _nan_to_none(xs) -> List[Any]:
    return [None if isinstance(x, float) and math.isnan(x) else x for x in xs]


def _stride(n: int, budget: int) -> int:
    """Every how many items to keep so that at most ``budget`` of ``n`` remain."""
    return max(1, math.ceil(n / max(1, budget)))


def window_rate(flows, window_s: Optional[float]) -> List[float]:
    """Each flow's packets delivered per second in the measurement window (``pkts_in_window``
    over the window's length); NaN without a window."""
    if not window_s or "pkts_in_window" not in flows.columns:
        return [float("nan")] * len(flows)
    return (flows["pkts_in_window"].to_numpy(dtype=float) / window_s).tolist()


def flows_view(runs: Sequence[Tuple[str, Any, Any, Optional[float]]]) -> Tuple[Any, List[str]]:
    """The flows view of one or more runs: ``runs`` is a list of (label, flows table,
    time series table or None, window in seconds). A sortable, filterable table of flows (a
    choice of run when there are several); selecting a flow draws its delivered bytes over
    time. Returns (the Bokeh layout, notes on what was downsampled)."""
    import numpy as np
    from bokeh.layouts import column, row
    from bokeh.models import (CDSView, ColumnDataSource, CustomJS, DataTable, Div, IndexFilter, NumberFormatter,
                              Select, StringFormatter, TableColumn, TextInput)
    from bokeh.plotting import figure

    notes: List[str] = []
    total = sum(len(f) for _, f, _, _ in runs)
    keep = _stride(total, MAX_TABLE_ROWS)
    if keep > 1:
        notes.append(f"The flows table keeps every {keep}th flow of each run ({math.ceil(total / keep):,} of "
                     f"{total:,} rows): the page stays small. The CSV files have every flow.")
    table: Dict[str, List[Any]] = {c: [] for c, _, _ in FLOW_COLUMNS}
    table["run"] = []
    series: Dict[str, List[Any]] = {"run": [], "flow": [], "t": [], "v": []}
    n_series = 0
    for label, flows, ts, window in runs:
        if ts is not None and len(ts):
            n_series += int((ts["metric"].astype(str) == "delivered_bytes").sum())
    skip = _stride(n_series, MAX_SERIES_POINTS)
    if skip > 1:
        notes.append(f"Delivered bytes are drawn from every {skip}th sample ({n_series:,} samples in the runs).")
    for r, (label, flows, ts, window) in enumerate(runs):
        f = flows.iloc[::keep]
        rate = window_rate(f, window)
        for c, _, fmt in FLOW_COLUMNS:
            if c == "window_rate":
                table[c] += _nan_to_none(rate)
            elif c in f.columns:
                vals = f[c].tolist()
                table[c] += _nan_to_none(vals) if fmt else [("" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)) for v in vals]
            else:
                table[c] += [None] * len(f)
        table["run"] += [r] * len(f)
        if ts is None or not len(ts):
            continue
        d = ts[ts["metric"].astype(str) == "delivered_bytes"]
        if not len(d):
            continue
        wanted = set(f["flow_id"].tolist())
        d = d[d["flow_id"].isin(wanted)]
        for fid, g in d.groupby("flow_id", sort=True):
            t = g["time_s"].to_numpy(dtype=float)
            v = g["value"].to_numpy(dtype=float)
            idx = np.arange(0, len(t), skip)
            if len(t) and idx[-1] != len(t) - 1:
                idx = np.append(idx, len(t) - 1)
            series["run"].append(r)
            series["flow"].append(int(fid))
            series["t"].append(t[idx].tolist())
            series["v"].append(v[idx].tolist())
    src = ColumnDataSource(table, name="flows_source")
    filt = IndexFilter(indices=[i for i, r in enumerate(table["run"]) if r == 0])
    cols = [TableColumn(field=c, title=t, formatter=NumberFormatter(format=fmt) if fmt else StringFormatter())
            for c, t, fmt in FLOW_COLUMNS]
    dt = DataTable(source=src, columns=cols, view=CDSView(filter=filt), sortable=True, reorderable=False, selectable=True,
                   width=1100, height=320, index_position=None, name="flows_table")
    text = TextInput(title="Filter (group, kind, src or dst contains):", value="", width=360, name="flows_filter")
    labels = [lab for lab, _, _, _ in runs]
    pick = Select(title="Run:", value=labels[0], options=labels, width=360, name="flows_run", visible=len(runs) > 1)
    refilter = CustomJS(args=dict(src=src, filt=filt, text=text, pick=pick, labels=labels), code="""
        const q = text.value_input.trim().toLowerCase();
        const run = labels.indexOf(pick.value);
        const d = src.data, idx = [];
        for (let i = 0; i < d.run.length; i++) {
            if (d.run[i] !== run) continue;
            if (q && !['group', 'kind', 'src', 'dst'].some(c => String(d[c][i]).toLowerCase().includes(q))) continue;
            idx.push(i);
        }
        filt.indices = idx;
        src.selected.indices = [];
        src.change.emit();
    """)
    text.js_on_change("value_input", refilter)
    pick.js_on_change("value", refilter)
    ser = ColumnDataSource(series, name="flows_series")
    sel = ColumnDataSource({"t": [], "v": []}, name="flow_delivered_source")
    have = bool(series["flow"])
    p = figure(height=260, width=1100, x_axis_label="simulated time (s)", y_axis_label="bytes delivered",
               title="Select a flow in the table: its delivered bytes over time" if have else
               "No delivered-bytes series in these results (measure.sample_interval_s turns it on)",
               name="flow_delivered", tools="pan,box_zoom,wheel_zoom,reset,save")
    p.step("t", "v", source=sel, mode="after", line_width=1.6)
    show = CustomJS(args=dict(src=src, ser=ser, sel=sel, plot=p), code="""
        const i = src.selected.indices[0];
        if (i === undefined) { sel.data = {t: [], v: []}; return; }
        const run = src.data.run[i], flow = src.data.flow_id[i], s = ser.data;
        for (let k = 0; k < s.flow.length; k++) {
            if (s.run[k] === run && s.flow[k] === flow) {
                sel.data = {t: s.t[k], v: s.v[k]};
                plot.title.text = `flow ${flow} (${src.data.src[i]} -> ${src.data.dst[i]}): bytes delivered over time`;
                return;
            }
        }
        sel.data = {t: [], v: []};
        plot.title.text = `flow ${flow}: no samples of its delivered bytes`;
    """)
    src.selected.js_on_change("indices", show)
    head = Div(text="<p>Click a column's title to sort; click a flow to draw its delivered bytes.</p>")
    return column(head, row(text, pick), dt, p), notes


def sweep_view(df, keys: Sequence[str], metrics: Sequence[str]) -> Any:
    """Every run of a sweep as a point: a metric (chosen in a menu) against the first varied
    key, one point per seed with its seed, run and other keys on hover, and the mean per value
    as a line."""
    from bokeh.layouts import column
    from bokeh.models import ColumnDataSource, CustomJS, HoverTool, Select
    from bokeh.plotting import figure

    k = keys[0]
    values = [str(v) for v in dict.fromkeys(df[k].tolist())]
    data: Dict[str, List[Any]] = {"x": [str(v) for v in df[k].tolist()], "seed": df["seed"].tolist(),
                                  "run": df["run_dir"].astype(str).tolist()}
    for o in keys[1:]:
        data[o] = [str(v) for v in df[o].tolist()]
    for m in metrics:
        data[m] = _nan_to_none(df[m].astype(float).tolist())
    m0 = metrics[0]
    data["y"] = list(data[m0])
    src = ColumnDataSource(data, name="sweep_source")
    means = {m: [_mean([y for x, y in zip(data["x"], data[m]) if x == v]) for v in values] for m in metrics}
    msrc = ColumnDataSource({"x": values, "y": list(means[m0]), **{f"mean_{m}": means[m] for m in metrics}})
    p = figure(x_range=values, height=340, width=1100, x_axis_label=k, y_axis_label=m0, name="sweep_points",
               tools="pan,box_zoom,wheel_zoom,reset,save", title=f"{m0} against {k}: every seed, and the mean")
    p.line("x", "y", source=msrc, line_width=1.4, color="#57606a", legend_label="mean over seeds")
    p.scatter("x", "y", source=src, size=8, alpha=0.7, legend_label="one run")
    tips = [(k, "@x"), ("seed", "@seed"), ("value", "@y")] + [(o, f"@{{{o}}}") for o in keys[1:]] + [("run", "@run")]
    p.add_tools(HoverTool(tooltips=tips))
    menu = Select(title="Metric:", value=m0, options=list(metrics), width=360, name="sweep_metric")
    menu.js_on_change("value", CustomJS(args=dict(src=src, msrc=msrc, plot=p, key=k), code="""
        const m = this.value;
        src.data.y = src.data[m].slice(); src.change.emit();
        msrc.data.y = msrc.data['mean_' + m].slice(); msrc.change.emit();
        plot.left[0].axis_label = m;
        plot.title.text = `${m} against ${key}: every seed, and the mean`;
    """))
    return column(menu, p)


def _mean(xs: Sequence[Optional[float]]) -> Optional[float]:
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def render(models: Sequence[Any]) -> Tuple[str, List[str]]:
    """The page's Bokeh runtime (script tags, inlined) and one HTML fragment per model."""
    from bokeh.embed import components

    script, divs = components(list(models))
    return inline_bundle(models) + script, list(divs)


def inline_bundle(models: Sequence[Any]) -> str:
    """Bokeh's JavaScript, inlined: only the bundles ``models`` need (no MathJax, no WebGL
    unless a model asks for them)."""
    from bokeh.embed.bundle import bundle_for_objs_and_resources
    from bokeh.resources import INLINE

    b = bundle_for_objs_and_resources(list(models), INLINE)
    if b.js_urls or b.css_urls:
        raise RuntimeError(f"Bokeh's inline bundle names URLs: {b.js_urls + b.css_urls}")
    return b._render_js() + b._render_css()


def to_json(x: Any) -> str:
    return json.dumps(x, allow_nan=False, default=str)
