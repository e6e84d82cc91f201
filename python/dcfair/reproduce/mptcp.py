"""MPTCP in the data center (Raiciu et al., "Improving datacenter performance and robustness with
multipath TCP", ACM SIGCOMM 2011) and the three goals of its coupled congestion control (RFC 6356
section 2), on dcfair's MPTCP (``docs/mechanisms/mptcp.md``).

Neither text is among the papers this repository reproduces (``../shared/papers``), so the
claims quote what could be read: the paper's abstract and RFC 6356's goals, word for word.

- ``mptcp-permutation``: the paper's permutation traffic matrix on a k = 8 fat-tree
  (``scenarios/papers/mptcp/permutation.toml``: 128 hosts, 10 Gbit/s, ECMP, NewReno with SACK,
  LIA), with 1, 2, 4 and 8 subflows per connection. Its claims: single-path TCP is
  "ill-suited" (read: below 70 % of line rate), MPTCP "can effectively ... use available
  bandwidth" (read: at least 80 % of line rate with 8 subflows), "giving improved throughput
  and better fairness" (8 subflows above 1 subflow in every seed, in mean throughput and in
  Jain's index over the connections).
- ``mptcp-goals``: RFC 6356's goals on two small networks:
  - ``shared`` (``scenarios/papers/mptcp/shared.toml``): one 2-subflow connection against one
    NewReno flow at a 100 Mbit/s DropTail bottleneck that both subflows cross (goal 2, "do no
    harm": the connection takes about what the TCP flow takes, within 10 %);
  - ``twopath`` (``scenarios/papers/mptcp/twopath.toml``): a connection whose subflows ECMP puts
    on two disjoint 100 Mbit/s paths, x and y, with two NewReno flows on x only (goal 1: at
    least the goodput of a single-path flow on the better path, y; goal 2: the flows on x keep
    at least 95 % of what they get beside a single-path flow on x; goal 3: LIA puts a smaller
    share of its bytes on x than uncoupled subflows do). ``routing.hash_seed`` picks the paths:
    with 3 the first subflow (and a single-path flow) takes y and the second x, with 4 a
    single-path flow takes x; ``analyze`` checks the paths in ``subflows.csv`` and ``ports.csv``.

Full form: 5 seeds (start times drawn in the first 100 ms; the permutation differs per seed);
quick form: 2 seeds, shorter runs. The readings change what the paper or the RFC leave open.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Dict, List

from dcfair.data import PAPERS
from dcfair.reproduce import Claim, Reading, Reproduction, Study, clearly_lower, mean, pyplot, register, save_figure
from dcfair.runner import Point

PAPER = "MPTCP (Raiciu et al., SIGCOMM 2011, and RFC 6356; texts not in the repository)"
PERMUTATION = str(PAPERS / "mptcp/permutation.toml")
SHARED = str(PAPERS / "mptcp/shared.toml")
TWOPATH = str(PAPERS / "mptcp/twopath.toml")
#: The fat-tree's line rate (``topology.host_rate_mbps``), bits/s.
LINE_BPS = 10e9
SUBFLOWS = (1, 2, 4, 8)
COUPLINGS = ("lia", "olia", "uncoupled")
#: ``routing.hash_seed`` of ``twopath.toml`` that puts the first subflow on y and the second on
#: x, and the one that puts a single-path flow on x.
HASH_Y_FIRST, HASH_X_FIRST = 3, 4
#: The paths of ``twopath.toml``, as ``subflows.csv`` writes them.
PATH_X, PATH_Y = "s0>x>s1", "s0>y>s1"

QUOTE_ILL = "In short, a single-path transport seems ill-suited to such networks."
QUOTE_USE = ("We propose using Multipath TCP as a replacement for TCP in such data centers, as it can effectively and "
             "seamlessly use available bandwidth, giving improved throughput and better fairness on many topologies.")
QUOTE_GOAL1 = ("Goal 1 (Improve Throughput) A multipath flow should perform at least as well as a single path flow "
               "would on the best of the paths available to it.")
QUOTE_GOAL2 = ("Goal 2 (Do no harm) A multipath flow should not take up more capacity from any of the resources "
               "shared by its different paths than if it were a single flow using only one of these paths.")
QUOTE_GOAL3 = ("Goal 3 (Balance congestion) A multipath flow should move as much traffic as possible off its most "
               "congested paths, subject to meeting the first two goals.")

PERM_READINGS = (
    Reading("no-sack", "subflows without SACK (NewReno's recovery alone), as the paper's simulator does not say it "
            "has SACK", (("tcp.sack", False),), claims=("uses-bandwidth", "tcp-ill-suited")),
    Reading("buffer-20", "switch ports of 20 packets instead of 100", (("queue.limit_pkts", 20),),
            claims=("uses-bandwidth", "tcp-ill-suited")),
)
SHARED_ONLY = (("setting", "shared"),)
GOAL_READINGS = (
    Reading("red", "the shared bottleneck under RED (thresholds 10 and 30 packets) instead of DropTail: drops at "
            "random, in proportion to each flow's packets", (("queue.kind", "red"), ("queue.red.min_thresh_pkts", 10),
                                                               ("queue.red.max_thresh_pkts", 30)),
            SHARED_ONLY, claims=("do-no-harm-shared",)),
    Reading("buffer-100", "a 100-packet bottleneck buffer instead of 50", (("queue.limit_pkts", 100),), SHARED_ONLY,
            claims=("do-no-harm-shared",)),
    Reading("buffer-25", "a 25-packet bottleneck buffer instead of 50", (("queue.limit_pkts", 25),), SHARED_ONLY,
            claims=("do-no-harm-shared",)),
    Reading("rtt-1ms", "a 1 ms round trip instead of 10 ms (bottleneck delay 250 us)",
            (("topology.bottleneck_delay_us", 250.0),), SHARED_ONLY, claims=("do-no-harm-shared",)),
)


def seeds(quick: bool) -> range:
    return range(1, 3) if quick else range(1, 6)


def plan_permutation(quick: bool) -> List[Point]:
    ns = (1, 8) if quick else SUBFLOWS
    dur = [("sim.duration_s", 0.02), ("measure.window_s", 0.015)] if quick else []
    return [Point.make(PERMUTATION, [("flows.tcp.mptcp.subflows", n)] + dur, s, subflows=n)
            for n in ns for s in seeds(quick)]


def line_share(st: Study, n: int) -> List[float]:
    """Per seed: mean connection throughput over line rate, with ``n`` subflows."""
    return [x / LINE_BPS for x in st.metric("throughput_bps_tcp", subflows=n)]


def analyze_permutation(st: Study) -> List[Claim]:
    ns = sorted({dict(r["point"].labels)["subflows"] for r in st.rows()})
    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.4))
    a.plot(ns, [mean(line_share(st, n)) for n in ns], "o-")
    a.set_ylim(0, 1)
    a.set_xlabel("subflows per connection")
    a.set_ylabel("throughput / line rate")
    a.set_title("k = 8 fat-tree permutation (LIA)")
    b.plot(ns, [mean(st.metric("jain_index", subflows=n)) for n in ns], "o-")
    b.set_ylim(0, 1.05)
    b.set_xlabel("subflows per connection")
    b.set_title("Jain's index over connections")
    save_figure(fig, st)
    st.table = [{"subflows": n, "throughput_over_line_rate": round(mean(line_share(st, n)), 4),
                 "min_over_seeds": round(min(line_share(st, n)), 4),
                 "jain_index": round(mean(st.metric("jain_index", subflows=n)), 4),
                 "timeouts": round(mean(st.metric("timeouts", subflows=n)), 1), "seeds": len(line_share(st, n))}
                for n in ns]

    one, eight = line_share(st, 1), line_share(st, 8)
    gain = [y - x for x, y in zip(one, eight)]
    jain = [y - x for x, y in zip(st.metric("jain_index", subflows=1), st.metric("jain_index", subflows=8))]
    ratio = [y / x for x, y in zip(one, eight) if x > 0]
    means = [mean(line_share(st, n)) for n in ns]
    return [
        Claim("tcp-ill-suited", "Single-path TCP over ECMP leaves a fat-tree permutation well below line rate",
              "ill-suited (read: below 70 % of line rate)", one, bool(one) and mean(one) < 0.7,
              "mean connection throughput with 1 subflow < 0.7 of line rate", "fraction of line rate", quote=QUOTE_ILL),
        Claim("uses-bandwidth", "With 8 subflows MPTCP uses the fat-tree's bandwidth",
              "effectively ... use available bandwidth (read: at least 80 % of line rate)", eight,
              bool(eight) and mean(eight) >= 0.8, "mean connection throughput with 8 subflows >= 0.8 of line rate",
              "fraction of line rate", quote=QUOTE_USE),
        Claim("improves-throughput", "MPTCP with 8 subflows gives more throughput than single-path TCP",
              "improved throughput", gain, bool(gain) and min(gain) > 0,
              "8 subflows minus 1 subflow, same seed (same permutation): above 0 in every seed",
              "fraction of line rate", quote=QUOTE_USE),
        Claim("better-fairness", "MPTCP with 8 subflows shares the fabric more fairly than single-path TCP",
              "better fairness", jain, bool(jain) and min(jain) > 0,
              "Jain's index over connections, 8 subflows minus 1 subflow, same seed: above 0 in every seed",
              "Jain index", quote=QUOTE_USE),
        Claim("more-subflows-more-throughput", "Each doubling of the subflows raises the mean throughput", "-",
              means, len(means) > 1 and all(y > x for x, y in zip(means, means[1:])),
              "mean throughput over line rate rises from each subflow count to the next (" +
              ", ".join(str(n) for n in ns) + ")", "fraction of line rate", scope="beyond"),
        Claim("gain-1.3x", "8 subflows deliver at least 1.3 times what single-path TCP delivers", "-", ratio,
              bool(ratio) and min(ratio) >= 1.3, "8 subflows over 1 subflow, same seed: at least 1.3 in every seed",
              "ratio", scope="beyond"),
    ]


def plan_goals(quick: bool) -> List[Point]:
    two_len = [] if not quick else [("sim.duration_s", 12.0), ("measure.window_s", 10.0)]
    shared_len = [("sim.duration_s", 60.0), ("measure.window_s", 50.0)] if not quick else two_len
    pts = [Point.make(SHARED, [("groups.mp.tcp.mptcp.coupling", c)] + shared_len, s, setting="shared", coupling=c)
           for c in COUPLINGS for s in seeds(quick)]
    two = [(c, 2, HASH_Y_FIRST) for c in COUPLINGS] + [("single-y", 1, HASH_Y_FIRST), ("single-x", 1, HASH_X_FIRST)]
    for name, n, h in two:
        sets = [("groups.mp.tcp.mptcp.subflows", n), ("routing.hash_seed", h)]
        if n > 1:
            sets.append(("groups.mp.tcp.mptcp.coupling", name))
        pts += [Point.make(TWOPATH, sets + two_len, s, setting="twopath", coupling=name) for s in seeds(quick)]
    return pts


def subflow_rows(run: Dict) -> List[Dict[str, str]]:
    path = Path(run["dir"]) / "subflows.csv"
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def port_packets(run: Dict, port: str) -> int:
    with open(Path(run["dir"]) / "ports.csv", newline="") as f:
        return next(int(r["packets_out"]) for r in csv.DictReader(f) if r["port"] == port)


def check_single_path(st: Study) -> None:
    """The single-path references take the path their name says: only the connection can send
    on y, so ``y->s1`` carries packets with ``single-y`` and none with ``single-x``."""
    for name, on_y in (("single-y", True), ("single-x", False)):
        for r in st.rows(setting="twopath", coupling=name):
            if (port_packets(r, "y->s1") > 0) != on_y:
                raise RuntimeError(f"mptcp-goals: the flow of {r['dir']} is not on path {'y' if on_y else 'x'} "
                                   f"(routing.hash_seed no longer places it)")


def x_share(st: Study, coupling: str) -> List[float]:
    """Per seed: the connection's share of the bytes its subflows delivered over the whole run
    that path x carried. A run whose subflows do not take one path each stops the analysis (the
    hash seed no longer splits them)."""
    out = []
    for r in st.rows(setting="twopath", coupling=coupling):
        rows = subflow_rows(r)
        paths = sorted(row["path"] for row in rows)
        if paths != sorted([PATH_X, PATH_Y]):
            raise RuntimeError(f"mptcp-goals: the subflows of {r['dir']} take {paths}, not one path each "
                               f"(routing.hash_seed = {HASH_Y_FIRST} no longer splits them)")
        by = {row["path"]: int(row["bytes_delivered"]) for row in rows}
        out.append(by[PATH_X] / max(1, by[PATH_X] + by[PATH_Y]))
    return out


def ratio_shared(st: Study, coupling: str) -> List[float]:
    return [m / t for m, t in zip(st.metric("throughput_bps_mp", setting="shared", coupling=coupling),
                                  st.metric("throughput_bps_tcp", setting="shared", coupling=coupling)) if t > 0]


def flow_rows(run: Dict) -> List[Dict[str, str]]:
    with open(Path(run["dir"]) / "flows.csv", newline="") as f:
        return list(csv.DictReader(f))


def halvings(st: Study, coupling: str) -> Dict[str, List[float]]:
    """Per run at the shared bottleneck, over the measurement window: how often the TCP flow's
    window and each subflow's window fell by more than a quarter from one 10 ms sample to the
    next (``timeseries.csv``): its loss episodes, as NewReno halves once per episode."""
    import pandas as pd

    out: Dict[str, List[float]] = {"tcp": [], "subflow": []}
    for r in st.rows(setting="shared", coupling=coupling):
        ts = pd.read_csv(Path(r["dir"]) / "timeseries.csv")
        summ = r["summary"]
        cw = ts[(ts.metric == "cwnd_bytes") & (ts.time_s >= summ["sim_time_s"] - summ["window_s"])]
        groups = {int(row["flow_id"]): row["group"] for row in flow_rows(r)}
        subs = {int(row["flow_id"]) for row in subflow_rows(r)}
        for fid, g in cw.groupby("flow_id"):
            v = g.sort_values("time_s").value.to_numpy()
            n = float((v[1:] < 0.75 * v[:-1]).sum())
            if int(fid) in subs:
                out["subflow"].append(n)
            elif groups.get(int(fid)) == "tcp":
                out["tcp"].append(n)
    return out


def analyze_goals(st: Study) -> List[Claim]:
    mbps = lambda c, key="throughput_bps_mp": [x / 1e6 for x in st.metric(key, setting="twopath", coupling=c)]  # noqa: E731
    plt = pyplot()
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(12, 3.4))
    a.bar(range(len(COUPLINGS)), [mean(ratio_shared(st, k)) for k in COUPLINGS])
    a.axhline(1.0, color="k", ls=":", label="one TCP's share")
    a.set_xticks(range(len(COUPLINGS)), COUPLINGS)
    a.set_title("shared bottleneck: connection / TCP flow")
    a.legend(fontsize=8)
    names = list(COUPLINGS) + ["single-y", "single-x"]
    b.bar(range(len(names)), [mean(mbps(k)) for k in names], label="connection")
    b.bar(range(len(names)), [mean(mbps(k, "throughput_bps_cross")) for k in names], width=0.4, label="a flow on x")
    b.set_xticks(range(len(names)), names, fontsize=8)
    b.set_ylabel("Mbit/s")
    b.set_title("two paths: goodput")
    b.legend(fontsize=8)
    c.bar(range(len(COUPLINGS)), [mean(x_share(st, k)) for k in COUPLINGS])
    c.set_xticks(range(len(COUPLINGS)), COUPLINGS)
    c.set_title("two paths: share of bytes on x (congested)")
    save_figure(fig, st)
    # one set of columns for both settings ("-": not measured in that setting)
    st.table = ([{"setting": "shared", "coupling": k, "connection_over_tcp": round(mean(ratio_shared(st, k)), 4),
                  "tcp_flow_halvings": round(mean(halvings(st, k)["tcp"]), 1),
                  "subflow_halvings": round(mean(halvings(st, k)["subflow"]), 1),
                  "connection_mbps": "-", "cross_flow_mbps": "-", "share_on_x": "-",
                  "seeds": len(ratio_shared(st, k))} for k in COUPLINGS] +
                [{"setting": "twopath", "coupling": k, "connection_over_tcp": "-", "tcp_flow_halvings": "-",
                  "subflow_halvings": "-", "connection_mbps": round(mean(mbps(k)), 2),
                  "cross_flow_mbps": round(mean(mbps(k, "throughput_bps_cross")), 2),
                  "share_on_x": round(mean(x_share(st, k)), 4) if k in COUPLINGS else "-",
                  "seeds": len(mbps(k))} for k in names])

    check_single_path(st)
    lia, best = mbps("lia"), mbps("single-y")
    cross_lia, cross_single = mbps("lia", "throughput_bps_cross"), mbps("single-x", "throughput_bps_cross")
    shared = ratio_shared(st, "lia")
    share_lia, share_unc = x_share(st, "lia"), x_share(st, "uncoupled")
    claims = [
        Claim("improve-throughput", "On two paths, one of them shared with two TCP flows, the LIA connection gets "
              "at least the goodput of a single-path flow on the better path", "at least as well", lia,
              bool(lia) and bool(best) and mean(lia) >= mean(best),
              f"mean goodput >= that of a single-path flow on path y ({mean(best):.1f} Mbit/s)" if best else "-",
              "Mbit/s", quote=QUOTE_GOAL1),
        Claim("do-no-harm-shared", "At a bottleneck both subflows cross, the LIA connection takes about what one TCP "
              "flow takes", "not more than a single flow (read: within 10 %)", shared,
              bool(shared) and mean(shared) <= 1.1, "mean goodput of the connection over the TCP flow's <= 1.1",
              "ratio", quote=QUOTE_GOAL2),
        Claim("do-no-harm-paths", "On two paths, the TCP flows of the shared path keep what they get beside a "
              "single-path flow on that path", "not more than a single flow (read: within 5 %)", cross_lia,
              bool(cross_lia) and bool(cross_single) and mean(cross_lia) >= 0.95 * mean(cross_single),
              f"mean goodput of a flow on x beside the LIA connection >= 0.95 x its goodput beside a single-path flow "
              f"on x ({mean(cross_single):.1f} Mbit/s)" if cross_single else "-", "Mbit/s", quote=QUOTE_GOAL2),
        Claim("balance-congestion", "LIA moves traffic off the congested path: a smaller share of its bytes on it "
              "than uncoupled subflows carry there", "as much traffic as possible off its most congested paths",
              share_lia, clearly_lower(share_lia, share_unc),
              "share of the connection's bytes on path x, LIA clearly below uncoupled (Welch, 2 standard errors)",
              "fraction of bytes", quote=QUOTE_GOAL3),
        Claim("uncoupled-harms", "Uncoupled subflows take clearly more than one TCP's share at a shared bottleneck",
              "-", ratio_shared(st, "uncoupled"), clearly_lower(shared, ratio_shared(st, "uncoupled")),
              "connection over TCP flow: uncoupled clearly above LIA (Welch, 2 standard errors)", "ratio",
              scope="beyond"),
    ]
    olia = ratio_shared(st, "olia")
    claims[1].tried("olia", "OLIA instead of LIA, same runs' setting", olia, bool(olia) and mean(olia) <= 1.1,
                    st.command)
    return claims


register(Reproduction("mptcp-permutation", PAPER, "abstract (the permutation of section 4)",
                      "MPTCP on a k = 8 fat-tree permutation: throughput and fairness against the number of subflows",
                      plan_permutation, analyze_permutation, PERM_READINGS))
register(Reproduction("mptcp-goals", PAPER, "RFC 6356 section 2",
                      "RFC 6356's three goals: a shared bottleneck, and two paths of which one is congested",
                      plan_goals, analyze_goals, GOAL_READINGS))
