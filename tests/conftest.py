"""Shared helpers for the Python tests.

Tests that need a real simulation are marked ``needs_engine`` and call ``skip_if_engine_stub``
(or use ``engine_or_skip``): they skip only while the engine answers with its stub error
"engine not built yet", and run (and must pass) as soon as the engine lands. Any other outcome
is asserted on, so none of them can pass silently.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LONGFLOWS = REPO / "scenarios" / "papers" / "hcf" / "longflows.toml"
ENGINE_STUB = "engine not built yet"


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


def skip_if_engine_stub(proc: subprocess.CompletedProcess) -> None:
    """Skip the test if (and only if) the command failed with the engine's stub error."""
    if proc.returncode == 1 and ENGINE_STUB in proc.stderr:
        pytest.skip(f"{ENGINE_STUB} (crates/sim is still the stub)")


@contextlib.contextmanager
def engine_or_skip():
    """Skip the test if (and only if) the block raises the engine's stub RuntimeError."""
    try:
        yield
    except RuntimeError as e:
        if ENGINE_STUB in str(e):
            pytest.skip(f"{ENGINE_STUB} (crates/sim is still the stub)")
        raise


def assert_clean_error(proc: subprocess.CompletedProcess, code: int, *needles: str) -> None:
    """Exit status `code`, one short message naming `needles`, no traceback or panic text."""
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "panicked" not in proc.stderr, proc.stderr
    for n in needles:
        assert n in proc.stderr, (n, proc.stderr)
