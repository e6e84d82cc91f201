"""The report's interactive views: Bokeh models, their runtime inlined into the page.

Rules:

- Offline: Bokeh's JavaScript is inlined into the page (only the bundles the page's models
  need: :func:`inline_bundle`), and nothing in a view fetches a URL.
- Every view is drawn from result files only, like the rest of the report.
- Bounded: a page keeps at most :data:`MAX_TABLE_ROWS` flow rows and :data:`MAX_SERIES_POINTS`
  samples of delivered bytes and of the queues on the flows' paths. Larger results are downsampled (every k-th flow, every k-th
  sample, the last one always kept), and the view says so and by how much.
- Every interactive model carries a ``name`` (``flows_table``, ``flows_filter``, ``flows_run``,
  ``flow_delivered``, ``flow_path_queues``, ``sweep_metric``, ``sweep_points``), which is how the browser test and a
  user's script find it (``get_model_by_name`` of the page's Bokeh documents).
- A view that has no data says so in a sentence instead of drawing an empty plot.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

#: Flow rows kept in one page's flows table, over all runs it shows.
MAX_TABLE_ROWS = 20_000
#: Samples of delivered bytes and of the queues on the flows' paths kept in one page, over all
#: flows, ports and runs.
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


class FlowRun(NamedTuple):
    """One run of the flows view: its label, its flows table, its time series (or None), its
    measurement window in seconds (or None) and its paths table (``paths.csv``, or None)."""
    label: str
    flows: Any
    ts: Any = None
    window: Optional[float] = None
    paths: Any = None


def _path_lists(paths, wanted) -> Dict[int, Tuple[List[str], str]]:
    """Each wanted flow's ports in hop order and the reason it has none (``paths.csv``)."""
    out: Dict[int, Tuple[List[str], str]] = {}
    if paths is None or not len(paths):
        return out
    p = paths[paths["flow_id"].isin(wanted)]
    for fid, g in p.groupby("flow_id", sort=True):
        hops = g[g["port"].astype(str) != ""].sort_values("hop")
        note = "" if len(hops) else str(g["note"].astype(str).iloc[0])
        out[int(fid)] = (hops["port"].astype(str).tolist(), note)
    return out


def _thin(t, v, skip: int) -> Tuple[Any, Any]:
    """Every ``skip``-th sample of (t, v), the last one always kept, as float arrays (which the
    page stores in binary, not as JSON text)."""
    import numpy as np

    idx = np.arange(0, len(t), skip)
    if len(t) and idx[-1] != len(t) - 1:
        idx = np.append(idx, len(t) - 1)
    return np.ascontiguousarray(t[idx], dtype=float), np.ascontiguousarray(v[idx], dtype=float)


def flows_view(runs: Sequence[FlowRun]) -> Tuple[Any, List[str]]:
    """The flows view of one or more runs (:class:`FlowRun`). A sortable, filterable table of
    flows (a choice of run when there are several); selecting a flow draws its delivered bytes
    over time, and the queues of the sampled ports on its path (``paths.csv``). Returns (the
    Bokeh layout, notes on what was downsampled)."""
    from bokeh.layouts import column, row
    from bokeh.models import (CDSView, ColumnDataSource, CustomJS, DataTable, Div, IndexFilter, NumberFormatter,
                              Select, StringFormatter, TableColumn, TextInput)
    from bokeh.palettes import Category10_10
    from bokeh.plotting import figure

    notes: List[str] = []
    total = sum(len(r.flows) for r in runs)
    keep = _stride(total, MAX_TABLE_ROWS)
    if keep > 1:
        notes.append(f"The flows table keeps every {keep}th flow of each run ({math.ceil(total / keep):,} of "
                     f"{total:,} rows): the page stays small. The CSV files have every flow.")
    table: Dict[str, List[Any]] = {c: [] for c, _, _ in FLOW_COLUMNS}
    table["run"] = []
    series: Dict[str, List[Any]] = {"run": [], "flow": [], "t": [], "v": []}
    paths: Dict[str, List[Any]] = {"run": [], "flow": [], "ports": [], "note": []}
    queues: Dict[str, List[Any]] = {"run": [], "port": [], "t": [], "q": []}
    kept = [r.flows.iloc[::keep] for r in runs]
    on_path = [_path_lists(r.paths, set(f["flow_id"].tolist())) for r, f in zip(runs, kept)]
    n_series = 0
    for r, walks in zip(runs, on_path):
        if r.ts is not None and len(r.ts):
            m = r.ts["metric"].astype(str)
            crossed = {p for ports, _ in walks.values() for p in ports}
            n_series += int((m == "delivered_bytes").sum())
            n_series += int(((m == "queue_pkts") & r.ts["port"].astype(str).isin(crossed)).sum())
    skip = _stride(n_series, MAX_SERIES_POINTS)
    if skip > 1:
        notes.append(f"Delivered bytes and queues are drawn from every {skip}th sample ({n_series:,} samples in the runs).")
    for i, (r, f, walks) in enumerate(zip(runs, kept, on_path)):
        rate = window_rate(f, r.window)
        for c, _, fmt in FLOW_COLUMNS:
            if c == "window_rate":
                table[c] += _nan_to_none(rate)
            elif c in f.columns:
                vals = f[c].tolist()
                table[c] += _nan_to_none(vals) if fmt else [("" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)) for v in vals]
            else:
                table[c] += [None] * len(f)
        table["run"] += [i] * len(f)
        for fid, (ports, why) in walks.items():
            paths["run"].append(i)
            paths["flow"].append(fid)
            paths["ports"].append(ports)
            paths["note"].append(why)
        if r.ts is None or not len(r.ts):
            continue
        metric = r.ts["metric"].astype(str)
        d = r.ts[(metric == "delivered_bytes") & r.ts["flow_id"].isin(set(f["flow_id"].tolist()))]
        for fid, g in d.groupby("flow_id", sort=True):
            t, v = _thin(g["time_s"].to_numpy(dtype=float), g["value"].to_numpy(dtype=float), skip)
            series["run"].append(i)
            series["flow"].append(int(fid))
            series["t"].append(t)
            series["v"].append(v)
        crossed = {p for ports, _ in walks.values() for p in ports}
        q = r.ts[(metric == "queue_pkts") & r.ts["port"].astype(str).isin(crossed)]
        for port, g in q.groupby(q["port"].astype(str), sort=True):
            t, v = _thin(g["time_s"].to_numpy(dtype=float), g["value"].to_numpy(dtype=float), skip)
            queues["run"].append(i)
            queues["port"].append(port)
            queues["t"].append(t)
            queues["q"].append(v)
    src = ColumnDataSource(table, name="flows_source")
    filt = IndexFilter(indices=[i for i, r in enumerate(table["run"]) if r == 0])
    cols = [TableColumn(field=c, title=t, formatter=NumberFormatter(format=fmt) if fmt else StringFormatter())
            for c, t, fmt in FLOW_COLUMNS]
    dt = DataTable(source=src, columns=cols, view=CDSView(filter=filt), sortable=True, reorderable=False, selectable=True,
                   width=1100, height=320, index_position=None, name="flows_table")
    text = TextInput(title="Filter (group, kind, src or dst contains):", value="", width=360, name="flows_filter")
    labels = [r.label for r in runs]
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
    psrc = ColumnDataSource(paths, name="flows_paths")
    qall = ColumnDataSource(queues, name="flows_path_queues_all")
    qsel = ColumnDataSource({"xs": [], "ys": [], "port": [], "color": []}, name="flow_path_queues")
    have_paths = bool(paths["flow"])
    qp = figure(height=240, width=1100, x_axis_label="simulated time (s)", y_axis_label="packets queued",
                title="Select a flow: the queues of the sampled ports on its path" if have_paths else
                "No paths in these results (paths.csv comes with measure.sample_interval_s)",
                name="flow_path_plot", tools="pan,box_zoom,wheel_zoom,reset,save")
    qp.multi_line("xs", "ys", source=qsel, color="color", line_width=1.4, legend_field="port")
    qp.add_layout(qp.legend[0], "right")
    show = CustomJS(args=dict(src=src, ser=ser, sel=sel, plot=p, psrc=psrc, qall=qall, qsel=qsel, qp=qp,
                              palette=list(Category10_10)), code="""
        const i = src.selected.indices[0];
        if (i === undefined) { sel.data = {t: [], v: []}; qsel.data = {xs: [], ys: [], port: [], color: []}; return; }
        const run = src.data.run[i], flow = src.data.flow_id[i], s = ser.data;
        sel.data = {t: [], v: []};
        plot.title.text = `flow ${flow}: no samples of its delivered bytes`;
        for (let k = 0; k < s.flow.length; k++) {
            if (s.run[k] === run && s.flow[k] === flow) {
                sel.data = {t: s.t[k], v: s.v[k]};
                plot.title.text = `flow ${flow} (${src.data.src[i]} -> ${src.data.dst[i]}): bytes delivered over time`;
                break;
            }
        }
        const pd = psrc.data, qd = qall.data, out = {xs: [], ys: [], port: [], color: []};
        let ports = null, why = '';
        for (let k = 0; k < pd.flow.length; k++) {
            if (pd.run[k] === run && pd.flow[k] === flow) { ports = Array.from(pd.ports[k]); why = pd.note[k]; break; }
        }
        if (ports === null) {
            qp.title.text = `flow ${flow}: its path is not in these results (paths.csv comes with measure.sample_interval_s)`;
        } else if (!ports.length) {
            qp.title.text = `flow ${flow}: no single path (${why}): its packets take many`;
        } else {
            ports.forEach(port => {
                for (let k = 0; k < qd.port.length; k++) {
                    if (qd.run[k] === run && qd.port[k] === port) {
                        out.xs.push(qd.t[k]); out.ys.push(qd.q[k]); out.port.push(port);
                        out.color.push(palette[out.port.length % palette.length]);
                    }
                }
            });
            const sampled = out.port.length ? `${out.port.length} of ${ports.length} ports sampled`
                : 'none sampled (measure.ports = "all" samples every switch port)';
            qp.title.text = `flow ${flow}: path ${ports.join(' | ')}: ${sampled}`;
        }
        qsel.data = out;
    """)
    src.selected.js_on_change("indices", show)
    head = Div(text="<p>Click a column's title to sort; click a flow to draw its delivered bytes and the queues on its path.</p>")
    return column(head, row(text, pick), dt, p, qp), notes


def sweep_view(df, keys: Sequence[str], metrics: Sequence[str]) -> Any:
    """Every run of a sweep as a point: a metric (chosen in a menu) against the first varied
    key, one point per seed with its seed, run and other keys on hover, and the mean per value
    as a line with one standard deviation over seeds as whiskers."""
    from bokeh.layouts import column
    from bokeh.models import ColumnDataSource, CustomJS, HoverTool, Select, Whisker
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
    stds = {m: [_std([y for x, y in zip(data["x"], data[m]) if x == v]) for v in values] for m in metrics}
    band = {}
    for m in metrics:
        band[f"lo_{m}"] = [None if a is None else a - b for a, b in zip(means[m], stds[m])]
        band[f"hi_{m}"] = [None if a is None else a + b for a, b in zip(means[m], stds[m])]
    msrc = ColumnDataSource({"x": values, "y": list(means[m0]), "lo": list(band[f"lo_{m0}"]),
                             "hi": list(band[f"hi_{m0}"]), **{f"mean_{m}": means[m] for m in metrics}, **band},
                            name="sweep_means")
    p = figure(x_range=values, height=340, width=1100, x_axis_label=k, y_axis_label=m0, name="sweep_points",
               tools="pan,box_zoom,wheel_zoom,reset,save", title=f"{m0} against {k}: every seed, and the mean ± std")
    p.line("x", "y", source=msrc, line_width=1.4, color="#57606a", legend_label="mean over seeds")
    p.add_layout(Whisker(source=msrc, base="x", lower="lo", upper="hi", line_color="#57606a"))
    p.scatter("x", "y", source=src, size=8, alpha=0.7, legend_label="one run")
    tips = [(k, "@x"), ("seed", "@seed"), ("value", "@y")] + [(o, f"@{{{o}}}") for o in keys[1:]] + [("run", "@run")]
    p.add_tools(HoverTool(tooltips=tips))
    menu = Select(title="Metric:", value=m0, options=list(metrics), width=360, name="sweep_metric")
    menu.js_on_change("value", CustomJS(args=dict(src=src, msrc=msrc, plot=p, key=k), code="""
        const m = this.value;
        src.data.y = src.data[m].slice(); src.change.emit();
        msrc.data.y = msrc.data['mean_' + m].slice();
        msrc.data.lo = msrc.data['lo_' + m].slice(); msrc.data.hi = msrc.data['hi_' + m].slice();
        msrc.change.emit();
        plot.left[0].axis_label = m;
        plot.title.text = `${m} against ${key}: every seed, and the mean ± std`;
    """))
    return column(menu, p)


def _mean(xs: Sequence[Optional[float]]) -> Optional[float]:
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def _std(xs: Sequence[Optional[float]]) -> float:
    """The sample standard deviation (0 for fewer than two values), as the report's tables."""
    xs = [x for x in xs if x is not None]
    if len(xs) < 2:
        return 0.0
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


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


#: Samples of the fabric's queues kept in one page (ports x sample times).
MAX_FABRIC_VALUES = 400_000

#: The fabric view's colourings: (menu label, what it shows).
FABRIC_METRICS = ("queue at the slider's time (packets)", "drops (whole run)", "utilization (window)",
                  "largest queue (packets)", "PFC pauses sent", "trims (NDP)")
#: The ports.csv column of each colouring after the first; the last two only in runs that have
#: them (PFC, trimming).
FABRIC_COLUMNS = ("drops", "utilization", "max_queue_pkts", "pfc_pauses_sent", "trims")


def _layout(fabric) -> Dict[str, Tuple[float, float]]:
    """Each node's place: its tier's level as the height (hosts at the bottom), spread evenly
    across the width in the order the builder made them."""
    import numpy as np

    nodes = fabric.drop_duplicates("node")[["node", "level"]]
    lv = nodes["level"].astype(float).fillna(nodes["level"].astype(float).max() + 1 if nodes["level"].notna().any() else 0)
    place: Dict[str, Tuple[float, float]] = {}
    for level in sorted(set(lv.tolist())):
        names = nodes["node"][lv == level].astype(str).tolist()
        xs = np.linspace(0.0, 1.0, len(names) + 2)[1:-1]
        for name, x in zip(names, xs):
            place[name] = (float(x), float(level))
    return place


def fabric_view(fabric, ports, ts, drops) -> Tuple[Any, List[str]]:
    """The network drawn by tier: links as lines, each port a square near its end of the
    link, coloured by a metric (a menu): its queue at the slider's time (with time series of
    every port: ``measure.ports = "all"`` and ``measure.sample_interval_s``), its drops, its
    utilization in the window, its largest queue, and where the run has them its PFC pauses
    and NDP trims. Clicking a port draws its queue over time
    and lists the flows it dropped (``port_drops.csv``). Returns (the layout, notes)."""
    import numpy as np
    import pandas as pd
    from bokeh.layouts import column, row
    from bokeh.models import (ColorBar, ColumnDataSource, CustomJS, DataTable, Div, HoverTool, LinearColorMapper,
                              NumberFormatter, Select, Slider, TableColumn, TapTool)
    from bokeh.palettes import Viridis256
    from bokeh.plotting import figure

    notes: List[str] = []
    place = _layout(fabric)
    ports_by_name = ports.set_index(ports["port"].astype(str)) if len(ports) else None
    names = fabric["port"].astype(str).tolist()
    node = fabric["node"].astype(str).tolist()
    peer = fabric["peer"].astype(str).tolist()

    def stat(col: str) -> List[Optional[float]]:
        if ports_by_name is None or col not in ports_by_name.columns:
            return [None] * len(names)
        s = ports_by_name[col]
        return [float(s[n]) if n in s.index and not pd.isna(s[n]) else None for n in names]

    # time series of the ports' queues: one row per port, one column per kept sample
    times: List[float] = []
    qmat: List[List[Optional[float]]] = [[] for _ in names]
    if ts is not None and len(ts):
        q = ts[ts["metric"].astype(str) == "queue_pkts"]
        if len(q):
            times_all = np.unique(q["time_s"].to_numpy(dtype=float))
            per_port = q["port"].astype(str).nunique()
            skip = _stride(len(times_all) * per_port, MAX_FABRIC_VALUES)
            if skip > 1:
                notes.append(f"The fabric's queues are drawn from every {skip}th sample ({len(times_all):,} samples "
                             f"of {per_port:,} ports in the run).")
            keep = times_all[::skip]
            times = keep.tolist()
            wide = q.pivot_table(index="port", columns="time_s", values="value", aggfunc="last")
            wide = wide.reindex(columns=keep)
            for i, n in enumerate(names):  # a port without series keeps an empty row: grey at every time
                qmat[i] = _nan_to_none(wide.loc[n].tolist()) if n in wide.index else []
    have_series = bool(times)
    x0 = [place[n][0] for n in node]
    y0 = [place[n][1] for n in node]
    x1 = [place[p][0] for p in peer]
    y1 = [place[p][1] for p in peer]
    px = [a + 0.22 * (b - a) for a, b in zip(x0, x1)]
    py = [a + 0.22 * (b - a) for a, b in zip(y0, y1)]
    metric_cols = {m: stat(c) for m, c in zip(FABRIC_METRICS[1:], FABRIC_COLUMNS)
                   if c in ports.columns or c in FABRIC_COLUMNS[:3]}
    # drops first where there are some: where unfairness starts is where packets are lost
    dropped = any((x or 0) > 0 for x in metric_cols[FABRIC_METRICS[1]])
    first = FABRIC_METRICS[1] if dropped or not have_series else FABRIC_METRICS[0]
    nan = float("nan")

    def floats(xs) -> Any:  # missing values as NaN, which the colour mapper paints grey
        return np.array([nan if x is None else x for x in xs], dtype=float)

    value = floats([r[0] if r else None for r in qmat]) if first == FABRIC_METRICS[0] else floats(metric_cols[first])
    src = ColumnDataSource({"x": px, "y": py, "port": names, "node": node, "peer": peer,
                            "measured": fabric["measured"].astype(int).tolist(), "value": value,
                            "queue": [floats(r) if r else [] for r in qmat],
                            **{f"m{i}": floats(metric_cols[m]) for i, m in enumerate(FABRIC_METRICS) if m in metric_cols}},
                           name="fabric_ports")
    links = {tuple(sorted((a, b))) for a, b in zip(node, peer)}
    lx = [[place[a][0], place[b][0]] for a, b in links]
    ly = [[place[a][1], place[b][1]] for a, b in links]

    def top(vals) -> float:
        v = [x for x in vals if x is not None]
        return max(v) if v and max(v) > 0 else 1.0

    highs = {m: top(metric_cols[m]) for m in metric_cols}
    highs[FABRIC_METRICS[0]] = top([x for r in qmat for x in r]) if have_series else 1.0
    mapper = LinearColorMapper(palette=Viridis256, low=0, high=highs[first], nan_color="#d0d4d8")
    p = figure(height=460, width=1100, title="The fabric by tier: click a port", name="fabric_plot",
               tools="pan,wheel_zoom,box_zoom,reset,save", x_axis_type=None, y_axis_label="tier")
    p.multi_line(lx, ly, color="#c4c9cf", line_width=1)
    nodes = sorted(place)
    p.scatter([place[n][0] for n in nodes], [place[n][1] for n in nodes], size=6, color="#57606a")
    pr = p.scatter("x", "y", source=src, size=11, marker="square", line_color="#1d232a", line_width=0.5,
                   fill_color={"field": "value", "transform": mapper})
    p.add_tools(HoverTool(renderers=[pr], tooltips=[("port", "@port"), ("value", "@value")]))
    p.add_tools(TapTool(renderers=[pr]))
    p.add_layout(ColorBar(color_mapper=mapper, width=10), "right")
    levels = sorted({y for _, y in place.values()})
    p.yaxis.ticker = levels
    tier_of = {float(lv): str(t) for lv, t in zip(fabric["level"].astype(float).fillna(-1), fabric["tier"].astype(str))}
    p.yaxis.major_label_overrides = {lv: tier_of.get(lv, "") for lv in levels}
    menu = Select(title="Colour ports by:", value=first, width=360, name="fabric_metric",
                  options=[m for m in FABRIC_METRICS if (m == FABRIC_METRICS[0] and have_series) or m in metric_cols])
    slider = Slider(start=0, end=max(1, len(times) - 1), value=0, step=1, width=700, name="fabric_time",
                    title=f"sample 1 of {len(times)}: t = {times[0]:g} s" if have_series else "no time series of the ports",
                    disabled=not have_series)
    recolor = CustomJS(args=dict(src=src, menu=menu, slider=slider, mapper=mapper, highs=highs, metrics=list(FABRIC_METRICS),
                                 times=times), code="""
        const m = menu.value, k = slider.value, d = src.data;
        if (m === metrics[0]) {
            d.value = d.queue.map(r => (r[k] === undefined || r[k] === null) ? NaN : r[k]);
            slider.title = `sample ${k + 1} of ${times.length}: t = ${times[k]} s`;
        } else {
            d.value = Array.from(d['m' + metrics.indexOf(m)]);
        }
        mapper.high = highs[m];
        src.change.emit();
    """)
    menu.js_on_change("value", recolor)
    slider.js_on_change("value", recolor)
    qsrc = ColumnDataSource({"t": [], "q": []}, name="fabric_port_queue")
    qp = figure(height=220, width=1100, x_axis_label="simulated time (s)", y_axis_label="packets queued",
                title="Click a port: its queue over time", name="fabric_queue_plot",
                tools="pan,box_zoom,wheel_zoom,reset,save")
    qp.step("t", "q", source=qsrc, mode="after", line_width=1.4)
    dcols = ["port", "flow_id", "group", "reason", "pkts", "bytes"]
    dd = {c: [] for c in dcols}
    if drops is not None and len(drops):
        for c in dcols:
            dd[c] = drops[c].astype(str).tolist() if c in ("port", "group", "reason") else drops[c].tolist()
    dsrc = ColumnDataSource(dd, name="fabric_drops_all")
    shown = ColumnDataSource({c: [] for c in dcols}, name="fabric_port_drops")
    table = DataTable(source=shown, width=800, height=200, index_position=None, sortable=True, reorderable=False,
                      name="fabric_drops_table",
                      columns=[TableColumn(field=c, title=c, formatter=NumberFormatter(format="0,0")) if c in ("pkts", "bytes")
                               else TableColumn(field=c, title=c) for c in dcols[1:]])
    caption = Div(text="<p>Click a port to list the flows it dropped.</p>", name="fabric_drops_caption")
    src.selected.js_on_change("indices", CustomJS(args=dict(src=src, qsrc=qsrc, qp=qp, times=times, dsrc=dsrc,
                                                            shown=shown, caption=caption, cols=dcols), code="""
        const i = src.selected.indices[0];
        if (i === undefined) return;
        const name = src.data.port[i];
        const q = Array.from(src.data.queue[i]);
        qsrc.data = {t: q.length ? times.slice() : [], q: q};
        qp.title.text = q.length ? `${name}: packets queued over time`
                                 : `${name}: not sampled (measure.ports and measure.sample_interval_s sample a port)`;
        const d = dsrc.data, out = {};
        cols.forEach(c => out[c] = []);
        const rows = [];
        for (let k = 0; k < d.port.length; k++) if (d.port[k] === name) rows.push(k);
        rows.sort((a, b) => d.pkts[b] - d.pkts[a]);
        rows.forEach(k => cols.forEach(c => out[c].push(d[c][k])));
        shown.data = out;
        const total = out.pkts.reduce((a, b) => a + b, 0);
        caption.text = src.data.measured[i]
            ? `<p>${name}: ${out.flow_id.length} flow(s) lost ${total} packet(s) here.</p>`
            : `<p>${name} is not measured: its drops by flow are not counted (measure.ports = "all" counts every switch port).</p>`;
    """))
    if not any(fabric["measured"].astype(int)):
        notes.append("No port of this run is measured: the colours have no data (measure.ports names them).")
    return column(row(menu, slider), p, qp, caption, table), notes
