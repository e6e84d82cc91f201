"""Generated sections of the docs: the text between ``<!-- NAME:begin -->`` and
``<!-- NAME:end -->`` in a markdown file belongs to a script, which rewrites it in place.
Used by the comparison scripts under validation/ and the benchmarks under bench/."""

from __future__ import annotations

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
