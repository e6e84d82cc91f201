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
Each answer is a new connection (the authors' scripts run Apache benchmark without keep-alive).
DCTCP marks at a quarter of the 350-packet queue (the paper's NetFPGA ECN module: "default is
25%"); the paper compares FairQ with "TCP (Cubic, Reno) with DropTail and DCTCP".
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

from dcfair.data import PAPERS
from dcfair.reproduce import Claim, Reading, Reproduction, Study, clearly_lower, mean, pyplot, register, save_figure
from dcfair.runner import Point

PAPER = "FairQ (paper 001)"
INCAST = str(PAPERS / "fairq/testbed_incast.toml")
BACKGROUND = str(PAPERS / "fairq/testbed_incast_elephants.toml")
FAIRQ = [("fairq.switches", '["core"]')]
#: DCTCP's marking threshold: 25 % of the 350-packet queue (section IV-E, ECN_mark).
DCTCP_K = 87

#: The compared variants: name -> overrides. The DropTail baselines are the scenario files as
#: written (DropTail at every switch); FairQ adds a [fairq] table at the core. The paper's "Reno"
#: is NewReno (section IV-E: "DCTCP [22], Cubic and New-Reno (abbreviated to Reno)").
VARIANTS: Dict[str, List[Tuple[str, object]]] = {
    "reno-droptail": [("tcp.cc", "newreno")],
    "reno-fairq": [("tcp.cc", "newreno")] + FAIRQ,
    "cubic-droptail": [("tcp.cc", "cubic")],
    "cubic-fairq": [("tcp.cc", "cubic")] + FAIRQ,
    # DCTCP with DropTail marking at a quarter of the queue (the paper's ECN_mark module: "marked
    # whenever a customizable fraction (default is 25% ...) of the maximum queue occupancy has been
    # exceeded"): 87 of 350 packets. No FairQ.
    "dctcp": [("tcp.cc", "dctcp"), ("tcp.ecn", True), ("queue.droptail.mark_threshold_pkts", DCTCP_K)],
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


#: "N orders of magnitude": a ratio of at least 10^(N - 0.5), nearer N orders than N - 1 on a
#: log scale.
def orders(n: float) -> float:
    return 10 ** (n - 0.5)


def _std_claim(st: Study, fig: str, quote: str) -> Claim:
    """FairQ's FCT standard deviation an order of magnitude below DropTail's (Reno and CUBIC) and
    DCTCP's."""
    std = _ratios(st, "answer_time_std_s")
    return Claim(f"spread-{fig}", "FairQ's FCT standard deviation is an order of magnitude smaller than with DropTail "
                 "(Reno, CUBIC) and DCTCP", "~10x smaller", std["reno"] + std["cubic"] + std["dctcp"],
                 all(mean(std[t]) >= orders(1) for t in std),
                 f"mean over seeds of the other's std / FairQ's std >= {orders(1):.3g} (10^0.5) against Reno + DropTail, "
                 "CUBIC + DropTail and DCTCP (values: those three, per seed)", "ratio", quote=quote)


def _tail_claim(st: Study, fig: str, quote: str) -> Claim:
    tail = _ratios(st, "answer_time_max_s")
    return Claim(f"tail-{fig}", "FairQ cuts the tail (maximum) FCT by two orders of magnitude", "~100x",
                 tail["reno"] + tail["cubic"], max(mean(tail[t]) for t in TCPS) >= orders(2),
                 f"DropTail max / FairQ max: mean over seeds >= {orders(2):.3g} (10^1.5) for Reno or CUBIC (values: Reno "
                 "then CUBIC, per seed)", "ratio", quote=quote)


def _lower(st: Study, key: str) -> bool:
    """FairQ's ``key`` below DropTail's by more than 2 standard errors, for Reno and for CUBIC."""
    return all(clearly_lower(st.metric(key, variant=fq), st.metric(key, variant=dt)) for _, dt, fq in PAIRS[:2])


def _drops_claim(st: Study, fig: str, quote: str) -> Claim:
    drops = _ratios(st, "drops", plus=1.0)
    return Claim(f"drops-{fig}", "FairQ reduces the drops", "fewer drops", drops["reno"] + drops["cubic"],
                 _lower(st, "drops"), "FairQ's drops below DropTail's by more than 2 standard errors, for Reno and for "
                 "CUBIC (values: (DropTail + 1) / (FairQ + 1) per seed)", "ratio", quote=quote)


def _mean_claim(st: Study, fig: str, text: str, quote: str, same: bool) -> Claim:
    ratio = _ratios(st, "answer_time_mean_s")
    vals = ratio["reno"] + ratio["cubic"]
    if same:
        return Claim(f"mean-{fig}", text, "almost the same", vals, all(0.8 <= mean(ratio[t]) <= 1.25 for t in TCPS),
                     "DropTail mean FCT / FairQ mean FCT in [0.8, 1.25] for Reno and for CUBIC (values: per seed)",
                     "ratio", quote=quote)
    return Claim(f"mean-{fig}", text, "lower", vals, _lower(st, "answer_time_mean_s"),
                 "FairQ's mean FCT below DropTail's by more than 2 standard errors, for Reno and for CUBIC (values: "
                 "DropTail / FairQ per seed)", "ratio", quote=quote)


def _significant(st: Study, fig: str, key: str, what: str, quote: str) -> Claim:
    r = _ratios(st, key)
    return Claim(f"{what}-{fig}", f"Heavy load: FairQ significantly improves the FCT {what}", "significantly improved",
                 r["reno"] + r["cubic"], _lower(st, key),
                 f"FairQ's FCT {what} below DropTail's by more than 2 standard errors, for Reno and for CUBIC (values: "
                 "DropTail / FairQ per seed)", "ratio", quote=quote)


def _elephant_claim(st: Study, fig: str, lo: float, hi: float, text: str, paper: str, quote: str,
                    hi_open: bool = False) -> Claim:
    g = _ratios(st, "aggregate_throughput_bps_flows")
    vals = [1 / x if x else float("nan") for x in g["reno"] + g["cubic"]]  # FairQ over DropTail
    per = [1 / mean(g[t]) for t in TCPS]
    ok = all((lo <= p < hi) if hi_open else (lo <= p <= hi) for p in per)
    return Claim(f"elephants-{fig}", text, paper, vals, ok,
                 f"FairQ / DropTail elephant goodput in [{lo:g}, {hi:g}{')' if hi_open else ']'} for Reno and for CUBIC "
                 "(means over seeds; values: per seed)", "ratio", quote=quote)


MILD = "The competing mice flows benefit under FairSwitch in the mild case by achieving almost the same FCT on " \
       "average but with an order-of-magnitude smaller standard deviation compared to TCP (Cubic, Reno) with DropTail " \
       "and DCTCP"
MILD_TAIL = "In addition, it can improve the FCT of the tail-end (i.e., the maximum FCT) by two orders-of-magnitude"
DROPS_5 = "Figure 6 shows that the number of drops during these incast experiments is reduced by [?] and [?] in the " \
          "mild and heavy load scenarios"
HEAVY = "under heavy load, FairSwitch achieves a significantly improved performance for TCP flows in terms of the FCT " \
        "variation from average and the FCT of the tail-end flows"
LOW = "Mice flows benefit with FairSwitch by improving the FCT on average and with one order-of-magnitude reduction in " \
      "FCT variation compared to TCP (Cubic, Reno) with DropTail and DCTCP"
LOW_TAIL = "FairSwitch reduces the tail FCT by two order-of-magnitude almost close to the average, and the FCT values " \
           "are within 10's of ms"
HIGH = "The average and variation of FCT for mice flow see similar improvement as the previous experiment"


def _mild(st: Study) -> List[Claim]:
    return [_mean_claim(st, "mild", "FairQ keeps almost the same mean FCT as DropTail", MILD, same=True),
            _std_claim(st, "mild", MILD), _tail_claim(st, "mild", MILD_TAIL), _drops_claim(st, "mild", DROPS_5)]


def _heavy(st: Study) -> List[Claim]:
    return [_significant(st, "heavy", "answer_time_std_s", "spread", HEAVY),
            _significant(st, "heavy", "answer_time_max_s", "tail", HEAVY), _drops_claim(st, "heavy", DROPS_5)]


def _lowfreq(st: Study) -> List[Claim]:
    mx = [x for _, _, fq in PAIRS[:2] for x in st.metric("answer_time_max_s", variant=fq)]
    return [
        _mean_claim(st, "lowfreq", "FairQ lowers the mean FCT", LOW, same=False), _std_claim(st, "lowfreq", LOW),
        _tail_claim(st, "lowfreq", LOW_TAIL),
        Claim("tens-of-ms-lowfreq", "With FairQ every answer's FCT is within tens of milliseconds", "< 100 ms", mx,
              bool(mx) and max(mx) < 0.1, "FairQ's maximum FCT below 0.1 s in every run (Reno and CUBIC)", "s",
              quote=LOW_TAIL),
        _drops_claim(st, "lowfreq", "Figure 6(c) shows that the drops under FairSwitch is reduced by up to [?]"),
        _elephant_claim(st, "lowfreq", 0.95, 1.05, "Elephants' goodput is nearly untouched by FairQ",
                        "almost not affected (fig. 6(b))",
                        "Fig 6(b) shows that the elephant flows are almost not affected by FairSwitch intervention"),
    ]


def _highfreq(st: Study) -> List[Claim]:
    return [
        _mean_claim(st, "highfreq", "FairQ lowers the mean FCT, as at low frequency", HIGH, same=False),
        _std_claim(st, "highfreq", HIGH),
        _drops_claim(st, "highfreq", "This can be attributed to the lower packet drop rate of up to [?] with the help of "
                     "FairSwitch"),
        _elephant_claim(st, "highfreq", 0.8, 1.0, "Elephants' goodput is slightly reduced by FairQ",
                        "slightly reduced (fig. 7(b))", "Figure 7(b) shows that elephants' throughput is slightly reduced",
                        hi_open=True),
    ]


CLAIMS = {"mild": _mild, "heavy": _heavy, "lowfreq": _lowfreq, "highfreq": _highfreq}

#: The readings every FairQ claim is tried under.
FAIRQ_VARIANTS = (("variant", ("reno-fairq", "cubic-fairq")),)
READINGS = (
    Reading("persistent-connections", "one persistent connection per client and server, opened before the first request, "
            "instead of one per request", (("incast.connection", "persistent"),)),
    Reading("code-gain", "the window controller's step of the authors' public code ((target - queue) / M bytes per tick: "
            "gain = target / (M x MSS) = 11.24 at a 350-packet buffer) instead of the prose's fraction of an MSS",
            (("fairq.gain", 11.24),), FAIRQ_VARIANTS),
    Reading("dctcp-k20", "DCTCP marking at K = 20 packets (DCTCP's guideline at 1 Gbit/s) instead of 25 % of the queue",
            (("queue.droptail.mark_threshold_pkts", 20),), (("variant", "dctcp"),)),
    Reading("initial-rto-half", "diagnostic, not the paper's setting: an initial retransmission timeout of 0.5 s "
            "instead of 1 s, to see whether the longest answers wait for a new connection's first timeout",
            (("tcp.initial_rto_s", 0.5),), FAIRQ_VARIANTS, ("tail-lowfreq", "tens-of-ms-lowfreq")),
    Reading("linux-3.18", "the testbed kernel's TCP (Linux 3.18): initial window 10, SACK, timestamps and Linux's "
            "Karn rule, delayed ACKs after 5 quick ACKs (its initial receive window of 10 segments over 2)",
            (("tcp.init_cwnd_pkts", 10), ("tcp.sack", True), ("tcp.timestamps", True), ("tcp.karn_strict", True),
             ("tcp.delayed_ack", True), ("tcp.quickack_segments", 5))),
    Reading("rfc5681-reno", "Reno as RFC 5681 (the first new ACK ends recovery) instead of the paper's NewReno",
            (("tcp.cc", "reno"),), (("variant", ("reno-droptail", "reno-fairq")),)),
    Reading("code-floor", "the per-flow window's floor of the authors' public code (88 bytes) instead of one MSS",
            (("fairq.min_window_bytes", 88),), FAIRQ_VARIANTS),
    Reading("byte-buffer", "the NetFPGA's output queue counted in bytes, as its SRAM words are (section IV-E: q_words "
            "and q_maxwords), 525,000 bytes (350 full packets), instead of 350 packets of any size",
            (("queue.limit_bytes", 350 * 1500), ("queue.limit_pkts", 100_000))),
    Reading("one-segment-first-flight", "diagnostic, not the paper's setting: an initial window of one segment, so "
            "that no answer's first flight exceeds FairQ's one-MSS share (docs/mechanisms/fairq.md, 'Second opinion')",
            (("tcp.init_cwnd_pkts", 1),), FAIRQ_VARIANTS,
            ("tail-lowfreq", "tens-of-ms-lowfreq", "spread-highfreq", "tail-heavy")),
)


def _analyze(setting: str, title: str):
    elephants = setting in ("lowfreq", "highfreq")

    def analyze(st: Study) -> List[Claim]:
        _figure(st, title, elephants)
        st.table = _table(st, elephants)
        return CLAIMS[setting](st)

    return analyze


for _name, _fig, _title in (
        ("mild", "fig. 5 (mild)", "FairQ fig. 5: mild incast, 126 x 11.5 KB requests, no background"),
        ("heavy", "fig. 5 (heavy)", "FairQ fig. 5: heavy incast, 5 parallel connections per pair (630)"),
        ("lowfreq", "fig. 6", "FairQ fig. 6: one incast epoch over 21 elephants"),
        ("highfreq", "fig. 7", "FairQ fig. 7: nine incast epochs over 21 elephants")):
    register(Reproduction(f"fairq-incast-{_name}", PAPER, _fig, _title, _plan(_name), _analyze(_name, _title), READINGS))


def settings() -> Sequence[str]:
    return tuple(SETTINGS)
