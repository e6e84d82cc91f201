"""Results that survive faults (docs/cli.md, "Results that survive faults"): every fault below
is injected into a small sweep, the command is run again, and the final results must equal a
clean run's, byte for byte where the engine is deterministic (flows.csv, ports.csv, summary.json
but its wall time; sweep.csv but its wall-time column).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import LONGFLOWS, REPO, assert_clean_error, dcfair

#: 2 disciplines x 2 seeds of a 2-second run: 4 points, each well under a second.
SWEEP = ["sweep", str(LONGFLOWS), "--vary", "queue.kind=droptail,hcf", "--seeds", "2",
         "--set", "sim.duration_s=2", "--set", "measure.window_s=1", "--jobs", "2"]


def sweep(out: Path, *extra, env=None) -> subprocess.CompletedProcess:
    return dcfair(*SWEEP, "--out", out, *extra, env=env, timeout=300)


def results(out: Path) -> dict:
    """What a sweep directory holds that the engine makes deterministically."""
    got = {}
    for d in sorted((out / "runs").iterdir()):
        if d.name.startswith("."):
            continue
        for name in ("flows.csv", "ports.csv"):
            got[f"{d.name}/{name}"] = (d / name).read_bytes()
        s = json.loads((d / "summary.json").read_text())
        s.pop("wall_time_s")
        got[f"{d.name}/summary.json"] = s
    lines = (out / "sweep.csv").read_text().splitlines()
    col = lines[0].split(",").index("wall_time_s")
    got["sweep.csv"] = [",".join(x for i, x in enumerate(line.split(",")) if i != col) for line in lines]
    return got


def last_line(p: subprocess.CompletedProcess) -> str:
    return p.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("clean") / "sweep"
    p = sweep(out)
    assert p.returncode == 0, p.stderr
    assert last_line(p) == "4 points: 4 run, 0 reused"
    return results(out)


def point_dirs(out: Path):
    return sorted(d for d in (out / "runs").iterdir() if not d.name.startswith("."))


# --- a damaged cache ---------------------------------------------------------------------------

@pytest.mark.parametrize("damage", ["truncated summary.json", "missing flows.csv", "altered ports.csv",
                                    "files without point.json", "garbled point.json"])
def test_a_damaged_entry_is_moved_aside_and_rerun(tmp_path, clean, damage):
    out = tmp_path / "sweep"
    assert sweep(out).returncode == 0
    d = point_dirs(out)[1]
    if damage == "truncated summary.json":
        (d / "summary.json").write_text((d / "summary.json").read_text()[:40])
    elif damage == "missing flows.csv":
        (d / "flows.csv").unlink()
    elif damage == "altered ports.csv":
        (d / "ports.csv").write_text((d / "ports.csv").read_text().replace("0", "1", 1))
    elif damage == "files without point.json":
        (d / "point.json").unlink()
    else:
        (d / "point.json").write_text("{not json")
    p = sweep(out)
    assert p.returncode == 0, p.stderr
    assert last_line(p) == "4 points: 1 run, 3 reused, 1 repaired (damaged entries moved to .damaged/)"
    assert (out / "runs" / ".damaged" / d.name).is_dir(), "moved aside, not deleted"
    assert results(out) == clean


def test_report_names_a_damaged_entry_and_reports_the_rest(tmp_path):
    out = tmp_path / "sweep"
    assert sweep(out).returncode == 0
    d = point_dirs(out)[0]
    (d / "flows.csv").unlink()
    p = dcfair("report", out)
    assert p.returncode == 0, p.stderr
    html = (out / "report.html").read_text()
    assert d.name in html and "flows.csv is missing" in html


def test_a_corrupt_sweep_table_is_rewritten_and_report_falls_back(tmp_path, clean):
    out = tmp_path / "sweep"
    assert sweep(out).returncode == 0
    (out / "sweep.parquet").write_bytes(b"PAR1 this is not parquet")
    p = dcfair("report", out)
    assert p.returncode == 0, p.stderr
    assert "sweep.parquet cannot be read" in (out / "report.html").read_text()
    (out / "sweep.csv").write_text("garbage")
    assert_clean_error(dcfair("report", out), 2, "sweep.parquet", "sweep.csv")
    p = sweep(out)
    assert p.returncode == 0 and last_line(p) == "4 points: 0 run, 4 reused"
    assert results(out) == clean
    import pandas as pd

    assert len(pd.read_parquet(out / "sweep.parquet")) == 4


# --- crashes ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("after", [1, 2])
def test_a_crash_between_the_files_of_a_run_is_repaired(tmp_path, clean, after):
    out = tmp_path / "sweep"
    p = sweep(out, env={"DCFAIR_FAULT_STOP_AFTER_FILES": str(after)})
    assert p.returncode == 1 and "worker process died" in p.stderr, (p.stdout, p.stderr)
    assert any((d / "summary.json").exists() or (d / "flows.csv").exists() for d in point_dirs(out))
    assert not any((d / "point.json").exists() for d in point_dirs(out)), "no crashed run looks finished"
    p = sweep(out)
    assert p.returncode == 0, p.stderr
    assert "4 run" in last_line(p) and "repaired" in last_line(p)
    assert results(out) == clean


def test_a_worker_that_raises_fails_its_point_only(tmp_path, clean):
    out = tmp_path / "sweep"
    victim = "queue.kind-hcf_seed2"
    p = sweep(out, env={"DCFAIR_FAULT_RAISE": victim})
    assert p.returncode == 1 and "fault injected" in p.stderr and "1 of 4 sweep points failed" in p.stderr
    assert last_line(p) == "4 points: 3 run, 0 reused, 1 failed"
    p = sweep(out)
    assert p.returncode == 0 and last_line(p) == "4 points: 1 run, 3 reused"
    assert results(out) == clean


def test_a_killed_sweep_leaves_no_worker_behind(tmp_path, clean):
    out = tmp_path / "sweep"
    long = [a if a != "sim.duration_s=2" else "sim.duration_s=60" for a in SWEEP]
    proc = subprocess.Popen([sys.executable, "-m", "dcfair", *long, "--out", str(out)], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        workers = []
        while time.monotonic() < deadline and len(workers) < 2:
            time.sleep(0.2)
            workers = _children(proc.pid)
        assert len(workers) >= 2, "the sweep's workers never started"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.1)
        assert not any(_alive(w) for w in workers), "workers outlived their parent"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    # nothing half-done counts as finished; the next run finishes the sweep
    p = sweep(out)
    assert p.returncode == 0 and results(out) == clean


def _processes() -> dict:
    """Every live process: pid -> (parent pid, full command line), read from /proc (``ps`` cuts
    its lines at 80 columns when its output is a pipe, which hides the names of Ray's binaries)."""
    procs = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            args = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z":
            procs[int(d.name)] = (int(fields[1]), args)
    return procs


def _descendants(pid: int) -> dict:
    rows = _processes()
    found, frontier = {}, {pid}
    while frontier:
        frontier = {p for p, (pp, _) in rows.items() if pp in frontier and p not in found}
        found.update({p: rows[p][1] for p in frontier})
    return found


def test_a_killed_ray_local_sweep_leaves_nothing_computing(tmp_path):
    """`--ray local`: Ray's own reaper ends the raylet, the GCS and the workers with the sweep.
    (Its dashboard and runtime-env agents exit by themselves within about a minute: not checked.)"""
    pytest.importorskip("ray")
    out = tmp_path / "sweep"
    long = [a if a != "sim.duration_s=2" else "sim.duration_s=600" for a in SWEEP]  # minutes of work
    log = tmp_path / "stderr.txt"
    with open(log, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "dcfair", *long, "--ray", "local", "--out", str(out)],
                                cwd=REPO, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    roles = ("gcs_server", "raylet", "ray::_run_point_files")
    try:
        deadline = time.monotonic() + 120
        busy, tree = {}, {}
        while time.monotonic() < deadline and proc.poll() is None:
            tree = _descendants(proc.pid)
            busy = {p: a for p, a in tree.items() if any(r in a for r in roles)}
            if all(any(r in a for a in busy.values()) for r in roles):
                break
            time.sleep(0.3)
        assert proc.poll() is None, f"the sweep ended (exit {proc.returncode}) before it was killed: {log.read_text()}"
        assert all(any(r in a for a in busy.values()) for r in roles), f"Ray never got to work: {tree}"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(_alive(w) for w in busy):
            time.sleep(0.2)
        assert not [a for w, a in busy.items() if _alive(w)], "Ray processes outlived the sweep"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def _children(pid: int):
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


# --- two sweeps into one directory ----------------------------------------------------------------

def test_two_sweeps_into_one_directory_run_each_point_once(tmp_path, clean):
    out = tmp_path / "sweep"
    procs = [subprocess.Popen([sys.executable, "-m", "dcfair", *SWEEP, "--out", str(out)], cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    lines = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=300)
        assert p.returncode == 0, stderr
        lines.append(stdout.strip().splitlines()[-1])
    ran = sum(int(line.split(": ")[1].split(" run")[0]) for line in lines)
    assert ran == 4, lines
    assert results(out) == clean


# --- stale results ------------------------------------------------------------------------------

def test_a_changed_scenario_file_never_reuses_old_runs(tmp_path, clean):
    scenario = tmp_path / "s.toml"
    scenario.write_text(LONGFLOWS.read_text())
    args = [a if a != str(LONGFLOWS) else str(scenario) for a in SWEEP]
    out = tmp_path / "sweep"
    assert dcfair(*args, "--out", out).returncode == 0
    scenario.write_text(LONGFLOWS.read_text().replace("count = 400", "count = 300", 1))
    p = dcfair(*args, "--out", out)
    assert p.returncode == 0 and p.stdout.strip().splitlines()[-1] == "4 points: 4 run, 0 reused"
    df_flows = [len((d / "flows.csv").read_text().splitlines()) for d in point_dirs(out)
                if json.loads((d / "point.json").read_text())["cache_key"] and (d / "flows.csv").exists()]
    assert 302 in df_flows  # 300 TCP flows + UDP + header, from the new text


def test_a_changed_cdf_file_reruns_the_points_that_read_it(tmp_path):
    d = tmp_path / "w"
    d.mkdir()
    (d / "cdf.txt").write_text("1 1 0\n1 1 0.5\n10 1 1.0\n")
    scenario = d / "s.toml"
    scenario.write_text((REPO / "scenarios/papers/fqcodel/leafspine.toml").read_text().replace(
        '"../../workloads/datamining_cdf.txt"', '"cdf.txt"'))
    args = ["sweep", str(scenario), "--vary", "queue.kind=droptail,fq_codel", "--set", "poisson.stop_s=0.002",
            "--set", "sim.duration_s=0.004", "--out", str(tmp_path / "sweep")]
    p = dcfair(*args)
    assert p.returncode == 0 and p.stdout.strip().splitlines()[-1] == "2 points: 2 run, 0 reused", p.stderr
    p = dcfair(*args)
    assert p.stdout.strip().splitlines()[-1] == "2 points: 0 run, 2 reused"
    (d / "cdf.txt").write_text("1 1 0\n1 1 0.5\n20 1 1.0\n")
    p = dcfair(*args)
    assert p.returncode == 0
    assert p.stdout.strip().splitlines()[-1] == (
        "2 points: 2 run, 0 reused, 2 rerun as stale (another engine build or changed input files)")


def test_runs_of_another_engine_build_are_never_reused(tmp_path, monkeypatch, capsys):
    """The cache key holds the engine build: a newer build reruns every point, in place."""
    from dcfair import cli, runner

    out = tmp_path / "sweep"
    args = SWEEP[:-2] + ["--jobs", "1", "--out", str(out)]  # SWEEP without its --jobs
    assert cli.main(args) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "4 points: 4 run, 0 reused"
    assert cli.main(args) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "4 points: 0 run, 4 reused"
    monkeypatch.setattr(runner, "engine_build", lambda: "gnewer")
    assert cli.main(args) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == (
        "4 points: 4 run, 0 reused, 4 rerun as stale (another engine build or changed input files)")


# --- an output that cannot take the results ------------------------------------------------------

def test_an_output_path_that_is_a_file_is_refused_before_any_run(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    assert_clean_error(sweep(f), 2, "--out", str(f))
    assert_clean_error(dcfair("run", LONGFLOWS, "--out", f, "--set", "sim.duration_s=20"), 2, "--out", "is a file")
    assert_clean_error(dcfair("reproduce", "hcf-credits", "--quick", "--out", f / "sub"), 2, "--out")
    assert f.read_text() == "x"


def test_an_unwritable_output_is_refused_before_the_run(tmp_path):
    # /proc is not writable for anyone, root included: the run must not start, let alone finish
    t0 = time.monotonic()
    p = dcfair("run", LONGFLOWS, "--out", "/proc/dcfair-results", "--set", "sim.duration_s=900")
    assert_clean_error(p, 2, "--out", "/proc/dcfair-results")
    assert time.monotonic() - t0 < 20, "the 900 s scenario ran before the output was checked"
