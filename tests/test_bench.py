"""bench/: the fat-tree benchmark's scenario and its ns-2 mirror stay what the benchmark says
(the benchmark itself is timed by `make bench`, never here)."""

from __future__ import annotations

import importlib.util
import json
import sys
import shutil
import tomllib
from pathlib import Path

import pytest

import dcfair
from conftest import REPO


def _fattree():
    spec = importlib.util.spec_from_file_location("bench_fattree", REPO / "bench" / "fattree.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_flows_are_the_seeded_permutation():
    ft = _fattree()
    sc = tomllib.loads(ft.SCENARIO.read_text())
    n = sc["topology"]["k"] ** 3 // 4
    src = [int(h[1:]) for h in sc["flows"]["src"]]
    dst = [int(h[1:]) for h in sc["flows"]["dst"]]
    assert src == list(range(n)) and sc["flows"]["count"] == n
    assert sorted(dst) == list(range(n)), "every host receives exactly once"
    assert all(s != d for s, d in zip(src, dst))
    assert dst == ft.permutation(n, 1)


def test_the_scenario_runs_and_every_port_name_of_the_mirror_exists(tmp_path):
    ft = _fattree()
    ports = ft.all_ports(8)
    assert len(ports) == len(set(ports)) == 2 * (128 + 128 + 128)
    sc = dcfair.Scenario.load(ft.SCENARIO).with_overrides({"sim.duration_s": 0.0002, "measure.ports": ports})
    res = dcfair.run(sc, out=tmp_path)
    assert len(res.ports) == len(ports)
    assert res.ports["packets_out"].sum() > 0


@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 not installed (make peers)")
def test_ns2_and_dcfair_carry_the_packets_over_the_same_links(tmp_path):
    ft = _fattree()
    if not ft.SIMRUN.exists():
        pytest.skip("target/release/examples/simrun not built (cargo build --release --examples)")
    sc = ft.load()
    # 2 ms: every flow has started (start times differ between the simulators, within 1 ms)
    dc, ns = ft.count_dcfair(sc, 0.002, str(tmp_path)), ft.count_ns2(sc, 0.002, str(tmp_path))
    assert dc["hops"] > 0 and ns["hops"] > 0
    assert set(dc["links"]) == set(ns["links"])



def _pfabric():
    spec = importlib.util.spec_from_file_location("bench_pfabric", REPO / "bench" / "pfabric.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("mech", ["fq_codel", "dctcp", "pfabric"])
def test_the_pfabric_benchmark_scenario_runs_with_each_mechanisms_overrides(tmp_path, mech):
    pf = _pfabric()
    ov = {**pf.overrides(mech), "poisson.max_flows": 30, "poisson.stop_s": 0.002, "sim.duration_s": 0.01}
    sc = dcfair.Scenario.load(pf.SCENARIO).with_overrides(ov)
    assert sc.get("queue.kind") == {"fq_codel": "fq_codel", "dctcp": "droptail", "pfabric": "pfabric"}[mech]
    res = dcfair.run(sc, out=tmp_path)
    flows = res.flows
    assert len(flows) == 30 and flows["size_bytes"].notna().all()
    assert res.summary["metrics"]["flows_completed_size_all"] >= 25


def test_the_pfabric_benchmark_refuses_an_unknown_mechanism():
    with pytest.raises(SystemExit, match="--mechs: unknown mechanism 'fifo'"):
        _pfabric().overrides("fifo")


@pytest.mark.skipif(shutil.which("pkg-config") is None or not Path("/usr/include/ns3").is_dir(),
                    reason="ns-3 not installed (make peers)")
@pytest.mark.parametrize("mech", ["fq_codel", "dctcp"])
def test_ns3_replays_the_flows_dcfair_drew(tmp_path, mech):
    """The ns-3 mirror moves the same flows: every one of 12 web-search flows on a small fabric completes
    in both simulators and the mean FCTs agree within a factor of 2 (a check of the replay,
    not a validation)."""
    import json
    import subprocess

    pf = _pfabric()
    if not pf.SIMRUN.exists():
        pytest.skip("target/release/examples/simrun not built")
    pf.build_ns3()
    out = tmp_path / "dc"
    # A small fabric (2 leaves of 4 hosts, 2 spines): ns-3's global routing is slow to build.
    small = {"topology.leaves": 2, "topology.hosts_per_leaf": 4, "topology.spines": 2}
    subprocess.run(pf.dcfair_cmd(12, str(out), 0.01, mech) + [f"{k}={v}" for k, v in small.items()],
                   check=True, capture_output=True)
    dc = pf.summary(str(out))
    res = tmp_path / "ns3.json"
    subprocess.run([str(pf.NS3_BIN), *pf.ns3_args(mech), "--leaves=2", "--hostsPerLeaf=4", "--spines=2",
                    f"--flows={out}/flows.csv", "--duration=0.06", f"--result={res}"],
                   check=True, capture_output=True, timeout=600)
    ns = json.loads(res.read_text())
    assert ns["flows"] == dc["flows"] == 12
    assert ns["completed"] == dc["completed"] == 12
    assert 0.5 < ns["fct_mean_s"] / dc["fct_mean_s"] < 2.0, (ns, dc)


def _ab():
    spec = importlib.util.spec_from_file_location("bench_ab", REPO / "bench" / "ab.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _writer(text: str) -> str:
    """A command writing `text` (and a wall-time line that differs per run) into {out}/s.json."""
    import sys

    code = ("import os,sys,time; d=sys.argv[1]; os.makedirs(d, exist_ok=True); "
            f"open(os.path.join(d,'s.json'),'w').write({text!r} + '\\n' + '\"wall_time_s\": %r\\n' % time.perf_counter())")
    return f"{sys.executable} -c \"{code}\" {{out}}"


def test_ab_pairs_two_commands_and_checks_their_outputs(capsys):
    ab = _ab()
    assert ab.main(["--reps", "2", "--cpus", "0,0", "--same-output", _writer("same"), _writer("same")]) == 0
    out = capsys.readouterr().out
    assert out.count("rep ") == 2 and "ratio B/A over 2 pairs" in out and "outputs identical" in out
    assert ab.main(["--reps", "1", "--cpus", "0,0", "--same-output", _writer("one"), _writer("other")]) == 1
    assert "outputs differ: s.json" in capsys.readouterr().err


def test_ab_ratio_summary_and_file_comparison(tmp_path):
    ab = _ab()
    s = ab.summary([2.0, 4.0, 1.0], [1.0, 4.0, 1.5])
    assert (s["min"], s["median"], s["max"]) == (0.5, 1.0, 1.5) and s["mean"] == pytest.approx(1.0)
    assert s["b_cheaper"] == 1
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    (a / "x").write_text('{"events": 5,\n "wall_time_s": 1.0}\n')
    (b / "x").write_text('{"events": 5,\n "wall_time_s": 2.5}\n')
    assert ab.differing_files(a, b) == []
    (b / "y").write_text("only in b")
    (a / "x").write_text('{"events": 6,\n "wall_time_s": 1.0}\n')
    assert ab.differing_files(a, b) == ["x", "y"]


@pytest.mark.parametrize("args, message", [
    (["--cpus", "0", "true", "true"], "--cpus takes two CPU numbers"),
    (["--reps", "0", "true", "true"], "--reps must be at least 1"),
    (["--same-output", "true", "true"], "command A has no {out}"),
])
def test_ab_refuses_bad_arguments(args, message, capsys):
    with pytest.raises(SystemExit) as e:
        _ab().main(args)
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_ab_alternate_runs_one_at_a_time_and_swaps_the_order(tmp_path, capsys):
    """Each command logs its start and end: no overlap, and the order is AB, BA, AB."""
    import sys

    log = tmp_path / "log"

    def logger(name):
        code = (f"import time; f=open({str(log)!r},'a'); f.write('{name}<'); f.flush(); "
                f"time.sleep(0.05); f.write('>{name} '); f.close()")
        return f"{sys.executable} -c \"{code}\""

    assert _ab().main(["--reps", "3", "--cpus", "0,1", "--alternate", logger("a"), logger("b")]) == 0
    assert log.read_text().split() == ["a<>a", "b<>b", "b<>b", "a<>a", "a<>a", "b<>b"]
    assert "B cheaper in" in capsys.readouterr().out


def test_ab_reports_a_failing_command():
    with pytest.raises(SystemExit, match="b exited 3"):
        _ab().main(["--reps", "1", "--cpus", "0,0", "true", "sh -c 'exit 3'"])


def test_ab_reaps_a_child_that_exits_before_the_other_starts(monkeypatch):
    """A command that ends while the next one is being started is still counted: ab keeps each
    Popen until its own wait reaps the child (a Popen dropped early reaps it itself)."""
    import time
    ab = _ab()

    class SlowStart(ab.subprocess.Popen):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            time.sleep(0.3)  # the child (``true``) exits meanwhile

    monkeypatch.setattr(ab.subprocess, "Popen", SlowStart)
    times = ab.run_at_once([("a", ["true"], 0), ("b", ["true"], 0)])
    assert sorted(times) == ["a", "b"] and all(t >= 0 for t in times.values())


def test_the_pfabric_benchmark_prints_a_reduced_command_for_ab(capsys):
    assert _pfabric().main(["--print-cmd", "40", "--mechs", "dctcp", "--simrun", "/x/simrun"]) == 0
    cmd = capsys.readouterr().out.split()
    assert cmd[0] == "/x/simrun" and "tcp.cc=dctcp" in cmd and "poisson.max_flows=40" in cmd
    assert cmd[-2:] == ["--out", "'{out}'"]
    assert _pfabric().main(["--print-cmd", "40", "--cmd-out", "/tmp/x"]) == 0
    assert capsys.readouterr().out.split()[-2:] == ["--out", "/tmp/x"]


def test_ab_survives_a_command_that_writes_much_to_stderr():
    """More than a pipe holds (64 KiB): a long simrun's progress lines must not block it."""
    import sys

    noisy = f"{sys.executable} -c \"import sys; sys.stderr.write('x' * 300_000)\""
    assert _ab().main(["--reps", "1", "--cpus", "0,0", noisy, "true"]) == 0


def test_the_machine_record_tells_processors_apart(tmp_path):
    """Timings from different sessions are compared by their "Machine:" line: it names the
    processor's family/model numbers and its caches, not only the brand string."""
    sys.path.insert(0, str(REPO / "bench/ns2"))
    import time_ns2

    cache = tmp_path / "cache"
    for i, (level, kind, size) in enumerate([(1, "Data", "48K"), (1, "Instruction", "32K"), (2, "Unified", "1024K")]):
        d = cache / f"index{i}"
        d.mkdir(parents=True)
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")
    assert time_ns2.caches(str(cache)) == "L1d 48K, L1i 32K, L2 1024K"
    assert time_ns2.caches(str(tmp_path / "absent")) is None
    assert time_ns2.cpu_id({"cpu family": "26", "model": "2", "stepping": "1"}) == "cpu family 26, model 2, stepping 1"
    assert time_ns2.cpu_id({}) is None
    m = {"cpu_model": "AMD EPYC", "cpu_id": "cpu family 26, model 2, stepping 1", "caches": "L2 1024K"}
    assert time_ns2.describe(m) == "AMD EPYC (cpu family 26, model 2, stepping 1; L2 1024K)"
    # records written before these fields existed still render
    assert time_ns2.describe({"cpu_model": "AMD EPYC"}) == "AMD EPYC"
    assert time_ns2.machine()["logical_cpus"] >= 1


def _load(name):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(REPO / "bench"))
    spec.loader.exec_module(mod)
    return mod


def test_the_scale_and_mptcp_benchmarks_measure_what_they_say(tmp_path, capsys):
    """A tiny run of each: the counts come from the runs (more packets with more hosts, every
    delivered packet also a hop), the results file goes where it is told, the doc is untouched."""
    scale, mptcp = _load("scale"), _load("mptcp")
    if not scale.SIMRUN.exists():
        pytest.skip("target/release/examples/simrun not built")
    doc = scale.DOC.read_text()
    out = tmp_path / "scale.json"
    ns2 = "4" if shutil.which("ns") else ""
    assert scale.main(["--ks", "4,8", "--ns2-ks", ns2, "--duration", "0.0005", "--reps", "1", "--no-doc",
                       "--results", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [r["k"] for r in rows] == [4, 8] and rows[1]["hosts"] == 128
    assert 0 < rows[0]["delivered"] < rows[1]["delivered"] and all(r["delivered"] <= r["hops"] for r in rows)
    # ns-2 runs the sizes it is asked to, the same network: about the same number of hops
    assert rows[1]["ns2"] is None
    if ns2:
        assert 0.8 < rows[0]["ns2"]["hops"] / rows[0]["hops"] < 1.25, rows[0]["ns2"]
    out = tmp_path / "mptcp.json"
    assert mptcp.main(["--subflows", "1,2", "--duration", "0.0005", "--reps", "1", "--no-doc", "--results", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [r["subflows"] for r in rows] == [1, 2] and all(0 < r["delivered"] <= r["hops"] for r in rows)
    printed = capsys.readouterr().out
    assert "| subflows |" in printed
    # ns-2's columns are there when it ran, and every row of the scale table is as wide as its head
    assert ("| ns-2 CPU per hop |" in printed) == bool(ns2)
    scale_lines = [x for x in printed.split("| subflows |")[0].splitlines() if x.startswith("|")]
    assert len(scale_lines) == 4 and len({x.count("|") for x in scale_lines}) == 1, scale_lines
    assert scale.DOC.read_text() == doc


def test_the_scale_sections_of_the_performance_page_are_what_their_results_render_to(tmp_path):
    """Every scale section of ``docs/performance.md`` is ``--render`` of its results file, so a
    section cannot drift from the numbers behind it; ``--render`` writes the section and
    runs nothing."""
    scale = _load("scale")
    doc = scale.DOC.read_text()
    sections = [f.stem for f in sorted((REPO / "bench/results").glob("scale*.json")) if f"<!-- {f.stem}:begin -->" in doc]
    assert {"scale-bench", "scale-bench-k64", "scale-senders", "scale-senders-ns2", "scale-sparse-k32", "scale-dense-k8"} <= set(sections), sections
    # a --scenario run's k = 8 row (dense_k8: 8,192 flows) is no k = 8 reference for itself
    dense = scale.render(json.loads((REPO / "bench/results/scale-dense-k8.json").read_text()))
    assert dense.splitlines()[-1].endswith("| n/a |"), dense
    for name in sections:
        body = doc.split(f"<!-- {name}:begin -->\n", 1)[1].split(f"<!-- {name}:end -->", 1)[0]
        assert body.rstrip("\n") == scale.render(json.loads((REPO / f"bench/results/{name}.json").read_text())), name
    # into a copy of the page, a section emptied out comes back from its results file
    page = tmp_path / "performance.md"
    page.write_text(doc.replace(doc.split("<!-- scale-senders:begin -->\n", 1)[1].split("<!-- scale-senders:end -->", 1)[0], ""))
    old, scale.DOC = scale.DOC, page
    try:
        assert scale.main(["--render", "--section", "scale-senders"]) == 0
    finally:
        scale.DOC = old
    assert page.read_text() == doc


def test_scale_senders_take_every_nth_host_in_a_permutation_of_their_own(tmp_path, capsys):
    """``--senders N``: every hosts/N-th host sends one flow to another of the same hosts and
    receives one; without it, every host (the flows of ``bench/fattree.py``'s permutation)."""
    scale = _load("scale")
    full = tomllib.loads(scale.generated(8, 1))["flows"]
    assert full["src"] == [f"h{i}" for i in range(128)] and full["dst"] == [f"h{x}" for x in scale.permutation(128, 1)]
    part = tomllib.loads(scale.generated(8, 1, 16))["flows"]
    assert part["count"] == 16 and part["src"] == [f"h{i}" for i in range(0, 128, 8)]
    assert sorted(part["dst"], key=lambda h: int(h[1:])) == part["src"]
    assert all(s != d for s, d in zip(part["src"], part["dst"]))
    assert part == tomllib.loads(scale.generated(8, 1, 16))["flows"]
    with pytest.raises(SystemExit):
        scale.main(["--senders", "16", "--scenario", "scenarios/scale/permutation.toml", "--no-doc"])
    assert "--senders needs the generated scenario" in capsys.readouterr().err
    if not scale.SIMRUN.exists():
        pytest.skip("target/release/examples/simrun not built")
    out = tmp_path / "senders.json"
    # 3 does not divide 16 hosts and 64 is more than there are: both skipped
    assert scale.main(["--ks", "4", "--senders", "4,3,16,64", "--ns2-ks", "", "--duration", "0.0005", "--reps", "1",
                       "--no-doc", "--results", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [(r["k"], r["flows"]) for r in rows] == [(4, 4), (4, 16)]
    assert 0 < rows[0]["delivered"] < rows[1]["delivered"]
    table = capsys.readouterr().out
    # no ns-2 run asked for: no ns-2 columns, and every row as wide as the head
    assert "| k | hosts | flows | switches |" in table and "ns-2" not in table
    lines = [x for x in table.splitlines() if x.startswith("|")]
    assert len(lines) == 4 and len({x.count("|") for x in lines}) == 1, lines


def _misses():
    spec = importlib.util.spec_from_file_location("bench_misses", REPO / "bench" / "misses.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_misses_refuses_a_window_that_is_not_one_and_a_list_of_sizes_that_is_not(capsys):
    m = _misses()
    simrun = str(REPO / "bench" / "misses.py")  # any file: the arguments are checked before a run
    with pytest.raises(SystemExit, match="--short .* must be above 0 and below --long"):
        m.main(["--short", "0.002", "--long", "0.001", "--simrun", simrun])
    with pytest.raises(SystemExit, match="--ks: 'eight' is not a comma-separated list"):
        m.main(["--ks", "eight", "--simrun", simrun])
    assert m.l2_kib() > 0


def test_misses_counts_a_small_fabric(capsys):
    """k = 4 for 0.2 then 0.4 ms: a counted hot path, and a 16-host fabric's state fits the
    modelled second level (a handful of misses per hundred events at most)."""
    simrun = REPO / "target" / "release" / "examples" / "simrun"
    if shutil.which("valgrind") is None or not simrun.exists():
        pytest.skip("valgrind or target/release/examples/simrun missing (make bench-deps; cargo build --release --examples)")
    assert _misses().main(["--ks", "4", "--short", "0.0002", "--long", "0.0004", "--top", "3"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| 4 |"))
    events, ir, l1, l2 = (float(c.replace(",", "")) for c in row.strip("|").split("|")[1:])
    assert events > 10_000 and 200 < ir < 2_000 and l1 > l2 >= 0 and l2 < 0.2, row
    assert "k = 4: second-level misses per event by function" in out


def test_the_parts_and_sync_benchmarks_measure_what_they_say(tmp_path, capsys):
    """A tiny run of each on a k = 4 fat-tree: the windows follow the lookahead, the replay's
    one-thread time is its events times their cost, the busiest part's events are at most all
    of them, and the predictions are at most the thread count. Timed here only for
    their shape: `make bench` does not run them; their numbers are docs/performance.md's."""
    parts, sync = _load("parts"), _load("sync")
    if not (parts.SIMRUN.exists() and sync.REPLAY.exists()):
        pytest.skip("target/release/examples/{simrun,sync_replay} not built (cargo build --release --examples)")
    doc = parts.DOC.read_text()
    out = tmp_path / "parts.json"
    assert parts.main(["--ks", "4", "--parts", "2", "--delays-us", "1,10", "--duration", "0.001", "--no-doc",
                       "--results", str(out)]) == 0
    fine, coarse = json.loads(out.read_text())["rows"]
    assert 900 <= fine["windows"] <= 1001 and fine["windows"] > 5 * coarse["windows"], (fine, coarse)
    assert 1 <= fine["speedup_bound"] <= 2 and fine["crossings_per_window"] > 0
    r = sync.replay(4, 1.0, 2, 0.0005)
    # the one-thread replay spins each event's measured cost: about the loop's own time
    assert r["lookahead_ps"] == 1_000_000 and r["serial_s"] == pytest.approx(r["loop_s"], rel=0.5)
    # the busiest part's events, counted: at least half of all the events on 2 parts, at most all
    work = r["events"] * r["event_ns"] * 1e-9
    assert 0.5 * work * (1 - 1e-9) <= r["critical_s"] <= work * (1 + 1e-9)
    assert (r["threads_s"] is None) == (r["cores"] < 2)
    out = tmp_path / "sync.json"
    assert sync.main(["--ks", "4", "--delays-us", "1", "--predict", "4", "--duration", "0.0005", "--reps", "1",
                      "--no-doc", "--results", str(out)]) == 0
    row = json.loads(out.read_text())["rows"][0]
    # (the synchronisation measured on a busy machine may cost more than the parts gain)
    assert 0 < row["predicted"]["2"] <= 2 and 0 < row["predicted"]["4"] <= 4, row
    assert "| 4 | 1000 ns |" in capsys.readouterr().out and parts.DOC.read_text() == doc


def test_the_threads_benchmark_compares_the_same_run_on_one_and_two_threads(tmp_path):
    """A tiny pair on a k = 4 fat-tree: the script checks that both runs wrote the same bytes
    and that the second really used 2 threads, and keeps both runs' wall time and memory.
    Timed only for its shape; its numbers are docs/performance.md's."""
    threads = _load("threads")
    if not threads.SIMRUN.exists():
        pytest.skip("target/release/examples/simrun not built (cargo build --release --examples)")
    out = tmp_path / "threads.json"
    assert threads.main(["--ks", "4", "--reps", "1", "--duration", "0.002", "--no-doc", "--results", str(out)]) == 0
    row = json.loads(out.read_text())["rows"][0]
    pair = row["pairs"][0]
    assert pair["one"]["digest"] == pair["many"]["digest"] and pair["many"]["threads_used"] == 2
    assert row["speedup_median"] == pytest.approx(pair["one"]["wall_s"] / pair["many"]["wall_s"])
    assert row["rss_one_mib"] > 1 and row["rss_many_mib"] > 1
