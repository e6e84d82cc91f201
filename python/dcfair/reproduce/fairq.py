"""The FairQ paper (paper 001): the incast experiments of section IV-F on the testbed of
section IV-E (4 racks of 7 servers at 1 Gbit/s, FairQ at the core switch).

- ``fairq-incast-mild``: 126 synchronized 11.5 KB requests (6 clients of rack 4 x 21 servers of
  racks 1-3), repeated 1000 times, no background traffic (figure 5, mild);
- ``fairq-incast-heavy``: the same transfer over 5 parallel connections per pair: 630 servers,
  200 requests (figure 5, heavy);
- ``fairq-incast-lowfreq``: 21 long-lived elephants for 20 s and one incast epoch of 100
  requests at 5 s (figure 6);
- ``fairq-incast-highfreq``: the same with nine epochs, at 2, 4, .., 18 s (figure 7).

Every run is ``scenarios/papers/fairq/testbed_incast.toml`` (or ``testbed_incast_elephants.toml``)
plus a variant's overrides (``VARIANTS``: name -> overrides, data, not code) plus the setting's.
DCTCP (K = 20 packets) is compared with CUBIC + FairQ.
An incast "FCT" is one answer's time: from the request to the last byte of that server's answer
in order at its client (``answer_time_*_s``); the statistics cover the answers completed in the
run (a starved answer that never completes is not in them: ``answers_completed`` says how many
did). Drops are those of the bottleneck port core -> tor4. Elephant goodput is the 21 elephants'
aggregate over the whole run. Full form: 5 seeds; quick form: 1 seed, shorter runs.
``docs/mechanisms/fairq.md`` holds the claims table and explains each disagreement.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from dcfair.reproduce import Claim, Reproduction, Study, mean, pyplot, register, save_figure
from dcfair.runner import Point

PAPER = "FairQ (paper 001)"
ROOT = Path(__file__).resolve().parents[3]
INCAST = str(ROOT / "scenarios/papers/fairq/testbed_incast.toml")
BACKGROUND = str(ROOT / "scenarios/papers/fairq/testbed_incast_elephants.toml")
FAIRQ = [("fairq.switches", '["core"]')]

#: The compared variants: name -> overrides. The DropTail baselines are the scenario files as
#: written (DropTail at every switch); FairQ adds a [fairq] table at the core.
VARIANTS: Dict[str, List[Tuple[str, object]]] = {
    "reno-droptail": [("tcp.cc", "reno")],
    "reno-fairq": [("tcp.cc", "reno")] + FAIRQ,
    "cubic-droptail": [("tcp.cc", "cubic")],
    "cubic-fairq": [("tcp.cc", "cubic")] + FAIRQ,
    # DCTCP with DropTail marking at K = 20 packets (DCTCP's guideline for 1 Gbit/s), no FairQ.
    "dctcp": [("tcp.cc", "dctcp"), ("tcp.ecn", True), ("queue.droptail.mark_threshold_pkts", 20)],
}
#: FairQ against its DropTail baseline under the same TCP.
PAIRS = (("reno", "reno-droptail", "reno-fairq"), ("cubic", "cubic-droptail", "cubic-fairq"),
         ("dctcp", "dctcp", "cubic-fairq"))
TCPS = ("reno", "cubic")
NAMES = {"reno-droptail": "Reno + DropTail", "reno-fairq": "Reno + FairQ", "cubic-droptail": "CUBIC + DropTail",
         "cubic-fairq": "CUBIC + FairQ", "dctcp": "DCTCP"}

#: Per setting: scenario, the full form's overrides, the quick form's.
SETTINGS = {
    "mild": (INCAST, [("incast.rounds", 1000)], [("incast.rounds", 10)]),
    "heavy": (INCAST, [("incast.servers", 630), ("incast.rounds", 200)], [("incast.servers", 630), ("incast.rounds", 2)]),
    "lowfreq": (BACKGROUND, [],
                [("sim.duration_s", 2.0), ("measure.window_s", 2.0), ("incast.start_s", 0.5), ("incast.rounds", 10)]),
    "highfreq": (BACKGROUND, [("incast.epochs", 9), ("incast.epoch_interval_s", 2.0), ("incast.start_s", 2.0)],
                 [("sim.duration_s", 2.0), ("measure.window_s", 2.0), ("incast.start_s", 0.4), ("incast.rounds", 4),
                  ("incast.epochs", 3), ("incast.epoch_interval_s", 0.5)]),
}
STATS = (("answer_time_mean_s", "mean"), ("answer_time_std_s", "std"), ("answer_time_p99_s", "p99"),
         ("answer_time_max_s", "max"))


def _seeds(quick: bool) -> range:
    return range(1, 2) if quick else range(1, 6)


def _plan(setting: str):
    scenario, full, short = SETTINGS[setting]

    def plan(quick: bool) -> List[Point]:
        extra = short if quick else full
        return [Point.make(scenario, extra + ov, s, variant=v) for v, ov in VARIANTS.items() for s in _seeds(quick)]

    return plan


def _variants(st: Study) -> List[str]:
    return [v for v in VARIANTS if st.rows(variant=v)]


def _ratios(st: Study, key: str, plus: float = 0.0) -> Dict[str, List[float]]:
    """Per TCP: per seed, DropTail's value of ``key`` over FairQ's (seeds paired), both plus
    ``plus`` (1 for counts that may be 0); nan where FairQ's is 0."""
    out = {}
    for tcp, dt, fq in PAIRS:
        a, b = st.metric(key, variant=dt), st.metric(key, variant=fq)
        out[tcp] = [(x + plus) / (y + plus) if y + plus else float("nan") for x, y in zip(a, b)]
    return out


def _table(st: Study, elephants: bool) -> List[dict]:
    rows = []
    for v in _variants(st):
        row = {"variant": v}
        for key, name in STATS:
            row[f"fct_{name}_ms"] = round(mean(st.metric(key, variant=v)) * 1e3, 3)
        row["answers_completed"] = mean(st.metric("answers_completed", variant=v))
        row["drops"] = mean(st.metric("drops", variant=v))
        row["timeouts"] = mean(st.metric("timeouts", variant=v))
        if elephants:
            row["elephant_goodput_mbps"] = round(mean(st.metric("aggregate_throughput_bps_flows", variant=v)) / 1e6, 1)
        row["seeds"] = len(st.rows(variant=v))
        rows.append(row)
    return rows


def _figure(st: Study, title: str, elephants: bool) -> None:
    vs = _variants(st)
    plt = pyplot()
    n = 3 if elephants else 2
    fig, axes = plt.subplots(1, n, figsize=(5 * n, 4))
    w = 0.8 / len(vs)
    for i, v in enumerate(vs):
        ys = [mean(st.metric(k, variant=v)) * 1e3 for k, _ in STATS]
        axes[0].bar([j + i * w for j in range(len(STATS))], ys, width=w, label=NAMES.get(v, v))
    axes[0].set_xticks([j + w * (len(vs) - 1) / 2 for j in range(len(STATS))], [s for _, s in STATS])
    axes[0].set_yscale("log")
    axes[0].set_ylabel("answer completion time (ms)")
    axes[0].legend(fontsize=7)
    axes[1].bar(range(len(vs)), [mean(st.metric("drops", variant=v)) for v in vs])
    axes[1].set_xticks(range(len(vs)), [NAMES.get(v, v) for v in vs], rotation=20, fontsize=8, ha="right")
    axes[1].set_ylabel("drops at core -> tor4")
    if elephants:
        axes[2].bar(range(len(vs)), [mean(st.metric("aggregate_throughput_bps_flows", variant=v)) / 1e6 for v in vs])
        axes[2].set_xticks(range(len(vs)), [NAMES.get(v, v) for v in vs], rotation=20, fontsize=8, ha="right")
        axes[2].set_ylabel("elephants' aggregate goodput (Mbit/s)")
    fig.suptitle(title, fontsize=10)
    save_figure(fig, st)


def _claims(st: Study, fig: str) -> List[Claim]:
    std, tail, drops = _ratios(st, "answer_time_std_s"), _ratios(st, "answer_time_max_s"), _ratios(st, "drops", plus=1.0)
    ok = lambda d, test: all(test(mean(d[t])) for t in TCPS)  # noqa: E731
    both = lambda d: d["reno"] + d["cubic"]  # noqa: E731
    return [
        Claim(f"spread-{fig}", "FairQ cuts the FCT standard deviation by about an order of magnitude (vs DropTail, Reno and CUBIC)",
              "~10x", both(std), ok(std, lambda m: m >= 5),
              "mean over seeds of DropTail std / FairQ std >= 5 for Reno and for CUBIC", "ratio"),
        Claim(f"tail-{fig}", "FairQ cuts the tail (max) FCT by up to two orders of magnitude",
              "up to 100x", both(tail), ok(tail, lambda m: m > 1) and max(mean(tail[t]) for t in TCPS) >= 10,
              "DropTail max / FairQ max above 1 for both TCPs and >= 10 for at least one (means over seeds)", "ratio"),
        Claim(f"drops-{fig}", "FairQ reduces the drops", "fewer drops (fig. 6/7(c))", both(drops),
              ok(drops, lambda m: m > 1), "mean (DropTail drops + 1) / (FairQ drops + 1) > 1 for Reno and for CUBIC", "ratio"),
        Claim(f"vs-dctcp-{fig}", "FairQ's FCT spread and tail are below DCTCP's (CUBIC + FairQ against DCTCP, K = 20)",
              "FairQ better (figs. 5-7)", std["dctcp"] + tail["dctcp"],
              mean(std["dctcp"]) > 1 and mean(tail["dctcp"]) > 1,
              "values: DCTCP std / FairQ std per seed, then DCTCP max / FairQ max; both means > 1", "ratio"),
    ]


def _elephant_claim(st: Study, fig: str, lo: float, hi: float, text: str, paper: str) -> Claim:
    g = _ratios(st, "aggregate_throughput_bps_flows")
    vals = [1 / x if x else float("nan") for x in g["reno"] + g["cubic"]]  # FairQ over DropTail
    per = [1 / mean(g[t]) for t in ("reno", "cubic")]
    return Claim(f"elephants-{fig}", text, paper, vals, all(lo <= p <= hi for p in per),
                 f"FairQ / DropTail elephant goodput in [{lo:g}, {hi:g}] for Reno and for CUBIC (means over seeds)", "ratio")


def _analyze(setting: str, title: str):
    elephants = setting in ("lowfreq", "highfreq")

    def analyze(st: Study) -> List[Claim]:
        _figure(st, title, elephants)
        st.table = _table(st, elephants)
        claims = _claims(st, setting)
        if setting == "lowfreq":
            claims.append(_elephant_claim(st, setting, 0.95, 1.05, "Elephants' goodput is nearly untouched by FairQ",
                                          "almost not affected (fig. 6(b))"))
        if setting == "highfreq":
            claims.append(_elephant_claim(st, setting, 0.8, 1.0, "Elephants' goodput is slightly reduced by FairQ",
                                          "slightly reduced (fig. 7(b))"))
        return claims

    return analyze


for _name, _fig, _title in (
        ("mild", "fig. 5 (mild)", "FairQ fig. 5: mild incast, 126 x 11.5 KB requests, no background"),
        ("heavy", "fig. 5 (heavy)", "FairQ fig. 5: heavy incast, 5 parallel connections per pair (630)"),
        ("lowfreq", "fig. 6", "FairQ fig. 6: one incast epoch over 21 elephants"),
        ("highfreq", "fig. 7", "FairQ fig. 7: nine incast epochs over 21 elephants")):
    register(Reproduction(f"fairq-incast-{_name}", PAPER, _fig, _title, _plan(_name), _analyze(_name, _title)))


def settings() -> Sequence[str]:
    return tuple(SETTINGS)
