"""Why the testbed starves more flows than the simulator: the measurements of docs/validation.md
("What makes real TCP starve more").

    starvation.py timelines TESTBED_RUN_DIR [SIM_RUN_DIR]   # per-flow RTO state of a testbed run
    starvation.py sim-variants [--seeds 3]                  # the simulator with Linux-like keys
    starvation.py sim-stays [--seed 1] [KEY=VALUE ...]      # the simulator's starved flows' stays

``timelines`` reads a ``dcfair testbed run`` output directory: ``flows.csv`` (who starved) and
``raw/flows/<id>.sender.json`` (the sender's ``tcp_info`` every 100 ms: ``backoff``, ``rto_us``,
``ca_state``, ``bytes_sent``, ...), and prints, for the starved flows and the others: their
retransmissions, longest silence (no byte sent for that long), highest backoff and RTO, the
share of samples in the Loss state (``ca_state`` 4, after an RTO), how often data moved
while the backoff stayed up, and how many segments the starved flows sent in each stay at a backoff
level from 3 up (one: the RTO's retransmission, and nothing after it), and whether the RTOs
that fired at backoff 4 to 6 all fell on one 256 ms lattice (Linux's timer wheel at 250 Hz) or
(a control) on a 250 ms one; then three
starved flows' timelines, one sample a second. With a
simulator run directory (``simrun ... --out DIR`` or ``dcfair run``), also its starved and fed
flows' timeouts and longest gaps.

``sim-variants`` runs the same setting (100 flows, 5 packets, 30 s, window 10 s) in the
simulator with DropTail and HCF, seeds 1..N, for each variant of ``VARIANTS`` (``tcp.*`` keys
toward Linux's TCP), through ``target/release/examples/simrun`` (build it first:
``cargo build --release -p dcfair-sim --example simrun``), and prints the mean starved fraction
(and per seed), timeouts, drops, utilization and Jain's index.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SIMRUN = REPO / "target" / "release" / "examples" / "simrun"
SIMTRACE = REPO / "target" / "release" / "examples" / "simtrace"
SCENARIO = REPO / "scenarios" / "papers" / "hcf" / "longflows.toml"
SETTING = ["flows.count=100", "topology.senders=100", "queue.limit_pkts=5", "sim.duration_s=30", "measure.window_s=10"]
LINUX_RTO = ["tcp.initial_rto_s=1", "tcp.max_rto_s=120"]
NO_NS2_START = ["tcp.headerless_first_segment=false", "tcp.first_ack_resets_cwnd=false"]
RFC_RECOVERY = ["tcp.ssthresh_from=flight_size", "tcp.recovery_cwnd=ssthresh", "tcp.recovery_exit=ssthresh",
                "tcp.recovery_max_burst=0"]
LINUXISH = LINUX_RTO + NO_NS2_START + RFC_RECOVERY
TESTBED_RTT = ["topology.access_delay_us=110", "topology.bottleneck_delay_us=110"]  # base RTT ~0.47 ms
VARIANTS = {
    "as the table (ns-2's TCP)": [],
    "L1: Linux's RTO (initial 1 s, max 120 s)": LINUX_RTO,
    "L2: L1 + no ns-2 start-up quirks": LINUX_RTO + NO_NS2_START,
    "L3: L2 + RFC recovery (not ns-2's)": LINUXISH,
    "L3 + CBR UDP (as iperf3)": LINUXISH + ["udp.pattern=cbr"],
    "L3 + the testbed's base RTT (0.47 ms)": LINUXISH + TESTBED_RTT,
    "L3 + Linux's Karn rule (karn_strict)": LINUXISH + ["tcp.karn_strict=true"],
    "timestamps": ["tcp.timestamps=true"],
    "L3 + timestamps": LINUXISH + ["tcp.timestamps=true"],
    "no backoff (max_backoff 1)": ["tcp.max_backoff=1"],
    "L3 + Linux's timer wheel (timer_wheel_hz 250)": LINUXISH + ["tcp.timer_wheel_hz=250"],
    "L3 + timer wheel + timers due at once in random order": LINUXISH + ["tcp.timer_wheel_hz=250",
                                                                       "sim.tie_break=random_timers"],
}
LOSS = 4  # TCP_CA_Loss


def med(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None


def sent_per_backoff_level(s: list, c: dict, low: int = 3) -> list[int]:
    """Segments (1460 bytes) a flow sent in each stay at a backoff level from ``low`` up: from
    the sample before the level was entered (so the RTO's retransmission counts) to the last
    sample at that level (a stay ends when the backoff rises, an RTO, or falls, an RTT sample)."""
    out, start = [], None
    for i in range(1, len(s)):
        k = s[i][c["backoff"]]
        if k != s[i - 1][c["backoff"]]:
            if start is not None:
                out.append(s[i - 1][c["bytes_sent"]] - s[start][c["bytes_sent"]])
            start = i - 1 if k >= low else None
    if start is not None:
        out.append(s[-1][c["bytes_sent"]] - s[start][c["bytes_sent"]])
    return [round(b / 1460) for b in out]


def on_lattice(intervals: list, period: float, steps: int = 1000) -> tuple[float, float]:
    """The phase (s) of the lattice ``phase + k * period`` that the most of ``intervals``
    ((start, end] pairs, seconds) contain a point of, and the share that do."""
    def share(phase: float) -> float:
        n = 0
        for a, b in intervals:
            t = phase + ((a - phase) // period + 1) * period  # the first lattice point after a
            n += t <= b
        return n / len(intervals)
    best = max(range(steps), key=lambda i: share(i * period / steps))  # the first of equals
    return best * period / steps, share(best * period / steps)


def tcp_flows(flows_csv: Path | str) -> tuple[list[dict], set[str]]:
    """The TCP rows of a ``flows.csv`` (testbed or simulator) and the ids of those that
    delivered nothing in the measurement window (starved)."""
    rows = [r for r in csv.DictReader(open(flows_csv)) if r["kind"] == "tcp"]
    return rows, {r["flow_id"] for r in rows if int(float(r["pkts_in_window"] or 0)) == 0}


def timelines(run: Path, sim: Path | None) -> None:
    rows, starved = tcp_flows(run / "flows.csv")
    print(f"testbed {run}: {len(starved)}/{len(rows)} flows starved")
    groups = {"starved": [], "fed": []}
    moved = moved_backed = rises = falls = 0
    series = {}
    for r in rows:
        path = run / "raw" / "flows" / f"{r['flow_id']}.sender.json"
        if not path.exists():
            continue
        doc = json.loads(path.read_text())
        c = {k: i for i, k in enumerate(doc["fields"])}
        s = doc["samples"]
        if not s or "backoff" not in c:
            continue
        series[r["flow_id"]] = (s, c)
        longest = run_s = 0.0
        for a, b in zip(s, s[1:]):
            run_s = run_s + (b[0] - a[0]) if b[c["bytes_sent"]] == a[c["bytes_sent"]] else 0.0
            longest = max(longest, run_s)
            if b[c["bytes_sent"]] > a[c["bytes_sent"]]:
                moved += 1
                moved_backed += a[c["backoff"]] >= 1 and b[c["backoff"]] >= a[c["backoff"]]
            rises += b[c["backoff"]] > a[c["backoff"]]
            falls += b[c["backoff"]] < a[c["backoff"]]
        groups["starved" if r["flow_id"] in starved else "fed"].append(dict(
            retrans=s[-1][c["total_retrans"]], silence=longest, backoff=max(x[c["backoff"]] for x in s),
            rto_ms=max(x[c["rto_us"]] for x in s) / 1e3, loss=sum(x[c["ca_state"]] == LOSS for x in s) / len(s)))
    for g, v in groups.items():
        if v:
            print(f"  {g} ({len(v)}): median retransmissions {med([x['retrans'] for x in v])}, longest silence "
                  f"{med([x['silence'] for x in v]):.1f} s, highest backoff {med([x['backoff'] for x in v])} "
                  f"(RTO {med([x['rto_ms'] for x in v]):.0f} ms), share of samples in Loss {med([x['loss'] for x in v]):.2f}")
    if moved:
        print(f"  100 ms intervals in which a flow sent data: {moved}; its backoff stayed >= 1 through "
              f"{moved_backed} ({moved_backed / moved:.0%}) of them; backoff rose {rises} times, fell {falls}")
    levels = [n for fid in starved & set(series) for n in sent_per_backoff_level(*series[fid])]
    if levels:
        one = sum(n <= 1 for n in levels)
        print(f"  starved flows at backoff 3 or more: {len(levels)} levels; segments sent per level: median "
              f"{med(levels):.0f}, mean {statistics.fmean(levels):.1f}; at most one (the RTO's retransmission) in "
              f"{one} ({one / len(levels):.0%})")
    # RTOs that fired at backoff 4 to 6 (RTO 3.3 to 13 s: level 2 of a 250 Hz timer wheel,
    # 256 ms granularity), each known to lie between two samples.
    fired = [(a[0], b[0]) for s, c in series.values() for a, b in zip(s, s[1:])
             if b[c["backoff"]] == a[c["backoff"]] + 1 and 4 <= a[c["backoff"]] <= 6]
    if fired:
        width = statistics.fmean(b - a for a, b in fired)
        for period in (0.256, 0.250):
            phase, share = on_lattice(fired, period)
            print(f"  RTOs fired at backoff 4 to 6: {len(fired)}; on one {period * 1e3:.0f} ms lattice (phase "
                  f"{phase * 1e3:.1f} ms): {share:.0%} (by chance: about {width / period:.0%})")
    for fid in sorted(starved & set(series), key=int)[:3]:
        s, c = series[fid]
        t0 = s[0][0]
        print(f"  flow {fid}: " + " | ".join(f"{x[0] - t0:.0f}s b{x[c['backoff']]} rto {x[c['rto_us']] // 1000} ms "
                                             f"sent {x[c['bytes_sent']] // 1460}" for x in s[::10]))
    if sim:
        srows, sstarved = tcp_flows(sim / "flows.csv")
        for g, starving in (("starved", True), ("fed", False)):
            v = [r for r in srows if (r["flow_id"] in sstarved) == starving]
            if v:
                print(f"simulator {sim} {g} ({len(v)}): median timeouts {med([int(r['timeouts']) for r in v])}, "
                      f"retransmissions {med([int(r['retransmits']) for r in v])}, longest gap {med([float(r['max_gap_s']) for r in v]):.1f} s")


def sim_variants(seeds: int) -> None:
    if not SIMRUN.exists():
        sys.exit(f"starvation.py: build {SIMRUN} first: cargo build --release -p dcfair-sim --example simrun")
    for kind in ("droptail", "hcf"):
        for name, ov in VARIANTS.items():
            ms = []
            for seed in range(1, seeds + 1):
                p = subprocess.run([str(SIMRUN), str(SCENARIO), *SETTING, f"queue.kind={kind}", f"seed={seed}", *ov],
                                   capture_output=True, text=True)
                if p.returncode:
                    sys.exit(p.stderr)
                ms.append(json.loads(p.stdout)["metrics"])
            f = lambda k: statistics.fmean(m[k] for m in ms)
            print(f"| {kind} | {name} | {f('starved_fraction'):.3f} ({', '.join('%.2f' % m['starved_fraction'] for m in ms)}) | "
                  f"{f('timeouts'):,.0f} | {f('drops'):,.0f} | {f('utilization'):.3f} | {f('jain_index'):.3f} |", flush=True)


def stays_in_trace(log: Path, starved: set) -> list[tuple[int, bool]]:
    """From a ``simtrace`` log: for each stay of a starved flow at a backoff multiplier of 8 or
    more (level 3 and up), the segments it offered to the measured port (stored or dropped) and
    whether the first of them, the RTO's retransmission, was dropped. A stay starts and ends
    where the sender lines (``s``) show the multiplier change."""
    events: dict[int, list] = {f: [] for f in starved}
    with open(log) as fh:
        for line in fh:
            if line[0] == "s":
                p = line.split()
                if int(p[2]) in events:
                    events[int(p[2])].append(("s", int(p[12])))
            elif line[0] in "+d":
                p = line.split()
                if int(p[3]) in events:
                    events[int(p[3])].append((line[0], 0))
    out = []
    for es in events.values():
        backoff, cur = 1, None
        for kind, v in es:
            if kind == "s":
                if v != backoff:
                    if cur is not None:
                        out.append(tuple(cur))
                    cur = [0, False] if v >= 8 else None
                    backoff = v
            elif cur is not None:
                cur[1] |= cur[0] == 0 and kind == "d"
                cur[0] += 1
        if cur is not None:
            out.append(tuple(cur))
    return out


def sim_stays(seed: int, extra: list[str]) -> None:
    if not SIMTRACE.exists():
        sys.exit(f"starvation.py: build {SIMTRACE} first: "
                 "cargo build --release -p dcfair-sim --features trace --example simtrace")
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "trace"
        p = subprocess.run([str(SIMTRACE), str(log), str(SCENARIO), *SETTING, "queue.kind=droptail", f"seed={seed}",
                            *extra], capture_output=True, text=True)
        if p.returncode:
            sys.exit(p.stderr)
        starved = {int(f) for f in tcp_flows(str(log) + ".flows.csv")[1]}
        stays = stays_in_trace(log, starved)
    n = [k for k, _ in stays]
    head = f"simulator (DropTail, seed {seed}{', ' + ' '.join(extra) if extra else ''}): {len(starved)} starved flows"
    if not n:
        print(f"{head}, no stay at backoff 8x or more")
        return
    one = sum(k <= 1 for k in n)
    print(f"{head}; stays at backoff 8x or more: {len(n)}; segments per stay: median {med(n):.0f}, mean "
          f"{statistics.fmean(n):.1f}; at most one in {one} ({one / len(n):.0%}); the retransmission dropped in "
          f"{sum(d for _, d in stays)}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("timelines")
    t.add_argument("run", type=Path)
    t.add_argument("sim", type=Path, nargs="?")
    v = sub.add_parser("sim-variants")
    v.add_argument("--seeds", type=int, default=3)
    st = sub.add_parser("sim-stays")
    st.add_argument("--seed", type=int, default=1)
    st.add_argument("keys", nargs="*", help="more KEY=VALUE overrides (e.g. tcp.timer_wheel_hz=250)")
    a = ap.parse_args(argv)
    if a.cmd == "timelines":
        timelines(a.run, a.sim)
    elif a.cmd == "sim-stays":
        sim_stays(a.seed, a.keys)
    else:
        sim_variants(a.seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
