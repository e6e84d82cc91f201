"""Thin wrappers over iproute2, ethtool and sysctl for the testbed.

Rules:

- Every command is an argument list (no shell), run with a timeout; a failure raises
  :class:`TestbedError` with the command and its stderr, never a bare ``CalledProcessError``.
- Many small changes go through ``ip -batch`` (one process per namespace, not one per line).
- Namespaces are found by listing ``ip netns`` and matching a name prefix: the only state the
  kernel keeps for us, so it survives a crash of this process.
- A batch in the root namespace (``netns add``, ``link add ... netns``) dies with this process
  (``procs.child_of_this_process``), as the switch and the traffic do: after a SIGKILL it would
  go on creating a dead run's namespaces and links while the next run removes them, and
  :func:`delete_all` cannot find it. Commands inside a namespace need not: ``delete_all`` ends
  every process there (tying each would double a testbed's setup time, a ``fork`` instead of a
  ``vfork`` per command).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from typing import Iterable, List, Optional, Sequence

from dcfair.procs import child_of_this_process


class TestbedError(OSError):
    """A system command failed, or the machine cannot run the testbed."""

    __test__ = False  # not a pytest class


def run(argv: Sequence[str], ns: Optional[str] = None, check: bool = True, input: Optional[str] = None,
        timeout: float = 60.0, tied: bool = False) -> subprocess.CompletedProcess:
    """Runs ``argv`` (in namespace ``ns`` with ``ip netns exec``; ``tied``: dying with this
    process); its output as text."""
    full = (["ip", "netns", "exec", ns] if ns else []) + list(argv)
    try:
        p = subprocess.run(full, input=input, capture_output=True, text=True, timeout=timeout,
                           preexec_fn=child_of_this_process() if tied else None)
    except FileNotFoundError:
        raise TestbedError(f"{argv[0]} not found (Debian package: {PACKAGES.get(argv[0], argv[0])})") from None
    except subprocess.TimeoutExpired:
        raise TestbedError(f"timed out after {timeout} s: {' '.join(full)}") from None
    if check and p.returncode != 0:
        raise TestbedError(f"`{' '.join(full)}` failed ({p.returncode}): {p.stderr.strip()[:400]}")
    return p


def ip_batch(lines: Iterable[str], ns: Optional[str] = None, force: bool = False) -> None:
    """Runs iproute2 commands (``link set ...``, one per line) in one ``ip -batch`` process."""
    text = "".join(line + "\n" for line in lines)
    if not text:
        return
    argv = ["ip"] + (["-n", ns] if ns else []) + (["-force"] if force else []) + ["-batch", "-"]
    run(argv, input=text, tied=ns is None)


def namespaces() -> List[str]:
    """Every named network namespace (``ip netns list``)."""
    p = run(["ip", "netns", "list"])
    return [line.split()[0] for line in p.stdout.splitlines() if line.strip()]


def with_prefix(prefix: str) -> List[str]:
    return [n for n in namespaces() if n.startswith(prefix)]


def pids(ns: str) -> List[int]:
    p = run(["ip", "netns", "pids", ns], check=False)
    return [int(x) for x in p.stdout.split() if x.isdigit()]


def pids_in(names: Iterable[str]) -> List[int]:
    """The processes inside any of these named namespaces: one pass over /proc, comparing each
    process's network namespace with the files under /run/netns (``ip netns pids`` per name
    would be one process per namespace)."""
    inodes = set()
    for n in names:
        try:
            st = os.stat(f"/run/netns/{n}")
            inodes.add((st.st_dev, st.st_ino))
        except OSError:
            pass
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            st = os.stat(f"/proc/{entry}/ns/net")
        except OSError:
            continue
        if (st.st_ino in {i for _, i in inodes}) and int(entry) != os.getpid():
            found.append(int(entry))
    return found


def delete_all(names: List[str], grace_s: float = 2.0) -> None:
    """Ends the processes inside these namespaces (TERM, then KILL after ``grace_s``) and
    deletes them. A namespace outlives ``ip netns del`` while a process is inside, and so do
    its links."""
    inside = pids_in(names)
    for pid in inside:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while inside and time.monotonic() < deadline:
        inside = [p for p in inside if _alive(p)]
        if inside:
            time.sleep(0.05)
    for pid in inside:
        _signal(pid, signal.SIGKILL)
    ip_batch((f"netns del {n}" for n in names), force=True) if names else None


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is not in the way; it counts as gone.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


#: Commands the testbed runs, and the Debian packages that have them.
PACKAGES = {"ip": "iproute2", "tc": "iproute2", "ethtool": "ethtool", "iperf3": "iperf3", "sysctl": "procps"}


def missing_tools(tools: Iterable[str] = ("ip", "tc", "ethtool", "iperf3")) -> List[str]:
    return [t for t in tools if shutil.which(t) is None]


def why_not_available(tools: Iterable[str] = ("ip", "tc", "ethtool", "iperf3")) -> Optional[str]:
    """None when this machine can run the testbed, else the reason (for a skip or an error)."""
    if os.geteuid() != 0:
        return "the testbed needs root (network namespaces, veth pairs)"
    gone = missing_tools(tools)
    if gone:
        pkgs = sorted({PACKAGES.get(t, t) for t in gone})
        return f"missing commands {', '.join(gone)} (Debian packages: {' '.join(pkgs)})"
    probe = "dcfprobe-" + str(os.getpid())
    p = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if p.returncode != 0:
        return f"cannot create a network namespace: {p.stderr.strip()}"
    try:
        q = subprocess.run(["ip", "-n", probe, "link", "add", "name", "probe0", "type", "veth", "peer", "name", "probe1"],
                           capture_output=True, text=True)
        if q.returncode != 0:
            return f"cannot create a veth pair: {q.stderr.strip()}"
    finally:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def available_cc() -> List[str]:
    """The TCP congestion controls the kernel offers."""
    try:
        with open("/proc/sys/net/ipv4/tcp_available_congestion_control") as f:
            return f.read().split()
    except OSError:
        return []
