"""The README's commands and Python work word for word (in a scratch directory that has the
repository's scenarios/, so nothing is written into the source tree)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

README = (REPO / "README.md").read_text()
BLOCKS = re.findall(r"```(\w*)\n(.*?)```", README, flags=re.S)


def _commands():
    """Every `dcfair ...` command of the README's shell blocks, continuation lines joined,
    with the output line that follows it in the block (if any)."""
    out = []
    for lang, body in BLOCKS:
        if lang:
            continue
        lines = body.replace("\\\n", " ").splitlines()
        for i, line in enumerate(lines):
            if line.startswith("dcfair "):
                nxt = lines[i + 1] if i + 1 < len(lines) and not lines[i + 1].startswith(("dcfair ", "make ")) else None
                out.append((line, nxt))
    return out


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    d = tmp_path_factory.mktemp("readme")
    (d / "scenarios").symlink_to(REPO / "scenarios")
    (d / "examples").symlink_to(REPO / "examples")
    return d


def _env():
    bindir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", "")}


def test_readme_has_the_quick_start():
    assert any("make demo\nmake test" in body for _, body in BLOCKS)
    assert len(_commands()) >= 6


@pytest.mark.parametrize("cmd, expected", _commands(), ids=[c for c, _ in _commands()])
def test_readme_command(scratch, cmd, expected):
    p = subprocess.run(cmd, shell=True, cwd=scratch, env=_env(), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, (cmd, p.stderr)
    if expected:
        assert p.stdout.strip() == expected.strip()


def test_readme_python(scratch):
    code = [body for lang, body in BLOCKS if lang == "python"]
    assert code
    for body in code:
        p = subprocess.run([sys.executable, "-c", body], cwd=scratch, capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr
    assert (scratch / "out" / "sfq" / "flows.csv").exists() and (scratch / "out" / "py-sweep" / "sweep.parquet").exists()
