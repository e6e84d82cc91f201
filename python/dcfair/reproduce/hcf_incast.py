"""The HCF paper's TCP incast experiments (paper 000, section V-A): figures 2 and 3.

One reproduction per setting, each giving the block goodput (figure 2) and the maximal
starvation time (figure 3) against the number of servers, FIFO vs HCF:

- ``hcf-incast-typical`` (2a, 3a): 1 Gbps, RTT 100 us, 1 MB blocks split over the servers, 16 bins;
- ``hcf-incast-nextgen`` (2b, 3b): 10 Gbps, RTT 20 us, 80 MB blocks, 16 bins;
- ``hcf-incast-fixed`` (2c, 3c): 1 Gbps, RTT 100 us, 10 KB per server, 128 bins.

The paper states its findings in words (the plots are missing from the text extraction), so the
claims are those statements, each checked by a stated criterion over the server counts.

ExpressPass (``incast.transport = "xpass"`` over the same DropTail buffer, labelled
``qdisc = "xpass"``) runs beside them, at the server counts of :data:`XPASS_MAX_SERVERS`: its rows
are not the HCF paper's; its claims are ExpressPass's own (no data loss, every request answered).
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List

from dcfair.reproduce import Claim, Reproduction, Study, mean, pyplot, register, save_figure
from dcfair.runner import Point

PAPER = "HCF (paper 000)"
ROOT = Path(__file__).resolve().parents[3]
QDISCS = ("droptail", "hcf")
NAMES = {"droptail": "FIFO", "hcf": "HCF", "xpass": "ExpressPass"}
#: ExpressPass: credits to the client, data in the DropTail buffer (symmetric routing is moot on
#: a one-path dumbbell but keeps credits on their data's path if the topology changes).
XPASS = [("queue.kind", "droptail"), ("incast.transport", "xpass"), ("routing.mode", "symmetric")]
#: ExpressPass runs at server counts up to this per setting. Every answer's receiver paces at
#: least one credit per RTT (Algorithm 1's floor), so N servers offer N credits per RTT to the
#: client's credit shaper: at 10 Gbps with a 20 us RTT and 80 MB blocks (nextgen) 200 servers
#: cost about 10 M credits per simulated second over 0.32 s per seed (docs/mechanisms/expresspass.md).
XPASS_MAX_SERVERS = {"typical": 200, "nextgen": 16, "fixed": 200}

SERVERS_FULL = [1, 2, 4, 8, 16, 25, 32, 48, 64, 100, 128, 160, 200]
SERVERS_QUICK = [4, 64]


def _plan(setting: str, rounds_full: int, rounds_quick: int):
    scenario = str(ROOT / f"scenarios/papers/hcf/incast_{setting}.toml")

    def plan(quick: bool) -> List[Point]:
        ns = SERVERS_QUICK if quick else SERVERS_FULL
        seeds = range(1, 3) if quick else range(1, 6)
        rounds = rounds_quick if quick else rounds_full
        pts = []
        for n in ns:
            for q in QDISCS:
                for s in seeds:
                    ov = [("queue.kind", q), ("incast.servers", n), ("topology.senders", n), ("incast.rounds", rounds)]
                    pts.append(Point.make(scenario, ov, s, qdisc=q, servers=n))
        # ExpressPass after the paper's points, so that their order (and cache) stays as it was
        for n in ns:
            if n <= XPASS_MAX_SERVERS[setting]:
                for s in seeds:
                    ov = XPASS + [("incast.servers", n), ("topology.senders", n), ("incast.rounds", rounds)]
                    pts.append(Point.make(scenario, ov, s, qdisc="xpass", servers=n))
        return pts

    return plan


def _curves(st: Study, ns) -> Dict[str, Dict[str, List[float]]]:
    out = {}
    for q in QDISCS:
        out[q] = {
            "goodput": [mean(st.metric("block_goodput_bps", qdisc=q, servers=n)) for n in ns],
            "starvation": [mean(st.metric("max_starvation_s", qdisc=q, servers=n)) for n in ns],
        }
    return out


def _xpass_ns(st: Study, ns) -> List[int]:
    """The server counts at which ExpressPass ran."""
    return [n for n in ns if st.rows(qdisc="xpass", servers=n)]


def _figure(st: Study, ns, c, title: str) -> None:
    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    for q in QDISCS:
        a.plot(ns, [g / 1e6 for g in c[q]["goodput"]], marker="o", label=NAMES[q])
        b.plot(ns, c[q]["starvation"], marker="o", label=NAMES[q])
    xn = _xpass_ns(st, ns)
    if xn:
        a.plot(xn, [mean(st.metric("block_goodput_bps", qdisc="xpass", servers=n)) / 1e6 for n in xn],
               "--s", label=NAMES["xpass"])
        b.plot(xn, [mean(st.metric("max_starvation_s", qdisc="xpass", servers=n)) for n in xn], "--s", label=NAMES["xpass"])
    st.table = [{"qdisc": q, "servers": n, "seeds": len(st.rows(qdisc=q, servers=n)),
                 "goodput_mbps": round(mean(st.metric("block_goodput_bps", qdisc=q, servers=n)) / 1e6, 2),
                 "max_starvation_s": round(mean(st.metric("max_starvation_s", qdisc=q, servers=n)), 6),
                 "drops": mean(st.metric("drops", qdisc=q, servers=n)),
                 "rounds_completed": mean(st.metric("rounds_completed", qdisc=q, servers=n))}
                for q in QDISCS + ("xpass",) for n in ns if st.rows(qdisc=q, servers=n)]
    for ax in (a, b):
        ax.set_xscale("log")
        ax.set_xlabel("servers")
        ax.legend()
    a.set_ylabel("block goodput (Mbit/s)")
    b.set_ylabel("maximal starvation time (s)")
    b.set_yscale("log")
    fig.suptitle(title)
    save_figure(fig, st)


def _servers(st: Study):
    return SERVERS_QUICK if st.quick else SERVERS_FULL


def _better(c, ns, pick) -> List[float]:
    """Per server count: HCF goodput minus FIFO goodput, for the counts `pick` selects."""
    return [c["hcf"]["goodput"][i] - c["droptail"]["goodput"][i] for i, n in enumerate(ns) if pick(n)]


#: The switch buffer of every incast setting (packets): all answers' requests fit it at once up
#: to this many servers.
BUFFER_PKTS = 32


def _xpass_claims(st: Study, ns, rounds: int) -> List[Claim]:
    """ExpressPass's own properties in this incast (its paper: bounded queues, no data loss).
    ``drops`` counts every packet lost at the bottleneck: data, and the credit requests and
    stops, which are not credit-scheduled (one of each per server per request)."""
    xn = _xpass_ns(st, ns)
    if not xn:
        return []
    small = [n for n in xn if n <= BUFFER_PKTS]
    drops_small = [d for n in small for d in st.metric("drops", qdisc="xpass", servers=n)]
    drops = [d for n in xn for d in st.metric("drops", qdisc="xpass", servers=n)]
    done = [r for n in xn for r in st.metric("rounds_completed", qdisc="xpass", servers=n)]
    return [
        Claim("xpass-no-drops-within-buffer", f"ExpressPass loses no packet at the bottleneck up to {BUFFER_PKTS} servers "
              f"(here {min(small)} to {max(small)})", "0 (ExpressPass paper: no data loss)", drops_small,
              bool(small) and all(d == 0 for d in drops_small), f"bottleneck drops == 0 in every run with <= {BUFFER_PKTS} servers",
              "packets"),
        Claim("xpass-no-drops", f"ExpressPass loses no packet at the bottleneck at any count ({min(xn)} to {max(xn)} servers)",
              "0 (ExpressPass paper: no data loss)", drops, all(d == 0 for d in drops),
              "bottleneck drops == 0 in every run (credit requests and stops count: they are not credit-scheduled)", "packets"),
        Claim("xpass-rounds-complete", "ExpressPass answers every request", f"{rounds} rounds", done,
              all(r == rounds for r in done), f"rounds_completed == {rounds} in every run", "rounds"),
    ]


def _rounds(st: Study) -> int:
    return int(dict(st.rows()[0]["point"].overrides)["incast.rounds"])


def _starvation_claim(c, ns, fig: str) -> Claim:
    d = [c["droptail"]["starvation"][i] - c["hcf"]["starvation"][i] for i in range(len(ns))]
    share = sum(x > 0 for x in d) / len(d)
    return Claim(f"starvation-{fig}", "In most cases the maximal starvation time with HCF is smaller", "most server counts",
                 d, share > 0.5, "FIFO minus HCF max starvation > 0 for more than half the server counts", "s")


def analyze_typical(st: Study) -> List[Claim]:
    ns = _servers(st)
    c = _curves(st, ns)
    _figure(st, ns, c, "HCF paper figs. 2a/3a: incast in a typical data center (1 Gbps, 1 MB blocks)")
    d_all = _better(c, ns, lambda n: True)
    d_few = _better(c, ns, lambda n: n < 25)
    d_many = _better(c, ns, lambda n: n > 100)
    claims = [
        Claim("most-counts", "HCF outperforms FIFO over most flow numbers", "most server counts", d_all,
              sum(x > 0 for x in d_all) / len(d_all) > 0.5, "HCF goodput above FIFO's for more than half the counts", "bit/s"),
        Claim("few-servers", "Below 25 servers HCF's fairness improves the goodput", "HCF better", d_few,
              bool(d_few) and mean(d_few) > 0, "mean HCF - FIFO goodput over counts < 25 is positive", "bit/s"),
    ]
    if d_many:
        claims.append(Claim("many-servers", "Above 100 servers HCF balances drops and timeouts: goodput recovers", "HCF better",
                            d_many, mean(d_many) > 0, "mean HCF - FIFO goodput over counts > 100 is positive", "bit/s"))
    claims.append(_starvation_claim(c, ns, "3a"))
    return claims + _xpass_claims(st, ns, _rounds(st))


def analyze_nextgen(st: Study) -> List[Claim]:
    ns = _servers(st)
    c = _curves(st, ns)
    _figure(st, ns, c, "HCF paper figs. 2b/3b: incast in a next-generation data center (10 Gbps, 80 MB blocks)")
    d = _better(c, ns, lambda n: True)
    return [
        Claim("whole-range", "HCF outperforms FIFO over the whole range", "every server count", d,
              all(x > 0 for x in d), "HCF goodput above FIFO's at every count", "bit/s"),
        _starvation_claim(c, ns, "3b"),
    ] + _xpass_claims(st, ns, _rounds(st))


def analyze_fixed(st: Study) -> List[Claim]:
    ns = _servers(st)
    c = _curves(st, ns)
    _figure(st, ns, c, "HCF paper figs. 2c/3c: incast with fixed 10 KB per server (1 Gbps)")
    big, small = ns[-1], ns[0]
    d_big = _better(c, ns, lambda n: n == big)
    d_small = _better(c, ns, lambda n: n == small)
    return [
        Claim("large-n", f"HCF outperforms FIFO only for a large number of flows (here {big})", "HCF better", d_big,
              d_big[0] > 0, f"HCF goodput above FIFO's at {big} servers", "bit/s"),
        Claim("small-n", f"For few flows HCF is no better: it drops more to keep HP room (here {small})", "HCF not better",
              d_small, d_small[0] <= 0, f"HCF goodput not above FIFO's at {small} servers", "bit/s"),
        _starvation_claim(c, ns, "3c"),
    ] + _xpass_claims(st, ns, _rounds(st))


register(Reproduction("hcf-incast-typical", PAPER, "figs. 2a, 3a",
                      "incast block goodput and maximal starvation vs servers, typical data center",
                      _plan("typical", 20, 5), analyze_typical))
register(Reproduction("hcf-incast-nextgen", PAPER, "figs. 2b, 3b",
                      "incast block goodput and maximal starvation vs servers, next-generation data center",
                      _plan("nextgen", 5, 2), analyze_nextgen))
register(Reproduction("hcf-incast-fixed", PAPER, "figs. 2c, 3c",
                      "incast block goodput and maximal starvation vs servers, fixed 10 KB per server",
                      _plan("fixed", 20, 5), analyze_fixed))
