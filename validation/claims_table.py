#!/usr/bin/env python3
"""Every claims table of the docs, and docs/claims.md, from the reproductions' claims.json.

    python validation/claims_table.py [--root out/reproduce] [--check]

``make claims`` runs ``dcfair reproduce all --explore`` (full forms, every declared reading) and
then this script. For each of the five papers it rewrites the claims table of its mechanism page
(between ``<!-- claims:begin -->`` and ``<!-- claims:end -->``), the side-by-side tables of the
reproductions that write one (``<!-- tables:begin -->``), the tables of dcfair's own checks on
the papers' settings (``scope = "beyond"``, ``<!-- claims-beyond:begin -->``: on the page of the
mechanism a check is about, its ``subject``, else on the page of the paper it checks), and writes
``docs/claims.md``: per paper, "N of M claims hold", then every claim that fails with the paper's
words, the criterion, dcfair's value, what the runs show and every reading tried.

Rules:
- Every number comes from ``ROOT/<reproduction>/claims.json``: a missing or quick one stops the
  script (exit 2) naming it; so does one made by another engine build than the rest.
- A claim's readings (``explored``) are listed with their command, so each can be rerun.
- What the runs show about a failing claim comes from ``python/dcfair/reproduce/explanations.toml``
  as it is now, filled with the claim's values (editing one needs no rerun); an explanation of a
  claim that does not exist stops the script, and a failing claim without one is named on
  stderr.
- ``docs/claims.md`` gives the cost of the verdicts: the runs of this engine build in
  ``ROOT/runs`` and the sum of their wall times.
- Second opinions come from the peers' claims documents beside each reproduction
  (``ROOT/<reproduction>@<peer>/claims.json``, written by ``dcfair reproduce NAME --peer PEER``;
  ``make second-opinions``), folded in as they are now: every claim of ``docs/claims.md`` gets a
  line with the peer's value, its verdict by the same criterion and the command, or why it has
  none; every claims table a column; and each paper a summary of where dcfair and its peers
  agree (``docs/validation.md``, "Second opinions").
- ``--check`` rewrites nothing and exits 1 if a generated section differs from what is there
  (the docs are stale) or a failing claim has no explanation.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import docsection

REPO = Path(__file__).resolve().parents[1]
#: Each paper's page: the reproductions' ``paper`` field -> (doc, short name).
PAGES: Dict[str, Tuple[str, str]] = {
    "HCF (paper 000)": ("docs/mechanisms/hcf.md", "HCF"),
    "FairQ (paper 001)": ("docs/mechanisms/fairq.md", "FairQ"),
    "ExpressPass (paper 002)": ("docs/mechanisms/expresspass.md", "ExpressPass"),
    "FQ-CoDel in the data center (paper 003)": ("docs/mechanisms/fq_codel.md", "FQ-CoDel in the data center"),
    "TCP Outcast (paper 004)": ("docs/mechanisms/outcast.md", "TCP Outcast"),
    "AFD (Pan et al., SIGCOMM CCR 2003; text not in the repository)": ("docs/mechanisms/afd.md", "AFD"),
    "MPTCP (Raiciu et al., SIGCOMM 2011, and RFC 6356; texts not in the repository)": ("docs/mechanisms/mptcp.md", "MPTCP"),
    "DCQCN (Zhu et al., SIGCOMM 2015; text not in the repository)": ("docs/mechanisms/dcqcn.md", "DCQCN"),
    "HPCC (Li et al., SIGCOMM 2019; text not in the repository)": ("docs/mechanisms/hpcc.md", "HPCC"),
    "NDP (Handley et al., SIGCOMM 2017; text not in the repository)": ("docs/mechanisms/ndp.md", "NDP"),
}
CLAIMS_PAGE = "docs/claims.md"
VALIDATION_PAGE = "docs/validation.md"


def fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, int):
        return str(x)
    a = abs(x)
    if a != 0 and (a >= 1e4 or a < 1e-2):
        return f"{x:.3g}"
    return f"{x:.3f}".rstrip("0").rstrip(".")


def value(stats: dict, unit: str = "") -> str:
    v = f"{fmt(stats['mean'])} +- {fmt(stats['std'])} [{fmt(stats['min'])}, {fmt(stats['max'])}], n={stats['n']}"
    return f"{v} {unit}".rstrip()


def cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def load(root: Path) -> List[dict]:
    sys.path.insert(0, str(REPO / "python"))
    from dcfair import reproduce

    docs = []
    for name in reproduce.load_all():
        f = root / name / "claims.json"
        if not f.exists():
            raise SystemExit(f"claims_table: {f} is missing: run `dcfair reproduce {name} --explore` (make claims)")
        doc = json.loads(f.read_text())
        if doc.get("quick"):
            raise SystemExit(f"claims_table: {f} is a quick form; the tables are made from the full forms")
        docs.append(doc)
    # explanations come from explanations.toml as it is now, so editing one needs no rerun
    written = reproduce.explanations()
    for d in docs:
        ids = {c["id"] for c in d["claims"]}
        unknown = sorted(set(written.get(d["reproduction"], {})) - ids)
        if unknown:
            raise SystemExit(f"claims_table: explanations.toml explains claims {d['reproduction']} does not have: {unknown}")
        for c in d["claims"]:
            c["explanation"] = ""
            c.pop("second_opinion", None)
            c.pop("second_opinions", None)
        reproduce.explain(d)
        reproduce.fold_opinions(d, reproduce.peer_docs(root / d["reproduction"]))
    builds = {d.get("engine_build") for d in docs}
    if len(builds) != 1:
        raise SystemExit(f"claims_table: the reproductions come from several engine builds {sorted(map(str, builds))}: "
                         "run make claims again")
    return docs


def tried(c: dict) -> str:
    ex = c.get("explored") or []
    if not ex:
        return "-"
    held = [e["reading"] for e in ex if e["holds"]]
    return f"{len(held)} of {len(ex)}" + (f" ({', '.join(held)})" if held else "")


def opinion_cell(c: dict) -> str:
    """A claims table's cell for the claim's second opinion: ``peer: mean, holds``, or ``-``."""
    so = c.get("second_opinion")
    if not so or so.get("value") is None:
        return "-"
    return f"{so['peer']}: {fmt(so['value'])} ({'holds' if so['holds'] else 'fails'})"


def opinion_line(c: dict, reproduction: str) -> str:
    """``docs/claims.md``'s lines on a claim's second opinions, one per peer that ran it: the
    peer's values and verdict with the command, or why there is none."""
    ops = c.get("second_opinions") or ([c["second_opinion"]] if c.get("second_opinion") else [])
    if len(ops) > 1:
        return "\n".join(_opinion_line({**c, "second_opinion": so}, reproduction) for so in ops)
    return _opinion_line(c, reproduction)


def _opinion_line(c: dict, reproduction: str) -> str:
    so = c.get("second_opinion")
    if so and so.get("value") is not None:
        st = {k: so.get(k) for k in ("mean", "std", "min", "max", "n")}
        st["mean"], st["std"] = so["value"], so["spread"]
        verdict = "holds" if so["holds"] else "fails"
        mine = c["dcfair"]
        apart = ""
        if mine["mean"] is not None and mine["std"] is not None and so["spread"] is not None:
            if abs(mine["mean"] - so["value"]) > mine["std"] + so["spread"]:
                apart = "; dcfair and the peer differ by more than their seed spreads"
        return (f"- Second opinion ({so['title'] or so['peer']}): {value(st, c.get('unit', ''))}; the claim {verdict} "
                f"there{apart}. Run: `{so['command']}`.")
    if so:
        return f"- Second opinion ({so['title'] or so['peer']}): none: {so['why_not']}. Run: `{so['command']}`."
    return f"- Second opinion: none: {no_opinion(reproduction)}."


def no_opinion(reproduction: str) -> str:
    """Why a reproduction has no second opinion: no peer runs it, or its peers have not run it."""
    from dcfair import peers

    why = peers.NO_PEER.get(reproduction)
    if why:
        return why
    able = [p for p in peers.load_all().values() if reproduction in p.runners]
    if not able:
        return "no peer has a runner for it yet"
    cmds = "; ".join(f"`dcfair reproduce {reproduction} --peer {p.name}`"
                     + (f" ({p.name} is not installed here: {p.missing()})" if p.missing() else "") for p in able)
    return f"not run yet: {cmds}"


def claims_table(docs: List[dict], scope: str) -> Tuple[str, int, int]:
    rows = ["| reproduction | claim | paper | dcfair (mean +- std [min, max], n) | holds | criterion | readings that hold "
            "| second opinion |",
            "|---|---|---|---|---|---|---|---|"]
    held = total = 0
    for d in docs:
        for c in d["claims"]:
            if c.get("scope", "paper") != scope:
                continue
            rows.append(f"| {d['reproduction']} ({d['figure']}) | {cell(c['claim'])} | {cell(c['paper_value'])} | "
                        f"{value(c['dcfair'], c.get('unit', ''))} | {'yes' if c['holds'] else '**no**'} | "
                        f"{cell(c['criterion'])} | {tried(c)} | {cell(opinion_cell(c))} |")
            held += bool(c["holds"])
            total += 1
    return "\n".join(rows), held, total


def side_tables(docs: List[dict]) -> str:
    out = []
    for d in docs:
        rows = d.get("table")
        if not rows:
            continue
        cols = list(rows[0])
        out.append(f"**{d['reproduction']}** ({d['figure']}): {d['title']}\n")
        out.append("| " + " | ".join(cols) + " |")
        out.append("|" + "---|" * len(cols))
        for r in rows:
            out.append("| " + " | ".join(fmt(r.get(c)) if isinstance(r.get(c), (int, float)) else cell(r.get(c)) for c in cols) + " |")
        out.append("")
    return "\n".join(out)


def run_cost(runs: Path, build: str) -> Tuple[int, float]:
    """The runs of engine build ``build`` in the store ``runs``: how many, and the sum of their
    wall times in seconds (each ran on one core)."""
    n, total = 0, 0.0
    for f in runs.glob("*/point.json"):
        try:
            meta = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if meta.get("engine_build") == build:
            n += 1
            total += float(meta.get("wall_s") or 0.0)
    return n, total


def verdicts(docs: List[dict], build: str, cost: Tuple[int, float] = (0, 0.0)) -> str:
    """docs/claims.md."""
    runs, seconds = cost
    lines = ["# Verdicts on the five papers", "",
             "Generated by `make claims` (`dcfair reproduce all --explore`, then `python validation/claims_table.py`) "
             f"from the full forms, engine build `{build}`. Do not edit: rerun. A claim is the paper's own words "
             "(quoted), checked by the criterion beside it; a claim that fails says what the runs show and lists "
             "every reading it was tried under, each with the command that reruns it. The mechanism pages hold "
             "the full tables and the settings.", "",
             f"The verdicts rest on {runs} runs that took {seconds / 3600:.1f} CPU-hours (the sum of each run's "
             "wall time on one core, from their `point.json`).", ""]
    by_paper: Dict[str, List[dict]] = {}
    for d in docs:
        by_paper.setdefault(d["paper"], []).append(d)
    lines += ["| paper | claims that hold | page |", "|---|---|---|"]
    summary = []
    for paper, (page, short) in PAGES.items():
        cs = [c for d in by_paper.get(paper, []) for c in d["claims"] if c.get("scope", "paper") == "paper"]
        held = sum(c["holds"] for c in cs)
        summary.append((paper, page, short, held, len(cs)))
        lines.append(f"| {short} | {held} of {len(cs)} | `{page}` |")
    lines.append("")
    lines += opinions_summary(by_paper)
    for paper, page, short, held, total in summary:
        lines += [f"## {short}", "", f"{held} of {total} claims hold (`{page}`).", ""]
        failing = [(d, c) for d in by_paper.get(paper, []) for c in d["claims"]
                   if c.get("scope", "paper") == "paper" and not c["holds"]]
        for d, c in failing:
            lines.append(f"### {d['reproduction']} `{c['id']}`: {c['claim']}")
            lines.append("")
            if c.get("quote"):
                lines.append(f"> {c['quote']}")
                lines.append("")
            lines.append(f"- Paper: {c['paper_value']}. dcfair: {value(c['dcfair'], c.get('unit', ''))}.")
            lines.append(f"- Criterion: {c['criterion']}.")
            lines.append(f"- Run: `{d['command']}`.")
            lines.append(f"- What the runs show: {c.get('explanation') or 'not traced beyond the readings below.'}")
            lines.append(opinion_line(c, d["reproduction"]))
            ex = c.get("explored") or []
            if ex:
                holds = [e["reading"] for e in ex if e["holds"]]
                lines.append("- " + (f"Holds under {len(holds)} of {len(ex)} readings tried: {', '.join(holds)}."
                                     if holds else f"Holds under none of the {len(ex)} readings tried."))
                lines.append("")
                lines.append("  | reading | what changes | dcfair | holds | command |")
                lines.append("  |---|---|---|---|---|")
                for e in ex:
                    lines.append(f"  | {e['reading']} | {cell(e['what'])} | {value(e['dcfair'], c.get('unit', ''))} | "
                                 f"{'yes' if e['holds'] else 'no'} | `{e['command']}` |")
            else:
                lines.append("- No other reading was tried.")
            lines.append("")
    return "\n".join(lines) + "\n"


def has_opinion(c: dict) -> bool:
    so = c.get("second_opinion")
    return bool(so) and so.get("value") is not None


def opinions_summary(by_paper: Dict[str, List[dict]]) -> List[str]:
    """``docs/claims.md``'s section on the second opinions: a sentence, then
    :func:`opinions_table`."""
    return (["## Second opinions", "",
             "Each claim rerun in an independent simulator (`dcfair reproduce NAME --peer PEER`; `make "
             "second-opinions` reruns them all; `docs/validation.md`, \"Second opinions\", names the peers and what "
             "each runs).", ""] + opinions_table(by_paper) + [""])


def opinions_table(by_paper: Dict[str, List[dict]]) -> List[str]:
    """The second opinions' summary: per paper, the claims that hold in dcfair (how many a peer
    checked, and agrees with), the failing claims that also fail in the peer (the paper's result
    does not reproduce from its description, in either simulator), those that hold in the peer
    (dcfair's to explain), and those without a second opinion; then the share of the failing
    claims that have one."""
    lines = ["| paper | hold in dcfair | of them checked by a peer | the peer agrees | fail in dcfair | fail in the peer "
             "too | hold in the peer | no second opinion |",
             "|---|---|---|---|---|---|---|---|"]
    failing_all = failing_seen = 0
    for paper, (_, short) in PAGES.items():
        cs = [c for d in by_paper.get(paper, []) for c in d["claims"] if c.get("scope", "paper") == "paper"]
        good = [c for c in cs if c["holds"]]
        bad = [c for c in cs if not c["holds"]]
        good_seen = [c for c in good if has_opinion(c)]
        bad_seen = [c for c in bad if has_opinion(c)]
        both = sum(not c["second_opinion"]["holds"] for c in bad_seen)
        lines.append(f"| {short} | {len(good)} | {len(good_seen)} | {sum(c['second_opinion']['holds'] for c in good_seen)} "
                     f"| {len(bad)} | {both} | {len(bad_seen) - both} | {len(bad) - len(bad_seen)} |")
        failing_all += len(bad)
        failing_seen += len(bad_seen)
    share = f"{100 * failing_seen / failing_all:.0f} %" if failing_all else "-"
    lines += ["", f"{failing_seen} of {failing_all} failing claims ({share}) have a second opinion."]
    return lines


def sections(docs: List[dict]) -> Dict[Tuple[str, str], str]:
    """(page, marker) -> generated text."""
    out: Dict[Tuple[str, str], str] = {}
    cmd = "Made by `make claims` (`python validation/claims_table.py` over `dcfair reproduce all --explore`)."
    for paper, (page, _) in PAGES.items():
        mine = [d for d in docs if d["paper"] == paper]
        t, held, total = claims_table(mine, "paper")
        out[(page, "claims")] = f"{t}\n\n{held} of {total} claims hold. `docs/claims.md` lists the readings tried.\n\n{cmd}"
        side = side_tables(mine)
        if side:
            out[(page, "tables")] = side + "\n" + cmd
    # dcfair's own checks: on the page of the mechanism they are about (``subject``), else on
    # the page of the paper whose setting they check
    pages: Dict[str, List[dict]] = {}
    for d in docs:
        for c in d["claims"]:
            if c.get("scope") == "beyond":
                page = f"docs/mechanisms/{c['subject']}.md" if c.get("subject") else PAGES[d["paper"]][0]
                pages.setdefault(page, [])
                if not pages[page] or pages[page][-1]["reproduction"] != d["reproduction"]:
                    pages[page].append({**d, "claims": []})
                pages[page][-1]["claims"].append(c)
    for page, mine in pages.items():
        t, held, total = claims_table(mine, "beyond")
        out[(page, "claims-beyond")] = f"{t}\n\n{held} of {total} hold.\n\n{cmd}"
    by_paper: Dict[str, List[dict]] = {}
    for d in docs:
        by_paper.setdefault(d["paper"], []).append(d)
    out[(VALIDATION_PAGE, "opinions")] = "\n".join(opinions_table(by_paper)) + (
        "\n\nMade by `make second-opinions` (`python validation/second_opinions.py`, then `python "
        "validation/claims_table.py`); each claim's line in `docs/claims.md` gives the peer's values and command.")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=REPO / "out" / "reproduce", help="where the reproductions wrote")
    ap.add_argument("--check", action="store_true", help="rewrite nothing; exit 1 if the docs differ")
    args = ap.parse_args(argv)
    docs = load(args.root)
    build = docs[0].get("engine_build", "?")
    stale = []
    for (page, marker), text in sections(docs).items():
        path = REPO / page
        if args.check:
            begin, end = f"<!-- {marker}:begin -->", f"<!-- {marker}:end -->"
            cur = path.read_text()
            if begin not in cur or cur.split(begin, 1)[1].split(end, 1)[0].strip() != text.strip():
                stale.append(f"{page} ({marker})")
            continue
        try:
            docsection.replace(path, marker, text)
        except ValueError as e:
            print(f"claims_table: {e}", file=sys.stderr)
            return 2
    unexplained = [f"{d['reproduction']} {c['id']}" for d in docs for c in d["claims"]
                   if not c["holds"] and c.get("scope", "paper") == "paper" and not c.get("explanation")]
    if unexplained:
        print("claims_table: failing claims without an explanation (python/dcfair/reproduce/explanations.toml): "
              + ", ".join(unexplained), file=sys.stderr)
        if args.check:
            stale.append("explanations.toml")
    page = REPO / CLAIMS_PAGE
    text = verdicts(docs, build, run_cost(args.root / "runs", build))
    if args.check:
        if not page.exists() or page.read_text() != text:
            stale.append(CLAIMS_PAGE)
        if stale:
            print("claims_table: stale: " + ", ".join(stale), file=sys.stderr)
            return 1
        return 0
    page.write_text(text)
    held = sum(c["holds"] for d in docs for c in d["claims"] if c.get("scope", "paper") == "paper")
    total = sum(1 for d in docs for c in d["claims"] if c.get("scope", "paper") == "paper")
    print(f"claims_table: {held} of {total} claims hold; wrote {CLAIMS_PAGE} and the mechanism pages' tables")
    return 0


if __name__ == "__main__":
    sys.exit(main())
