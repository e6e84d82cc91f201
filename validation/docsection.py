"""Generated sections of the docs: the text between ``<!-- NAME:begin -->`` and
``<!-- NAME:end -->`` in a markdown file belongs to a script, which rewrites it in place.
Used by the comparison scripts under validation/ and the benchmarks under bench/."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def replace(path, name: str, text: str) -> None:
    """Replaces section ``name`` of the markdown file ``path`` with ``text``.
    Raises ValueError naming the markers when the file does not have them."""
    path = Path(path)
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    doc = path.read_text()
    if begin not in doc or end not in doc:
        raise ValueError(f"{path}: markers {begin} / {end} not found")
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    path.write_text(head + begin + "\n" + text.rstrip("\n") + "\n" + end + tail)


def write(path, name: str, text: str, prog: str) -> int:
    """:func:`replace` for a script's ``--doc`` option: 0 when written, else 2 (bad input) after
    one line on stderr naming the missing markers."""
    try:
        replace(path, name, text)
    except ValueError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    return 0


def add_bench_args(ap, section: str) -> None:
    """The options of a benchmark that writes ``bench/results/<section>.json`` and the section
    of the same name: ``--section``, ``--results``, ``--no-doc`` and ``--render``."""
    ap.add_argument("--section", default=section, help="the section of the docs page to write")
    ap.add_argument("--results", type=Path, help="where to write the JSON results (default bench/results/<section>.json)")
    ap.add_argument("--no-doc", action="store_true", help="do not write the docs page")
    ap.add_argument("--render", action="store_true",
                    help="run nothing: write the section from its results file (--results, default bench/results/<section>.json)")


def bench_section(ap, a, repo, doc_path, measure, render) -> int:
    """A benchmark's ending: ``measure()`` (or, with ``--render``, the results file) gives the
    results, written to their file; ``render(results)`` is printed and written to section
    ``a.section`` of ``doc_path`` unless ``--no-doc``."""
    results = a.results or Path(repo) / "bench" / "results" / f"{a.section}.json"
    if a.render:
        if not results.exists():
            ap.error(f"--render: {results} not found (a run with --section {a.section} writes it)")
        doc = json.loads(results.read_text())
    else:
        doc = measure()
        results.parent.mkdir(parents=True, exist_ok=True)
        results.write_text(json.dumps(doc, indent=1) + "\n")
    text = render(doc)
    print(text)
    if not a.no_doc:
        replace(doc_path, a.section, text)
    return 0
