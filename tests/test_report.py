"""`dcfair report DIR`: the page of a run, a sweep and a reproduction is self-contained, and
its figures render in a real headless browser (Debian's chromium)."""

from __future__ import annotations

import base64
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import dcfair
from conftest import LONGFLOWS, assert_clean_error, dcfair as cli

SHORT = {"sim.duration_s": 3, "measure.window_s": 1}


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    """A run (with time series), a sweep (with time series) and a quick reproduction."""
    base = tmp_path_factory.mktemp("report")
    sc = dcfair.Scenario.load(LONGFLOWS).with_overrides({**SHORT, "measure.sample_interval_s": 0.01,
                                                         "measure.sample_flows": False})
    dcfair.run(sc.set("queue.kind", "red"), out=base / "run")
    dcfair.sweep(sc, {"queue.kind": ["droptail", "hcf"], "queue.limit_pkts": [10, 20]}, seeds=2,
                 out=base / "sweep", progress=False)
    p = cli("reproduce", "hcf-throughput", "--quick", "--out", base / "repro")
    assert p.returncode == 0, p.stderr
    return base


def _markup(text: str) -> str:
    """The page without the contents of its scripts (Bokeh's runtime holds HTML in strings)."""
    return re.sub(r"(<script\b[^>]*>).*?</script>", r"\1</script>", text, flags=re.S | re.I)


def _images(text: str):
    return re.findall(r'<img [^>]*src="([^"]*)"', _markup(text))


@pytest.mark.parametrize("kind", ["run", "sweep", "repro"])
def test_report_is_self_contained(dirs, kind):
    from PIL import Image

    p = cli("report", dirs / kind)
    assert p.returncode == 0, p.stderr
    page = dirs / kind / "report.html"
    assert p.stdout.strip() == f"wrote {page}"
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    # nothing outside the file: scripts and styles inline, no style sheet, image or script
    # fetched from anywhere (the browser test checks what a browser actually fetches)
    markup = _markup(text)
    assert "<link" not in markup.lower() and "@import" not in markup
    tags = re.findall(r"<(?:script|img|iframe|source|embed)\b[^>]*>", markup, re.I)
    assert not [t for t in tags if re.search(r'\b(src|href)="(?!data:|#)', t)], "a reference outside the page"
    assert len(text.encode()) < 10 * 2**20, "a report over 10 MB"
    imgs = _images(text)
    assert imgs, "no figure"
    for src in imgs:
        assert src.startswith("data:image/png;base64,")
        im = Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1])))
        assert im.size[0] > 100 and im.size[1] > 100


def test_run_report_sections(dirs):
    text = (dirs / "run" / "report.html").read_text()
    for h in ("Scenario", "Summary", "Per-flow throughput", "Flow completion times", "Starvation",
              "Queue occupancy", "Drops by reason", "Measured ports"):
        assert f">{h}</h" in text, h
    assert 'alt="queue occupancy over time"' in text  # the time series were sampled
    assert "No finished flows" in text  # long-lived flows: said, not drawn
    assert "hcf-longflows" in text and "red" in text


def test_sweep_report_sections(dirs):
    text = (dirs / "sweep" / "report.html").read_text()
    assert 'alt="metrics against queue.kind"' in text and 'alt="metrics against queue.limit_pkts"' in text
    assert "droptail" in text and "± " in text
    # two keys take several values: no per-flow overlay section
    assert "Flows, by" not in text


def test_sweep_report_with_one_key_has_per_flow_views(tmp_path):
    sc = dcfair.Scenario.load(LONGFLOWS).with_overrides(SHORT)
    dcfair.sweep(sc, {"queue.kind": ["droptail", "sfq", "hcf"]}, out=tmp_path, progress=False)
    text = dcfair.report(tmp_path).read_text()
    assert ">Flows, by queue.kind</h2>" in text
    assert 'alt="per-flow throughput histogram"' in text and 'alt="CDF of starvation gaps"' in text
    assert "No time series" in text  # not sampled: said how to get them


def test_reproduction_report(dirs):
    text = (dirs / "repro" / "report.html").read_text()
    claims = json.loads((dirs / "repro" / "claims.json").read_text())["claims"]
    assert ">Claims</h2>" in text
    # each claim in full, then the figure, in one block that puts them side by side
    beside = text[text.index('<div class="beside">'):]
    assert beside.index('<details class="claim">') < beside.index('<div class="figure"><h3>Figure</h3><figure><img')
    for c in claims:
        assert c["id"] in text
    assert text.count('<td class="yes">') + text.count('<td class="no">') == len(claims)


def test_not_a_result_directory(tmp_path):
    assert_clean_error(cli("report", tmp_path), 2, "invalid input", "not a dcfair result directory")
    assert_clean_error(cli("report", tmp_path / "missing"), 2, "no such directory")


# ---------------------------------------------------------------- in a real browser


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no chromium on PATH: the browser check of the report needs Debian's `chromium` "
                "(`make test-deps` installs it with apt-get when run as root)")


def _browser(*args: str, tmp: Path) -> subprocess.CompletedProcess:
    cmd = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--no-first-run", "--hide-scrollbars", f"--user-data-dir={tmp / 'profile'}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


#: Injected into a copy of the page (after the report's own scripts): once everything has
#: loaded, record every image's natural size on <body>.
MARKER = """<script>
window.addEventListener("load", function () {
  var sizes = Array.prototype.map.call(document.images, function (i) {
    return i.complete ? i.naturalWidth + "x" + i.naturalHeight : "incomplete"; });
  document.body.setAttribute("data-images", sizes.join(" "));
});
</script></body>"""


@pytest.mark.parametrize("kind", ["run", "sweep", "repro"])
def test_figures_render_in_a_browser(dirs, kind, tmp_path):
    from PIL import Image

    page = dirs / kind / "report.html"
    if not page.exists():
        assert cli("report", dirs / kind).returncode == 0
    text = page.read_text()
    n = len(_images(text))
    probe = tmp_path / "probe.html"
    head, body_end, tail = text.rpartition("</body>")  # the page's own, not one in Bokeh's strings
    assert body_end
    probe.write_text(head + MARKER + tail)
    p = _browser("--virtual-time-budget=10000", "--dump-dom", probe.as_uri(), tmp=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    m = re.search(r'data-images="([^"]*)"', p.stdout)
    assert m, "the page did not finish loading in the browser:\n" + p.stdout[-1000:]
    sizes = m.group(1).split()
    assert len(sizes) == n, (sizes, n)
    for s in sizes:
        assert s != "incomplete"
        w, h = map(int, s.split("x"))
        assert w > 100 and h > 100, sizes  # decoded: a real picture, not a broken-image icon

    # And a screenshot of the page itself, unmodified: not blank, figures and tables drawn.
    shot = tmp_path / "shot.png"
    p = _browser("--window-size=1200,4000", f"--screenshot={shot}", page.as_uri(), tmp=tmp_path)
    assert p.returncode == 0 and shot.exists(), p.stderr[-2000:]
    im = Image.open(shot).convert("RGB")
    assert im.size == (1200, 4000)
    import numpy as np

    a = np.asarray(im)
    non_white = float((a < 235).any(axis=2).mean())
    colors = len(np.unique(a.reshape(-1, 3), axis=0))
    assert non_white > 0.03 and colors > 50, (non_white, colors)


def test_sweep_values_match_numbers_by_value():
    """A column of 20 and 40.5 holds 20.0: it is still the sweep's value 20."""
    import pandas as pd

    from dcfair.reports import per_value

    df = pd.DataFrame({"k": [20.0, 20.0, 40.5, 40.5], "m": [1.0, 3.0, 5.0, float("nan")]})
    assert per_value(df, "k", [20, 40.5, 99], "m") == [(0, 2.0, pytest.approx(1.4142135), [1.0, 3.0]), (1, 5.0, 0.0, [5.0])]
    df = pd.DataFrame({"k": ["droptail", "hcf"], "m": [1.0, 2.0]})
    assert [p[0] for p in per_value(df, "k", ["hcf", "droptail"], "m")] == [0, 1]


def test_older_results_still_get_a_page_that_says_what_is_missing(dirs, tmp_path):
    """A run directory from before provenance.json and fabric.csv: the page is made, and says
    what the files do not hold."""
    old = tmp_path / "old"
    shutil.copytree(dirs / "run", old)
    for f in ("provenance.json", "fabric.csv", "port_drops.csv", "report.html"):
        (old / f).unlink(missing_ok=True)
    p = cli("report", old)
    assert p.returncode == 0, p.stderr
    text = (old / "report.html").read_text()
    assert "not recorded (results of a dcfair that did not record its command)" in text
    assert "No fabric.csv in these results" in text
    assert "Every flow" in text  # the interactive flows table needs only flows.csv
