#!/usr/bin/env python3
"""The cost of synchronising a run's parts, measured at 2 threads, and the speedup it predicts.

    python bench/sync.py [--ks 8,16,32] [--delays-us 1,0.1] [--predict 8,16,32]
                         [--duration 0.001] [--reps 3] [--section sync-bench] [--no-doc]
    python bench/sync.py --render [--section sync-bench]

Each row is ``scenarios/scale/permutation.toml`` at one ``k`` and link delay, ordered by origin,
run by ``target/release/examples/sync_replay`` (its module doc gives the rules): in 2 parts on
one thread, keeping every window's work, then that work replayed on 2 threads that spin the
measured cost of an event per event and meet at a barrier at every window's end. Measured, at
2 threads (the median of ``--reps`` replays):

- *sync per window*: the replay of the same windows with no work in them, over the windows;
- *waiting*: the share of the 2-thread replay the threads spent at the barrier (their mean);
- *replay speedup*: the one-thread replay's time over the 2-thread replay's.

Predicted, at P parts on P threads (one run in P parts on one thread for each P, for the
busiest part's events of every window):

    speedup(P) = serial / (critical(P) + windows x sync(P)),    sync(P) = sync(2) x log2(P)

where ``serial`` is the one-thread replay, ``critical(P)`` the busiest part's events of every
window times the cost of an event, and ``sync(P)`` assumes a tree barrier (one more round of
cache-line transfers each time the threads double). The same formula at P = 2, beside the
replay's speedup, is the check of the model on this machine.

Writes ``bench/results/<section>.json`` and the section of ``docs/performance.md`` (not with
``--no-doc``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "validation"))
import docsection  # noqa: E402

REPLAY = REPO / "target" / "release" / "examples" / "sync_replay"
SCENARIO = REPO / "scenarios" / "scale" / "permutation.toml"
DOC = REPO / "docs" / "performance.md"


def replay(k: int, delay_us: float, parts: int, duration: float) -> dict:
    p = subprocess.run([str(REPLAY), str(SCENARIO), f"topology.k={k}", f"topology.link_delay_us={delay_us!r}",
                        f"sim.duration_s={duration!r}", "--parts", str(parts)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"bench/sync.py: sync_replay failed: {p.stderr.strip()}")
    return json.loads(p.stdout)


def predicted(serial_s: float, critical_s: float, windows: int, sync2_ns: float, parts: int) -> float:
    return serial_s / (critical_s + windows * sync2_ns * math.log2(parts) * 1e-9)


def row(k: int, delay_us: float, duration: float, reps: int, predict: list[int]) -> dict:
    runs = [replay(k, delay_us, 2, duration) for _ in range(reps)]
    med = lambda key: statistics.median(r[key] for r in runs)  # noqa: E731
    r0 = runs[0]
    serial, threads, sync2 = med("serial_s"), med("threads_s"), med("sync_ns_per_window")
    waiting = statistics.median(statistics.fmean(r["wait_s"]) / r["threads_s"] for r in runs)
    out = {
        "k": k, "delay_us": delay_us, "engine_build": r0["engine_build"], "cores": r0["cores"], "events": r0["events"],
        "windows": r0["windows"], "windows_per_ms": r0["windows"] / (duration * 1e3),
        "events_per_window": r0["events"] / r0["windows"], "event_ns": med("event_ns"),
        "sync_ns_per_window": sync2, "waiting": waiting, "serial_s": serial, "threads_s": threads,
        "replay_speedup": serial / threads,
        "predicted": {"2": predicted(serial, med("critical_s"), r0["windows"], sync2, 2)},
    }
    for n in predict:
        r = replay(k, delay_us, n, duration)
        # the cost of an event is the 2-part run's: each P-part run is timed once
        crit = r["critical_s"] / r["event_ns"] * out["event_ns"]
        out["predicted"][str(n)] = predicted(serial, crit, r["windows"], sync2, n)
    return out


def render(doc: dict) -> str:
    ps = [p for p in doc["rows"][0]["predicted"] if p != "2"]
    out = [f"Engine build `{doc['engine_build']}`; {doc['duration_s'] * 1e3:g} ms simulated per run; "
           f"`{doc['command']}` on {doc['generated_utc']}, {doc['cores']} cores.", "",
           "| k | link delay | windows per simulated ms | events per window | cost of an event "
           "| sync per window (measured) | waiting (measured) | replay speedup at 2 (measured) "
           "| at 2 (predicted) | " + " | ".join(f"at {p} (predicted)" for p in ps) + " |",
           "|---|---|---|---|---|---|---|---|---|" + "---|" * len(ps)]
    for r in doc["rows"]:
        pred = " | ".join(f"{r['predicted'][p]:.2f}" for p in ps)
        out.append(f"| {r['k']} | {r['delay_us'] * 1e3:g} ns | {r['windows_per_ms']:,.0f} | "
                   f"{r['events_per_window']:,.0f} | {r['event_ns']:.0f} ns | {r['sync_ns_per_window']:,.0f} ns | "
                   f"{r['waiting'] * 100:.1f} % | {r['replay_speedup']:.2f} | {r['predicted']['2']:.2f} | {pred} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ks", default="8,16,32")
    ap.add_argument("--delays-us", default="1,0.1")
    ap.add_argument("--predict", default="8,16,32")
    ap.add_argument("--duration", type=float, default=0.001)
    ap.add_argument("--reps", type=int, default=3)
    docsection.add_bench_args(ap, "sync-bench")
    a = ap.parse_args(argv)
    if not a.render and not REPLAY.exists():
        print(f"bench/sync.py: build {REPLAY} first (cargo build --release -p dcfair-sim --example sync_replay)", file=sys.stderr)
        return 2
    return docsection.bench_section(ap, a, REPO, DOC, lambda: measure(a, argv), render)


def measure(a, argv) -> dict:
    rows = []
    predict = [int(x) for x in a.predict.split(",") if x]
    for k in (int(x) for x in a.ks.split(",")):
        for d in (float(x) for x in a.delays_us.split(",")):
            r = row(k, d, a.duration, a.reps, predict)
            print(f"k={k} delay={d} us: sync {r['sync_ns_per_window']:.0f} ns per window, replay speedup "
                  f"{r['replay_speedup']:.2f} (predicted {r['predicted']['2']:.2f})", flush=True)
            rows.append(r)
    cmd = "python bench/sync.py " + " ".join(argv if argv is not None else sys.argv[1:])
    return {"command": cmd.strip(), "duration_s": a.duration, "engine_build": rows[0]["engine_build"], "cores": rows[0]["cores"],
            "generated_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "rows": rows}

if __name__ == "__main__":
    sys.exit(main())
