"""Run many scenario points on the local cores, resumably and safely: the engine behind sweeps,
reproductions and the demo.

Rules:

- A :class:`Point` is (scenario file, overrides, seed) plus free-form ``labels`` that say what
  it stands for in a study (``{"qdisc": "hcf", "buffer": 20}``). Its directory name is a
  readable slug plus a hash of the scenario's text, the overrides and the seed, so two
  different points never share a directory and the same point always maps to the same one.
- Each finished point leaves its result files (``summary.json``, ``flows.csv``, ``ports.csv``
  and the optional tables, written atomically by the engine) and ``point.json``, written last,
  atomically. ``point.json`` records the **cache key** (a hash of the point, the engine build
  and the contents of every input file the scenario reads, such as CDF files), the engine build,
  those inputs' SHA-256, and the SHA-256 of every result file.
- A point is **reused** only if its ``point.json`` parses, its cache key is the current one and
  every result file is present with its recorded checksum. Otherwise it runs again:
  - **stale**: the cache key differs (another engine build, a changed input file, or a
    ``point.json`` written before cache keys existed): the point is rerun in place;
  - **damaged**: ``point.json`` unreadable, a result file missing or altered, or result files
    without a ``point.json`` (a run cut short): the directory is moved aside, never deleted, to
    ``<runs>/.damaged/<name>[.N]``, and the point is rerun.
  The study's final line counts the points run, reused, rerun as stale and repaired
  (:class:`Tally`).
- **One writer per point.** A point is claimed with an exclusive lock (``fcntl.flock`` on
  ``<runs>/.locks/<name>.lock``) before it is checked and held until its files are in place.
  Two studies sharing a directory therefore run each point once: each claims only points no one
  holds, and waits at the end for the points the other one holds, then reuses them. A lock dies
  with its process (even under SIGKILL), so a crashed study never blocks the next one.
- **No orphans.** Worker processes ask the kernel to kill them when their parent dies
  (``PR_SET_PDEATHSIG``), and exit at start if the parent is already gone.
- Failures come back as data (``ok=False`` with the message), never as exceptions from a
  worker, so one bad point does not hide the others; a worker that dies (a crash) fails its
  point and the rest go on in a fresh pool. Invalid input stops the whole study before any
  point runs, because every point's scenario is validated first.
- Fault injection, for the tests only: ``DCFAIR_FAULT_RAISE=TEXT`` makes every point whose
  directory name contains TEXT fail with an exception in its worker, and the engine's
  ``DCFAIR_FAULT_STOP_AFTER_FILES=N`` ends a worker after the N-th result file of its run.
- **Parallelism bounded by memory.** Local workers are at most ``jobs`` (default: every core),
  and at most as many as fit in memory: workers x the largest memory estimate of the points to
  run (the engine's admission estimate, ``memory_bytes`` of :func:`dcfair.api.load_scenario`)
  stays within the engine's admission bound (:func:`memory_bound`: ``DCFAIR_MAX_MEMORY_MB``
  when set, ``--max-memory``; else the least of the memory available, what is left under
  ``ulimit -v`` and under the cgroup's ``memory.max``); never below one worker, and no cap where
  no bound is known (:func:`memory_workers`). And at most as many as leave every run its
  threads: a point with ``sim.threads`` above one uses that many cores, so workers x the most
  threads a point uses stays within the cores (never below one worker). When a cap lowers the
  parallelism, one line says so on the ``dcfair.runner`` logger (a warning: on stderr unless
  logging is configured otherwise).
- Two backends, one contract: local worker processes (default, ``jobs`` of them), or a Ray
  cluster (``ray=ADDRESS``; ``"local"`` starts a private Ray instance on this machine, and a Ray
  already initialised in this process is used as it is). On Ray, a worker sends the result
  files back to this process, which writes them under ``out_dir``: the cluster needs no shared
  file system, only dcfair installed on every node.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from dcfair.outdir import atomic_write

Override = Tuple[str, str]
log = logging.getLogger(__name__)

#: What ``point.json`` says of its format; entries without it are stale.
POINT_FORMAT = 2
DAMAGED_DIR = ".damaged"
LOCKS_DIR = ".locks"


@dataclass(frozen=True)
class Point:
    scenario: str
    overrides: Tuple[Override, ...] = ()
    seed: int = 1
    labels: Tuple[Tuple[str, Any], ...] = ()
    #: Where the scenario's relative paths (``poisson.cdf_file``) resolve from, when the text is
    #: read from a copy (a sweep's ``scenario.toml``); empty: the scenario file itself.
    origin: str = ""

    @staticmethod
    def make(scenario, overrides: Iterable[Override] = (), seed: int = 1, *, origin: str = "", **labels) -> "Point":
        ov = tuple((str(k), _literal(v)) for k, v in overrides)
        return Point(str(scenario), ov, int(seed), tuple(sorted(labels.items())), str(origin))

    @property
    def resolve_from(self) -> str:
        return self.origin or self.scenario

    def key(self, text: str) -> str:
        """Hash of what determines the run: the scenario's text, the overrides, the seed."""
        h = hashlib.sha256()
        h.update(text.encode())
        h.update(json.dumps([list(o) for o in self.overrides]).encode())
        h.update(str(self.seed).encode())
        return h.hexdigest()[:12]

    def slug(self, text: str) -> str:
        parts = [f"{k}-{v}" for k, v in self.labels] + [f"seed{self.seed}"]
        safe = "_".join(parts).replace("/", "-").replace(" ", "")
        return f"{safe[:80]}_{self.key(text)}"


def _literal(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def engine_build() -> str:
    """The exact engine build of this installation (``summary.json``'s ``engine_build``)."""
    from dcfair._engine import build

    return build()


def sha256_file(path: os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def cache_key(identity: str, build: str, inputs: Dict[str, str]) -> str:
    """The key a cached point must match: the point's identity (:meth:`Point.key`), the engine
    build and the SHA-256 of each input file, in the engine's order (their contents, not their
    paths: a moved checkout keeps its cache)."""
    h = hashlib.sha256()
    h.update(json.dumps([identity, build, list(inputs.values())]).encode())
    return h.hexdigest()[:16]


@dataclass
class Tally:
    """How a study's points were obtained; :meth:`line` is the study's final line."""

    run: int = 0
    reused: int = 0
    stale: int = 0
    repaired: int = 0
    failed: int = 0
    #: Points a peer simulator cannot run (``dcfair reproduce --peer``).
    unsupported: int = 0
    #: Where damaged entries were moved (for the message).
    moved: List[str] = field(default_factory=list)

    def line(self) -> str:
        parts = [f"{self.run} run", f"{self.reused} reused"]
        if self.stale:
            parts.append(f"{self.stale} rerun as stale (another engine build or changed input files)")
        if self.repaired:
            parts.append(f"{self.repaired} repaired (damaged entries moved to {DAMAGED_DIR}/)")
        if self.unsupported:
            parts.append(f"{self.unsupported} not run (the peer cannot run their setting)")
        if self.failed:
            parts.append(f"{self.failed} failed")
        total = self.run + self.reused + self.unsupported + self.failed
        return f"{total} points: " + ", ".join(parts)


def available_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def memory_bound() -> Optional[Tuple[int, str]]:
    """The memory all local workers may use together, bytes, and a phrase saying which bound it
    is: the engine's admission bound (``--max-memory``, else the least of what the machine has
    available, what is left under ``ulimit -v`` and under the cgroup's ``memory.max``); ``None``
    where none is known."""
    from dcfair import _engine

    return _engine.memory_bound()


def memory_workers(workers: int, largest_bytes: int, bound_bytes: Optional[int]) -> int:
    """``workers`` lowered so that ``workers x largest_bytes <= bound_bytes``, at least 1 (a
    point that fits alone runs alone); unchanged without a bound or an estimate."""
    if not bound_bytes or largest_bytes <= 0:
        return workers
    return max(1, min(workers, bound_bytes // largest_bytes))


def _size(b: int) -> str:
    return f"{b / 2**30:.1f} GiB" if b >= 2**30 else f"{-(-b // 2**20)} MiB"


# --- the cache: checking an entry, moving a damaged one aside -----------------------------------

def _result_files(d: Path) -> List[str]:
    """Result files present in a point directory (not point.json, not temporaries)."""
    return sorted(f.name for f in d.iterdir() if f.is_file() and not f.name.startswith(".") and f.name != "point.json")


def _files_damage(d: Path, files: Any) -> Optional[str]:
    """Why the result files ``files`` (name -> SHA-256, from ``point.json``) of ``d`` cannot be
    trusted, or None when every one is present with its checksum."""
    if not isinstance(files, dict) or "summary.json" not in files:
        return "point.json lists no result files"
    for name, digest in files.items():
        f = d / name
        if not f.is_file():
            return f"{name} is missing"
        if sha256_file(f) != digest:
            return f"{name} does not match its checksum"
    return None


def _read_meta(d: Path) -> Optional[Dict[str, Any]]:
    """``d/point.json`` as a dict, or None if it is missing or not a JSON object."""
    try:
        meta = json.loads((d / "point.json").read_text())
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def check_entry(d: Path, key: str) -> Tuple[str, Any]:
    """The state of point directory ``d`` for cache key ``key``: ``("missing", None)``,
    ``("ok", summary)``, ``("stale", reason)`` or ``("damaged", reason)``."""
    if not d.exists():
        return "missing", None
    if not (d / "point.json").exists():
        files = _result_files(d) if d.is_dir() else ["(not a directory)"]
        return ("damaged", "result files without point.json (a run cut short)") if files else ("missing", None)
    meta = _read_meta(d)
    if meta is None:
        return "damaged", "point.json is not valid JSON"
    if meta.get("format") != POINT_FORMAT:
        return "stale", "old format"
    if meta.get("cache_key") != key:
        return "stale", f"built by {meta.get('engine_build', 'an older dcfair')}"
    why = _files_damage(d, meta.get("files"))
    if why:
        return "damaged", why
    try:
        return "ok", json.loads((d / "summary.json").read_text())
    except ValueError:
        return "damaged", "summary.json is not valid JSON"


def damage(d: Path) -> Optional[str]:
    """Why the finished point in ``d`` cannot be trusted (a result file missing, unreadable or
    not matching the checksum its ``point.json`` recorded), or None when it is whole. Unlike
    :func:`check_entry` it asks nothing about the engine build: for readers of finished results
    (``dcfair report``)."""
    meta = _read_meta(d)
    if meta is None:
        return "point.json is missing or unreadable"
    return _files_damage(d, meta.get("files"))


def move_aside(d: Path, runs: Path) -> Path:
    """Moves a damaged point directory to ``<runs>/.damaged/<name>`` (``.1``, ``.2``, ... if
    taken); returns where it went."""
    dest_root = runs / DAMAGED_DIR
    dest_root.mkdir(parents=True, exist_ok=True)
    dest, n = dest_root / d.name, 0
    while dest.exists():
        n += 1
        dest = dest_root / f"{d.name}.{n}"
    os.replace(d, dest)
    return dest


class PointLock:
    """An exclusive, non-blocking claim on one point directory (``<runs>/.locks/<name>.lock``,
    ``fcntl.flock``): released by :meth:`release` or by the death of the process."""

    def __init__(self, runs: Path, name: str):
        self.path = runs / LOCKS_DIR / f"{name}.lock"
        self.fd: Optional[int] = None

    def acquire(self) -> bool:
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self.fd = fd
        return True

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing drops the flock
            self.fd = None


# --- the runs --------------------------------------------------------------------------------------

def _meta(p: Point, build: str, key: str, inputs: Dict[str, str]) -> Dict[str, Any]:
    meta = {"format": POINT_FORMAT, "scenario": p.scenario, "overrides": [list(o) for o in p.overrides], "seed": p.seed,
            "labels": dict(p.labels), "engine_build": build, "cache_key": key, "inputs": inputs}
    if p.origin:
        meta["origin"] = p.origin
    return meta


def _finish_point(d: Path, meta: Dict[str, Any], wall_s: float) -> None:
    """point.json, written last: the entry's checksums make it a reusable cache entry."""
    files = {name: sha256_file(d / name) for name in _result_files(d)}
    atomic_write(d / "point.json", json.dumps(dict(meta, wall_s=wall_s, files=files), indent=1, sort_keys=True) + "\n")


def _worker_init(parent: int) -> None:
    """Pool worker start-up: die with the parent (Linux ``PR_SET_PDEATHSIG``), and not start at
    all if the parent is already gone."""
    import signal

    from dcfair.procs import die_with_parent

    if die_with_parent(parent):
        os._exit(1)
    # Ctrl-C is the parent's to handle: it cancels the study and stops the pool.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_point(scenario: str, text: str, overrides: List[Override], seed: int, out: str, meta: Optional[Dict[str, Any]],
               peer: Optional[Tuple[str, str, bool, Tuple[Tuple[str, Any], ...]]] = None) -> Dict[str, Any]:
    """In a worker: one run into `out`, then point.json. Failures come back as data. ``peer``:
    ``(peer, reproduction, quick, labels)`` to run the point in a peer simulator
    (:func:`dcfair.peers.run_job`) instead of the engine."""
    from dcfair import api

    t0 = time.perf_counter()
    try:
        fault = os.environ.get("DCFAIR_FAULT_RAISE")
        if fault and fault in os.path.basename(out):  # fault injection (tests/test_faults.py)
            raise RuntimeError(f"fault injected in {os.path.basename(out)} (DCFAIR_FAULT_RAISE)")
        if peer is None:
            summary = api.run(text=text, origin=scenario, overrides=overrides, seed=seed, out=out)
        else:
            from dcfair import peers

            summary = peers.run_job(peer, scenario, text, overrides, seed, out)
        if meta is not None:
            _finish_point(Path(out), meta, time.perf_counter() - t0)
    except api.InvalidInput as e:
        return {"ok": False, "exit": 2, "message": f"invalid input: {e}"}
    except KeyboardInterrupt:
        return {"ok": False, "exit": 130, "message": "interrupted"}
    except Exception as e:  # noqa: BLE001 - reported, not hidden
        from dcfair.peers import Unsupported

        if isinstance(e, Unsupported):
            return {"ok": False, "exit": 0, "unsupported": str(e), "message": f"not run in the peer: {e}"}
        return {"ok": False, "exit": 1, "message": f"{type(e).__name__}: {e}"}
    return {"ok": True, "summary": summary, "wall_s": time.perf_counter() - t0}


def _run_point_files(scenario: str, text: str, overrides: List[Override], seed: int) -> Dict[str, Any]:
    """On a Ray worker: one run into a private temporary directory; the files come back as
    data (``files``: name -> bytes) for the driver to write. Failures come back as data."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="dcfair-point-") as tmp:
        out = os.path.join(tmp, "out")
        r = _run_point(scenario, text, overrides, seed, out, None)
        if r["ok"]:
            r["files"] = {f.name: f.read_bytes() for f in sorted(Path(out).iterdir()) if not f.name.startswith(".")}
        return r


def _write_point(d: Path, files: Dict[str, bytes], meta: Dict[str, Any], wall_s: float) -> None:
    """Writes a point's files into ``d`` (each atomically, summary.json last of the results,
    then point.json, which marks the point done)."""
    d.mkdir(parents=True, exist_ok=True)
    for name in sorted(files, key=lambda n: (n == "summary.json", n)):
        atomic_write(d / name, files[name])
    from dcfair.results import OPTIONAL_FILES

    for name in OPTIONAL_FILES:  # a directory never mixes two runs
        if name not in files and (d / name).exists():
            (d / name).unlink()
    _finish_point(d, meta, wall_s)


PointKey = Tuple[str, Tuple[Override, ...]]


def check_points(points: Sequence[Point], texts: Dict[str, str]) -> Tuple[Dict[PointKey, Dict[str, str]], Dict[PointKey, Tuple[int, int]]]:
    """Validates every distinct (scenario, overrides) with its network built (what ``dcfair
    validate`` checks: bad input stops here, before anything runs) and returns, for each, the
    SHA-256 of every input file it reads (CDF files), by path, and what a run of it needs: the
    engine's estimate of its memory, bytes, and the threads it uses here."""
    from dcfair import api

    out: Dict[PointKey, Dict[str, str]] = {}
    memory: Dict[PointKey, Tuple[int, int]] = {}
    digests: Dict[str, str] = {}
    for p in points:
        k = (p.scenario, p.overrides)
        if k in out:
            continue
        info = api.load_scenario(text=texts[p.scenario], origin=p.resolve_from, overrides=list(p.overrides), build=True)
        ins = {}
        for path in info.get("inputs", []):
            path = os.path.abspath(path)
            if path not in digests:
                digests[path] = sha256_file(path)
            ins[path] = digests[path]
        out[k] = ins
        memory[k] = (int(info.get("memory_bytes") or 0), int(info.get("threads") or 1))
    return out, memory


def input_digests(points: Sequence[Point], texts: Dict[str, str]) -> Dict[PointKey, Dict[str, str]]:
    """The input digests of :func:`check_points` (which validates every point)."""
    return check_points(points, texts)[0]


@dataclass
class _Job:
    index: int
    point: Point
    dir: Path
    #: What point.json will say (:func:`_meta`).
    meta: Dict[str, Any]
    lock: PointLock
    #: ``stale`` / ``repaired``: why the point runs again, for its record.
    extra: Dict[str, Any]


def run_points(
    points: Sequence[Point],
    out_dir: os.PathLike,
    jobs: Optional[int] = None,
    on_done: Optional[Callable[[int, int, Point, Dict[str, Any]], None]] = None,
    ray: Optional[str] = None,
    tally: Optional[Tally] = None,
    peer: Optional[Tuple[str, str, bool]] = None,
) -> List[Dict[str, Any]]:
    """Runs every point not already done under ``out_dir``; returns one record per point, in
    order: ``{"point", "dir", "ok", "cached", "summary" | "message"}`` (``"stale"`` or
    ``"repaired"`` set when a point was rerun for that reason).

    ``peer``: ``(peer, reproduction, quick)`` runs every point in that peer simulator instead
    of the engine (:mod:`dcfair.peers`): the same cache rules, with the peer's identity
    (:func:`dcfair.peers.peer_build`) in place of the engine build; a point the peer cannot run
    comes back with ``ok=False`` and ``unsupported`` (the reason), and is not cached.

    ``on_done(done, total, point, record)`` is called as points finish (for progress).
    ``ray``: run on Ray instead of local processes: a cluster address (``"auto"``,
    ``"ray://host:10001"``, ``"host:6379"``) or ``"local"`` (a private instance with ``jobs``
    CPUs); ``jobs`` then bounds the points in flight. ``tally`` (a :class:`Tally`) is filled
    with the counts of the module rules."""
    from dcfair import api

    out_dir = Path(out_dir)
    tally = tally if tally is not None else Tally()
    texts: Dict[str, str] = {}
    for p in points:
        if p.scenario not in texts:
            texts[p.scenario] = api.read_scenario(p.scenario)
    inputs, needs = check_points(points, texts)
    if peer is not None:
        from dcfair import peers

        if ray is not None:
            raise ValueError("peer simulators run on local cores only, not on Ray")
        build = peers.peer_build(peer[0], peer[1])
    else:
        build = engine_build()

    records: List[Optional[Dict[str, Any]]] = [None] * len(points)
    total, done = len(points), 0
    out_dir.mkdir(parents=True, exist_ok=True)

    def finish(i: int, rec: Dict[str, Any]) -> None:
        nonlocal done
        records[i] = rec
        done += 1
        if rec.get("cached"):
            tally.reused += 1
        elif rec.get("ok"):
            tally.run += 1
        elif rec.get("unsupported"):
            tally.unsupported += 1
        else:
            tally.failed += 1
        if on_done:
            on_done(done, total, points[i], rec)

    def claim(i: int, p: Point) -> Optional[_Job]:
        """Locks point i and checks its entry: finishes it if reusable, else returns the job
        (lock held); ``None`` if reused. Raises ``BlockingIOError`` if another process holds it."""
        text = texts[p.scenario]
        d = out_dir / p.slug(text)
        key = cache_key(p.key(text), build, inputs[(p.scenario, p.overrides)])
        lock = PointLock(out_dir, d.name)
        if not lock.acquire():
            raise BlockingIOError(d.name)
        state, info = check_entry(d, key)
        if state == "ok":
            lock.release()
            finish(i, {"point": p, "dir": d, "ok": True, "cached": True, "summary": info})
            return None
        extra: Dict[str, Any] = {}
        if state == "stale":
            tally.stale += 1
            extra["stale"] = info
            (d / "point.json").unlink()
        elif state == "damaged":
            tally.repaired += 1
            moved = move_aside(d, out_dir)
            tally.moved.append(str(moved))
            extra["repaired"] = info
        return _Job(i, p, d, _meta(p, build, key, inputs[(p.scenario, p.overrides)]), lock, extra)

    pending = list(enumerate(points))
    if ray is not None:
        check_ray(ray)
    while pending:
        waiting = []
        todo: List[_Job] = []
        for i, p in pending:
            try:
                job = claim(i, p)
            except BlockingIOError:
                waiting.append((i, p))
                continue
            if job is not None:
                todo.append(job)
        if todo:
            try:
                if ray is not None:
                    _run_on_ray(ray, jobs, todo, texts, finish)
                else:
                    wants = [needs[(j.point.scenario, j.point.overrides)] for j in todo]
                    largest, threads = max(m for m, _ in wants), max(t for _, t in wants)
                    _run_local(jobs, todo, texts, finish, largest, peer, threads)
            finally:
                for j in todo:
                    j.lock.release()
        if waiting and not todo:
            time.sleep(0.2)  # points another process holds: wait for it, then reuse
        pending = waiting
    return records  # type: ignore[return-value]


def _record(job: _Job, r: Dict[str, Any]) -> Dict[str, Any]:
    return {"point": job.point, "dir": job.dir, "cached": False, **job.extra, **r}


def _run_local(jobs: Optional[int], todo: List[_Job], texts: Dict[str, str], finish, largest: int = 0,
               peer: Optional[Tuple[str, str, bool]] = None, threads: int = 1) -> None:
    """Runs ``todo`` on a pool of local worker processes, at most ``jobs`` at a time, at most
    as many as memory holds at ``largest`` bytes each, and at most as many as the cores hold at
    ``threads`` each (module rules). A worker that dies fails the point it ran; the others go on
    in a new pool."""
    queue = list(todo)
    workers = min(jobs or available_cores(), len(queue))
    cores = available_cores()
    if threads > 1 and workers * threads > cores:
        capped = max(1, cores // threads)
        log.warning(f"dcfair: {capped} parallel run(s) instead of {workers}: a run uses up to {threads} threads "
                    f"(sim.threads), on {cores} cores")
        workers = capped
    bound = memory_bound()
    capped = memory_workers(workers, largest, bound[0] if bound else None)
    if capped < workers and bound is not None:
        log.warning(f"dcfair: {capped} parallel run(s) instead of {workers}: a run may need about {_size(largest)} "
                    f"of memory, against the {_size(bound[0])} {bound[1]}")
        workers = capped
    while queue:
        ex = ProcessPoolExecutor(max_workers=workers, initializer=_worker_init, initargs=(os.getpid(),))
        broken = False
        futures: Dict[Any, _Job] = {}
        try:
            def submit() -> None:
                while queue and len(futures) < 2 * workers:
                    j = queue.pop(0)
                    who = None if peer is None else (*peer, j.point.labels)
                    futures[ex.submit(_run_point, j.point.resolve_from, texts[j.point.scenario], list(j.point.overrides),
                                      j.point.seed, str(j.dir), j.meta, who)] = j

            submit()
            while futures:
                ready, _ = wait(list(futures), return_when=FIRST_COMPLETED)
                for f in ready:
                    j = futures.pop(f)
                    try:
                        r = f.result()
                    except BrokenProcessPool:
                        broken = True
                        r = {"ok": False, "exit": 1, "message": "the worker process died (crashed or was killed)"}
                    finish(j.index, _record(j, r))
                if broken:
                    # The pool is gone: the points it still held go back to the queue.
                    for f, j in futures.items():
                        queue.insert(0, j)
                    futures.clear()
                    break
                submit()
        except KeyboardInterrupt:
            broken = True  # do not wait for the running points: the study stops
            raise
        finally:
            ex.shutdown(wait=not broken, cancel_futures=True)


def check_ray(address: str) -> None:
    """Fails fast, as :class:`dcfair.InvalidInput` naming ``--ray``, when Ray is not installed or
    nothing listens at a cluster address (``ray.init`` would otherwise retry for minutes).
    ``local`` and ``auto`` are left to Ray; a Ray already initialised here is used as it is."""
    import socket

    from dcfair.errors import InvalidInput

    try:
        import ray
    except ImportError:
        raise InvalidInput("--ray", "Ray is not installed: pip install 'dcfair[ray]' (make install does)") from None
    if address in ("local", "auto") or ray.is_initialized():
        return
    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise InvalidInput("--ray", f"expected local, auto, HOST:PORT or ray://HOST:PORT, got {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as e:
        raise InvalidInput("--ray", f"nothing answers at {hostport} ({e.strerror or e}): start the cluster "
                           "first (ray start --head) or use --ray local") from None


def _run_on_ray(address: str, jobs: Optional[int], todo: List[_Job], texts: Dict[str, str], finish) -> None:
    """The Ray backend of :func:`run_points` (same records, same files, same resumption)."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no phoning home from a simulator
    import logging

    import ray

    started = False
    if not ray.is_initialized():
        # Ray's own INFO/WARNING lines would break the rule that a sweep is quiet in a pipe.
        quiet = {"log_to_driver": False, "logging_level": logging.ERROR}
        if address == "local":
            ray.init(num_cpus=jobs or available_cores(), include_dashboard=False,
                     object_store_memory=128 * 1024 * 1024, **quiet)
        else:
            ray.init(address=address, **quiet)
        started = True
    try:
        remote = ray.remote(num_cpus=1, max_retries=1)(_run_point_files)
        limit = jobs if (jobs and address != "local") else len(todo)
        queue = list(todo)
        pending: Dict[Any, _Job] = {}

        def submit() -> None:
            while queue and len(pending) < limit:
                j = queue.pop(0)
                p = j.point
                pending[remote.remote(p.resolve_from, texts[p.scenario], list(p.overrides), p.seed)] = j

        submit()
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    j = pending.pop(ref)
                    try:
                        r = ray.get(ref)
                    except Exception as e:  # noqa: BLE001 - a lost worker or node: reported as data
                        r = {"ok": False, "exit": 1, "message": f"ray: {type(e).__name__}: {e}"}
                    files = r.pop("files", None)
                    if r.get("ok") and files is not None:
                        _write_point(j.dir, files, j.meta, r.get("wall_s") or 0.0)
                    finish(j.index, _record(j, r))
                submit()
        except KeyboardInterrupt:
            for ref in pending:
                ray.cancel(ref, force=True)
            raise
    finally:
        if started:
            ray.shutdown()
