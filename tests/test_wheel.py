"""A wheel install is whole: the wheel of the checkout, installed (not editable) into a fresh
virtualenv with pip, then, from a directory that is not the checkout, a reproduction, the demo
and the real-packet switch run from the installed package alone (its scenarios, workloads and
switch are package data and code).

The wheel is built by `maturin build --release` for the checkout's own interpreter, as `make
install` builds the extension, so that it reuses the checkout's `target/` and costs a link, not a
compile (built for the fresh virtualenv's interpreter, pyo3 and every crate above it compile
again: about 100 s here). The wheel is abi3: the same file installs in any CPython >= 3.9. The
testbed part needs root and network namespaces and says why when it skips (the same conditions
as tests/test_testbed.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, TESTBED_TWO_FLOWS
from dcfair.testbed import netns




@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """(venv's bin directory, a working directory outside the checkout)."""
    d = tmp_path_factory.mktemp("wheel")
    venv = d / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    maturin = Path(sys.executable).parent / "maturin"
    dist = d / "dist"
    p = subprocess.run([str(maturin), "build", "--release", "-i", sys.executable, "-o", str(dist),
                        "-m", str(REPO / "crates" / "py" / "Cargo.toml")],
                       cwd=REPO, env={**env, "PYO3_PYTHON": sys.executable}, capture_output=True, text=True, timeout=2400)
    assert p.returncode == 0, p.stderr[-4000:]
    [whl] = dist.glob("dcfair-*.whl")
    p = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-input", str(whl)],
                       env=env, capture_output=True, text=True, timeout=2400)
    assert p.returncode == 0, p.stderr[-4000:]
    work = d / "elsewhere"
    work.mkdir()
    return venv / "bin", work, env


def run(wheel, *argv, timeout=600):
    bindir, work, env = wheel
    return subprocess.run([str(bindir / argv[0]), *map(str, argv[1:])], cwd=work, env=env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def test_the_package_is_installed_not_linked_to_the_checkout(wheel):
    p = run(wheel, "python", "-c", "import dcfair, dcfair.data as d; print(dcfair.__file__); print(d.SCENARIOS)")
    assert p.returncode == 0, p.stderr
    where, scenarios = p.stdout.split()
    assert not where.startswith(str(REPO)), where
    assert Path(scenarios, "papers", "hcf", "longflows.toml").is_file()
    assert Path(scenarios, "workloads", "datamining_cdf.txt").is_file()


def test_a_reproduction_runs_from_the_wheel(wheel):
    p = run(wheel, "dcfair", "reproduce", "hcf-credits", "--quick")
    assert p.returncode == 0, p.stderr[-3000:]
    out = wheel[1] / "out" / "reproduce" / "hcf-credits-quick"
    doc = json.loads((out / "claims.json").read_text())
    assert doc["claims"] and doc["engine_build"] and (out / "figure.png").stat().st_size > 0


def test_a_reproduction_that_reads_a_cdf_runs_from_the_wheel(wheel):
    p = run(wheel, "dcfair", "reproduce", "fqcodel-fig4", "--quick", "--out", "fq")
    assert p.returncode == 0, p.stderr[-3000:]


def test_the_demo_runs_from_the_wheel(wheel):
    p = run(wheel, "python", "-m", "dcfair.demo", "--duration", "20", "--seeds", "1", "--sample-interval", "0",
            "--out", "demo")
    assert p.returncode == 0, p.stderr[-3000:]
    assert (wheel[1] / "demo" / "report.html").stat().st_size > 10_000


def test_the_switch_rides_in_the_wheel(wheel):
    p = run(wheel, "python", "-m", "dcfair.switch", "--help")
    assert p.returncode == 0 and "--config" in p.stdout, (p.stdout, p.stderr)
    p = run(wheel, "python", "-m", "dcfair.switch", "--config", "nope.toml", "--stats", "s.json")
    assert p.returncode == 2 and "--config" in p.stderr, p.stderr


@pytest.mark.skipif(netns.why_not_available() is not None, reason=f"testbed unavailable: {netns.why_not_available()}")
def test_the_testbed_runs_from_the_wheel(wheel):
    f = wheel[1] / "tb.toml"
    f.write_text(TESTBED_TWO_FLOWS)
    prefix = f"dcw{os.getpid() % 10000}-"
    try:
        p = run(wheel, "dcfair", "testbed", "run", f, "--switch", "dcfair", "--out", "tb", "--prefix", prefix, timeout=300)
        assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
        summary = json.loads((wheel[1] / "tb" / "summary.json").read_text())
        assert summary["testbed"]["switch"] == "dcfair" and summary["metrics"]["utilization"] > 0.5
    finally:
        run(wheel, "dcfair", "testbed", "down", "--prefix", prefix)
