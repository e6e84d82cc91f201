"""The comparison cases of the ns-3 validation: one dcfair scenario file each, the seeds to run,
and what the comparison looks at. run_ns3.py, run_dcfair.py and compare.py all read this list,
so a case is added in one place.

A case's scenario file is the single source of truth: run_ns3.py derives every option of the
ns-3 program from it (tomlmap.py), run_dcfair.py runs it as it is. `needs` names the dcfair keys
that the case cannot run without; until dcfair has them its dcfair runs are recorded as pending,
not failed (validation/ns3/README.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Case:
    name: str
    scenario: str            # relative to the repository root
    seeds: tuple[int, ...]   # ns-3 RngRun and dcfair `seed`
    title: str
    metrics: tuple[str, ...]  # metric keys shown in the table (metrics.METRICS)
    needs: tuple[str, ...] = ()  # dcfair keys this case depends on (beyond today's engine)
    overrides: tuple[str, ...] = field(default=())  # KEY=VALUE applied on both sides


SAW = ("utilization", "goodput_mbps", "drops", "spurious", "timeouts", "queue_mean",
       "queue_p99", "loss_events", "period_s", "wmax_pkts", "reduction", "in_recovery",
       "recovery_send_ratio")
MANY = ("utilization", "jain", "goodput_mbps", "drops_in_window", "spurious", "timeouts",
        "queue_mean", "queue_p99", "queue_empty", "loss_events", "reduction", "in_recovery",
        "recovery_send_ratio", "in_network_recovery", "outstanding")
GAPS = ("queue_std", "gap_median_us", "gap_cv", "burst_frac")
PACE = ("utilization", "jain", "goodput_mbps", "drops_in_window", "spurious", "timeouts",
        "queue_mean", "queue_p99") + GAPS

SEEDS5 = (1, 2, 3, 4, 5)

CASES: tuple[Case, ...] = (
    Case("newreno1", "validation/ns3/scenarios/newreno1.toml", (1,),
         "NewReno, 1 flow, 20-packet buffer, SACK off", SAW),
    Case("newreno8", "validation/ns3/scenarios/newreno8.toml", SEEDS5,
         "NewReno, 8 flows, 50-packet buffer, SACK off, no pacing", MANY + GAPS),
    Case("cubic1", "validation/ns3/scenarios/cubic1.toml", (1,),
         "CUBIC, 1 flow, 20-packet buffer, SACK on", SAW,
         needs=("tcp.cc=cubic", "tcp.sack", "tcp.cubic_*")),
    Case("cubic1_nosack", "validation/ns3/scenarios/cubic1_nosack.toml", (1,),
         "CUBIC, 1 flow, 20-packet buffer, SACK off", SAW,
         needs=("tcp.cc=cubic", "tcp.sack", "tcp.cubic_*")),
    Case("cubic8", "validation/ns3/scenarios/cubic8.toml", SEEDS5,
         "CUBIC, 8 flows, 50-packet buffer, SACK on", MANY,
         needs=("tcp.cc=cubic", "tcp.sack", "tcp.cubic_*")),
    Case("newreno8_sack", "validation/ns3/scenarios/newreno8_sack.toml", SEEDS5,
         "NewReno, 8 flows, 50-packet buffer, SACK on, no pacing", PACE,
         needs=("tcp.sack", "tcp.pacing")),
    Case("pacing8", "validation/ns3/scenarios/pacing8.toml", SEEDS5,
         "NewReno, 8 flows, 50-packet buffer, SACK on, paced (ratios 1.0 / 1.0)", PACE,
         needs=("tcp.sack", "tcp.pacing", "tcp.pacing_ss_ratio", "tcp.pacing_ca_ratio")),
    Case("pacing8_linux", "validation/ns3/scenarios/pacing8_linux.toml", SEEDS5,
         "NewReno, 8 flows, 50-packet buffer, SACK on, paced (ratios 2.0 / 1.2)", PACE,
         needs=("tcp.sack", "tcp.pacing", "tcp.pacing_ss_ratio", "tcp.pacing_ca_ratio")),
)

BY_NAME = {c.name: c for c in CASES}


def select(names: str | None) -> list[Case]:
    """The cases named in a comma-separated list (all when None or empty)."""
    if not names:
        return list(CASES)
    out = []
    for n in (x.strip() for x in names.split(",")):
        if not n:
            continue
        if n not in BY_NAME:
            raise SystemExit(f"unknown case {n!r}; choose from {', '.join(BY_NAME)}")
        out.append(BY_NAME[n])
    return out
