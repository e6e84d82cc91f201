"""The report's interactive views in a real browser: Debian's chromium driven by Selenium
(chromium-driver), with the network cut off. Each test acts as a reader would (sorts the
flows table, filters it, clicks a flow, picks another metric) and checks that the page
changed accordingly; a view that does not respond fails."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LONG = REPO / "scenarios" / "papers" / "hcf" / "longflows.toml"


def dcfair(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dcfair", *args], cwd=REPO, capture_output=True, text=True)


def _driver():
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (make install installs it)")
    chrome = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chrome or not driver:
        pytest.skip("no chromium or chromedriver on PATH: `make test-deps` installs Debian's chromium and "
                    "chromium-driver")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chrome
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000",
              # networking off: every request that leaves the page goes to a closed port
              "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>"):
        opts.add_argument(a)
    return webdriver.Chrome(service=Service(driver), options=opts)


@pytest.fixture(scope="module")
def browser():
    d = _driver()
    yield d
    d.quit()


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """A run with its flows sampled and a two-discipline sweep, each with its report."""
    root = tmp_path_factory.mktemp("browser")
    run, sweep = root / "run", root / "sweep"
    p = dcfair("run", str(LONG), "--set", "sim.duration_s=4", "--set", "measure.window_s=2",
               "--set", "measure.sample_interval_s=0.05", "--out", str(run), "--quiet")
    assert p.returncode == 0, p.stderr
    p = dcfair("sweep", str(LONG), "--vary", "queue.kind=droptail,hcf", "--seeds", "2", "--set", "sim.duration_s=3",
               "--set", "measure.window_s=2", "--out", str(sweep), "--quiet")
    assert p.returncode == 0, p.stderr
    for d in (run, sweep):
        p = dcfair("report", str(d))
        assert p.returncode == 0, p.stderr
    return {"run": run / "report.html", "sweep": sweep / "report.html"}


#: A function ``find(selector)`` in the page: every element that matches, also inside the
#: shadow roots Bokeh renders its views in.
FIND = """
const find = (sel, root = document, out = []) => {
    root.querySelectorAll(sel).forEach(e => out.push(e));
    root.querySelectorAll('*').forEach(e => { if (e.shadowRoot) find(sel, e.shadowRoot, out); });
    return out;
};
"""


def _find(browser, selector: str):
    return browser.execute_script(FIND + "return find(arguments[0]);", selector)


def _open(browser, page: Path, ready: str = ".slick-row"):
    """Opens ``page`` and waits until Bokeh has drawn what matches ``ready`` (by default the
    flows table's rows)."""
    browser.get(page.as_uri())
    _wait(browser, FIND + "return window.Bokeh !== undefined && Bokeh.documents.length > 0 && "
                          "find(arguments[0]).length > 0", f"nothing matching {ready} was drawn", ready=ready)


def _wait(browser, script: str, why: str, timeout: float = 20.0, ready: str = ""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if browser.execute_script(script, ready):
            return
        time.sleep(0.1)
    raise AssertionError(why)


#: ``model(name)``: the Bokeh model of that name, in whichever of the page's documents holds it.
MODEL = "const model = n => Bokeh.documents.map(d => d.get_model_by_name(n)).find(m => m);"


def _model(browser, name: str, expr: str):
    return browser.execute_script(f"{MODEL} const m = model('{name}'); return {expr};")


def _set(browser, name: str, prop: str, value) -> None:
    browser.execute_script(f"{MODEL} model('{name}').{prop} = arguments[0];", value)


def _column(browser, title: str):
    """The shown cells of the flows table's column ``title`` (the grid renders the visible rows)."""
    return browser.execute_script(FIND + """
        const hs = find('.slick-header-column');
        const i = hs.findIndex(h => h.textContent.trim() === arguments[0]);
        if (i < 0) return null;
        return find('.slick-row')
            .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
            .map(r => r.children[i].textContent.trim());
    """, title)


def _num(s: str) -> float:
    return float(s.replace(",", "")) if s else float("nan")


def test_the_page_fetches_nothing(browser, pages):
    _open(browser, pages["run"])
    urls = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert [u for u in urls if not u.startswith(("data:", "blob:", "file:"))] == []


def test_sorting_the_flows_table(browser, pages):
    _open(browser, pages["run"])
    title = "packets in window"
    before = [_num(x) for x in _column(browser, title)]
    header = [h for h in _find(browser, ".slick-header-column") if h.text.strip() == title][0]
    header.click()
    up = [_num(x) for x in _column(browser, title)]
    assert up == sorted(up), "one click on the title did not sort the column ascending"
    header.click()
    down = [_num(x) for x in _column(browser, title)]
    assert down == sorted(down, reverse=True), "a second click did not sort it descending"
    assert up != before or before == sorted(before)


def test_filtering_and_clicking_a_flow(browser, pages):
    _open(browser, pages["run"])
    assert _model(browser, "flow_delivered_source", "m.data.t.length") == 0
    rows = sorted(_find(browser, ".slick-row"), key=lambda r: r.location["y"])
    cell = rows[2].find_element("css selector", ".slick-cell")
    flow = cell.text.strip()
    cell.click()
    _wait(browser, MODEL + "return model('flow_delivered_source').data.t.length > 0",
          "clicking a flow drew nothing")
    assert _model(browser, "flow_delivered", "m.title.text").startswith(f"flow {flow} ")
    v = _model(browser, "flow_delivered_source", "m.data.v")
    assert v == sorted(v) and v[-1] > 0, "delivered bytes are cumulative and the flow delivered some"
    # the filter keeps the rows whose group, kind, src or dst contains the text
    shown = len(_model(browser, "flows_table", "m.view.filter.indices"))
    _set(browser, "flows_filter", "value_input", "no such host")
    assert len(_model(browser, "flows_table", "m.view.filter.indices")) == 0
    _set(browser, "flows_filter", "value_input", "")
    assert len(_model(browser, "flows_table", "m.view.filter.indices")) == shown


def test_the_sweep_views_respond(browser, pages):
    _open(browser, pages["sweep"])
    y0 = _model(browser, "sweep_points", "m.renderers.map(r => r.data_source.data.y)")
    options = _model(browser, "sweep_metric", "m.options")
    assert len(options) > 1
    _set(browser, "sweep_metric", "value", options[1])
    y1 = _model(browser, "sweep_points", "m.renderers.map(r => r.data_source.data.y)")
    assert y1 != y0, "picking another metric did not change the points"
    assert _model(browser, "sweep_points", "m.left[0].axis_label") == options[1]
    # the sweep's flows view picks among its runs
    runs = _model(browser, "flows_run", "m.options")
    assert len(runs) == 2
    first = _model(browser, "flows_table", "m.view.filter.indices")
    _set(browser, "flows_run", "value", runs[1])
    second = _model(browser, "flows_table", "m.view.filter.indices")
    assert second and not set(first) & set(second), "picking the other run did not show its flows"


OUTCAST = REPO / "python" / "dcfair" / "scenarios" / "papers" / "outcast" / "fattree.toml"


@pytest.fixture(scope="module")
def outcast(tmp_path_factory):
    """The Outcast fat-tree (case I, 6 six-hop flows) with every switch port measured, and its
    report."""
    out = tmp_path_factory.mktemp("outcast") / "run"
    p = dcfair("run", str(OUTCAST), "--set", "groups.six_hop.count=6", "--set", 'measure.ports="all"',
               "--set", "sim.duration_s=0.3", "--out", str(out), "--quiet")
    assert p.returncode == 0, p.stderr
    p = dcfair("report", str(out))
    assert p.returncode == 0, p.stderr
    return out


def test_the_fabric_view_shows_where_the_two_hop_flow_loses(browser, outcast):
    """Outcast: the congested port is coloured, and clicking it lists the 2-hop flow's drops
    first (it loses more there than any 6-hop flow)."""
    import pandas as pd

    _open(browser, outcast / "report.html")
    assert _model(browser, "fabric_metric", "m.value") == "drops (whole run)"
    ports = _model(browser, "fabric_ports", "{port: m.data.port, value: Array.from(m.data.value)}")
    value = dict(zip(ports["port"], ports["value"]))
    drops = pd.read_csv(outcast / "ports.csv").set_index("port")["drops"]
    worst = drops.idxmax()
    assert value[worst] == drops[worst] > 0, "the port that dropped most is not coloured by its drops"
    assert value["e0_0->h0"] == drops["e0_0->h0"] > 0
    i = ports["port"].index("e0_0->h0")
    _set(browser, "fabric_ports", "selected.indices", [i])
    listed = _model(browser, "fabric_port_drops", "{flow: m.data.flow_id, group: m.data.group, pkts: m.data.pkts}")
    two_hop = pd.read_csv(outcast / "flows.csv").query("group == 'two_hop'")["flow_id"].tolist()
    assert listed["group"][0] == "two_hop" and listed["flow"][0] in two_hop, listed
    assert listed["pkts"] == sorted(listed["pkts"], reverse=True)
    by_port = pd.read_csv(outcast / "port_drops.csv").query("port == 'e0_0->h0'")
    assert sum(listed["pkts"]) == by_port["pkts"].sum() == drops["e0_0->h0"]
    assert "e0_0->h0" in _model(browser, "fabric_queue_plot", "m.title.text")
    assert len(_model(browser, "fabric_port_queue", "m.data.q")) > 10


def test_clicking_a_flow_draws_the_queues_on_its_path(browser, outcast):
    """Outcast: the 2-hop flow's path is its host's port and the congested e0_0 -> h0; a 6-hop
    flow's is six ports, each drawn with the queue the run sampled there."""
    import pandas as pd

    _open(browser, outcast / "report.html")
    flows = _model(browser, "flows_source", "{flow: m.data.flow_id, group: m.data.group}")
    paths = pd.read_csv(outcast / "paths.csv", keep_default_na=False)
    ts = pd.read_csv(outcast / "timeseries.csv").query("metric == 'queue_pkts'")
    sampled = set(ts["port"])
    for group, hops in (("two_hop", 2), ("six_hop", 6)):
        i = flows["group"].index(group)
        flow = flows["flow"][i]
        want = paths.query("flow_id == @flow")["port"].tolist()
        assert len(want) == hops and want[-1] == "e0_0->h0", want
        _set(browser, "flows_source", "selected.indices", [i])
        drawn = _model(browser, "flow_path_queues", "{port: m.data.port, ys: m.data.ys.map(y => Array.from(y))}")
        assert drawn["port"] == [p for p in want if p in sampled] and "e0_0->h0" in drawn["port"], drawn["port"]
        k = drawn["port"].index("e0_0->h0")
        bottleneck = ts.query("port == 'e0_0->h0'")["value"].tolist()
        assert drawn["ys"][k] == bottleneck and max(bottleneck) > 0, "the drawn queue is not the sampled one"
        assert f"flow {flow}: path {' | '.join(want)}" in _model(browser, "flow_path_plot", "m.title.text")


def test_the_fabric_slider_moves_through_time(browser, outcast):
    _open(browser, outcast / "report.html")
    _set(browser, "fabric_metric", "value", "queue at the slider's time (packets)")
    ports = _model(browser, "fabric_ports", "m.data.port")
    i = ports.index("e0_0->h0")
    series = _model(browser, "fabric_ports", f"Array.from(m.data.queue[{i}])")
    k = max(range(len(series)), key=lambda j: series[j] or 0)
    assert series[k] > 0, "the bottleneck never queued"
    _set(browser, "fabric_time", "value", k)
    assert _model(browser, "fabric_ports", f"m.data.value[{i}]") == series[k]
    assert _model(browser, "fabric_time", "m.title").startswith(f"sample {k + 1} of {len(series)}")
    _set(browser, "fabric_time", "value", 0)
    assert _model(browser, "fabric_ports", f"m.data.value[{i}]") == series[0]


def test_outcast_case1_reproduction_shows_the_two_hop_flows_drops(browser, tmp_path_factory):
    """The issue's check on the reproduction itself: `outcast-case1`'s page draws the fabric of
    its first run, and clicking the congested port lists the 2-hop flow's drops first."""
    import pandas as pd

    out = tmp_path_factory.mktemp("case1") / "repro"
    p = dcfair("reproduce", "outcast-case1", "--quick", "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert dcfair("report", str(out)).returncode == 0
    run = out / pd.read_csv(out / "results.csv")["run_dir"].iloc[0]
    _open(browser, out / "report.html", ready="canvas")
    # the figure sits beside the claims, and stays in view beside them
    claims, fig = (browser.execute_script(f"return document.querySelector('{s}').getBoundingClientRect().toJSON()")
                   for s in (".beside > .claims", ".beside > .figure img"))
    assert fig["left"] >= claims["right"] and fig["top"] < claims["bottom"] and fig["width"] > 400, (claims, fig)
    ports = _model(browser, "fabric_ports", "{port: m.data.port, value: Array.from(m.data.value)}")
    coloured = {p: v for p, v in zip(ports["port"], ports["value"]) if v is not None}  # NaN (None here): not measured
    assert max(coloured, key=coloured.get) == "e0_0->h0", coloured
    _set(browser, "fabric_ports", "selected.indices", [ports["port"].index("e0_0->h0")])
    listed = _model(browser, "fabric_port_drops", "{flow: m.data.flow_id, group: m.data.group, pkts: m.data.pkts}")
    flows = pd.read_csv(run / "flows.csv")
    assert listed["group"][0] == "two_hop", listed
    assert listed["flow"][0] == flows.query("group == 'two_hop'")["flow_id"].iloc[0]
