"""Shared helpers for the Python tests: run the `dcfair` command, check clean errors."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
LONGFLOWS = REPO / "scenarios" / "papers" / "hcf" / "longflows.toml"
#: Two CUBIC flows through HCF on a small dumbbell: the testbed's smallest real run.
TESTBED_TWO_FLOWS = """
name = "tb-small"
seed = 7
[sim]
duration_s = 4.0
[measure]
window_s = 2.0
[topology]
kind = "dumbbell"
senders = 2
access_rate_mbps = 1000.0
access_delay_us = 25.0
bottleneck_rate_mbps = 100.0
bottleneck_delay_us = 25.0
[queue]
kind = "hcf"
limit_pkts = 40
[tcp]
cc = "cubic"
min_rto_ms = 5.0
[flows]
count = 2
start_max_s = 0.2
"""


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
        check_quotes(docs[name])
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


#: The papers' text (shared/papers/ beside the checkout), when this machine has it.
PAPERS = REPO.parent / "shared" / "papers"
PAPER_FILES = {"HCF": "000", "FairQ": "001", "ExpressPass": "002", "FQ-CoDel": "003", "TCP Outcast": "004"}


def _squash(text: str) -> str:
    """Text compared without white space, case, typographic signs or bracketed notes (the quotes
    mark what the extraction lost with ``[?]``)."""
    text = re.sub(r"\[[^\]]*\]", "", text).replace("\\times", "x")
    for a, b in (("×", "x"), ("’", "'"), ("“", '"'), ("”", '"'), ("—", "-"), ("–", "-"), ("ﬁ", "fi"), ("ﬂ", "fl")):
        text = text.replace(a, b)
    return re.sub(r"[\s\-_*$\\{}]+", "", text).lower()


#: Papers quoted from their abstracts, kept in docs/papers/abstracts.md (their texts are not in
#: ``../shared/papers``): the section of that page each one's quotes must be in.
ABSTRACTS = {"DCQCN": "## DCQCN", "HPCC": "## HPCC", "TIMELY": "## TIMELY", "NDP": "## NDP"}


def _abstract(paper: str):
    """The squashed section of docs/papers/abstracts.md for ``paper``, if it is one of them."""
    head = next((h for k, h in ABSTRACTS.items() if paper.startswith(k)), None)
    if head is None:
        return None
    page = (REPO / "docs/papers/abstracts.md").read_text()
    section = page.split(head, 1)[1].split("\n## ", 1)[0]
    return _squash(section)


def check_quotes(doc: dict) -> None:
    """Every claim of the paper carries the paper's words, and those words are in the paper
    (each part: parts are joined by "; ", and " ... " skips what the extraction put between
    them, a figure caption at a page break say), or in its abstract on docs/papers/abstracts.md
    for a paper whose text is not in the repository."""
    number = next((f for k, f in PAPER_FILES.items() if doc["paper"].startswith(k)), None)
    files = sorted(PAPERS.glob(f"{number}_*.txt")) if number and PAPERS.is_dir() else []
    text = _squash(files[0].read_text()) if files else _abstract(doc["paper"])
    for c in doc["claims"]:
        if c.get("scope", "paper") != "paper":
            continue
        assert c["quote"], (doc["reproduction"], c["id"])
        if text is not None:
            for part in re.split(r"; | \.\.\. ", c["quote"]):
                assert _squash(part) in text, (doc["reproduction"], c["id"], part)
