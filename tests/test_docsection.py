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


def test_a_benchmark_writes_its_results_and_section_and_renders_them_again(tmp_path, capsys):
    import argparse

    import pytest

    doc = tmp_path / "doc.md"
    doc.write_text("<!-- b:begin -->\n<!-- b:end -->\n")
    ap = argparse.ArgumentParser()
    docsection.add_bench_args(ap, "b")
    render = lambda d: f"x = {d['x']}\n"  # noqa: E731
    results = tmp_path / "r.json"
    a = ap.parse_args(["--results", str(results)])
    assert docsection.bench_section(ap, a, tmp_path, doc, lambda: {"x": 3}, render) == 0
    assert doc.read_text() == "<!-- b:begin -->\nx = 3\n<!-- b:end -->\n" and '"x": 3' in results.read_text()
    # --render reads the results file and measures nothing; --no-doc leaves the page
    doc.write_text("<!-- b:begin -->\n<!-- b:end -->\n")
    a = ap.parse_args(["--results", str(results), "--render"])
    assert docsection.bench_section(ap, a, tmp_path, doc, lambda: pytest.fail("measured"), render) == 0
    assert "x = 3" in doc.read_text()
    a = ap.parse_args(["--section", "other", "--no-doc"])
    assert docsection.bench_section(ap, a, tmp_path, doc, lambda: {"x": 4}, render) == 0
    assert (tmp_path / "bench/results/other.json").exists() and "x = 4" not in doc.read_text()
    with pytest.raises(SystemExit):
        docsection.bench_section(ap, ap.parse_args(["--render", "--section", "none"]), tmp_path, doc, dict, render)
    assert "--render:" in capsys.readouterr().err
