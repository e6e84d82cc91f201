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


def _open(browser, page: Path):
    browser.get(page.as_uri())
    _wait(browser, FIND + "return window.Bokeh !== undefined && Bokeh.documents.length > 0 && "
                          "find('.slick-row').length > 0", "the flows table never rendered")


def _wait(browser, script: str, why: str, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if browser.execute_script(script):
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
