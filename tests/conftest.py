"""Shared helpers for the Python tests: run the `dcfair` command, check clean errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
LONGFLOWS = REPO / "scenarios" / "papers" / "hcf" / "longflows.toml"


def dcfair(*args: str, cwd=None, timeout: float = 600, env=None) -> subprocess.CompletedProcess:
    """Runs `python -m dcfair ARGS` (the same code as the `dcfair` script) with pipes."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "dcfair", *map(str, args)],
        cwd=cwd or REPO,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def assert_clean_error(proc: subprocess.CompletedProcess, code: int, *needles: str) -> None:
    """Exit status `code`, one short message naming `needles`, no traceback or panic text."""
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "panicked" not in proc.stderr, proc.stderr
    for n in needles:
        assert n in proc.stderr, (n, proc.stderr)


def run_quick_reproductions(root: Path, names, timeout: float = 900) -> dict:
    """Runs ``dcfair reproduce NAME --quick`` for each name into ``root/NAME``, checks that it
    exits 0 and writes its four files, and returns each claims.json (with ``_out``: its dir)."""
    import json

    docs = {}
    for name in names:
        out = root / name
        p = dcfair("reproduce", name, "--quick", "--out", out, timeout=timeout)
        assert p.returncode == 0, (name, p.stdout[-2000:], p.stderr[-2000:])
        for f in ("figure.png", "claims.json", "results.csv", "table.csv"):
            assert (out / f).stat().st_size > 0, (name, f)
        docs[name] = json.loads((out / "claims.json").read_text())
        docs[name]["_out"] = out
    return docs


def claim(doc: dict, cid: str) -> dict:
    """The claim with id ``cid`` of a reproduction's claims.json."""
    return next(c for c in doc["claims"] if c["id"] == cid)


def table(doc: dict):
    """A reproduction's table (claims.json ``table``) as a DataFrame."""
    import pandas as pd

    return pd.DataFrame(doc["table"])


def assert_listed(names) -> None:
    """Every name appears in ``dcfair reproduce --list``."""
    p = dcfair("reproduce", "--list")
    assert p.returncode == 0, p.stderr
    for name in names:
        assert name in p.stdout, name
