#!/usr/bin/env python3
"""Time ns-2 on the HCF long-flow scenario (droptail), tracing off.

Measures, for each simulated duration (default: 0.001 s = setup only, 20 s, 180 s),
`reps` runs of

    ns validation/ns2/longflows.tcl --qdisc droptail --seed 1 --duration D --trace none

each one's wall clock (time.monotonic around the child), its CPU time and its peak
resident set size (ru_maxrss of that very child, from os.wait4). The 0.001 s run is
ns-2's setup cost (building 403 nodes, 802 links, 401 connections, routing) plus
start-up and exit; `net_*` values subtract its median from the longer runs.

Writes bench/results/ns2_longflows_timing.json (self-describing: what was run, on
what machine, under what load, and the raw samples) so that dcfair's numbers can be
added next to it and ratios computed. Only one ns process runs at a time.

Usage: time_ns2.py [--durations 0.001,20,180] [--reps 3] [--qdisc droptail]
                   [--seed 1] [--out PATH] [--ns ns] [--timeout 1800]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TCL = os.path.join(REPO, "validation/ns2/longflows.tcl")
sys.path.insert(0, os.path.join(REPO, "validation/ns2"))
from run_ns2 import ns_version  # noqa: E402  (one probe of ns-2's version for both scripts)


def log(msg: str) -> None:
    print(f"[time_ns2 {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run_timed(cmd: list[str], timeout: float) -> dict:
    """Run cmd; wall clock, CPU and peak RSS of exactly this child (os.wait4)."""
    load = os.getloadavg()
    errf = tempfile.TemporaryFile()  # a file, not a pipe: a chatty child cannot block
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=errf, start_new_session=True)
    deadline = t0 + timeout
    status = ru = None
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            break
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            _, status, ru = os.wait4(proc.pid, 0)
            proc.returncode = -9
            raise RuntimeError(f"timed out after {timeout:g} s: {' '.join(cmd)}")
        time.sleep(0.005)
    wall = time.monotonic() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    errf.seek(0)
    err = errf.read().decode(errors="replace")
    errf.close()
    if proc.returncode != 0:
        raise RuntimeError(f"exit status {proc.returncode}: {' '.join(cmd)}\n{err[-2000:]}")
    return {
        "wall_s": round(wall, 4),
        "user_s": round(ru.ru_utime, 4),
        "sys_s": round(ru.ru_stime, 4),
        "peak_rss_kib": ru.ru_maxrss,  # Linux: kibibytes
        "loadavg_1min_before": round(load[0], 2),
    }


def summarize(samples: list[dict]) -> dict:
    out = {}
    for k in ("wall_s", "user_s", "sys_s", "peak_rss_kib"):
        v = [s[k] for s in samples]
        out[k] = {"min": min(v), "median": statistics.median(v), "max": max(v)}
    return out


def machine() -> dict:
    """The processor and system a timing ran on. Clouds label different processors alike
    ("AMD EPYC"), so the family, model and stepping numbers and the cache sizes are recorded
    too: they tell two machines apart when timings from different sessions are compared."""
    info: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if not line.strip():
                    break  # the first processor's block is enough
                key, _, value = line.partition(":")
                info.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return {"cpu_model": info.get("model name"), "cpu_id": cpu_id(info), "caches": caches(),
            "logical_cpus": os.cpu_count(), "system": platform.system(),
            "release": platform.release(), "machine": platform.machine(),
            "python": platform.python_version()}


def cpu_id(info: dict[str, str]) -> str | None:
    """``family F model M stepping S`` of /proc/cpuinfo (x86), or None where it has none."""
    parts = [f"{k} {info[k]}" for k in ("cpu family", "model", "stepping") if k in info]
    return ", ".join(parts) or None


def caches(root: str = "/sys/devices/system/cpu/cpu0/cache") -> str | None:
    """CPU 0's caches as ``L1d 48K, L1i 32K, L2 1024K, L3 32768K`` (sysfs), or None."""
    out = []
    try:
        for d in sorted(os.listdir(root)):
            if not d.startswith("index"):
                continue
            read = lambda name: open(os.path.join(root, d, name)).read().strip()  # noqa: E731
            kind = {"Data": "d", "Instruction": "i"}.get(read("type"), "")
            out.append(f"L{read('level')}{kind} {read('size')}")
    except OSError:
        return None
    return ", ".join(out) or None


def describe(m: dict) -> str:
    """One phrase for a doc's "Machine:" line: model, id and caches where known."""
    extra = [x for x in (m.get("cpu_id"), m.get("caches")) if x]
    return f"{m.get('cpu_model')}" + (f" ({'; '.join(extra)})" if extra else "")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Time ns-2 on the HCF long-flow scenario.")
    ap.add_argument("--durations", default="0.001,20,180",
                    help="simulated seconds, comma-separated; the smallest is the setup run")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--qdisc", default="droptail")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--flows", type=int, default=400)
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--out", default=os.path.join(REPO, "bench/results/ns2_longflows_timing.json"))
    ap.add_argument("--ns", default="ns")
    a = ap.parse_args(argv)
    try:
        durations = sorted(float(x) for x in a.durations.split(",") if x.strip())
    except ValueError:
        print(f"time_ns2.py: --durations: expected numbers, got {a.durations!r}", file=sys.stderr)
        return 2
    if not durations or durations[0] <= 0 or a.reps < 1:
        print("time_ns2.py: need positive durations and reps >= 1", file=sys.stderr)
        return 2
    if shutil.which(a.ns) is None:
        print(f"time_ns2.py: ns-2 executable {a.ns!r} not found on PATH "
              "(Debian/Ubuntu: apt-get install ns2), or pass --ns", file=sys.stderr)
        return 2

    version = ns_version(a.ns)
    results = []
    # Interleave the reps (setup, 20, 180, setup, 20, 180, ...) so that a change in
    # the machine's load spreads over all settings instead of biasing one.
    samples: dict[float, list[dict]] = {d: [] for d in durations}
    cmds: dict[float, list[str]] = {}
    for rep in range(a.reps):
        for d in durations:
            cmd = [a.ns, TCL, "--qdisc", a.qdisc, "--seed", str(a.seed), "--duration", repr(d),
                   "--flows", str(a.flows), "--trace", "none"]
            cmds[d] = cmd
            log(f"rep {rep + 1}/{a.reps}: {d:g} s simulated")
            try:
                s = run_timed(cmd, a.timeout)
            except RuntimeError as e:
                log(f"FAILED: {e}")
                return 1
            log(f"  wall {s['wall_s']:.2f} s, cpu {s['user_s'] + s['sys_s']:.2f} s, "
                f"peak RSS {s['peak_rss_kib'] / 1024:.1f} MiB, load {s['loadavg_1min_before']}")
            samples[d].append(s)

    setup = durations[0]
    setup_wall = statistics.median(s["wall_s"] for s in samples[setup])
    setup_cpu = statistics.median(s["user_s"] + s["sys_s"] for s in samples[setup])
    for d in durations:
        summ = summarize(samples[d])
        entry = {
            "role": "setup" if d == setup else "run",
            "sim_time_s": d,
            "command": [os.path.basename(a.ns), os.path.relpath(TCL, REPO)] + cmds[d][2:],
            "samples": samples[d],
            "summary": summ,
        }
        if d != setup:
            wall = summ["wall_s"]["median"]
            cpu = statistics.median(s["user_s"] + s["sys_s"] for s in samples[d])
            entry["net_wall_s_median"] = round(wall - setup_wall, 4)
            entry["net_cpu_s_median"] = round(cpu - setup_cpu, 4)
            entry["sim_seconds_per_wall_second"] = round(d / wall, 4)
            entry["sim_seconds_per_net_cpu_second"] = (
                round(d / (cpu - setup_cpu), 4) if cpu > setup_cpu else None)
        results.append(entry)

    doc = {
        "benchmark": "hcf-longflows",
        "description": "Whole-run cost of ns-2 on the HCF long-flow scenario "
                       "(scenarios/papers/hcf/longflows.toml mirrored by "
                       "validation/ns2/longflows.tcl), tracing off. The setup entry "
                       "(smallest sim_time_s) is building the network plus process start "
                       "and exit; net_* subtract its median.",
        "simulator": "ns-2",
        **version,
        "scenario": "scenarios/papers/hcf/longflows.toml",
        "tcl_script": os.path.relpath(TCL, REPO),
        "settings": {"qdisc": a.qdisc, "seed": a.seed, "flows": a.flows, "tracing": False,
                     "reps": a.reps, "durations_s": durations},
        "method": {
            "wall_s": "time.monotonic() around the child (fork+exec to exit)",
            "user_s/sys_s": "CPU times of the child from os.wait4",
            "peak_rss_kib": "ru_maxrss of the child from os.wait4 (KiB on Linux)",
            "interleaving": "reps run round-robin over the durations",
            "concurrency": "one ns process at a time; the machine may be shared "
                           "(see loadavg_1min_before and logical_cpus)",
        },
        "machine": machine(),
        "generated_utc": datetime.datetime.now(datetime.timezone.utc)
                         .strftime("%Y-%m-%dT%H:%M:%SZ"),
        "results": results,
        "comparisons": {"note": "reserved for dcfair's side: add entries with the same "
                                "sim_time_s and the ratio definitions used"},
    }
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(doc, fh, indent=2)
        fh.write("\n")
    os.replace(tmp, a.out)
    log(f"wrote {a.out}")
    for e in results:
        s = e["summary"]
        print(f"{e['sim_time_s']:>8g} s sim: wall median {s['wall_s']['median']:.2f} s "
              f"(min {s['wall_s']['min']:.2f}), peak RSS {s['peak_rss_kib']['max'] / 1024:.1f} MiB"
              + (f", net wall {e['net_wall_s_median']:.2f} s" if "net_wall_s_median" in e else ""),
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
