"""The ns-2.35 peer: Debian's ``ns`` (package ns2) for what stock ns-2 has, and the project's
own build of ns-2.35 with its modules (``validation/ns2/build.py``: HCF and FairQ, each written
from its paper) for the rest.

Rules:

- Stock mechanisms (DropTail, RED, SFQ, DRR, TCP Reno/NewReno/SACK) run in Debian's binary;
  a runner asks for the module build (:func:`ns_modules`) only for a point that needs a module,
  so ``make peers`` without the module build still gives every stock second opinion.
- The module build is ``out/peers/ns2/bin/ns`` (``make peers`` builds it from Debian's ns-2.35
  source tarball), or the binary ``DCFAIR_NS2_MODULES`` names. Missing, it is
  :class:`~dcfair.peers.PeerMissing` for that point.
- An ns run gets its options on the command line, writes what it measures into its job's
  directory, and must exit 0; its stderr's last lines make the error otherwise
  (:func:`run_ns`).
- The runners of the papers are in their own modules (``ns2_hcf.py``, ``ns2_fairq.py``,
  ``ns2_outcast.py``); they register with :data:`PEER`.
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path
from typing import Optional, Sequence

from dcfair.peers import REPO, PeerMissing, Peer, register, run_checked, which

#: The module build ``make peers`` makes (``validation/ns2/build.py``).
MODULE_BUILD = REPO / "out" / "peers" / "ns2" / "bin" / "ns"
INSTALL = "make peers (Debian's ns2; the module build: python3 validation/ns2/build.py)"


@functools.lru_cache(maxsize=None)
def _debian_version() -> str:
    try:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "ns2"], capture_output=True, text=True, timeout=30)
        if r.returncode == 0 and r.stdout.strip():
            return r.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return "unknown"


def _missing() -> Optional[str]:
    return None if which("ns") else "the ns command of ns-2.35 is not installed (Debian package ns2)"


def ns_stock() -> str:
    """Debian's ns-2.35 binary."""
    path = which("ns")
    if path is None:
        raise PeerMissing("ns2", "the ns command of ns-2.35 is not installed (Debian package ns2)", INSTALL)
    return path


def ns_modules() -> str:
    """The project's ns-2.35 build with its modules (HCF, FairQ)."""
    env = os.environ.get("DCFAIR_NS2_MODULES")
    path = Path(env) if env else MODULE_BUILD
    if not (path.is_file() and os.access(path, os.X_OK)):
        where = f"DCFAIR_NS2_MODULES={env}" if env else str(path.relative_to(REPO))
        raise PeerMissing("ns2", f"the module build of ns-2.35 (HCF, FairQ) is missing ({where})",
                          "make peers (or python3 validation/ns2/build.py)")
    return str(path)


def run_ns(binary: str, script: Path, args: Sequence[str], cwd: Path, timeout_s: float = 6 * 3600) -> str:
    """Runs ``binary script args...`` in ``cwd``; returns its stdout. A failure raises
    RuntimeError with the end of its stderr."""
    return run_checked([binary, script, *args], cwd, "ns-2", timeout_s=timeout_s).stdout


PEER = register(Peer(
    name="ns2",
    title=f"ns-2.35 (Debian ns2 {_debian_version()}; HCF and FairQ: the project's module build)",
    install=INSTALL,
    missing=_missing,
    version=lambda: f"2.35-debian{_debian_version()}",
))
