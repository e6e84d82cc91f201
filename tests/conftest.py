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
