"""Second opinions: a reproduction's runs in another simulator, a *peer*
(``dcfair reproduce NAME --peer PEER``; ``docs/validation.md``, "Second opinions").

Rules:

- A peer is a module of this package that registers a :class:`Peer`: its name (``ns2``,
  ``ns3``, ``ns2-xpass``, ``htsim``), a title naming its version, how to tell that it is
  installed (``missing()``: ``None``, or what is missing) and the command that installs it, the
  peer-side files its runs depend on (Tcl scripts, C++ programs, module sources), and one
  *runner* per group of reproductions (:meth:`Peer.reproduces`). Several modules may add
  runners to one peer (``ns2_hcf.py`` and ``ns2_fairq.py`` to ``ns2``).
- A runner takes a :class:`Job` (one point of the reproduction's ``plan``: scenario, overrides,
  seed, labels, and the engine's resolved view of it, :meth:`Job.resolved`) and runs it in the
  peer. It returns the metrics the reproduction's ``analyze`` reads, under the names and with
  the definitions of ``docs/metrics.md`` (:mod:`dcfair.peers.measure` holds the shared ones),
  computed from the peer's own output, and writes into ``job.out`` the tables that ``analyze``
  reads (``flows.csv``, ``drop_runs.csv``, ...). A point whose setting the peer cannot run
  raises :class:`Unsupported` with the reason in one line; nothing is invented for it.
- Every peer run is seeded from the point's seed (the peer's own RNG seeding), never from the
  clock, so the same point gives the same files.
- :func:`run_job` writes ``summary.json`` (the peer, its build, the point, ``metrics``) after
  the runner's files; :func:`dcfair.runner.run_points` with ``peer=`` caches the points as it
  does the engine's, keyed by :func:`peer_build` in place of the engine build (the peer's
  version and the SHA-256 of its files and of its adapter module).
- A peer too slow to run every seed here declares ``seeds``: it runs the first ones only.
- A peer that is not installed is invalid input (:class:`PeerMissing`, exit 2) naming the
  command that installs it. A reproduction without a runner in the peer is invalid input too.
- Peer-side files live in the checkout, under ``validation/<peer>/``: second opinions run from a
  checkout of dcfair (``make peers`` installs or builds the peers), not from a wheel.
- A peer of one's own is a module that registers like the built-in ones, named in the
  environment variable ``DCFAIR_PEER_MODULES`` (comma-separated module names, importable from
  ``PYTHONPATH``): :func:`load_all` imports them after the built-in ones.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

from dcfair.errors import InvalidInput

#: The checkout this package runs from (peer-side files are under ``validation/``).
REPO = Path(__file__).resolve().parents[3]
#: The peer modules, imported by :func:`load_all`.
_MODULES = ("dcfair.peers.ns2", "dcfair.peers.ns2_hcf", "dcfair.peers.ns2_fairq", "dcfair.peers.ns2_outcast",
            "dcfair.peers.ns2xpass", "dcfair.peers.ns3", "dcfair.peers.htsim")


#: Reproductions no peer here can run, and why (said in docs/claims.md in place of a second
#: opinion).
NO_PEER: Dict[str, str] = {
    "afd-fairness": "neither ns-2.35 nor ns-3.37 has AFD, and no public simulator code of the AFD paper is known",
    "fqcodel-fig4": "both claims compare with pFabric, which neither ns-3.37 nor ns-2.35 has",
}


class Unsupported(Exception):
    """A point whose setting the peer cannot run; ``str(e)`` says why, in one line."""


class PeerMissing(InvalidInput):
    """The peer (or a build of it a runner needs) is not installed: exit 2, with the command
    that installs it."""

    def __init__(self, peer: str, what: str, install: str):
        super().__init__("--peer", f"{peer}: {what}; install it with: {install}")


@dataclass(frozen=True)
class Job:
    """One point of a reproduction, to run in a peer."""

    reproduction: str
    #: The scenario file (its relative paths resolve from it).
    scenario: str
    text: str
    #: ``--set``-style ``(dotted.key, TOML literal)`` pairs, applied in order.
    overrides: Tuple[Tuple[str, str], ...]
    seed: int
    labels: Dict[str, Any]
    #: The point's directory (absolute).
    out: Path
    quick: bool = False
    _cache: Dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def resolved(self) -> Dict[str, Any]:
        """The engine's view of the point (``dcfair._engine.plan``): ``scenario`` (the document
        with every default filled in: the active discipline's table, the host queue, the TCP
        of every group), ``nodes``, ``ports`` (name, node, peer, ``rate_bps``, ``delay_us``,
        ``measured``, ``qdisc``), ``flows`` (id, group, src, dst, ``start_s``, ``size_bytes``,
        ``path`` and ``ack_path`` as port names), ``udp_sources`` and ``sources`` (the background
        sources), ``incast`` (each server's share of a request, or null), ``seed``."""
        if "plan" not in self._cache:
            from dcfair import _engine

            self._cache["plan"] = json.loads(_engine.plan(self.text, self.scenario, list(self.overrides), self.seed))
        return self._cache["plan"]

    def get(self, key: str, default: Any = None) -> Any:
        """The resolved scenario's value at dotted ``key`` (``default`` when absent or null)."""
        node: Any = self.resolved()["scenario"]
        for part in key.split("."):
            if not isinstance(node, dict) or node.get(part) is None:
                return default
            node = node[part]
        return node


Runner = Callable[[Job], Dict[str, Any]]


@dataclass
class Peer:
    """A peer simulator and its runners (module rules)."""

    name: str
    #: What it is, with its version (``"ns-2.35 (Debian ns2 2.35+dfsg-5)"``).
    title: str
    #: The command that installs or builds it (said when it is missing).
    install: str
    #: ``None`` when installed, else what is missing (one line).
    missing: Callable[[], Optional[str]]
    #: The string that identifies the installed build (a version, a binary's digest).
    version: Callable[[], str]
    #: Peer-side files every run depends on, relative to the checkout.
    files: Sequence[str] = ()
    #: Run only the first ``seeds`` seeds of each reproduction (a peer too slow for all of
    #: them here; ``None``: every seed). Its claims then rest on fewer seeds, which their ``n``
    #: says.
    seeds: Optional[int] = None
    #: reproduction -> (runner, its module, the files its runs depend on besides ``files``).
    runners: Dict[str, Tuple[Runner, str, Tuple[str, ...]]] = field(default_factory=dict)

    def reproduces(self, *names: str, files: Sequence[str] = ()) -> Callable[[Runner], Runner]:
        """Decorator: the runner of reproductions ``names`` in this peer; ``files`` (relative
        to the checkout: its scripts, module sources) enter the cache key of its runs."""

        def deco(fn: Runner) -> Runner:
            for n in names:
                if n in self.runners:
                    raise ValueError(f"peer {self.name}: {n} has two runners")
                self.runners[n] = (fn, fn.__module__, tuple(files))
            return fn

        return deco

    def check(self) -> None:
        """Raises :class:`PeerMissing` unless the peer can run here."""
        if not (REPO / "validation").is_dir():
            raise PeerMissing(self.name, "second opinions run from a checkout of dcfair (their scripts are under "
                                         "validation/)", "git clone the project, then make peers")
        why = self.missing()
        if why:
            raise PeerMissing(self.name, why, self.install)


REGISTRY: Dict[str, Peer] = {}


def register(p: Peer) -> Peer:
    REGISTRY[p.name] = p
    return p


def load_all() -> Dict[str, Peer]:
    from importlib import import_module

    extra = [m.strip() for m in os.environ.get("DCFAIR_PEER_MODULES", "").split(",") if m.strip()]
    for m in (*_MODULES, *extra):
        import_module(m)
    return REGISTRY


def get(name: str) -> Peer:
    peers = load_all()
    if name not in peers:
        raise InvalidInput("--peer", f"no peer named {name!r}; the peers are: {', '.join(sorted(peers))}")
    return peers[name]


def runner(peer: str, reproduction: str) -> Tuple[Peer, Runner]:
    """The peer and its runner of ``reproduction``; invalid input when it has none."""
    p = get(peer)
    if reproduction not in p.runners:
        raise InvalidInput("--peer", f"{peer} has no runner for {reproduction}; it runs: "
                                     f"{', '.join(sorted(p.runners)) or 'nothing'}")
    return p, p.runners[reproduction][0]


def peer_build(peer: str, reproduction: str) -> str:
    """The identity of what runs ``reproduction`` in ``peer``, for the cache key and the
    results: ``<peer>:<version>:<digest>``, the digest over the peer's files, the runner's
    module and the shared measures (``measure.py``)."""
    import sys

    p, _ = runner(peer, reproduction)
    _, module, own = p.runners[reproduction]
    files = sorted({REPO / f for f in (*p.files, *own)}
                   | {Path(sys.modules[module].__file__), Path(__file__).with_name("measure.py")})
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode())
        if f.is_file():
            with open(f, "rb") as fh:
                h.update(hashlib.file_digest(fh, "sha256").hexdigest().encode())
        else:
            h.update(b"missing")
    return f"{peer}:{p.version()}:{h.hexdigest()[:12]}"


def run_job(who: Tuple[str, str, bool, Tuple[Tuple[str, Any], ...]], scenario: str, text: str,
            overrides: Sequence[Tuple[str, str]], seed: int, out: str) -> Dict[str, Any]:
    """In a worker: runs one point in a peer (``who``: peer, reproduction, quick, labels) into
    ``out`` and writes its ``summary.json`` last; returns the summary."""
    from dcfair.outdir import atomic_write

    peer, reproduction, quick, labels = who
    p, fn = runner(peer, reproduction)
    p.check()
    d = Path(out).resolve()  # absolute: runners start peers in it and name files under it
    d.mkdir(parents=True, exist_ok=True)
    job = Job(reproduction, scenario, text, tuple((str(k), str(v)) for k, v in overrides), int(seed), dict(labels), d,
              bool(quick))
    try:
        metrics = fn(job)
    except Unsupported:
        if not any(d.iterdir()):
            d.rmdir()  # nothing ran: leave no empty point directory behind
        raise
    summary = {
        "scenario": job.resolved()["scenario"]["name"],
        "seed": job.seed,
        # as the engine's summary.json: analyses read them (mptcp.py's halvings)
        "sim_time_s": job.get("sim.duration_s"),
        "window_s": job.get("measure.window_s", job.get("sim.duration_s")),
        "peer": p.name,
        "peer_title": p.title,
        "peer_build": peer_build(peer, reproduction),
        "reproduction": reproduction,
        "labels": job.labels,
        "metrics": metrics,
    }
    atomic_write(d / "summary.json", json.dumps(summary, indent=1, sort_keys=True, default=_json_default) + "\n")
    return summary


def _json_default(x: Any) -> Any:
    """numpy scalars (and anything with ``item()``) as plain numbers."""
    if hasattr(x, "item"):
        return x.item()
    raise TypeError(f"{type(x).__name__} is not JSON serializable")


def run_checked(cmd: Sequence[Any], cwd: Path, what: str, log: Optional[Path] = None,
                timeout_s: float = 24 * 3600) -> "subprocess.CompletedProcess[str]":
    """Runs a peer's program ``cmd`` in ``cwd`` and returns the finished process (stdout and
    stderr captured as text). ``log``: the end of both is kept there first. A non-zero exit
    raises RuntimeError naming ``what``, the exit status, the command and the last lines of its
    stderr (or stdout)."""
    import subprocess

    cmd = [str(c) for c in cmd]
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout_s)
    if log is not None:
        log.write_text(r.stdout[-200000:] + r.stderr[-100000:])
    if r.returncode != 0:
        tail = "\n".join((r.stderr or r.stdout).strip().splitlines()[-8:])
        raise RuntimeError(f"{what} exited with {r.returncode}: {' '.join(cmd)}\n{tail}")
    return r


def which(program: str) -> Optional[str]:
    """The path of ``program`` on PATH, or None."""
    from shutil import which as _which

    return _which(program)
