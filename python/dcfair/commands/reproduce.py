"""`dcfair reproduce NAME [--quick] [--out DIR] [--jobs N] [--set KEY=VALUE ...]
[--only LABEL=VALUE ...] [--explore]` and `dcfair reproduce --list`."""

from __future__ import annotations

import argparse
from pathlib import Path

from dcfair.commands import _options

HELP = "reproduce a paper's figure: runs, figure.png and claims.json (paper vs dcfair)"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "reproduce",
        help=HELP,
        description=HELP + ". Finished runs are kept (out/reproduce/runs, shared by every reproduction; "
        "OUT/runs with --out) and reused when the same runs are needed again, from the same engine build "
        "only, so an interrupted reproduction resumes where it stopped.",
    )
    p.add_argument("name", metavar="NAME", nargs="?", help="a name from --list, or 'all'")
    p.add_argument("--list", action="store_true", help="list the reproductions and exit")
    p.add_argument("--quick", action="store_true", help="the small form: shorter runs, fewer points and seeds")
    p.add_argument("--out", metavar="DIR", help="output directory (default: out/reproduce/NAME[-quick]; "
                   "with 'all', DIR/NAME for each)")
    p.add_argument("--jobs", metavar="N", type=int, help="parallel runs (default: all cores)")
    p.add_argument(
        "--set", dest="sets", metavar="KEY=VALUE", type=_options.assignment, action="append", default=[],
        help="try another reading: add this override to every run (repeatable; with --only, to the "
        "matching runs only); the result goes to its own directory, <out>+KEY=VALUE",
    )
    p.add_argument(
        "--only", metavar="LABEL=VALUE", type=_options.assignment, action="append", default=[],
        help="apply --set only to the runs with this label (e.g. qdisc=hcf; repeatable: all must match)",
    )
    p.add_argument("--peer", metavar="PEER",
                   help="a second opinion: run the reproduction's points in another simulator (ns2, ns3, "
                   "ns2-xpass, htsim; `--peer list` lists them) and check its claims there by the same "
                   "criteria; writes <out>@PEER/claims.json and each claim's second_opinion into "
                   "<out>/claims.json. With 'all', every reproduction the peer runs")
    p.add_argument("--explore", action="store_true",
                   help="also run every alternative reading the reproduction declares and record each "
                   "claim's result under them in claims.json ('explored'); `make claims` does this")
    p.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    from dcfair import display, reproduce
    from dcfair.errors import InvalidInput
    from dcfair.outdir import check_out_dir
    from dcfair.runner import Tally

    reps = reproduce.load_all()
    if args.peer == "list":
        from dcfair import peers

        rows = []
        for name, p in sorted(peers.load_all().items()):
            why = p.missing()
            rows.append([name, p.title, "yes" if why is None else f"no: {why}", ", ".join(sorted(p.runners))])
        display.print_table("peers", ["peer", "what", "installed", "reproductions"], rows)
        return 0
    if args.list or not args.name:
        rows = [[r.name, r.paper, r.figure, r.title] for r in reps.values()]
        display.print_table("reproductions", ["name", "paper", "figure", "what"], rows)
        return 0
    names = list(reps) if args.name == "all" else [args.name]
    for n in names:
        if n not in reps:
            raise InvalidInput("NAME", f"no reproduction named {n!r}; `dcfair reproduce --list` lists them")
    if args.peer is not None:
        from dcfair import peers

        peer = peers.get(args.peer)
        if args.sets or args.explore:
            raise InvalidInput("--peer", "runs the reproduction's own points; not with --set or --explore")
        if args.name == "all":
            names = [n for n in names if n in peer.runners]
        else:
            peers.runner(args.peer, args.name)  # invalid input when the peer has no runner for it
        peer.check()
    if args.jobs is not None and args.jobs < 1:
        raise InvalidInput("--jobs", f"must be at least 1, got {args.jobs}")
    if args.only and not args.sets:
        raise InvalidInput("--only", "selects the runs a --set applies to; give a --set too")
    if args.explore and args.sets:
        raise InvalidInput("--explore", "runs the declared readings of the reproduction itself; not with --set")
    root = Path(args.out) if args.out else reproduce.DEFAULT_ROOT
    runs = root / ("runs" if args.peer is None else f"runs@{args.peer}")
    tally = Tally()
    for n in names:
        base = root / n if (args.out and len(names) > 1) else (Path(args.out) if args.out else reproduce.default_out(n, args.quick))
        out = reproduce.reading_out(base, args.sets, args.only) if args.sets else base
        if args.peer is not None:
            out = reproduce.peer_out(base, args.peer)
        check_out_dir(out, "--out", keep=True)
        if args.peer is not None:
            doc = reproduce.run(n, out, quick=args.quick, jobs=args.jobs, runs=runs, tally=tally, peer=args.peer)
        elif args.explore:
            doc = reproduce.explore(n, out, quick=args.quick, jobs=args.jobs, runs=runs, tally=tally)
        else:
            doc = reproduce.run(n, out, quick=args.quick, jobs=args.jobs, sets=args.sets, only=args.only, runs=runs,
                                tally=tally)
        rows = []
        for c in doc["claims"]:
            d = c["dcfair"]
            val = "-" if d["mean"] is None else f"{d['mean']:.4g} +- {d['std']:.2g} (n={d['n']})"
            tried = f" ({sum(e['holds'] for e in c.get('explored', []))}/{len(c['explored'])} readings hold)" \
                if c.get("explored") else ""
            verdict = f"not run: {c['why_not']}" if c.get("why_not") else ("yes" if c["holds"] else "NO") + tried
            rows.append([c["id"], c["claim"], c["paper_value"], val, verdict])
        who = f", in {doc['peer_title']}" if args.peer else ""
        title = f"{n}: {doc['title']} ({doc['paper']}, {doc['figure']}{', quick' if args.quick else ''}{who})"
        display.print_table(title, ["claim", "statement", "paper", args.peer or "dcfair", "holds"], rows)
        print(f"wrote {out}/figure.png, {out}/claims.json, {out}/results.csv")
    print(tally.line())
    return 0
