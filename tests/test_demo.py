"""python -m dcfair.demo (make demo): the comparison table and a small real demo."""

from __future__ import annotations

import subprocess
import sys


from conftest import LONGFLOWS, REPO


def test_mean_std():
    from dcfair.demo import mean_std

    assert mean_std([]) == "-"
    assert mean_std([0.5]) == "0.5"
    assert mean_std([1.0, 2.0, 3.0]) == "2 ± 1"
    assert mean_std([0.8, 0.8, 0.8]) == "0.8 ± 0"  # no 1e-16 rounding noise


def test_comparison_table_has_a_column_per_discipline_in_order():
    from dcfair.demo import comparison

    rows = [
        {"discipline": d, "seed": s, "utilization": u, "starved_fraction": f, "wall_time_s": 1.0}
        for d, u, f in [("hcf", 0.99, 0.015), ("droptail", 0.98, 0.32)]
        for s in (1, 2)
    ]
    header, table = comparison(rows, ["droptail", "red", "hcf"])
    assert header == ["metric", "droptail", "hcf"]  # red had no successful run
    assert [r[0] for r in table] == ["utilization", "starved_fraction", "wall_time_s"]
    assert table[1] == ["starved_fraction", "0.32 ± 0", "0.015 ± 0"]


def test_small_demo(tmp_path):
    out = tmp_path / "demo"
    cmd = [sys.executable, "-m", "dcfair.demo", "--scenario", str(LONGFLOWS), "--disciplines", "droptail,hcf",
           "--seeds", "2", "--duration", "12",  # > measure.window_s = 10
           "--out", str(out)]
    p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    import pandas as pd

    df = pd.read_parquet(out / "sweep.parquet")  # the demo is a sweep over queue.kind
    assert sorted(map(tuple, df[["queue.kind", "seed"]].values.tolist())) == [
        ("droptail", 1), ("droptail", 2), ("hcf", 1), ("hcf", 2)]
    for rd in df["run_dir"]:
        assert (out / rd / "summary.json").exists() and (out / rd / "timeseries.csv").exists()
    header = p.stdout.splitlines()[1].split()
    assert header == ["metric", "droptail", "hcf"]
    page = (out / "report.html").read_text()
    assert f"report: {out / 'report.html'}" in p.stdout
    assert "dcfair demo: hcf-longflows under every discipline" in page
    assert 'alt="queue occupancy over time"' in page and ">Flows, by queue.kind</h2>" in page
    # run again: every run is reused
    p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0 and "4 points: 0 run, 4 reused" in p.stderr, p.stderr


def test_demo_runs_every_discipline_by_default():
    from dcfair import api
    from dcfair.demo import NOT_IN_DEMO, default_disciplines

    assert default_disciplines() == [k for k in api.queue_kinds() if k not in NOT_IN_DEMO]
    assert {"droptail", "red", "sfq", "drr", "hcf", "codel", "fq_codel", "afd"} <= set(default_disciplines())


def test_demo_bad_discipline_is_invalid_input(tmp_path):
    cmd = [sys.executable, "-m", "dcfair.demo", "--disciplines", "droptail,fifo", "--out", str(tmp_path / "d")]
    p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert p.returncode == 2 and "invalid input: queue.kind" in p.stderr and "fifo" in p.stderr, p.stderr
    assert not (tmp_path / "d").exists()
