"""`dcfair report DIR`: one self-contained HTML page for a run, a sweep (or the demo), or a
reproduction.

Rules:

- The page stands alone: figures are PNGs inlined as base64 ``data:`` URIs, the style sheet is
  inline, there is no script and no reference to anything outside the file, so it opens
  offline, from a mail attachment or a CI artifact, in any browser.
- What a directory is comes from the files in it: ``claims.json`` -> a reproduction;
  ``sweep.json`` -> a sweep (the demo is a sweep over ``queue.kind``); ``summary.json`` -> a run.
- Every figure is drawn from the result files only (never by re-running anything), so a report
  can be made on another machine from a copied directory. A figure whose data is missing (no
  flow finished, no time series sampled) is replaced by a sentence saying so.
- The page is written atomically (a temporary file, then a rename).
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import os
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from dcfair.display import MAIN_METRICS, format_value, mean_std

#: Per-flow views are drawn for each value of a varied key when it has at most this many values.
MAX_OVERLAYS = 8
#: Histograms of per-flow throughput overlaid on one panel up to this many; more get a panel each.
HIST_OVERLAYS = 3
#: Extra summary metrics plotted in sweeps when present.
EXTRA_SWEEP_METRICS = ("fct_mean_s", "fct_p99_s", "throughput_bps_tcp", "block_goodput_bps")

CSS = """
body { font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1d232a;
       max-width: 1180px; margin: 0 auto; padding: 24px 32px 64px; background: #fff; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 36px 0 8px; padding-bottom: 4px; border-bottom: 1px solid #d8dde3; }
h3 { font-size: 15px; margin: 20px 0 6px; }
p.sub { color: #57606a; margin: 0 0 16px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d8dde3; padding: 4px 9px; text-align: right; vertical-align: top; white-space: nowrap; }
td.l { white-space: normal; }
th { background: #f3f5f7; }
td.l, th.l { text-align: left; }
td.yes { color: #1a7f37; font-weight: 600; } td.no { color: #cf222e; font-weight: 600; }
figure { margin: 10px 0 22px; }
figure img { max-width: 100%; height: auto; border: 1px solid #eef0f2; }
figcaption { color: #57606a; font-size: 13px; margin-top: 4px; }
pre { background: #f6f8fa; padding: 10px 12px; overflow-x: auto; font-size: 12.5px; }
details summary { cursor: pointer; color: #0550ae; }
.note { color: #57606a; font-style: italic; }
.scroll { overflow-x: auto; }
.beside { display: flex; gap: 24px; align-items: flex-start; }
.beside > .claims { flex: 1 1 0; min-width: 0; }
.beside > .figure { flex: 1 1 0; min-width: 0; position: sticky; top: 8px; }
details.claim { margin: 6px 0; } details.claim summary span.yes { color: #1a7f37; font-weight: 600; }
details.claim summary span.no { color: #cf222e; font-weight: 600; }
div.view { margin: 10px 0 22px; }
"""


# ---------------------------------------------------------------------------------------------
# HTML pieces
# ---------------------------------------------------------------------------------------------

def esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


def cell(v: Any) -> str:
    if isinstance(v, float) and math.isnan(v):
        return "-"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return format_value(v)
    return str(v) if v is not None else "-"


def html_table(header: Optional[Sequence[str]], rows: Iterable[Sequence[Any]], left: int = 1, classes=None) -> str:
    """A table (no header row if ``header`` is None); the first ``left`` columns are
    left-aligned. ``classes[i][j]`` adds a class to a cell."""
    out = ['<div class="scroll"><table>']
    if header is not None:
        out.append("<thead><tr>")
        out += [f'<th class="{"l" if j < left else ""}">{esc(h)}</th>' for j, h in enumerate(header)]
        out.append("</tr></thead>")
    out.append("<tbody>")
    for i, r in enumerate(rows):
        out.append("<tr>")
        for j, v in enumerate(r):
            cls = ["l"] if j < left else []
            if classes and classes[i] and classes[i][j]:
                cls.append(classes[i][j])
            out.append(f'<td class="{" ".join(cls)}">{esc(cell(v))}</td>')
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def png_tag(png: bytes, alt: str, caption: str = "") -> str:
    b64 = base64.b64encode(png).decode("ascii")
    cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
    return f'<figure><img alt="{esc(alt)}" src="data:image/png;base64,{b64}">{cap}</figure>'


def note(text: str) -> str:
    return f'<p class="note">{esc(text)}</p>'


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def fig_png(fig) -> bytes:
    plt = pyplot()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def figure(fig, alt: str, caption: str = "") -> str:
    return png_tag(fig_png(fig), alt, caption)


class Views:
    """The interactive views of one page (Bokeh models, ``explore.py``): :meth:`add` returns
    the place of a model in the body; :func:`page` renders them all at once, with Bokeh's
    runtime inlined once."""

    def __init__(self) -> None:
        self.models: List[Any] = []

    def add(self, model: Any) -> str:
        self.models.append(model)
        return f"<!--dcfair-view-{len(self.models) - 1}-->"


def provenance_section(build: Optional[str], command: Optional[str], scenario: Optional[str], origin: str = "") -> List[str]:
    """Where the results come from: the engine build that made them, the command, and the
    scenario as run (the file's text with the overrides the command applied)."""
    rows = [("engine build", build or "not recorded (results of a dcfair older than engine builds)"),
            ("command", command or "not recorded (results of a dcfair that did not record its command)")]
    out = ['<h2 id="provenance">Provenance</h2>', html_table(None, rows, left=2)]
    if scenario:
        out.append(f"<details><summary>the scenario as run{(': ' + esc(origin)) if origin else ''}</summary>"
                   f"<pre>{esc(scenario)}</pre></details>")
    return out


def scenario_as_run(text: Optional[str], overrides: Sequence[Sequence[Any]]) -> Optional[str]:
    """The scenario's text, then the overrides the command applied to it (they win)."""
    if text is None:
        return None
    if not overrides:
        return text
    lines = "\n".join(f"# {k} = {v}" for k, v in overrides)
    return f"{text.rstrip()}\n\n# overrides applied by the command line (they take precedence):\n{lines}\n"


def page(title: str, subtitle: str, body: List[str], views: Optional[Views] = None) -> str:
    from dcfair import __version__

    head = ""
    text = "\n".join(body)
    if views is not None and views.models:
        from dcfair import explore

        head, divs = explore.render(views.models)
        for i, div in enumerate(divs):
            text = text.replace(f"<!--dcfair-view-{i}-->", f'<div class="view">{div}</div>')
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{esc(title)}</title>"
        f"<style>{CSS}</style>{head}</head><body>\n<h1>{esc(title)}</h1><p class=\"sub\">{esc(subtitle)}</p>\n"
        + text
        + f"\n<p class=\"sub\" style=\"margin-top:40px\">Made by dcfair {esc(__version__)} (dcfair report).</p>"
        + "\n</body></html>\n"
    )


# ---------------------------------------------------------------------------------------------
# Figures of one or more runs (a run: one label; a comparison: one label per value)
# ---------------------------------------------------------------------------------------------

def _tcp(flows):
    return flows[flows["kind"].astype(str) == "tcp"] if "kind" in flows.columns else flows


def fig_throughput_hist(groups: List[Tuple[str, Any]], window_s: Optional[float]) -> str:
    """Histogram of per-flow packets delivered in the window, one step outline per group."""
    import numpy as np

    plt = pyplot()
    data = [(lab, _tcp(df)["pkts_in_window"].to_numpy(dtype=float)) for lab, df in groups]
    data = [(lab, x) for lab, x in data if len(x)]
    if not data:
        return note("No TCP flows: no per-flow throughput to show.")
    hi = max(float(x.max()) for _, x in data)
    bins = np.linspace(0, max(hi, 1.0), 41)
    w = f"the last {format_value(window_s)} s" if window_s else "the window"
    caption = ("Per-flow throughput: how many packets each TCP flow delivered in the measurement window "
               "(all seeds pooled). A fair link puts every flow in one narrow peak; a spike at 0 is starvation.")
    if len(data) > HIST_OVERLAYS:
        # one panel each, on shared axes: more step lines on one panel hide each other
        ncol = 2
        nrow = math.ceil(len(data) / ncol)
        fig, axes = plt.subplots(nrow, ncol, figsize=(8, 1.0 + 1.6 * nrow), sharex=True, sharey=True, squeeze=False)
        for ax, (lab, x) in zip(axes.flat, data):
            ax.hist(x, bins=bins, weights=np.full(len(x), 1.0 / len(x)), color="#4c72b0")
            ax.set_title(lab, fontsize=9, loc="left")
            ax.grid(alpha=0.3)
        for ax in list(axes.flat)[len(data):]:
            ax.set_visible(False)
        fig.supxlabel(f"packets delivered per flow in {w}", fontsize=10)
        fig.supylabel("fraction of flows", fontsize=10)
        fig.tight_layout()
        return figure(fig, "per-flow throughput histogram", caption + " One panel per value, on the same axes.")
    fig, ax = plt.subplots(figsize=(8, 3.6))
    for lab, x in data:
        ax.hist(x, bins=bins, histtype="step", linewidth=1.6, label=lab, weights=np.full(len(x), 1.0 / len(x)))
    ax.set_xlabel(f"packets delivered per flow in {w}")
    ax.set_ylabel("fraction of flows")
    ax.grid(alpha=0.3)
    if len(data) > 1:
        ax.legend(fontsize=9)
    return figure(fig, "per-flow throughput histogram", caption)


def _cdf(ax, x, label):
    import numpy as np

    x = np.sort(np.asarray(x, dtype=float))
    ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", label=label, linewidth=1.6)


def fig_cdf(groups: List[Tuple[str, Any]], column: str, xlabel: str, what: str, log: bool = False, caption: str = "") -> str:
    plt = pyplot()
    data = []
    for lab, df in groups:
        if column in df.columns:
            x = _tcp(df)[column].dropna().to_numpy(dtype=float)
            if len(x):
                data.append((lab, x))
    if not data:
        return note(f"No {what}: nothing to draw for its CDF.")
    fig, ax = plt.subplots(figsize=(8, 3.6))
    for lab, x in data:
        _cdf(ax, x, lab)
    lo = min(float(x.min()) for _, x in data)
    hi = max(float(x.max()) for _, x in data)
    if log and lo > 0 and hi / lo >= 100:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("CDF of flows")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    if len(data) > 1:
        ax.legend(fontsize=9)
    return figure(fig, f"CDF of {what}", caption)


def fig_queue(groups: List[Tuple[str, Any]], window_s: Optional[float]) -> str:
    """Queue occupancy (packets) over time of the measured ports; one panel per group."""
    plt = pyplot()
    data = []
    for lab, ts in groups:
        if ts is None or len(ts) == 0:
            continue
        q = ts[ts["metric"].astype(str) == "queue_pkts"]
        if len(q):
            data.append((lab, q))
    if not data:
        return note("No time series in these results: run with --set measure.sample_interval_s=0.01 "
                    "(for example) to sample queue occupancy.")
    n = len(data)
    fig, axes = plt.subplots(n, 1, figsize=(8, 1.2 + 1.5 * n), sharex=True, sharey=True, squeeze=False)
    t_end = max(float(q["time_s"].max()) for _, q in data)
    t0 = max(0.0, t_end - window_s) if window_s else 0.0
    for ax, (lab, q) in zip(axes[:, 0], data):
        q = q[q["time_s"] >= t0]
        for port, g in q.groupby(q["port"].astype(str), sort=False):
            ax.plot(g["time_s"], g["value"], linewidth=0.8, label=port, drawstyle="steps-post")
        ax.set_ylabel("packets")
        ax.grid(alpha=0.3)
        if n > 1:
            ax.set_title(lab, fontsize=10, loc="left")
        if q["port"].nunique() > 1:
            ax.legend(fontsize=8, loc="upper right")
    axes[-1, 0].set_xlabel("simulated time (s)")
    fig.tight_layout()
    span = "the measurement window" if window_s else "the run"
    return figure(fig, "queue occupancy over time",
                  f"Queue occupancy of the measured (bottleneck) ports over {span}, in packets, as sampled "
                  "by [measure] sample_interval_s (one run per panel).")


def fig_job_iterations(its) -> str:
    """Every job's iteration times (job_iterations.csv), one line per job."""
    plt = pyplot()
    done = its[its["time_s"].notna()]
    fig, ax = plt.subplots(figsize=(8, 3))
    for job, g in done.groupby(done["job"].astype(str), sort=False):
        ax.plot(g["iteration"], g["time_s"] * 1e3, marker="o", linewidth=0.8, label=job)
    ax.set_xlabel("iteration")
    ax.set_ylabel("iteration time (ms)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return figure(fig, "iteration time of every job",
                  "Each job's iteration times (job_iterations.csv): from the start of an iteration to the arrival "
                  "of its last transfer.")


def jobs_section(res) -> List[str]:
    """The jobs of a run (jobs.csv, job_iterations.csv), or nothing when it has none."""
    if len(res.jobs) == 0:
        return []
    jain = res.metrics.get("jobs_jain_slowdown")
    body = ["<h2>Jobs</h2>", note(
        "One row per job (jobs.csv): its collective, hosts and iterations, its completion time, its completion time "
        "when it runs alone on the fabric (same seed and hosts) and the slowdown, their ratio. Jain's index of the "
        f"slowdowns: {cell(jain) if jain is not None else '-'} (docs/metrics.md).")]
    body.append(html_table(list(res.jobs.columns), res.jobs.astype(object).values.tolist()))
    if len(res.job_iterations):
        body.append(fig_job_iterations(res.job_iterations))
    return body


def fig_drops(rows: List[Tuple[str, Dict[str, float]]]) -> str:
    """Drops by reason: one bar per label, stacked by reason."""
    import numpy as np

    plt = pyplot()
    reasons = sorted({r for _, d in rows for r, v in d.items() if v})
    if not reasons:
        return note("No packet was dropped at the measured ports.")
    fig, ax = plt.subplots(figsize=(max(4.5, 1.1 * len(rows) + 2.5), 3.4))
    bottom = np.zeros(len(rows))
    x = np.arange(len(rows))
    for r in reasons:
        v = np.array([d.get(r, 0.0) for _, d in rows], dtype=float)
        ax.bar(x, v, bottom=bottom, label=r, width=0.6)
        bottom += v
    ax.set_xticks(x, [lab for lab, _ in rows], rotation=0 if len(rows) < 7 else 30)
    ax.set_ylabel("packets dropped")
    ax.legend(fontsize=9)
    ax.grid(alpha=0.3, axis="y")
    return figure(fig, "drops by reason", "Packets dropped at the measured ports, by the discipline's reason "
                  "(docs/metrics.md lists the reasons); mean over seeds where there are several.")


def flow_views(groups, ts_groups, drops_rows, window_s) -> List[str]:
    """The per-flow sections shared by run and comparison reports."""
    out = ["<h3>Per-flow throughput</h3>", fig_throughput_hist(groups, window_s)]
    out += ["<h3>Flow completion times</h3>",
            fig_cdf(groups, "fct_s", "flow completion time (s)", "finished flows", log=True, caption=
                    "CDF of the completion times of the TCP flows that finished (long-lived flows never do).")]
    out += ["<h3>Starvation</h3>",
            fig_cdf(groups, "max_gap_s", "longest gap between two packet arrivals of a flow (s)",
                    "starvation gaps", log=True, caption=
                    "CDF of each TCP flow's longest silence at its receiver (max_gap_s, counting from its start and "
                    "to the end of the run): the HCF paper's starvation time.")]
    out += ["<h3>Queue occupancy</h3>", fig_queue(ts_groups, window_s)]
    out += ["<h3>Drops by reason</h3>", fig_drops(drops_rows)]
    return out


def drops_of_ports(ports) -> Dict[str, float]:
    return {c[len("drops_"):]: float(ports[c].sum()) for c in ports.columns if c.startswith("drops_")}


# ---------------------------------------------------------------------------------------------
# Scenario
# ---------------------------------------------------------------------------------------------

def scenario_section(overrides: Sequence[Sequence[Any]], facts: List[Tuple[str, Any]]) -> List[str]:
    """The scenario's facts (the text as run is in the provenance)."""
    rows = [(k, v) for k, v in facts if v is not None]
    if overrides:
        rows.append(("overrides", ", ".join(f"{k}={v}" for k, v in overrides)))
    return ["<h2>Scenario</h2>", html_table(None, rows, left=2)]


def _find_scenario(d: Path) -> Tuple[Optional[str], str, List[List[Any]], Optional[str]]:
    """(text, origin, overrides, command) of the run in ``d``: from ``provenance.json``
    (``dcfair run`` and ``dcfair.run`` write it), else from ``point.json`` (runs of sweeps,
    reproductions, the demo), else nothing but what ``summary.json`` says (older results)."""
    pv = d / "provenance.json"
    if pv.exists():
        meta = json.loads(pv.read_text())
        cmd = meta.get("command") or "run from Python (dcfair.run), not from a command line"
        return meta.get("scenario"), meta.get("scenario_origin", ""), meta.get("overrides", []), cmd
    pj = d / "point.json"
    if pj.exists():
        meta = json.loads(pj.read_text())
        path = Path(meta.get("scenario", ""))
        text = path.read_text() if path.is_file() else None
        return text, os.fspath(path), meta.get("overrides", []), meta.get("command")
    return None, "", [], None


# ---------------------------------------------------------------------------------------------
# A run
# ---------------------------------------------------------------------------------------------

def report_run(d: Path) -> str:
    from dcfair.results import Result

    res = Result.load(d)
    s = res.summary
    m = res.metrics
    text, origin, overrides, command = _find_scenario(d)
    window = s.get("window_s")
    views = Views()
    body = provenance_section(s.get("engine_build"), command, scenario_as_run(text, overrides), origin)
    body += scenario_section(overrides, [
        ("scenario", s.get("scenario")), ("queue discipline", s.get("queue_kind")), ("seed", s.get("seed")),
        ("simulated time (s)", s.get("sim_time_s")), ("measurement window (s)", window),
        ("events", s.get("events")), ("wall time (s)", s.get("wall_time_s")), ("engine build", s.get("engine_build")),
    ])
    body.append("<h2>Summary</h2>")
    rows = [(k, m[k]) for k in MAIN_METRICS if k in m]
    rows += [(k, v) for k, v in m.items() if k not in MAIN_METRICS and not isinstance(v, dict)]
    body.append(html_table(["metric", "value"], rows))
    if s.get("pfc_deadlock"):
        d = s["pfc_deadlock"]
        body.append(note(f"A PFC deadlock ended this run at {d['at_s']} s: the lossless class of ports "
                         f"{' -> '.join(d['ports'])} was paused in a cycle with packets waiting (docs/mechanisms/pfc.md)."))
    body += jobs_section(res)
    body.append("<h2>Flows</h2>")
    label = s.get("queue_kind") or "run"
    body += explore_flows(views, [(label, res.flows, res.timeseries, window, res.paths)])
    body += flow_views([(label, res.flows)], [(label, res.timeseries)], [(label, drops_of_ports(res.ports))], window)
    body += fabric_section(views, d, res)
    p = res.ports
    body.append("<h2>Ports</h2>" if "pfc_pauses_sent" in p.columns else "<h2>Measured ports</h2>")
    if "pfc_pauses_sent" in p.columns:
        body.append(note("With PFC: the measured ports and every port that sent or received a pause frame "
                         "(column measured), with their pause counts and times."))
    body.append(html_table(list(p.columns), p.astype(object).values.tolist()))
    sub = f"run of {s.get('scenario')} under {s.get('queue_kind')}, seed {s.get('seed')}"
    return page(f"dcfair run: {s.get('scenario')}", sub, body, views)


def fabric_section(views: Views, d: Path, res) -> List[str]:
    """The fabric view of the run in ``d`` (``explore.fabric_view``), from ``fabric.csv`` and
    ``port_drops.csv``; a sentence when the run's files predate them."""
    from dcfair import explore

    out = ["<h2>Fabric</h2>"]
    if not len(res.fabric):
        return out + [note("No fabric.csv in these results (dcfair writes it since the engine that draws the fabric): "
                           "rerun the command to get the fabric view.")]
    layout, notes = explore.fabric_view(res.fabric, res.ports, res.timeseries, res.port_drops)
    return out + [note("Every node by tier (hosts at the bottom), every link a line, every port a square near its "
                       "end of the link, coloured by the metric the menu picks; grey: not measured. "
                       'measure.ports = "all" measures every switch port.'), views.add(layout)] + [note(n) for n in notes]


def explore_flows(views: Views, runs) -> List[str]:
    """The interactive flows table (``explore.flows_view``) of ``runs`` (the fields of
    ``explore.FlowRun``: label, flows, time series, window, paths), with its notes."""
    from dcfair import explore

    runs = [explore.FlowRun(*r) for r in runs]
    if not any(len(r.flows) for r in runs):
        return [note("No flows in these results.")]
    layout, notes = explore.flows_view(runs)
    return ["<h3>Every flow</h3>", views.add(layout)] + [note(n) for n in notes]


# ---------------------------------------------------------------------------------------------
# A sweep (and the demo)
# ---------------------------------------------------------------------------------------------

def _sweep_metrics(df, keys) -> List[str]:
    ms = [m for m in MAIN_METRICS if m in df.columns]
    ms += [m for m in EXTRA_SWEEP_METRICS if m in df.columns and df[m].notna().any()]
    return [m for m in ms if df[m].notna().any()]


def _xs(values) -> Tuple[List[float], Optional[List[str]], bool]:
    """x positions of a key's values: numeric keys as themselves, others as categories."""
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        vs = [float(v) for v in values]
        log = min(vs) > 0 and max(vs) / min(vs) >= 50
        return vs, None, log
    return list(range(len(values))), [str(v) for v in values], False


def value_matcher(values: Sequence[Any]):
    """How a table column's entries are matched to a sweep's values: numbers by value (``20``
    is ``20.0``, which is what a column of ints and floats holds), anything else as text."""
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return lambda v: float(v)
    return lambda v: str(v)


def per_value(g, key: str, values: Sequence[Any], metric: str) -> List[Tuple[int, float, float, List[float]]]:
    """For each of ``values`` (by index) that has rows in ``g``: (index, mean, std over seeds,
    the seeds' values) of ``metric``. NaN values are left out."""
    import numpy as np

    norm = value_matcher(values)
    col = g[key].map(norm)
    out = []
    for i, v in enumerate(values):
        x = g.loc[col == norm(v), metric].to_numpy(dtype=float)
        x = x[~np.isnan(x)]
        if len(x):
            out.append((i, float(x.mean()), float(x.std(ddof=1)) if len(x) > 1 else 0.0, x.tolist()))
    return out


def fig_metric_vs_key(df, key: str, values: List[Any], metrics: List[str], others: List[str]) -> str:
    """Small multiples: each metric against ``key``; mean and std over seeds (error bars) and
    every seed as a dot; one line per combination of the other varied keys."""
    import numpy as np

    plt = pyplot()
    ncol = min(3, len(metrics))
    nrow = math.ceil(len(metrics) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.1 * ncol, 3.1 * nrow), squeeze=False)
    xs, ticks, log = _xs(values)
    lines = [((), df)] if not others else list(df.groupby(others, sort=False, dropna=False))
    for ax, m in zip(axes.flat, metrics):
        for j, (combo, g) in enumerate(lines):
            combo = combo if isinstance(combo, tuple) else (combo,)
            lab = ", ".join(f"{k}={v}" for k, v in zip(others, combo)) or None
            pts = per_value(g, key, values, m)
            if not pts:
                continue
            off = (j - (len(lines) - 1) / 2) * 0.06 if ticks else 0.0
            xv = np.array([xs[i] for i, *_ in pts]) + off
            # Categories get no connecting line: there is nothing between droptail and red.
            line = ax.errorbar(xv, [p[1] for p in pts], yerr=[p[2] for p in pts], marker="o", capsize=3, label=lab,
                               linewidth=1.4, linestyle="none" if ticks else "-")
            sx = [xs[i] + off for i, _, _, seeds in pts for _ in seeds]
            sy = [y for *_, seeds in pts for y in seeds]
            ax.plot(sx, sy, ".", color=line[0].get_color(), alpha=0.35, markersize=4)
        ax.set_title(m, fontsize=10)
        ax.ticklabel_format(axis="y", useOffset=False, style="plain")
        if ticks:
            ax.set_xticks(xs, ticks, rotation=0 if len(ticks) < 6 else 30)
        elif log:
            ax.set_xscale("log")
        ax.set_xlabel(key)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(metrics):]:
        ax.set_visible(False)
    if others and len(lines) > 1:
        axes.flat[0].legend(fontsize=8)
    fig.tight_layout()
    return figure(fig, f"metrics against {key}",
                  f"Each metric against {key}: the mean over seeds with one standard deviation as error bars, "
                  "and every seed as a faint dot" + (f"; one line per value of {', '.join(others)}." if others else "."))


def _sweep_table(d: Path):
    """The sweep's table (``sweep.parquet``, else ``sweep.csv``) and notes on what was wrong;
    :class:`dcfair.InvalidInput` naming the files when neither can be read."""
    import pandas as pd

    from dcfair.errors import InvalidInput

    notes = []
    for name, read in (("sweep.parquet", pd.read_parquet), ("sweep.csv", pd.read_csv)):
        f = d / name
        if not f.exists():
            continue
        try:
            df = read(f)
            missing = {"seed", "run_dir"} - set(df.columns)
            if missing:
                raise ValueError(f"no column {', '.join(sorted(missing))}")
            return df, notes
        except Exception as e:  # noqa: BLE001 - a damaged table: say so, try the other
            notes.append(f"{name} cannot be read ({type(e).__name__}: {e}); rerun the sweep's command to rewrite it")
    raise InvalidInput(str(d), "neither sweep.parquet nor sweep.csv can be read: rerun the sweep's command, which "
                       "rewrites them from its runs")


def report_sweep(d: Path) -> str:
    import pandas as pd

    from dcfair.results import read_table

    from dcfair.runner import damage

    meta = json.loads((d / "sweep.json").read_text())
    keys = [k for k, _ in meta["vary"]]
    values = {k: list(v) for k, v in meta["vary"]}
    df, table_note = _sweep_table(d)
    # runs whose files are damaged are named and left out of what is drawn from their files
    damaged = {rd: why for rd in df["run_dir"] if (why := damage(d / rd))}
    text = (d / "scenario.toml").read_text() if (d / "scenario.toml").exists() else None
    title = meta.get("title") or f"dcfair sweep: {meta.get('scenario')}"
    body = []
    views = Views()
    if meta.get("description"):
        body.append(f"<p>{esc(meta['description'])}</p>")
    body += provenance_section(meta.get("engine_build"), meta.get("command"),
                               scenario_as_run(text, meta.get("overrides", [])), meta.get("scenario_file", ""))
    body += scenario_section(meta.get("overrides", []), [
        ("scenario", meta.get("scenario")),
        ("varied", "; ".join(f"{k} = {', '.join(map(str, v))}" for k, v in values.items())),
        ("seeds", ", ".join(map(str, meta.get("seeds", [])))),
        ("runs", len(df)), ("backend", meta.get("backend")), ("engine build", meta.get("engine_build")),
    ])
    for n in table_note:
        body.append(note(n))
    if damaged:
        body.append(note(f"{len(damaged)} run(s) are damaged and left out of the per-flow views; rerun the sweep's "
                         "command to repair them: " + "; ".join(f"{rd}: {why}" for rd, why in sorted(damaged.items()))))
    metrics = _sweep_metrics(df, keys)
    body.append("<h2>Summary</h2>")
    body.append(f"<p>Mean ± standard deviation over {len(meta.get('seeds', []))} seed(s); "
                "every run is one row of sweep.csv / sweep.parquet.</p>")
    rows = []
    for combo, g in df.groupby(keys, sort=False, dropna=False):
        combo = combo if isinstance(combo, tuple) else (combo,)
        rows.append(list(combo) + [mean_std(g[m].dropna()) for m in metrics])
    body.append(html_table(keys + metrics, rows, left=len(keys)))
    from dcfair import notes as reading

    body += [note(n) for n in reading.sweep_notes(df, keys, metrics, d)]

    body.append("<h2>Metrics against the varied keys</h2>")
    if metrics:
        from dcfair import explore

        body.append(views.add(explore.sweep_view(df, keys, metrics)))
    for k in keys:
        others = [o for o in keys if o != k and df[o].nunique() > 1]
        body.append(f"<h3>{esc(k)}</h3>")
        body.append(fig_metric_vs_key(df, k, values[k], metrics, others))

    # Per-flow views for the one key that takes few values (the demo's disciplines).
    multi = [k for k in keys if df[k].nunique() > 1]
    if len(multi) <= 1 and 1 < len(df) and (not multi or df[multi[0]].nunique() <= MAX_OVERLAYS):
        k = multi[0] if multi else keys[0]
        groups, ts_groups, drops_rows, first_runs = [], [], [], []
        window = None
        norm = value_matcher(values[k])
        for v in values[k]:
            g = df[(df[k].map(norm) == norm(v)) & ~df["run_dir"].isin(damaged)]
            if g.empty:
                continue
            flows = [read_table(d / rd / "flows.csv", "flows") for rd in g["run_dir"]]
            groups.append((str(v), pd.concat(flows, ignore_index=True)))
            first = d / g["run_dir"].iloc[0]
            ts = read_table(first / "timeseries.csv", "timeseries") if (first / "timeseries.csv").exists() else None
            ts_groups.append((f"{k} = {v} (seed {g['seed'].iloc[0]})", ts))
            win = json.loads((first / "summary.json").read_text()).get("window_s")
            paths = read_table(first / "paths.csv", "paths") if (first / "paths.csv").exists() else None
            first_runs.append((f"{k} = {v} (seed {g['seed'].iloc[0]})", flows[0], ts, win, paths))
            drops_rows.append((str(v), {c[len("drops_"):]: float(g[c].mean()) for c in g.columns
                                        if c.startswith("drops_")}))
            if window is None:
                window = json.loads((first / "summary.json").read_text()).get("window_s")
        body.append(f"<h2>Flows, by {esc(k)}</h2>")
        body += explore_flows(views, first_runs)
        body += flow_views(groups, ts_groups, drops_rows, window)
    body += first_run_fabric(views, d, df[~df["run_dir"].isin(damaged)], keys, "sweep")
    sub = f"{len(df)} runs: " + " x ".join(f"{len(v)} {k}" for k, v in values.items()) + \
          f" x {len(meta.get('seeds', []))} seed(s)"
    return page(title, sub, body, views)


# ---------------------------------------------------------------------------------------------
# A reproduction
# ---------------------------------------------------------------------------------------------

def report_reproduction(d: Path) -> str:
    import pandas as pd

    doc = json.loads((d / "claims.json").read_text())
    views = Views()
    body = [f"<p>{esc(doc.get('title', ''))}</p>"]
    body += provenance_section(doc.get("engine_build"), doc.get("command"), None)
    body.append("<h2>Claims</h2>")
    rows, classes = [], []
    for c in doc.get("claims", []):
        st = c.get("dcfair", {})
        val = "-" if st.get("mean") is None else f"{mean_std(st.get('values') or [st['mean']])} (n={st.get('n')})"
        holds = bool(c.get("holds"))
        rows.append([c.get("id"), c.get("claim"), c.get("paper_value"), val, "yes" if holds else "NO", c.get("criterion")])
        classes.append([None, None, None, None, "yes" if holds else "no", None])
    held = sum(1 for c in doc.get("claims", []) if c.get("holds"))
    body.append(f"<p>{held} of {len(rows)} claims hold{' (quick run)' if doc.get('quick') else ''}.</p>")
    body.append(html_table(["claim", "statement", "paper", "dcfair", "holds", "criterion"], rows, left=3,
                           classes=[c[:5] + ["l"] for c in classes]))
    # each claim in full on the left, the figure beside it (it stays in view as claims open)
    fig = d / doc.get("figure_file", "figure.png")
    figure = (png_tag(fig.read_bytes(), f"{doc.get('figure')} as reproduced",
                      f"{doc.get('paper')} {doc.get('figure')}, as dcfair reproduces it.")
              if fig.exists() else note("figure.png is missing."))
    body.append('<div class="beside"><div class="claims"><h3>Each claim, in full</h3>'
                + "".join(claim_details(c) for c in doc.get("claims", []))
                + f'</div><div class="figure"><h3>Figure</h3>{figure}</div></div>')
    res = d / "results.csv"
    if res.exists():
        df = pd.read_csv(res)
        labels = [c for c in df.columns if c not in ("seed", "run_dir") and not pd.api.types.is_numeric_dtype(df[c])]
        metrics = [m for m in MAIN_METRICS if m in df.columns]
        body.append("<h2>Runs</h2>")
        if labels:
            rows = []
            for combo, g in df.groupby(labels, sort=False, dropna=False):
                combo = combo if isinstance(combo, tuple) else (combo,)
                rows.append(list(combo) + [len(g)] + [mean_std(g[m].dropna()) for m in metrics])
            body.append(html_table(labels + ["runs"] + metrics, rows, left=len(labels)))
        else:
            body.append(html_table(list(df.columns), df.astype(object).values.tolist()))
        body.append("<p>results.csv has one row per run (mean ± std over seeds above).</p>")
        # results.csv: the run's labels, then its seed, then its metrics
        keys = list(df.columns[:list(df.columns).index("seed")]) if "seed" in df.columns else labels
        body += first_run_fabric(views, d, df, keys, "reproduction")
    sub = f"{doc.get('paper')}, {doc.get('figure')}: {doc.get('runs')} runs, seeds {doc.get('seeds')}"
    return page(f"dcfair reproduction: {doc.get('reproduction')}", sub, body, views)


def first_run_fabric(views: Views, d: Path, df, keys: Sequence[str], where: str) -> List[str]:
    """The fabric view of the first run of table ``df`` (a sweep's or a reproduction's: one row
    per run, its directory in ``run_dir`` relative to ``d``), headed by its ``keys`` and seed;
    nothing for a table that names no run."""
    from dcfair.results import Result

    if "run_dir" not in df.columns or not len(df):
        return []
    first = df.iloc[0]
    run = (d / str(first["run_dir"])).resolve()
    if not (run / "summary.json").exists():
        return [note(f"The runs of this {where} are not at {run}: no fabric view.")]
    what = ", ".join(f"{k} = {first[k]}" for k in keys) or "the first run"
    out = fabric_section(views, run, Result.load(run))
    out[0] = f"<h2>Fabric of one run ({esc(what)}, seed {esc(first['seed'])})</h2>"
    return out


def _stat(st: Optional[Dict[str, Any]]) -> str:
    """A claim's quantity over seeds: mean, range and n."""
    if not st or st.get("mean") is None:
        return "no value"
    return (f"{cell(st['mean'])} (min {cell(st.get('min'))}, max {cell(st.get('max'))}, n = {st.get('n')}; "
            f"seeds: {', '.join(cell(v) for v in st.get('values') or [])})")


def claim_details(c: Dict[str, Any]) -> str:
    """One claim, collapsible: its quote, the paper's value, dcfair's values, the criterion and
    verdict, the explanation, every reading explored and the second opinions."""
    holds = bool(c.get("holds"))
    rows = [("quote (the paper's words)", c.get("quote") or "-"), ("paper", c.get("paper_value")),
            ("dcfair", _stat(c.get("dcfair"))), ("criterion", c.get("criterion")),
            ("verdict", "holds" if holds else "does not hold")]
    if c.get("explanation"):
        rows.append(("explanation", c["explanation"]))
    out = [f'<details class="claim"><summary><b>{esc(c.get("id"))}</b>: '
           f'<span class="{"yes" if holds else "no"}">{"holds" if holds else "does not hold"}</span> '
           f'{esc(c.get("claim"))}</summary>', html_table(None, rows, left=2)]
    if c.get("explored"):
        out.append("<p>Readings explored (each a rerun with another reasonable reading of the paper):</p>")
        out.append(html_table(["reading", "what", "dcfair", "holds", "command"],
                              [[e.get("reading"), e.get("what"), _stat(e.get("dcfair")),
                                "yes" if e.get("holds") else "no", e.get("command")] for e in c["explored"]], left=2))
    ops = c.get("second_opinions") or ([c["second_opinion"]] if c.get("second_opinion") else [])
    if ops:
        out.append("<p>Second opinions (the same claim in a peer simulator):</p>")
        out.append(html_table(["peer", "value", "holds", "command"],
                              [[f"{o.get('peer')} ({o.get('title', '')})",
                                cell(o.get("value")) if o.get("value") is not None else (o.get("why_not") or "-"),
                                "-" if o.get("holds") is None else ("yes" if o.get("holds") else "no"),
                                o.get("command")] for o in ops], left=1))
    out.append("</details>")
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------------------------

def kind_of(d: Path) -> str:
    if (d / "claims.json").exists():
        return "reproduction"
    if (d / "sweep.json").exists() and ((d / "sweep.parquet").exists() or (d / "sweep.csv").exists()):
        return "sweep"
    if (d / "summary.json").exists() and (d / "flows.csv").exists():
        return "run"
    raise ValueError("not a dcfair result directory (no summary.json + flows.csv, sweep.json + sweep.csv, "
                     "or claims.json)")


def write_report(dir: "str | os.PathLike[str]", out: "str | os.PathLike[str] | None" = None) -> Path:
    """Writes the report of ``dir`` (to ``dir/report.html`` unless ``out``); returns its path.
    :class:`dcfair.InvalidInput` if ``dir`` is not a result directory."""
    from dcfair.errors import InvalidInput

    d = Path(dir)
    if not d.is_dir():
        raise InvalidInput(os.fspath(d), "no such directory" if not d.exists() else "not a directory")
    try:
        kind = kind_of(d)
    except ValueError as e:
        raise InvalidInput(os.fspath(d), str(e)) from None
    text = {"run": report_run, "sweep": report_sweep, "reproduction": report_reproduction}[kind](d)
    path = Path(out) if out is not None else d / "report.html"
    from dcfair.outdir import atomic_write

    atomic_write(path, text.encode("utf-8"))
    return path
