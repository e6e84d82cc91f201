"""`dcfair testbed up|down|run`: real Linux TCP through the switch, in network namespaces.

    dcfair testbed up --hosts N [--prefix dcf-] [--cc cubic] [--rto-min-ms X]
    dcfair testbed down [--prefix dcf-]
    dcfair testbed run SCENARIO [--out DIR] [--switch dcfair|bridge] [--prefix dcf-] [--set K=V ...]
                                [--sysctl net.ipv4.NAME=VALUE ...]

Needs root, iproute2, ethtool and iperf3 (docs/testbed.md). Invalid input (a scenario key the
testbed cannot reproduce, a congestion control the kernel does not offer, a fabric whose
offered load is above the measured capacity) exits 2 naming it.
"""

from __future__ import annotations

import argparse
import sys

from dcfair.commands import _options

HELP = "run scenarios on real Linux TCP in network namespaces (needs root)"


def add_parser(sub) -> None:
    p = sub.add_parser("testbed", help=HELP, description=HELP + ". See docs/testbed.md.")
    tsub = p.add_subparsers(dest="testbed_command", metavar="ACTION", required=True)

    up = tsub.add_parser("up", help="create host namespaces and a switch namespace joined by veth pairs")
    up.add_argument("--hosts", type=int, required=True, metavar="N", help="number of host namespaces (2 to 1000)")
    _prefix(up)
    up.add_argument("--cc", metavar="NAME", help="TCP congestion control of every host (one the kernel offers)")
    up.add_argument("--rto-min-ms", type=float, metavar="X", help="minimum RTO of every host (route rto_min)")
    up.add_argument("--switch", choices=("none", "bridge"), default="none",
                    help="bridge: also join the ports with a Linux bridge, so the hosts can talk at once "
                         "(default none: the ports wait for a switch)")
    up.set_defaults(handler=main_up)

    down = tsub.add_parser("down", help="remove every namespace of a testbed (also after a crash)")
    _prefix(down)
    down.set_defaults(handler=main_down)

    run = tsub.add_parser("run", help="run a scenario (dumbbell, or a fabric: a namespace per switch) for real; "
                                      "write summary.json and flows.csv")
    _options.add_scenario(run)
    run.add_argument("--out", metavar="DIR", help="output directory (default: out/testbed/<scenario name>)")
    run.add_argument("--switch", choices=("dcfair", "bridge"), default="dcfair",
                     help="dcfair: the dcfair-switch binary with the scenario's discipline (default); "
                          "bridge: a Linux bridge with a token bucket and FIFO per port (baseline)")
    run.add_argument("--seed", metavar="N", type=_options.seed, help="replace the scenario's seed")
    _prefix(run)
    _options.add_set(run)
    run.add_argument("--sysctl", dest="sysctls", metavar="KEY=VALUE", action="append", default=[],
                     help="a network sysctl for every host namespace, after the scenario's own, e.g. "
                          "net.ipv4.tcp_frto=0 (repeatable; recorded in summary.json's testbed notes)")
    run.add_argument("--keep", action="store_true", help="leave the testbed up after the run (for inspection)")
    run.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    run.set_defaults(handler=main_run)


def _prefix(p) -> None:
    p.add_argument("--prefix", default="dcf-", help="name prefix of the namespaces (default dcf-)")


def _say(msg: str) -> None:
    print(f"dcfair: {msg}", file=sys.stderr, flush=True)


def main_up(args: argparse.Namespace) -> int:
    from dcfair.testbed import bed
    from dcfair.testbed.mapping import Plan, Port
    from dcfair.testbed.switch import Switch

    tb = bed.uniform(args.hosts, args.prefix, cc=args.cc, rto_min_ms=args.rto_min_ms)
    bed.check(tb)
    bed.up(tb, log=_say)
    if args.switch == "bridge":
        import tempfile

        plan = Plan("up", 1, 0.0, 0.0, tb.hosts, [Port(h.name, 10e9, 0.0, {"kind": "droptail", "limit_pkts": 1000}, False)
                                                  for h in tb.hosts], [], {"kind": "droptail"})
        Switch("bridge", tb, plan, tempfile.mkdtemp(prefix="dcfair-testbed-")).start()
    socket_only = [h for h in tb.hosts if h.cc_scope == "socket"]
    if socket_only:
        _say(f"note: the kernel allows {args.cc!r} only per socket in a namespace (tcp_allowed_congestion_control); "
             f"set it with TCP_CONGESTION (iperf3 -C {args.cc}); the namespaces' default stayed")
    print(f"state: {bed.state_path(args.prefix)}")
    for h in tb.hosts:
        print(f"{tb.ns(h)}  {h.ip}  {h.mac}  switch port {h.port}")
    print(f"{tb.switch_ns}  (switch: {args.switch})")
    return 0


def main_down(args: argparse.Namespace) -> int:
    from dcfair.testbed import bed

    bed.check_prefix(args.prefix)
    removed = bed.down(args.prefix)
    print(f"removed {len(removed)} namespaces with prefix {args.prefix!r}")
    return 0


def main_run(args: argparse.Namespace) -> int:
    from dcfair.testbed import run

    summary = run.run_file(args.scenario, overrides=args.overrides, out=args.out, switch=args.switch,
                           prefix=args.prefix, seed=args.seed, keep=args.keep, log=None if args.quiet else _say,
                           sysctls=args.sysctls)
    if not args.quiet:
        m = summary["metrics"]
        keys = ("utilization", "jain_index", "starved_fraction", "throughput_variance_pkts", "max_starvation_s",
                "drops", "retransmits", "timeouts", "block_goodput_bps", "fairq_rewrites")
        for k in keys:
            if m.get(k) is not None:
                print(f"{k:28s} {m[k]}")
        print(f"results in {summary['testbed']['out']}")
    return 0
