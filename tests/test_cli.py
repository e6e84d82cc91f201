"""The `dcfair` command: arguments, exit status, messages, output files (docs/cli.md)."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import LONGFLOWS, REPO, assert_clean_error, dcfair

# A short run: 2 simulated seconds, measured over the last one (the window must fit the run).
SHORT = ("--set", "sim.duration_s=2", "--set", "measure.window_s=1")


# ---------------------------------------------------------------- help and version


def test_help_lists_the_commands():
    p = dcfair("--help")
    assert p.returncode == 0, p.stderr
    for word in ("run", "validate", "Exit status"):
        assert word in p.stdout


@pytest.mark.parametrize("cmd", ["run", "validate"])
def test_command_help(cmd):
    p = dcfair(cmd, "--help")
    assert p.returncode == 0, p.stderr
    assert "--set" in p.stdout


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "dcfair"
    assert script.exists(), "the `dcfair` console script is not installed next to python"
    p = subprocess.run([str(script), "--version"], capture_output=True, text=True)
    assert p.returncode == 0
    assert p.stdout.startswith("dcfair ") and "engine" in p.stdout


def test_no_command_is_a_usage_error():
    assert dcfair().returncode == 2


# ---------------------------------------------------------------- invalid input: exit 2, the culprit named


@pytest.mark.parametrize("cmd", ["run", "validate"])
def test_missing_file(cmd, tmp_path):
    missing = tmp_path / "no-such-scenario.toml"
    p = dcfair(cmd, missing)
    assert_clean_error(p, 2, "dcfair: invalid input:", str(missing), "no such file")


@pytest.mark.parametrize("cmd", ["run", "validate"])
def test_directory_instead_of_file(cmd, tmp_path):
    assert_clean_error(dcfair(cmd, tmp_path), 2, str(tmp_path), "directory")


def test_unreadable_file(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    f = tmp_path / "secret.toml"
    f.write_text("name = 'x'\n")
    f.chmod(0)
    assert_clean_error(dcfair("validate", f), 2, str(f), "permission denied")


def test_not_utf8(tmp_path):
    f = tmp_path / "binary.toml"
    f.write_bytes(b"name = '\xff\xfe'\n")
    assert_clean_error(dcfair("validate", f), 2, str(f), "UTF-8")


@pytest.mark.parametrize("cmd", ["run", "validate"])
@pytest.mark.parametrize("bad", ["queue.kind", "=hcf", "queue kind=hcf"])
def test_bad_set_syntax(cmd, bad):
    p = dcfair(cmd, LONGFLOWS, "--set", bad)
    assert_clean_error(p, 2, "--set", repr(bad) if "=" not in bad or bad.startswith("=") else "white space")


@pytest.mark.parametrize("seed", ["-1", "x", str(2**64)])
def test_bad_seed(seed):
    assert_clean_error(dcfair("run", LONGFLOWS, "--seed", seed), 2, "--seed")


def test_failed_run_leaves_no_output(tmp_path):
    """Whatever makes a run fail, it must not create or touch the output directory."""
    out = tmp_path / "out"
    p = dcfair("run", LONGFLOWS, "--out", out, "--set", "no_such_section.no_such_key=1")
    assert p.returncode in (1, 2), p.stderr
    assert not out.exists()


def test_failed_run_keeps_earlier_results(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text('{"earlier": true}')
    p = dcfair("run", LONGFLOWS, "--out", out, "--set", "no_such_section.no_such_key=1")
    assert p.returncode in (1, 2), p.stderr
    assert (out / "summary.json").read_text() == '{"earlier": true}'
    assert sorted(x.name for x in out.iterdir()) == ["summary.json"]


@pytest.mark.parametrize("kind", ["codel", "fq_codel"])
def test_run_switches_to_codel_and_fq_codel(kind, tmp_path):
    out = tmp_path / kind
    p = dcfair("run", LONGFLOWS, "--out", out, "--quiet", "--set", f"queue.kind={kind}",
               "--set", "sim.duration_s=2", "--set", "measure.window_s=1")
    assert p.returncode == 0, p.stderr
    head, row = ((out / "ports.csv").read_text().splitlines()[i].split(",") for i in (0, 1))
    assert row[head.index("queue_kind")] == kind


def test_bad_fq_codel_value_names_the_key():
    p = dcfair("run", LONGFLOWS, "--set", "queue.kind=fq_codel", "--set", "queue.fq_codel.flows=0")
    assert_clean_error(p, 2, "queue.fq_codel.flows")


# ---------------------------------------------------------------- error mapping (in-process, engine faked)


@pytest.fixture
def fake_api(monkeypatch):
    """Replaces the engine calls of dcfair.api with a function the test chooses."""
    from dcfair import api

    def install(load=None, run=None):
        if load is not None:
            monkeypatch.setattr(api, "load_scenario", load)
        if run is not None:
            monkeypatch.setattr(api, "run", run)

    return install


def _ok_load(*a, **k):
    return {"name": "fake", "seed": 1, "duration_s": 2.0}


def _raise(e):
    def f(*a, **k):
        raise e

    return f


def test_invalid_input_maps_to_exit_2(fake_api, capsys):
    from dcfair import cli
    from dcfair._engine import InvalidInput

    fake_api(load=_raise(InvalidInput("queue.kind", "unknown discipline 'fifo'")))
    assert cli.main(["run", str(LONGFLOWS)]) == 2
    err = capsys.readouterr().err
    assert err == "dcfair: invalid input: queue.kind: unknown discipline 'fifo'\n"


@pytest.mark.parametrize(
    "exc, text",
    [
        (RuntimeError("boom"), "dcfair: internal error: boom\n"),
        (OSError("out/x: No space left on device"), "dcfair: error: out/x: No space left on device\n"),
        (ZeroDivisionError("division by zero"), "dcfair: internal error: ZeroDivisionError: division by zero\n"),
    ],
)
def test_other_failures_map_to_exit_1(fake_api, capsys, monkeypatch, exc, text):
    from dcfair import cli

    monkeypatch.delenv("DCFAIR_TRACEBACK", raising=False)
    fake_api(load=_ok_load, run=_raise(exc))
    assert cli.main(["run", str(LONGFLOWS), "--quiet"]) == 1
    assert capsys.readouterr().err == text


def test_keyboard_interrupt_maps_to_130(fake_api, capsys):
    from dcfair import cli

    fake_api(load=_ok_load, run=_raise(KeyboardInterrupt()))
    assert cli.main(["run", str(LONGFLOWS)]) == 130
    assert capsys.readouterr().err == "dcfair: interrupted\n"


def test_run_passes_arguments_and_prints_a_table(fake_api, capsys, monkeypatch):
    from dcfair import cli

    seen = {}

    def fake_run(**kw):
        seen.update(kw)
        return {
            "scenario": "fake", "seed": 7, "engine_version": "0", "sim_time_s": 2.0,
            "wall_time_s": 0.5, "events": 1234567,
            "metrics": {"utilization": 0.95123, "jain_index": 0.5, "drops": 42, "starved_fraction": 0.0},
        }

    monkeypatch.delenv("CI", raising=False)
    fake_api(load=_ok_load, run=fake_run)
    assert cli.main(["run", str(LONGFLOWS), "--seed", "7", "--set", "queue.kind=hcf", "--set", "a.b=1"]) == 0
    assert seen["seed"] == 7
    assert seen["out"] == os.path.join("out", "fake")  # default: out/<scenario name>
    assert seen["overrides"] == [("queue.kind", "hcf"), ("a.b", "1")]
    assert seen["progress"] is None  # stderr is not a terminal here
    out = capsys.readouterr().out
    assert "\x1b[" not in out  # plain text in a pipe
    lines = out.splitlines()
    assert lines[0] == "fake, seed 7, 2 s simulated"
    assert any(l.split() == ["utilization", "0.9512"] for l in lines)
    assert any(l.split() == ["events", "1,234,567"] for l in lines)
    assert any(l.split() == ["drops", "42"] for l in lines)
    assert "results: out/fake/" in out


def test_quiet_prints_nothing(fake_api, capsys):
    from dcfair import cli

    fake_api(load=_ok_load, run=lambda **kw: {"scenario": "fake", "metrics": {}})
    assert cli.main(["run", str(LONGFLOWS), "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")


# ---------------------------------------------------------------- progress line


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_only_on_a_terminal_and_not_quiet_or_ci(monkeypatch):
    from dcfair.display import live_progress_wanted

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert live_progress_wanted(False, _Tty())
    assert not live_progress_wanted(True, _Tty())
    assert not live_progress_wanted(False, io.StringIO())
    monkeypatch.setenv("CI", "true")
    assert not live_progress_wanted(False, _Tty())


def test_progress_line_draws_and_clears():
    from dcfair.display import ProgressLine

    s = _Tty()
    p = ProgressLine("hcf-longflows", s)
    p(1.0, 20.0, 1_000_000, 0.5)
    p(2.0, 20.0, 3_000_000, 1.0)
    p.close()
    text = s.getvalue()
    assert "2.00 / 20.00 s simulated ( 10%)" in text
    assert "4.00 Mevents/s" in text  # (3M - 1M) / 0.5 s
    assert text.endswith("\r\x1b[K")


# ---------------------------------------------------------------- with the real engine


def test_validate_the_paper_scenario():
    p = dcfair("validate", LONGFLOWS)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("ok: hcf-longflows (duration 180 s")


def test_validate_with_overrides():
    p = dcfair("validate", LONGFLOWS, "--set", "queue.kind=hcf", "--set", "sim.duration_s=20")
    assert p.returncode == 0, p.stderr
    assert "duration 20 s" in p.stdout


@pytest.mark.parametrize("cmd", ["run", "validate"])
def test_unknown_key_in_file_is_invalid_input(cmd, tmp_path):
    f = tmp_path / "typo.toml"
    f.write_text(LONGFLOWS.read_text() + "\n[bogus_section]\nfoo = 1\n")
    p = dcfair(cmd, f, "--out", tmp_path / "out") if cmd == "run" else dcfair(cmd, f)
    assert_clean_error(p, 2, "dcfair: invalid input: ", "bogus_section")
    assert not (tmp_path / "out").exists()


FATTREE = REPO / "scenarios/papers/outcast/fattree.toml"

# Hosts a and c hang off two switches with no link between them: no route from a to c.
DISCONNECTED = """
[sim]
duration_s = 0.1
[topology]
kind = "custom"
hosts = ["a", "b", "c"]
switches = ["s1", "s2"]
links = [
  { a = "a", b = "s1", rate_mbps = 1000.0, delay_us = 5.0 },
  { a = "b", b = "s1", rate_mbps = 1000.0, delay_us = 5.0 },
  { a = "c", b = "s2", rate_mbps = 1000.0, delay_us = 5.0 },
]
[flows]
count = 1
src = "a"
dst = "c"
"""


@pytest.mark.parametrize("cmd", ["run", "validate"])
@pytest.mark.parametrize(
    "scenario, overrides, needles",
    [
        # the TCP Outcast fat-tree with an odd k
        ("fattree", ["topology.k=5"], ["topology.k"]),
        # a flow between hosts that the topology does not connect
        ("disconnected", [], ["topology", "host a cannot reach host c"]),
        # a measured port that does not exist (checked when the network is built)
        ("fattree", ['measure.ports=["nope"]'], ["measure.ports", "nope"]),
        # equal-length routing needs core switches; a custom topology has none
        ("disconnected", ["flows.dst=b", "routing.equal_length=true"], ["routing.equal_length"]),
    ],
)
def test_fabric_input_that_cannot_run_is_refused_by_run_and_validate_alike(cmd, scenario, overrides, needles, tmp_path):
    """`validate` builds the network as `run` does, so it refuses the same fabrics with the
    same message and exit status 2, and `run` writes nothing."""
    path = FATTREE
    if scenario == "disconnected":
        path = tmp_path / "disconnected.toml"
        path.write_text(DISCONNECTED)
    sets = [a for o in overrides for a in ("--set", o)]
    extra = ["--out", str(tmp_path / "out")] if cmd == "run" else []
    p = dcfair(cmd, path, *sets, *extra)
    assert_clean_error(p, 2, "dcfair: invalid input: ", *needles)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "override, key",
    [
        ("queue.kind=no_such_discipline", "queue.kind"),
        ("no_such_key=1", "no_such_key"),
        ("queue.limit_pkts=-5", "queue.limit_pkts"),
        # a group's own tcp table: values and unknown keys are named by their full path
        ("flows.tcp.cubic_beta=1.5", "flows.tcp.cubic_beta"),
        ("flows.tcp.no_such_key=1", "flows.tcp.no_such_key"),
        # threads: a count from 1 to 256 or "auto", above one in the order by origin
        ("sim.threads=0", "sim.threads"),
        ("sim.threads=-2", "sim.threads"),
        ("sim.threads=2", "sim.threads"),
    ],
)
def test_bad_override_is_invalid_input(override, key, tmp_path):
    p = dcfair("run", LONGFLOWS, "--set", override, "--out", tmp_path / "out")
    assert_clean_error(p, 2, f"dcfair: invalid input: {key}")
    assert not (tmp_path / "out").exists()


def test_a_run_on_two_threads_writes_the_files_of_the_run_on_one(tmp_path):
    """`sim.threads = 2` on a fat-tree: every file as on one thread, but summary.json's wall time
    and its record of the threads, and provenance.json's command."""
    fattree = REPO / "scenarios/papers/outcast/fattree.toml"
    sets = ["--set", "sim.duration_s=0.02", "--set", "sim.tie_break=origin"]
    outs = {n: tmp_path / f"t{n}" for n in (1, 2)}
    for n, out in outs.items():
        p = dcfair("run", fattree, *sets, "--set", f"sim.threads={n}", "--out", out)
        assert p.returncode == 0, p.stderr
    summaries = {n: json.loads((out / "summary.json").read_text()) for n, out in outs.items()}
    assert "threads" not in summaries[1] and summaries[2]["threads"]["asked"] == 2
    # at most the machine's cores
    assert summaries[2]["threads"]["used"] == min(2, len(os.sched_getaffinity(0))), summaries[2]["threads"]
    for s in summaries.values():
        s.pop("wall_time_s"), s.pop("threads", None)
    assert summaries[1] == summaries[2]
    names = sorted(f.name for f in outs[1].iterdir())
    assert names == sorted(f.name for f in outs[2].iterdir())
    for name in set(names) - {"summary.json", "provenance.json"}:
        assert (outs[1] / name).read_bytes() == (outs[2] / name).read_bytes(), name


def test_run_writes_the_contract_files(tmp_path):
    out = tmp_path / "out"
    p = dcfair("run", LONGFLOWS, *SHORT, "--seed", "7", "--out", out)
    assert p.returncode == 0, p.stderr
    assert sorted(x.name for x in out.iterdir()) == ["fabric.csv", "flows.csv", "port_drops.csv", "ports.csv", "provenance.json",
                                                     "summary.json"]
    summary = json.loads((out / "summary.json").read_text())
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["engine_build"] == summary["engine_build"] and prov["seed"] == 7
    assert prov["command"].startswith("dcfair run ") and prov["command"].endswith(f"--out {out}")
    assert prov["scenario"] == Path(LONGFLOWS).read_text() and prov["scenario_origin"] == str(LONGFLOWS)
    assert prov["overrides"] == [list(kv.split("=", 1)) for kv in SHORT if "=" in kv]
    for key in ("scenario", "seed", "engine_version", "sim_time_s", "wall_time_s", "events", "metrics"):
        assert key in summary
    assert summary["scenario"] == "hcf-longflows" and summary["seed"] == 7
    assert (out / "flows.csv").read_text().startswith("flow_id,src,dst,kind,start_s,end_s,")
    assert (out / "ports.csv").read_text().startswith("port,packets_out,bytes_out,utilization,drops,marks,max_queue_pkts")
    # the table on stdout, plain text (a pipe), and no progress line in a pipe
    assert "hcf-longflows, seed 7" in p.stdout and "events" in p.stdout
    assert "\r" not in p.stderr and "\x1b[" not in p.stdout


def test_default_out_dir_is_out_slash_name(tmp_path):
    p = dcfair("run", LONGFLOWS, *SHORT, "--quiet", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout == ""
    assert (tmp_path / "out" / "hcf-longflows" / "summary.json").exists()


def test_same_seed_same_bytes(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        p = dcfair("run", LONGFLOWS, *SHORT, "--quiet", "--out", d)
        assert p.returncode == 0, p.stderr
    assert (a / "flows.csv").read_bytes() == (b / "flows.csv").read_bytes()
    assert (a / "ports.csv").read_bytes() == (b / "ports.csv").read_bytes()
    sa, sb = (json.loads((d / "summary.json").read_text()) for d in (a, b))
    sa.pop("wall_time_s"), sb.pop("wall_time_s")
    assert sa == sb


def test_ctrl_c_while_the_command_starts_up_is_reported_like_one_during_a_run(monkeypatch, capsys):
    """A Ctrl-C that lands while the command still imports its modules (a loaded machine can take
    seconds there) gets the same one line and status as one during the run, no traceback."""
    from dcfair import cli

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["run", str(LONGFLOWS)]) == cli.EXIT_INTERRUPTED == 130
    err = capsys.readouterr().err
    assert err.strip() == "dcfair: interrupted"


def test_ctrl_c_stops_a_long_run_cleanly(tmp_path):
    out = tmp_path / "out"
    (tmp_path / "out").mkdir()
    (out / "summary.json").write_text("earlier")
    cmd = [sys.executable, "-m", "dcfair", "run", str(LONGFLOWS), "--set", "sim.duration_s=100000", "--out", str(out)]
    # SIGINT at its default in the child whatever this process inherited: a shell runs its
    # background jobs (`make test &`, `nohup ... &`) with SIGINT ignored, children inherit that,
    # and Python then leaves Ctrl-C ignored instead of raising KeyboardInterrupt (the run went on
    # and this test timed out in such a CI rehearsal).
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(3.0)
    if proc.poll() is not None:  # ended before the signal: the stub, or an error worth seeing
        stdout, stderr = proc.communicate()
        pytest.fail(f"the run ended before Ctrl-C: {proc.returncode} {stderr}")
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert time.monotonic() - t0 < 5, "Ctrl-C took too long to stop the run"
    assert stderr.strip().endswith("dcfair: interrupted") and "Traceback" not in stderr
    assert (out / "summary.json").read_text() == "earlier"
