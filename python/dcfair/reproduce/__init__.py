"""Reproductions of the papers' experiments: ``dcfair reproduce NAME [--quick] [--out DIR]
[--set KEY=VALUE ...] [--only LABEL=VALUE ...] [--explore]``.

Rules:

- A reproduction is a :class:`Reproduction`: a name (``hcf-fig4``), the paper and figure, a
  ``plan(quick)`` that lists the :class:`~dcfair.runner.Point` runs it needs, an
  ``analyze(study)`` that draws the figure and returns the paper's :class:`Claim` s checked
  against dcfair's numbers, and its :class:`Reading` s: the alternative readings of the paper
  (or of what it leaves open) that its failing claims were tried under. One module per paper
  (``reproduce/hcf.py``, ...) registers its reproductions with :func:`register`.
- A claim states what the paper states: ``quote`` holds the paper's own words, ``claim`` says
  them in short, and the ``criterion`` checks them as written. A criterion can fail, and an
  equal result never counts as "better". ``scope = "beyond"`` marks dcfair's own checks on a
  paper's setting (ExpressPass in the HCF incast, say): they are listed apart and not counted
  as the paper's; ``subject`` names the mechanism page such a check belongs on when it is
  about another paper's mechanism.
- Runs go through :func:`dcfair.runner.run_points`: local cores, each point written atomically,
  finished points reused when the same reproduction (or any other that needs the same run)
  runs again, and only from the same engine build and input files. ``runs`` is that store:
  ``out/reproduce/runs``, shared by every reproduction, unless ``--out`` is given
  (``OUT/runs``).
- ``--set KEY=VALUE`` adds an override to every point (``--only LABEL=VALUE``: to the points
  with that label only), so any reading can be tried as a command: it writes into its own
  directory, ``<out>+<what was set>``, and its ``claims.json`` records the command.
- ``--explore`` also runs every declared :class:`Reading` that way and folds each one's result
  for each claim into the main ``claims.json``: a claim's ``explored`` list holds, per reading,
  what was changed, the command, dcfair's values and whether the claim then holds. A reading
  that changed none of the runs a claim is made of (the same values) is not listed for it.
  ``analyze`` may add entries of its own (other readings of the same runs, such as another
  measure).
- Every reproduction writes into its output directory ``figure.png``, ``claims.json`` (the
  claims, the paper's values, dcfair's mean/std/min/max over seeds, whether each holds and by
  what criterion, the engine build, the command) and ``results.csv`` (one row per run:
  labels, seed, every scalar metric).
- ``analyze`` may also fill ``study.table``: rows (dicts) of a side-by-side table, e.g. every
  discipline on the paper's scenarios. It is written to ``table.csv`` and into ``claims.json``
  under ``"table"``; it holds measurements, not claims.
- ``--quick`` runs a smaller plan (shorter runs, fewer points, fewer seeds) so tests can run
  every reproduction; its claims are still checked, and say that they come from a quick run.
- A claim *holds* by its stated criterion. Claims that do not hold are reported as such, never
  hidden; ``explanation`` says what the runs show about why, and ``explored`` what was tried.
- Explanations are written in ``explanations.toml`` beside this module (a table per
  reproduction, a string per claim id) and attached to a failing claim of a full form only.
  Their numbers are never typed in: ``{value}`` is the claim's own mean and ``{READING}`` a
  reading's, as the runs give them (``{READING:min}``, ``{READING:max}``: the extremes over
  seeds; a trailing ``%`` prints a fraction as a percentage, ``/1e6`` divides by a million).
  An explanation that names a reading the claim was not tried under is not attached (its runs
  are missing).
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from dcfair.outdir import atomic_write, temp_for
from dcfair.runner import Point, Tally

REGISTRY: Dict[str, "Reproduction"] = {}
_MODULES = ("dcfair.reproduce.hcf", "dcfair.reproduce.hcf_incast", "dcfair.reproduce.outcast", "dcfair.reproduce.fqcodel",
            "dcfair.reproduce.fairq", "dcfair.reproduce.xpass_credit", "dcfair.reproduce.xpass_fabric",
            "dcfair.reproduce.afd", "dcfair.reproduce.mptcp", "dcfair.reproduce.dcqcn", "dcfair.reproduce.hpcc",
            "dcfair.reproduce.ndp")
#: Where reproductions write by default, and their shared store of runs.
DEFAULT_ROOT = Path("out") / "reproduce"


def _stats(values: Sequence[Optional[float]]) -> Dict[str, Any]:
    vals = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return {
        "mean": statistics.fmean(vals) if vals else None,
        "std": statistics.stdev(vals) if len(vals) > 1 else (0.0 if vals else None),
        "min": min(vals) if vals else None,
        "max": max(vals) if vals else None,
        "n": len(vals),
        "values": vals,
    }


@dataclass
class Claim:
    """One statement of a paper, checked against dcfair."""

    id: str
    claim: str
    paper_value: str
    #: dcfair's per-seed values of the quantity the claim is about.
    values: List[float]
    holds: bool
    criterion: str
    unit: str = ""
    #: The paper's own words (a sentence of its text, as extracted).
    quote: str = ""
    #: What the runs show about why the claim does not hold (empty when it holds).
    explanation: str = ""
    #: ``"paper"``: the paper's claim; ``"beyond"``: dcfair's own check on the paper's setting.
    scope: str = "paper"
    #: For a ``"beyond"`` claim about another paper's mechanism: that mechanism's page
    #: (``docs/mechanisms/<subject>.md``), where its table is listed; empty: this paper's page.
    subject: str = ""
    #: Other readings tried: dicts with ``reading``, ``what``, ``command``, ``dcfair`` (stats),
    #: ``holds`` (see the module rules).
    explored: List[Dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return {"id": self.id, "claim": self.claim, "quote": self.quote, "paper_value": self.paper_value,
                "unit": self.unit, "dcfair": _stats(self.values), "holds": bool(self.holds), "criterion": self.criterion,
                "scope": self.scope, "subject": self.subject, "explanation": self.explanation,
                "explored": list(self.explored)}

    def tried(self, reading: str, what: str, values: Sequence[float], holds: bool, command: str = "") -> "Claim":
        """Adds an ``explored`` entry computed from the same runs (another measure or another
        reading of the paper's words); returns the claim."""
        self.explored.append({"reading": reading, "what": what, "command": command, "dcfair": _stats(values),
                              "holds": bool(holds)})
        return self


@dataclass(frozen=True)
class Reading:
    """An alternative reading a reproduction's claims are tried under: overrides added to
    every point (``only``: to the points whose labels match), run as ``dcfair reproduce NAME
    --set KEY=VALUE ... --only LABEL=VALUE ...``."""

    id: str
    #: What differs from the reproduction's own setting, in words.
    what: str
    sets: Tuple[Tuple[str, Any], ...]
    only: Tuple[Tuple[str, Any], ...] = ()
    #: The claim ids it bears on (empty: every claim).
    claims: Tuple[str, ...] = ()


@dataclass
class Study:
    """What ``analyze`` gets: the runs, as records, with helpers to slice them."""

    name: str
    out: Path
    quick: bool
    records: List[Dict[str, Any]]
    #: Optional side-by-side table that ``analyze`` fills (see the module rules).
    table: Optional[List[Dict[str, Any]]] = None
    #: The command that reruns this study (for ``explored`` entries made by ``analyze``).
    command: str = ""

    def rows(self, **labels) -> List[Dict[str, Any]]:
        """Successful runs whose labels match ``labels``."""
        out = []
        for r in self.records:
            lab = dict(r["point"].labels)
            if r.get("ok") and all(lab.get(k) == v for k, v in labels.items()):
                out.append(r)
        return out

    def metric(self, key: str, **labels) -> List[float]:
        """Per-seed values of ``summary.metrics[key]`` for the runs matching ``labels``."""
        vals = []
        for r in self.rows(**labels):
            v = r["summary"]["metrics"].get(key)
            vals.append(float("nan") if v is None else float(v))
        return vals

    def flows(self, **labels):
        """flows.csv of every matching run, concatenated, with the labels and seed as columns."""
        import pandas as pd

        frames = []
        for r in self.rows(**labels):
            df = pd.read_csv(Path(r["dir"]) / "flows.csv")
            for k, v in r["point"].labels:
                df[k] = v
            df["seed"] = r["point"].seed
            frames.append(df)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


@dataclass
class Reproduction:
    name: str
    paper: str
    figure: str
    title: str
    plan: Callable[[bool], List[Point]]
    analyze: Callable[[Study], List[Claim]]
    readings: Sequence[Reading] = ()


def register(r: Reproduction) -> Reproduction:
    REGISTRY[r.name] = r
    return r


def load_all() -> Dict[str, Reproduction]:
    from importlib import import_module

    for m in _MODULES:
        import_module(m)
    return REGISTRY


# --- readings as commands -------------------------------------------------------------------------

Pairs = Sequence[Tuple[str, Any]]


def _literal(v: Any) -> str:
    from dcfair.overrides import to_literal

    if isinstance(v, (list, tuple)):  # an ``only`` entry's alternatives, as the command line writes them
        return ",".join(to_literal(x) for x in v)
    return to_literal(v)


def _alternatives(v: Any) -> List[Any]:
    """The values an ``only`` entry accepts: a list or tuple of them, or ``"a,b"`` (the command
    line's form), or one value."""
    from dcfair.scenario import parse_literal
    from dcfair.sweeps import split_values

    if isinstance(v, (list, tuple)):
        return list(v)
    if isinstance(v, str):
        return [parse_literal(x) for x in split_values(v)]
    return [v]


def _matches(point: Point, only: Pairs) -> bool:
    labels = dict(point.labels)
    for k, v in only:
        if k not in labels:
            return False
        if not any(labels[k] == w or str(labels[k]) == str(w) for w in _alternatives(v)):
            return False
    return True


def apply_sets(points: Sequence[Point], sets: Pairs, only: Pairs = ()) -> List[Point]:
    """``points`` with ``sets`` appended to the overrides of those whose labels match ``only``
    (all when ``only`` is empty); later overrides win, so a set replaces the point's own value."""
    if not sets:
        return list(points)
    extra = tuple((str(k), _literal(v)) for k, v in sets)
    return [Point(p.scenario, p.overrides + extra, p.seed, p.labels, p.origin) if _matches(p, only) else p
            for p in points]


def variant_suffix(sets: Pairs, only: Pairs = ()) -> str:
    """The directory suffix of a reading: ``+key=value+...`` and ``@label=value``, in safe
    characters, with a short hash when that lost information or grew too long."""
    import hashlib

    raw = "".join(f"+{k}={_literal(v)}" for k, v in sets) + "".join(f"@{k}={_literal(v)}" for k, v in only)
    safe = re.sub(r"[^A-Za-z0-9._=+@,-]", "_", raw)
    if safe != raw or len(safe) > 100:
        safe = safe[:80] + "~" + hashlib.sha256(raw.encode()).hexdigest()[:8]
    return safe


def command(name: str, quick: bool, sets: Pairs = (), only: Pairs = (), peer: Optional[str] = None) -> str:
    """The command line that runs reproduction ``name`` with these overrides (in ``peer``)."""
    parts = ["dcfair", "reproduce", name] + (["--quick"] if quick else []) + (["--peer", peer] if peer else [])
    for k, v in sets:
        parts += ["--set", f"{k}={_literal(v)}"]
    for k, v in only:
        parts += ["--only", f"{k}={_literal(v)}"]
    return " ".join(shlex.quote(p) for p in parts)


def mean(xs: Sequence[float]) -> float:
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    return statistics.fmean(xs) if xs else float("nan")


def within_factor(x: float, paper: float, k: float = 2.0) -> bool:
    """``x`` within a factor ``k`` of the paper's value (the tolerance of "about N")."""
    return paper / k <= x <= paper * k


def clearly_lower(xs: Sequence[float], ys: Sequence[float]) -> bool:
    """"Significantly lower": the mean of ``xs`` is below the mean of ``ys`` by more than twice
    the standard error of the difference (Welch), over the seeds (about p < 0.05, one-sided).
    Equal means never pass."""
    a = [x for x in xs if x is not None and not math.isnan(x)]
    b = [y for y in ys if y is not None and not math.isnan(y)]
    if not a or not b:
        return False
    va = statistics.variance(a) / len(a) if len(a) > 1 else 0.0
    vb = statistics.variance(b) / len(b) if len(b) > 1 else 0.0
    return statistics.fmean(b) - statistics.fmean(a) > 2.0 * math.sqrt(va + vb)


def default_out(name: str, quick: bool, root: Path = DEFAULT_ROOT) -> Path:
    return root / (name + ("-quick" if quick else ""))


def run(name: str, out: Path, quick: bool = False, jobs: Optional[int] = None, progress: bool = True,
        sets: Pairs = (), only: Pairs = (), runs: Optional[Path] = None, tally: Optional[Tally] = None,
        peer: Optional[str] = None) -> Dict[str, Any]:
    """Runs reproduction ``name`` into ``out`` (its runs into ``runs``, default ``out/runs``),
    with ``sets`` added to the points ``only`` selects; returns the claims document. ``peer``:
    run the points in that peer simulator instead (:func:`second_opinion`)."""
    from dcfair import display, runner

    reps = load_all()
    r = reps[name]
    out = Path(out)
    points = apply_sets(r.plan(quick), sets, only)
    if peer is not None:
        from dcfair import peers

        limit = peers.get(peer).seeds
        if limit is not None:
            keep = sorted({p.seed for p in points})[:limit]
            points = [p for p in points if p.seed in keep]
    if sets and not any(_matches(p, only) for p in points):
        from dcfair.errors import InvalidInput

        raise InvalidInput("--only", f"no run of {name} has the labels {dict(only)}")
    # The same live line as sweeps: on a terminal only, never in pipes or CI.
    on_done = display.PointsProgress(name) if progress and display.live_progress_wanted(False) else None
    tally = tally if tally is not None else Tally()
    try:
        records = runner.run_points(points, Path(runs) if runs is not None else out / "runs", jobs=jobs, on_done=on_done,
                                    tally=tally, peer=None if peer is None else (peer, name, quick))
    finally:
        if on_done is not None:
            on_done.close()
    unsupported = [rec for rec in records if rec.get("unsupported")]
    failed = [rec for rec in records if not rec.get("ok") and not rec.get("unsupported")]
    if failed:
        msgs = sorted({rec.get("message", "?") for rec in failed})
        raise RuntimeError(f"{len(failed)} of {len(records)} runs failed: " + "; ".join(msgs[:3]))
    out.mkdir(parents=True, exist_ok=True)
    cmd = command(name, quick, sets, only, peer)
    study = Study(name=name, out=out, quick=quick, records=[rec for rec in records if rec.get("ok")], command=cmd)
    _write_results_csv(study)
    why_not: Dict[str, str] = {}
    if unsupported:
        engine_runs = Path(runs).with_name("runs") if runs is not None else out / "runs"
        claims, why_not = analyze_partial(r, study, [(rec["point"], rec["unsupported"]) for rec in unsupported],
                                          engine_runs, jobs)
    else:
        claims = r.analyze(study)
    seeds = sorted({rec["point"].seed for rec in records})
    doc = {
        "reproduction": name,
        "paper": r.paper,
        "figure": r.figure,
        "title": r.title,
        "quick": quick,
        "command": cmd,
        "sets": [[k, _literal(v)] for k, v in sets],
        "only": [[k, _literal(v)] for k, v in only],
        "engine_build": runner.engine_build(),
        "runs": len(records),
        "seeds": seeds,
        "figure_file": "figure.png",
        "claims": [c.to_json() for c in claims],
    }
    if peer is not None:
        from dcfair import peers

        p = peers.get(peer)
        doc.update(peer=peer, peer_title=p.title, peer_build=peers.peer_build(peer, name),
                   unsupported=[{"labels": dict(rec["point"].labels), "seed": rec["point"].seed, "why": rec["unsupported"]}
                                for rec in unsupported])
        for c in doc["claims"]:
            if not c["dcfair"]["n"]:
                c["why_not"] = why_not.get(c["id"]) or "no run gave a value"
        if unsupported:
            doc["figure_note"] = "the points the peer cannot run (unsupported) are drawn from dcfair's own runs"
    if study.table is not None:
        import pandas as pd

        doc["table"] = study.table
        atomic_write(out / "table.csv", pd.DataFrame(study.table).to_csv(index=False))
    write_claims(out, doc)
    return doc


#: Columns of the result tables that place a row (ids, times, names): :func:`_shifted` keeps them.
_PLACING = {"flow_id", "id", "seed", "port", "sport", "dport", "subflow", "conn", "t", "time_s", "start_s", "end_s",
            "t_s", "window_start_s", "window_end_s"}


def _shift(v: Any) -> Any:
    """A number moved to another value of its type (an integer stays an integer: tables parse
    them with ``int``); bools and non-numbers unchanged."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return v
    return (v * 3 + 2) // 2 if isinstance(v, int) else v * 1.5 + 1e-3


def _shifted(rec: Dict[str, Any], tmp: Path) -> Dict[str, Any]:
    """A copy of run record ``rec`` whose measured numbers are all moved (:func:`_shift`): its
    summary's metrics and the numeric columns of its tables but those that place a row
    (``_PLACING``), written under ``tmp``."""
    import pandas as pd

    src = Path(rec["dir"])
    d = tmp / src.name
    d.mkdir(parents=True, exist_ok=True)
    summary = dict(rec["summary"], metrics={k: _shift(v) for k, v in rec["summary"].get("metrics", {}).items()})
    (d / "summary.json").write_text(json.dumps(summary))
    for f in src.glob("*.csv"):
        df = pd.read_csv(f)
        for c in df.columns:
            if c not in _PLACING and pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]):
                df[c] = (df[c] * 3 + 2) // 2 if pd.api.types.is_integer_dtype(df[c]) else df[c] * 1.5 + 1e-3
        df.to_csv(d / f.name, index=False)
    return dict(rec, dir=d, summary=summary)


def analyze_partial(r: "Reproduction", study: Study, missing: Sequence[Tuple[Point, str]], engine_runs: Path,
                    jobs: Optional[int] = None) -> Tuple[List[Claim], Dict[str, str]]:
    """The claims of a peer that could not run the points ``missing`` (each with the reason),
    each only where its values do not depend on those points; and, for each claim that does,
    why (the reasons of the points it depends on).

    ``analyze`` needs every point, so it runs with dcfair's own runs of the missing points
    standing in (from the engine's store ``engine_runs``): once as they are (the claims, the
    figure and the table), then once per reason with the numbers of that reason's stand-ins
    moved (:func:`_shifted`). A claim whose values or verdict move depends on those points: it
    is given no values. The figure draws dcfair's runs for the missing points
    (``figure_note``)."""
    import tempfile

    from dcfair import runner

    filled = runner.run_points([p for p, _ in missing], engine_runs, jobs=jobs)
    bad = [f for f in filled if not f.get("ok")]
    if bad:
        raise RuntimeError(f"dcfair's runs of the points the peer cannot run failed: {bad[0].get('message')}")
    reasons = [why for _, why in missing]
    ran = list(study.records)
    study.records = ran + filled
    claims = r.analyze(study)
    depends: Dict[str, List[str]] = {}
    with tempfile.TemporaryDirectory(prefix="dcfair-peer-") as tmp:
        for k, why in enumerate(sorted(set(reasons))):
            moved = [_shifted(f, Path(tmp) / str(k)) if reasons[i] == why else f for i, f in enumerate(filled)]
            alt = Study(name=study.name, out=Path(tmp) / f"moved{k}", quick=study.quick, records=ran + moved,
                        command=study.command)
            alt.out.mkdir()
            try:
                other = {c.id: c for c in r.analyze(alt)}
            except Exception:  # noqa: BLE001 - the moved numbers broke the analysis: any claim may depend on them
                other = {}
            for c in claims:
                o = other.get(c.id)
                if o is None or _stats(o.values) != _stats(c.values) or bool(o.holds) != bool(c.holds):
                    depends.setdefault(c.id, []).append(why)
    for c in claims:
        if c.id in depends:
            c.values, c.holds = [], False
        # other readings of the same runs that analyze adds may lean on the stand-ins: a peer's
        # document keeps only what its own runs give
        c.explored = []
    study.records = ran
    return claims, {cid: "; ".join(whys) for cid, whys in depends.items()}


def write_claims(out: Path, doc: Dict[str, Any]) -> None:
    """Writes ``out/claims.json``: a reproduction's claims with the explanations of the failing
    ones (full forms) and the second opinions of the peers that ran it (:func:`fold_opinions`);
    a peer's own claims go to ``<out>@<peer>/claims.json`` and into the main document beside
    it when there is one."""
    out = Path(out)
    if doc.get("peer"):
        atomic_write(out / "claims.json", json.dumps(doc, indent=1) + "\n")
        main = out.with_name(out.name.rsplit("@", 1)[0]) / "claims.json"
        if main.is_file():
            mdoc = json.loads(main.read_text())
            fold_opinions(mdoc, [doc])
            atomic_write(main, json.dumps(mdoc, indent=1) + "\n")
        return
    if not doc.get("quick"):
        explain(doc)
    fold_opinions(doc, peer_docs(out))
    atomic_write(out / "claims.json", json.dumps(doc, indent=1) + "\n")


def peer_out(out: Path, peer: str) -> Path:
    """Where reproduction output ``out`` run in ``peer`` writes: ``<out>@<peer>``."""
    out = Path(out)
    return out.with_name(f"{out.name}@{peer}")


def peer_docs(out: Path) -> List[Dict[str, Any]]:
    """The claims documents of the peers that ran the reproduction written to ``out``
    (``<out>@<peer>/claims.json``), by peer name."""
    out = Path(out)
    docs = []
    for d in sorted(out.parent.glob(f"{out.name}@*")):
        f = d / "claims.json"
        if f.is_file() and "+" not in d.name[len(out.name):]:
            try:
                docs.append(json.loads(f.read_text()))
            except ValueError:
                continue
    return docs


def second_opinion(claim: Dict[str, Any], pdoc: Dict[str, Any]) -> Dict[str, Any]:
    """What peer document ``pdoc`` says of ``claim`` (matched by id): the peer's values of the
    claim's quantity (mean, spread: the standard deviation over seeds, min, max, n) and whether
    the claim holds there by the same criterion, with the command that reruns it; or
    ``why_not`` when the peer gave no value."""
    mine = next((c for c in pdoc["claims"] if c["id"] == claim["id"]), None)
    so: Dict[str, Any] = {"peer": pdoc["peer"], "title": pdoc.get("peer_title", ""), "build": pdoc.get("peer_build", ""),
                          "command": pdoc["command"]}
    if mine is None or not mine["dcfair"]["n"]:
        so.update(value=None, spread=None, holds=None,
                  why_not=(mine or {}).get("why_not") or "the peer's analysis gives no such claim")
        return so
    st = mine["dcfair"]
    so.update(value=st["mean"], spread=st["std"], min=st["min"], max=st["max"], n=st["n"], values=st["values"],
              holds=bool(mine["holds"]), criterion=mine["criterion"], why_not="")
    return so


def fold_opinions(doc: Dict[str, Any], pdocs: Sequence[Dict[str, Any]]) -> None:
    """Sets ``second_opinion`` of every claim of ``doc`` from the peer documents ``pdocs`` of
    the same form (quick or full); with several peers, every opinion is kept in
    ``second_opinions`` (by peer name) and ``second_opinion`` is the last that gives a value
    (the last one when none does)."""
    pdocs = [p for p in pdocs if p.get("quick") == doc.get("quick") and p.get("reproduction") == doc["reproduction"]]
    for c in doc["claims"]:
        ops = {p["peer"]: second_opinion(c, p) for p in pdocs}
        merged = {**{o["peer"]: o for o in c.get("second_opinions", [])}, **ops}
        if merged:
            c["second_opinions"] = [merged[k] for k in sorted(merged)]
            valued = [o for o in c["second_opinions"] if o.get("value") is not None]
            c["second_opinion"] = (valued or c["second_opinions"])[-1]


EXPLANATIONS = Path(__file__).with_name("explanations.toml")
_PLACEHOLDER = re.compile(r"\{([a-z0-9][a-z0-9_.-]*)(?::(mean|min|max))?(%|/1e[0-9])?\}")


def explanations() -> Dict[str, Dict[str, str]]:
    """``explanations.toml``: reproduction -> claim id -> explanation template."""
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python < 3.11
        import tomli as tomllib
    return tomllib.loads(EXPLANATIONS.read_text())


def render_explanation(template: str, claim: Dict[str, Any]) -> Optional[str]:
    """``template`` with its placeholders filled from ``claim`` (module rules); None when it
    names a reading the claim has no values for."""
    stats = {"value": claim["dcfair"], **{e["reading"]: e["dcfair"] for e in claim.get("explored") or []}}
    missing = []

    def fill(m: "re.Match[str]") -> str:
        st = stats.get(m.group(1))
        x = st and st.get(m.group(2) or "mean")
        if x is None:
            missing.append(m.group(1))
            return m.group(0)
        if m.group(3) == "%":
            return f"{100 * x:.3g} %"
        if m.group(3):
            x /= 10 ** int(m.group(3)[3:])
        return f"{x:.3g}"

    text = _PLACEHOLDER.sub(fill, " ".join(template.split()))
    return None if missing else text


def explain(doc: Dict[str, Any]) -> None:
    """Attaches the rendered explanation of each failing claim of ``doc`` that has one."""
    mine = explanations().get(doc["reproduction"], {})
    for c in doc["claims"]:
        if not c["holds"] and c["id"] in mine:
            c["explanation"] = render_explanation(mine[c["id"]], c) or ""


def reading_out(out: Path, sets: Pairs, only: Pairs = ()) -> Path:
    """Where a reading of the reproduction in ``out`` writes: ``<out>+<what was set>``."""
    out = Path(out)
    return out.with_name(out.name + variant_suffix(sets, only))


def explore(name: str, out: Path, quick: bool = False, jobs: Optional[int] = None, progress: bool = True,
            runs: Optional[Path] = None, tally: Optional[Tally] = None) -> Dict[str, Any]:
    """Runs reproduction ``name`` and each of its :class:`Reading` s (into
    :func:`reading_out` directories, sharing the runs), then folds every reading's result for
    each claim it bears on into the claims' ``explored`` lists of ``out/claims.json``."""
    from dcfair import api, runner

    reps = load_all()
    runs = Path(runs) if runs is not None else Path(out) / "runs"
    # every reading's runs are checked before any runs: a bad reading stops here, not halfway
    base = reps[name].plan(quick)
    points = base + [p for rd in reps[name].readings for p in apply_sets(base, rd.sets, rd.only)]
    runner.input_digests(points, {p.scenario: api.read_scenario(p.scenario) for p in base})
    doc = run(name, out, quick, jobs, progress, runs=runs, tally=tally)
    for rd in reps[name].readings:
        alt = run(name, reading_out(out, rd.sets, rd.only), quick, jobs, progress, sets=rd.sets, only=rd.only,
                  runs=runs, tally=tally)
        fold(doc, rd, alt)
    write_claims(Path(out), doc)
    return doc


def fold(doc: Dict[str, Any], rd: Reading, alt: Dict[str, Any]) -> None:
    """Adds reading ``rd``'s result (``alt``, its claims document) to the ``explored`` list of
    each claim of ``doc`` it bears on."""
    by_id = {c["id"]: c for c in alt["claims"]}
    for c in doc["claims"]:
        if (rd.claims and c["id"] not in rd.claims) or (not rd.claims and c.get("scope") == "beyond"):
            continue  # a reading of the paper bears on dcfair's own checks only when it names them
        a = by_id.get(c["id"])
        if a is None or (a["dcfair"] == c["dcfair"] and a["holds"] == c["holds"]):
            continue  # missing, or the reading changed none of the runs this claim is made of
        c.setdefault("explored", []).append({"reading": rd.id, "what": rd.what, "command": alt["command"],
                                             "dcfair": a["dcfair"], "holds": a["holds"]})


def _write_results_csv(study: Study) -> None:
    import pandas as pd

    rows = []
    for rec in study.records:  # the runs that happened (not the points a peer could not run)
        row = dict(rec["point"].labels)
        row["seed"] = rec["point"].seed
        for k, v in rec["summary"]["metrics"].items():
            if isinstance(v, (int, float)) or v is None:
                row[k] = v
        row["events"] = rec["summary"].get("events")
        row["run_dir"] = os.path.relpath(rec["dir"], study.out)
        rows.append(row)
    atomic_write(study.out / "results.csv", pd.DataFrame(rows).to_csv(index=False))


def save_figure(fig, study: Study) -> None:
    """Saves a matplotlib figure as the reproduction's figure.png (atomically)."""
    tmp = temp_for(study.out / "figure.png")
    fig.savefig(tmp, dpi=110, bbox_inches="tight", format="png")
    os.replace(tmp, study.out / "figure.png")
    import matplotlib.pyplot as plt

    plt.close(fig)


def pyplot():
    """matplotlib.pyplot with a non-interactive backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
