"""Generated doc sections (validation/docsection.py): a script rewrites only its own section, and
a `--doc` file without the section's markers is bad input (status 2, the markers named)."""

from __future__ import annotations

import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "validation"))
import docsection  # noqa: E402


def test_write_replaces_only_its_section(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("before\n<!-- s:begin -->\nold\n<!-- s:end -->\nafter\n")
    assert docsection.write(doc, "s", "new\n", "prog") == 0
    assert doc.read_text() == "before\n<!-- s:begin -->\nnew\n<!-- s:end -->\nafter\n"


def test_write_without_the_markers_is_bad_input_and_leaves_the_file(tmp_path, capsys):
    doc = tmp_path / "doc.md"
    doc.write_text("no markers here\n")
    assert docsection.write(doc, "s", "new", "prog") == 2
    assert doc.read_text() == "no markers here\n"
    assert capsys.readouterr().err.strip() == f"prog: {doc}: markers <!-- s:begin --> / <!-- s:end --> not found"
