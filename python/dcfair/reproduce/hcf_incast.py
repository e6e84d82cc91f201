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
are not the HCF paper's; its claims are ExpressPass's own (no data loss, every request answered),
marked ``scope = "beyond"``.

The block goodput is "the size of the transmitted data (block size) divided by the longest
finish time (latency) of the flow": the default runs 20 requests on persistent connections (5
for the 80 MB blocks) and divides the blocks by the sum of the rounds' times; ``READINGS`` try one
block per run, on connections held or opened by the request, and the HCF rule sets.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List

from dcfair.data import PAPERS
from dcfair.reproduce import Claim, Reading, Reproduction, Study, mean, pyplot, register, save_figure
from dcfair.reproduce.hcf import RULE_READINGS
from dcfair.runner import Point

PAPER = "HCF (paper 000)"
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

#: The readings the incast claims are tried under: the HCF rule sets, and the block goodput as
#: the text defines it, one block per run, on connections held from before the request or
#: opened by it (N flows starting together: the incast simulation of the literature).
TCP_ONLY = (("qdisc", ("droptail", "hcf")),)
READINGS = RULE_READINGS + (
    Reading("one-block", "one block per run, so that the block goodput is exactly the text's: the block over the "
            "longest finish time (connections opened before the request)", (("incast.rounds", 1),)),
    Reading("fresh-connections", "one block per run, each server on a connection the request opens (handshake, data, "
            "FIN): N flows that start together", (("incast.rounds", 1), ("incast.connection", "per_request")), TCP_ONLY),
    Reading("ns2-window", "ns-2's default receive window of 20 packets (window_ 20 x 960 B) instead of 64,000 bytes",
            (("tcp.rcv_buf_bytes", 19200),)),
    # Not a reading of the paper (which splits the buffer evenly): a test of the cause of HCF's
    # losses in a synchronized burst, its LP half filling first (docs/mechanisms/hcf.md).
    Reading("lp-three-quarters", "diagnostic, not the paper's setting: LP gets three quarters of the buffer "
            "(hp_fraction 0.25), to test whether HCF loses a burst because its LP half fills first",
            (("queue.hcf.hp_fraction", 0.25),), (("qdisc", "hcf"),)),
)

SERVERS_FULL = [1, 2, 4, 8, 16, 25, 32, 48, 64, 100, 128, 160, 200]
SERVERS_QUICK = [4, 64]


def _plan(setting: str, rounds_full: int, rounds_quick: int):
    scenario = str(PAPERS / f"hcf/incast_{setting}.toml")

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


def _rel(c, ns, pick) -> List[float]:
    """Per server count: (HCF - FIFO) / FIFO goodput, for the counts `pick` selects."""
    return [(c["hcf"]["goodput"][i] - c["droptail"]["goodput"][i]) / c["droptail"]["goodput"][i]
            for i, n in enumerate(ns) if pick(n) and c["droptail"]["goodput"][i]]


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
              "packets", scope="beyond", subject="expresspass"),
        Claim("xpass-no-drops", f"ExpressPass loses no packet at the bottleneck at any count ({min(xn)} to {max(xn)} servers)",
              "0 (ExpressPass paper: no data loss)", drops, all(d == 0 for d in drops),
              "bottleneck drops == 0 in every run (credit requests and stops count: they are not credit-scheduled)", "packets",
              scope="beyond", subject="expresspass"),
        Claim("xpass-rounds-complete", "ExpressPass answers every request", f"{rounds} rounds", done,
              all(r == rounds for r in done), f"rounds_completed == {rounds} in every run", "rounds", scope="beyond",
              subject="expresspass"),
    ]


def _rounds(st: Study, qdisc: str = "xpass") -> int:
    """Requests per run of the ``qdisc`` runs (a reading may change them for some runs only)."""
    rows = st.rows(qdisc=qdisc) or st.rows()
    return int(dict(rows[0]["point"].overrides)["incast.rounds"])


def _starvation_claim(c, ns, fig: str) -> Claim:
    d = [c["droptail"]["starvation"][i] - c["hcf"]["starvation"][i] for i in range(len(ns))]
    share = sum(x > 0 for x in d) / len(d)
    return Claim(f"starvation-{fig}", "In most cases the maximal starvation time with HCF is smaller", "most server counts",
                 d, share > 0.5, "FIFO minus HCF max starvation > 0 for more than half the server counts", "s",
                 quote="In most cases, the maximal starvation time in the HCF-queue based switch is smaller")


def analyze_typical(st: Study) -> List[Claim]:
    ns = _servers(st)
    c = _curves(st, ns)
    _figure(st, ns, c, "HCF paper figs. 2a/3a: incast in a typical data center (1 Gbps, 1 MB blocks)")
    d_all = _better(c, ns, lambda n: True)
    d_few = _better(c, ns, lambda n: n < 25)
    d_mid = _rel(c, ns, lambda n: 25 <= n <= 100)
    d_many = _better(c, ns, lambda n: n > 100)
    claims = [
        Claim("most-counts", "HCF outperforms FIFO over most flow numbers", "most server counts", d_all,
              sum(x > 0 for x in d_all) / len(d_all) > 0.5, "HCF goodput above FIFO's for more than half the counts", "bit/s",
              quote="HCF outperforms FIFO over most flow numbers"),
        Claim("few-servers", "Below 25 servers HCF's fairness improves the goodput", "HCF better", d_few,
              bool(d_few) and mean(d_few) > 0, "mean HCF - FIFO goodput over counts < 25 is positive", "bit/s",
              quote="below 25 servers (flows), the size of each flow is long enough, so the influence of HCF on fairness "
                    "is noticeable"),
    ]
    if d_mid:
        claims.append(Claim("preservation", "Between 25 and 100 servers HCF and FIFO are alike", "alike", d_mid,
                            all(abs(x) <= 0.1 for x in d_mid), "|HCF - FIFO| / FIFO goodput <= 0.1 at every count in "
                            "[25, 100] (values: per count)", "ratio",
                            quote="between 25-100 servers, the flow lengths are too small to notice the influence of HCF "
                                  "on fairness"))
    if d_many:
        claims.append(Claim("many-servers", "Above 100 servers HCF balances drops and timeouts: goodput recovers", "HCF better",
                            d_many, mean(d_many) > 0, "mean HCF - FIFO goodput over counts > 100 is positive", "bit/s",
                            quote="above 100 servers, the large number of flows causes increased congestion in both FIFO "
                                  "and ... HCF credit mechanism balances the packet drops across the flows"))
    claims.append(_starvation_claim(c, ns, "3a"))
    return claims + _xpass_claims(st, ns, _rounds(st))


def analyze_nextgen(st: Study) -> List[Claim]:
    ns = _servers(st)
    c = _curves(st, ns)
    _figure(st, ns, c, "HCF paper figs. 2b/3b: incast in a next-generation data center (10 Gbps, 80 MB blocks)")
    d = _better(c, ns, lambda n: True)
    return [
        Claim("whole-range", "HCF outperforms FIFO over the whole range", "every server count", d,
              all(x > 0 for x in d), "HCF goodput above FIFO's at every count", "bit/s",
              quote="As in the previous case, HCF outperforms FIFO over the whole range"),
        _starvation_claim(c, ns, "3b"),
    ] + _xpass_claims(st, ns, _rounds(st))


#: "A small number of flows" in figure 2c: 2 to 16 servers (one server is the same in both).
FEW = (2, 16)


def analyze_fixed(st: Study) -> List[Claim]:
    ns = _servers(st)
    c = _curves(st, ns)
    _figure(st, ns, c, "HCF paper figs. 2c/3c: incast with fixed 10 KB per server (1 Gbps)")
    few = [n for n in ns if FEW[0] <= n <= FEW[1]] or [ns[0]]
    many = [n for n in ns if n > 100] or [ns[-1]]
    d_many = _better(c, ns, lambda n: n in many)
    d_few = _better(c, ns, lambda n: n in few)
    drops = [mean(st.metric("drops", qdisc="hcf", servers=n)) - mean(st.metric("drops", qdisc="droptail", servers=n))
             for n in few]
    quote = "We see that HCF outperforms FIFO only for a large number of flows"
    return [
        Claim("large-n", f"HCF outperforms FIFO for a large number of flows (more than 100: {', '.join(map(str, many))})",
              "HCF better", d_many, mean(d_many) > 0, "mean HCF - FIFO goodput over counts > 100 is positive", "bit/s",
              quote=quote),
        Claim("small-n", f"For few flows ({FEW[0]} to {FEW[1]} servers) HCF is no better than FIFO", "HCF not better",
              d_few, all(x <= 0 for x in d_few), f"HCF goodput not above FIFO's at every count in [{FEW[0]}, {FEW[1]}]",
              "bit/s", quote=quote),
        Claim("small-n-more-drops", f"For few flows ({FEW[0]} to {FEW[1]} servers) HCF drops more packets than FIFO",
              "more drops", drops, mean(drops) > 0, "HCF's drops above FIFO's, means over seeds summed over the counts in "
              f"[{FEW[0]}, {FEW[1]}] (values: HCF - FIFO per count)", "packets",
              quote="the HCF buffer space is not fully utilized, because HCF drops more packets then FIFO (to save space "
                    "for HP packets)"),
        _starvation_claim(c, ns, "3c"),
    ] + _xpass_claims(st, ns, _rounds(st))


register(Reproduction("hcf-incast-typical", PAPER, "figs. 2a, 3a",
                      "incast block goodput and maximal starvation vs servers, typical data center",
                      _plan("typical", 20, 5), analyze_typical, READINGS))
register(Reproduction("hcf-incast-nextgen", PAPER, "figs. 2b, 3b",
                      "incast block goodput and maximal starvation vs servers, next-generation data center",
                      _plan("nextgen", 5, 2), analyze_nextgen, READINGS))
register(Reproduction("hcf-incast-fixed", PAPER, "figs. 2c, 3c",
                      "incast block goodput and maximal starvation vs servers, fixed 10 KB per server",
                      _plan("fixed", 20, 5), analyze_fixed, READINGS))
