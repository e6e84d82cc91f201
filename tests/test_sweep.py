"""`dcfair sweep` and dcfair.sweep: the --vary syntax, bad input, the tidy table, resuming a
killed sweep, the Ray backend (a real local Ray instance), and the progress line."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

import dcfair
from conftest import LONGFLOWS, REPO, assert_clean_error, dcfair as cli

SHORT = ["--set", "sim.duration_s=2", "--set", "measure.window_s=1"]
SHORT_OV = {"sim.duration_s": 2, "measure.window_s": 1}


# ---------------------------------------------------------------- --vary syntax


def test_split_values():
    from dcfair.sweeps import split_values

    assert split_values("a,b") == ["a", "b"]
    assert split_values("10, 20 ,50") == ["10", "20", "50"]
    assert split_values("[1, 2],[3,4]") == ["[1, 2]", "[3,4]"]
    assert split_values("'x,y',z") == ["'x,y'", "z"]


def test_parse_vary():
    from dcfair.sweeps import parse_vary

    assert parse_vary(["queue.kind=droptail,hcf", "queue.limit_pkts=10,20"]) == [
        ("queue.kind", ["droptail", "hcf"]), ("queue.limit_pkts", ["10", "20"])]
    assert parse_vary(["seed_free.key=1"]) == [("seed_free.key", ["1"])]


@pytest.mark.parametrize("bad, needle", [
    ("queue.kind", "--vary queue.kind: expected KEY=V1,V2"),
    ("=1,2", "--vary =1,2: expected KEY=V1,V2"),
    ("queue.kind=", "no values for queue.kind"),
    ("queue.kind=  ", "no values for queue.kind"),
    ("queue.kind=droptail,,hcf", "an empty value"),
    ("queue.kind=droptail,", "an empty value"),
    ("queue kind=hcf", "not a dotted key"),
    ("queue..kind=hcf", "not a dotted key"),
    ("seed=1,2", "--seeds"),
])
def test_parse_vary_rejects(bad, needle):
    from dcfair.sweeps import parse_vary

    with pytest.raises(dcfair.InvalidInput) as ei:
        parse_vary([bad])
    assert needle in str(ei.value)


def test_api_vary_forms():
    from dcfair.sweeps import normalize_vary

    assert normalize_vary({"queue.kind": ["droptail", "hcf"], "sim.duration_s": [2.0, 5]}) == [
        ("queue.kind", ["droptail", "hcf"]), ("sim.duration_s", ["2.0", "5"])]
    assert normalize_vary(["queue.kind=red,sfq"]) == [("queue.kind", ["red", "sfq"])]
    for bad in ({"queue.kind": []}, {"queue.kind": "hcf"}):
        with pytest.raises(dcfair.InvalidInput):
            normalize_vary(bad)


# ---------------------------------------------------------------- bad input: exit 2, nothing written


@pytest.mark.parametrize("args, needles", [
    (["--vary", "queue.no_such_knob=1,2"], ["invalid input: queue.no_such_knob", "queue.no_such_knob=1"]),
    (["--vary", "queue.kind=droptail,fifo"], ["invalid input: queue.kind", "fifo", "queue.kind=fifo"]),
    (["--vary", "queue.limit_pkts=20,-5"], ["invalid input: queue.limit_pkts", "queue.limit_pkts=-5"]),
    (["--vary", "queue.kind="], ["--vary queue.kind=", "no values"]),
    (["--vary", "queue.kind"], ["--vary queue.kind", "KEY=V1,V2"]),
    (["--vary", "queue.kind=hcf", "--vary", "queue.kind=red"], ["--vary queue.kind", "varied twice"]),
    ([], ["--vary", "at least one"]),
    (["--vary", "queue.kind=hcf", "--seeds", "0"], ["--seeds", "at least 1"]),
    (["--vary", "queue.kind=hcf", "--jobs", "0"], ["--jobs"]),
    (["--vary", "queue.kind=hcf", "--set", "nope"], ["--set"]),
    # found only when the network is built, before any point runs
    (["--vary", "queue.kind=droptail,hcf", "--set", 'measure.ports=["nope"]'],
     ["invalid input: measure.ports", "nope", "queue.kind=droptail"]),
    (["--vary", "queue.kind=hcf", "--ray", "127.0.0.1:1"], ["--ray", "nothing answers at 127.0.0.1:1"]),
    (["--vary", "queue.kind=hcf", "--ray", "nonsense"], ["--ray", "HOST:PORT"]),
])
def test_bad_input_exits_2_and_writes_nothing(tmp_path, args, needles):
    out = tmp_path / "sweep"
    p = cli("sweep", LONGFLOWS, *args, *SHORT, "--out", out)
    assert_clean_error(p, 2, *needles)
    assert not out.exists()


def test_missing_scenario(tmp_path):
    p = cli("sweep", tmp_path / "nope.toml", "--vary", "queue.kind=hcf")
    assert_clean_error(p, 2, "no such file")


# ---------------------------------------------------------------- the table


@pytest.fixture(scope="module")
def small_sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "s"
    p = cli("sweep", LONGFLOWS, "--vary", "queue.kind=droptail,hcf", "--vary", "queue.limit_pkts=10,20",
            "--seeds", "2", *SHORT, "--out", out)
    assert p.returncode == 0, p.stderr
    return p, out


def test_one_row_per_point_and_seed(small_sweep):
    p, out = small_sweep
    df = pd.read_parquet(out / "sweep.parquet")
    assert len(df) == 2 * 2 * 2
    assert list(df.columns[:3]) == ["queue.kind", "queue.limit_pkts", "seed"]
    assert sorted(set(map(tuple, df[["queue.kind", "queue.limit_pkts", "seed"]].values.tolist()))) == [
        (k, b, s) for k in ("droptail", "hcf") for b in (10, 20) for s in (1, 2)]
    assert df["queue.limit_pkts"].dtype.kind == "i"  # varied values keep their TOML type
    for m in ("utilization", "jain_index", "starved_fraction", "drops", "drops_overflow", "events", "wall_time_s"):
        assert m in df.columns, m
    assert "drops_by_reason" not in df.columns  # flattened into drops_<reason>
    csv = pd.read_csv(out / "sweep.csv")
    pd.testing.assert_frame_equal(csv.drop(columns=["queue.kind", "run_dir"]),
                                  df.drop(columns=["queue.kind", "run_dir"]), check_dtype=False)
    # each row's run directory holds that run, and it agrees with the table
    row = df.iloc[-1]
    summary = json.loads((out / row["run_dir"] / "summary.json").read_text())
    assert summary["queue_kind"] == row["queue.kind"] and summary["seed"] == row["seed"]
    assert summary["metrics"]["jain_index"] == row["jain_index"]
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["vary"] == [["queue.kind", ["droptail", "hcf"]], ["queue.limit_pkts", [10, 20]]]
    assert meta["seeds"] == [1, 2] and meta["overrides"] == [["sim.duration_s", "2"], ["measure.window_s", "1"]]
    assert (out / "scenario.toml").read_text() == LONGFLOWS.read_text()


def test_stdout_table_and_a_quiet_pipe(small_sweep):
    p, out = small_sweep
    lines = p.stdout.splitlines()
    assert lines[0] == "hcf-longflows: mean ± std over 2 seed(s)"
    assert lines[1].split()[:3] == ["queue.kind", "queue.limit_pkts", "utilization"]
    assert len([l for l in lines if l.startswith(("droptail ", "hcf "))]) == 4
    assert "sweep.parquet" in p.stdout
    assert p.stderr == ""  # no progress line in a pipe
    assert "\x1b[" not in p.stdout


def test_api_sweep_and_rerun_reuses_everything(tmp_path):
    out = tmp_path / "api"
    sc = dcfair.Scenario.load(LONGFLOWS).with_overrides(SHORT_OV)
    df = dcfair.sweep(sc, {"queue.kind": ["red", "drr"]}, seeds=[4, 5], out=out, jobs=2)
    assert len(df) == 4 and df.attrs["dir"] == str(out) and df.attrs["cached"] == 0
    assert sorted(df["seed"].unique()) == [4, 5]
    again = dcfair.sweep(sc, {"queue.kind": ["red", "drr"]}, seeds=[4, 5], out=out, jobs=2)
    assert again.attrs["cached"] == 4
    pd.testing.assert_frame_equal(df.drop(columns=["wall_time_s"]), again.drop(columns=["wall_time_s"]))


# ---------------------------------------------------------------- a killed sweep resumes


# ---------------------------------------------------------------- parallelism bounded by memory


def test_memory_workers_caps_the_pool_so_that_every_run_fits():
    from dcfair.runner import memory_workers

    gib = 2**30
    assert memory_workers(8, 3 * gib, 16 * gib) == 5  # 5 x 3 GiB fit in 16 GiB, 6 do not
    assert memory_workers(8, 1 * gib, 16 * gib) == 8  # all fit: no cap
    assert memory_workers(2, 1 * gib, 16 * gib) == 2  # never more than asked
    assert memory_workers(8, 20 * gib, 16 * gib) == 1  # a point that fits nowhere still runs, alone
    assert memory_workers(8, 3 * gib, None) == 8  # no bound known
    assert memory_workers(8, 0, 16 * gib) == 8  # no estimate


def test_memory_bound_is_the_max_memory_variable_or_what_is_available(monkeypatch):
    from dcfair.runner import memory_bound

    monkeypatch.setenv("DCFAIR_MAX_MEMORY_MB", "512")
    assert memory_bound() == (512 * 2**20, "allowed by --max-memory (DCFAIR_MAX_MEMORY_MB)")
    monkeypatch.delenv("DCFAIR_MAX_MEMORY_MB")
    avail = memory_bound()
    if os.path.exists("/proc/meminfo"):
        assert avail is not None and avail[0] > 0, avail


SCALE = REPO / "scenarios" / "scale" / "permutation.toml"


def test_a_sweep_runs_fewer_points_at_once_when_memory_holds_fewer(tmp_path, monkeypatch, caplog):
    # The engine's estimate is read per point: k = 4 is 32 MiB and a little, k = 8 more.
    from dcfair import api

    small = api.load_scenario(SCALE, overrides={"topology.k": 4})["memory_bytes"]
    large = api.load_scenario(SCALE, overrides={"topology.k": 8})["memory_bytes"]
    assert 32 * 2**20 < small < large < 48 * 2**20
    # 60 MiB hold one such run, not two: one worker instead of two, one line saying why
    monkeypatch.setenv("DCFAIR_MAX_MEMORY_MB", "60")
    with caplog.at_level("WARNING", logger="dcfair.runner"):
        df = dcfair.sweep(SCALE, {"topology.k": [4, 8]}, out=tmp_path / "s", jobs=2, progress=False)
    assert len(df) == 2
    lines = [r.getMessage() for r in caplog.records if r.name == "dcfair.runner"]
    assert len(lines) == 1 and "1 parallel run(s) instead of 2" in lines[0] and "--max-memory" in lines[0], lines
    # room for both: no cap, no line
    caplog.clear()
    monkeypatch.setenv("DCFAIR_MAX_MEMORY_MB", "1000")
    with caplog.at_level("WARNING", logger="dcfair.runner"):
        dcfair.sweep(SCALE, {"topology.k": [4, 8]}, seeds=[2], out=tmp_path / "t", jobs=2, progress=False)
    assert not [r for r in caplog.records if r.name == "dcfair.runner"]


def test_a_sweep_of_runs_on_threads_runs_fewer_at_once_so_that_each_has_its_cores(tmp_path, caplog):
    from dcfair import api
    from dcfair.runner import available_cores

    cores = available_cores()
    assert api.load_scenario(SCALE)["threads"] == 1
    assert api.load_scenario(SCALE, overrides={"sim.tie_break": "origin", "sim.threads": "auto"})["threads"] == cores
    assert api.load_scenario(SCALE, overrides={"sim.tie_break": "origin", "sim.threads": 256})["threads"] == cores
    if cores < 2:
        pytest.skip("one core: every run has one thread")
    with caplog.at_level("WARNING", logger="dcfair.runner"):
        df = dcfair.sweep(SCALE, {"topology.k": [4, 8]}, out=tmp_path / "s", jobs=2, progress=False,
                          overrides={"sim.tie_break": "origin", "sim.threads": "auto"})
    assert len(df) == 2
    lines = [r.getMessage() for r in caplog.records if r.name == "dcfair.runner"]
    want = f"1 parallel run(s) instead of 2: a run uses up to {cores} threads (sim.threads), on {cores} cores"
    assert lines == [f"dcfair: {want}"], lines
    # one thread per run: no cap, no line
    caplog.clear()
    with caplog.at_level("WARNING", logger="dcfair.runner"):
        dcfair.sweep(SCALE, {"topology.k": [4, 8]}, out=tmp_path / "t", jobs=2, progress=False)
    assert not [r for r in caplog.records if r.name == "dcfair.runner"]


def test_killed_sweep_loses_nothing_and_resumes(tmp_path):
    out = tmp_path / "killed"
    args = [sys.executable, "-m", "dcfair", "sweep", str(LONGFLOWS), "--vary", "queue.kind=droptail,red,sfq,drr,hcf",
            "--seeds", "2", "--jobs", "1", "--set", "sim.duration_s=40", "--set", "measure.window_s=1", "--out", str(out)]
    proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            if len(list(out.glob("runs/*/point.json"))) >= 2 or proc.poll() is not None:
                break
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its worker, mid-run
        proc.communicate(timeout=30)
    done = {p.parent.name: p.stat().st_mtime_ns for p in out.glob("runs/*/point.json")}
    assert 2 <= len(done) < 10, f"the sweep was not killed midway ({len(done)} points done)"
    assert not (out / "sweep.parquet").exists()
    for d in done:  # every finished point is whole
        assert {"summary.json", "flows.csv", "ports.csv", "point.json"} <= {f.name for f in (out / "runs" / d).iterdir()}

    p = cli(*args[3:])
    assert p.returncode == 0, p.stderr
    assert f"10 points: {10 - len(done)} run, {len(done)} reused" in p.stdout
    for d, mtime in done.items():  # reused, not run again
        assert (out / "runs" / d / "point.json").stat().st_mtime_ns == mtime
    df = pd.read_parquet(out / "sweep.parquet")
    assert len(df) == 10 and df["jain_index"].notna().all()


# ---------------------------------------------------------------- Ray


@pytest.fixture(scope="module")
def ray_local():
    ray = pytest.importorskip("ray", reason="the ray extra is not installed (make install installs it)")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=128 * 1024 * 1024)
    yield ray
    ray.shutdown()


def test_ray_backend_gives_the_local_results(tmp_path, ray_local):
    sc = dcfair.Scenario.load(LONGFLOWS).with_overrides({**SHORT_OV, "measure.sample_interval_s": 0.5})
    vary = {"queue.kind": ["droptail", "hcf"]}
    on_ray = dcfair.sweep(sc, vary, seeds=2, out=tmp_path / "ray", ray="auto")  # the Ray this process started
    local = dcfair.sweep(sc, vary, seeds=2, out=tmp_path / "local")
    assert json.loads((tmp_path / "ray" / "sweep.json").read_text())["backend"] == "ray"
    cols = [c for c in local.columns if c != "wall_time_s"]
    pd.testing.assert_frame_equal(on_ray[cols], local[cols])
    for rd in local["run_dir"]:  # the driver wrote the workers' files, byte for byte
        for f in ("flows.csv", "ports.csv", "timeseries.csv"):
            assert (tmp_path / "ray" / rd / f).read_bytes() == (tmp_path / "local" / rd / f).read_bytes()
        assert (tmp_path / "ray" / rd / "point.json").exists()
    again = dcfair.sweep(sc, vary, seeds=2, out=tmp_path / "ray", ray="auto")
    assert again.attrs["cached"] == 4


def test_ray_local_from_the_command_line(tmp_path):
    pytest.importorskip("ray", reason="the ray extra is not installed (make install installs it)")
    out = tmp_path / "cli"
    p = cli("sweep", LONGFLOWS, "--vary", "queue.kind=sfq,drr", *SHORT, "--ray", "local", "--jobs", "2", "--out", out,
            env={"RAY_USAGE_STATS_ENABLED": "0"})
    assert p.returncode == 0, p.stderr
    assert "2 points: 2 run, 0 reused" in p.stdout
    assert p.stderr == ""  # Ray's own log lines are kept out of a pipe too
    assert len(pd.read_parquet(out / "sweep.parquet")) == 2


# ---------------------------------------------------------------- progress


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_points_progress_line():
    from dcfair.display import PointsProgress
    from dcfair.runner import Point

    now = [0.0]
    s = _Tty()
    prog = PointsProgress("sweep x", s, clock=lambda: now[0])
    p = Point.make("a.toml", [("queue.kind", "hcf")], 1, **{"queue.kind": "hcf"})
    prog(1, 10, p, {"ok": True, "cached": True})
    now[0] = 10.0
    prog(2, 10, p, {"ok": True})
    prog(3, 10, p, {"ok": False, "message": "boom"})
    prog.close()
    text = s.getvalue()
    assert "sweep x: 2/10 points, 1 reused, 10 s elapsed, ~1:20 left" in text  # 10 s per run, 8 to go
    assert "FAILED queue.kind=hcf, seed 1: boom\n" in text
    assert "1 failed" in text and text.endswith("\r\x1b[K")


def test_format_duration():
    from dcfair.display import format_duration

    assert [format_duration(x) for x in (0, 42.4, 75, 3725)] == ["0 s", "42 s", "1:15", "1:02:05"]


def test_live_progress_on_a_terminal(tmp_path):
    """Under a pseudo-terminal the sweep redraws one line (points done, time left) on stderr."""
    import pty

    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["TERM"] = "xterm"
    out = tmp_path / "tty"
    proc = subprocess.Popen([sys.executable, "-m", "dcfair", "sweep", str(LONGFLOWS), "--vary", "queue.kind=droptail,hcf",
                             "--seeds", "2", "--jobs", "1", *SHORT, "--out", str(out)],
                            cwd=REPO, stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(master)
    text = b"".join(chunks).decode(errors="replace")
    assert proc.returncode == 0, text
    assert "\r\x1b[Ksweep hcf-longflows: 1/4 points" in text and "left" in text
    assert "4/4 points" in text
