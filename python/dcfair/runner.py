"""Run many scenario points on the local cores, resumably: the engine behind sweeps,
reproductions and the demo.

Rules:

- A :class:`Point` is (scenario file, overrides, seed) plus free-form ``labels`` that say what
  it stands for in a study (``{"qdisc": "hcf", "buffer": 20}``). Its directory name is a
  readable slug plus a hash of everything that determines the run, so two different points
  never share a directory and the same point always maps to the same one.
- Each finished point leaves ``summary.json``, ``flows.csv``, ``ports.csv`` (written atomically
  by the engine) and ``point.json`` (written last, atomically). A point whose ``point.json`` is
  present is done and is skipped when the study runs again: a study that is killed loses no
  finished point and, run again, resumes.
- Failures come back as data (``ok=False`` with the message), never as exceptions from a worker,
  so one bad point does not hide the others. Invalid input stops the whole study before any
  point runs, because every point's scenario is validated first.
- Two backends, one contract: local worker processes (default, ``jobs`` of them), or a Ray
  cluster (``ray=ADDRESS``; ``"local"`` starts a private Ray instance on this machine, and a Ray
  already initialised in this process is used as it is). On Ray, a worker sends the result
  files back to this process, which writes them under ``out_dir``: the cluster needs no shared
  file system, only dcfair installed on every node.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

Override = Tuple[str, str]


@dataclass(frozen=True)
class Point:
    scenario: str
    overrides: Tuple[Override, ...] = ()
    seed: int = 1
    labels: Tuple[Tuple[str, Any], ...] = ()

    @staticmethod
    def make(scenario, overrides: Iterable[Override] = (), seed: int = 1, **labels) -> "Point":
        ov = tuple((str(k), _literal(v)) for k, v in overrides)
        return Point(str(scenario), ov, int(seed), tuple(sorted(labels.items())))

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


def available_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


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


def _write_point(d: Path, files: Dict[str, bytes], meta: Dict[str, Any]) -> None:
    """Writes a point's files into ``d`` (each atomically, summary.json last but for
    point.json, which marks the point done)."""
    d.mkdir(parents=True, exist_ok=True)
    names = sorted(files, key=lambda n: (n == "summary.json", n))
    for name in names:
        tmp = d / f".{name}.tmp"
        tmp.write_bytes(files[name])
        os.replace(tmp, d / name)
    from dcfair.results import OPTIONAL_FILES

    for name in OPTIONAL_FILES:  # a directory never mixes two runs
        if name not in files and (d / name).exists():
            (d / name).unlink()
    _atomic_write(d / "point.json", json.dumps(meta, indent=1, sort_keys=True) + "\n")


def _meta(p: "Point") -> Dict[str, Any]:
    return {"scenario": p.scenario, "overrides": [list(o) for o in p.overrides], "seed": p.seed,
            "labels": dict(p.labels)}


def _run_point(scenario: str, text: str, overrides: List[Override], seed: int, out: str, meta: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """In a worker: one run into `out`, then point.json. Failures come back as data."""
    from dcfair import api

    t0 = time.perf_counter()
    try:
        summary = api.run(text=text, origin=scenario, overrides=overrides, seed=seed, out=out)
    except api.InvalidInput as e:
        return {"ok": False, "exit": 2, "message": f"invalid input: {e}"}
    except KeyboardInterrupt:
        return {"ok": False, "exit": 130, "message": "interrupted"}
    except Exception as e:  # noqa: BLE001 - reported, not hidden
        return {"ok": False, "exit": 1, "message": f"{type(e).__name__}: {e}"}
    if meta is not None:
        meta = dict(meta, wall_s=time.perf_counter() - t0)
        _atomic_write(Path(out) / "point.json", json.dumps(meta, indent=1, sort_keys=True) + "\n")
    return {"ok": True, "summary": summary, "wall_s": time.perf_counter() - t0}


def run_points(
    points: Sequence[Point],
    out_dir: os.PathLike,
    jobs: Optional[int] = None,
    on_done: Optional[Callable[[int, int, Point, Dict[str, Any]], None]] = None,
    ray: Optional[str] = None,
) -> List[Dict[str, Any]]:
    """Runs every point not already done under ``out_dir``; returns one record per point, in
    order: ``{"point", "dir", "ok", "cached", "summary" | "message"}``.

    ``on_done(done, total, point, record)`` is called as points finish (for progress).
    ``ray``: run on Ray instead of local processes: a cluster address (``"auto"``,
    ``"ray://host:10001"``, ``"host:6379"``) or ``"local"`` (a private instance with ``jobs``
    CPUs); ``jobs`` then bounds the points in flight."""
    from dcfair import api

    out_dir = Path(out_dir)
    texts: Dict[str, str] = {}
    for p in points:
        if p.scenario not in texts:
            texts[p.scenario] = api.read_scenario(p.scenario)
    # Validate every distinct (scenario, overrides) before anything runs, network built (what
    # `dcfair validate` checks): bad input stops here, before any point's directory is made.
    seen = set()
    for p in points:
        if (p.scenario, p.overrides) not in seen:
            seen.add((p.scenario, p.overrides))
            api.load_scenario(text=texts[p.scenario], origin=p.scenario, overrides=list(p.overrides), build=True)

    records: List[Optional[Dict[str, Any]]] = [None] * len(points)
    todo = []
    for i, p in enumerate(points):
        d = out_dir / p.slug(texts[p.scenario])
        if (d / "point.json").exists() and (d / "summary.json").exists():
            summary = json.loads((d / "summary.json").read_text())
            records[i] = {"point": p, "dir": d, "ok": True, "cached": True, "summary": summary}
        else:
            todo.append((i, p, d))
    total, done = len(points), len(points) - len(todo)
    if on_done:
        for i, r in enumerate(records):
            if r is not None:
                on_done(done, total, points[i], r)
    if not todo:
        return records  # type: ignore[return-value]
    out_dir.mkdir(parents=True, exist_ok=True)
    if ray is not None:
        _run_on_ray(ray, jobs, todo, texts, records, done, total, on_done)
        return records  # type: ignore[return-value]
    workers = min(jobs or available_cores(), len(todo))
    with ProcessPoolExecutor(max_workers=workers) as ex:
        futures = {}
        for i, p, d in todo:
            futures[ex.submit(_run_point, p.scenario, texts[p.scenario], list(p.overrides), p.seed, str(d), _meta(p))] = (i, p, d)
        try:
            for f in as_completed(futures):
                i, p, d = futures[f]
                r = f.result()
                rec = {"point": p, "dir": d, "cached": False, **r}
                records[i] = rec
                done += 1
                if on_done:
                    on_done(done, total, p, rec)
        except KeyboardInterrupt:
            for f in futures:
                f.cancel()
            raise
    return records  # type: ignore[return-value]


def check_ray(address: str) -> None:
    """Fails fast, as :class:`dcfair.InvalidInput` naming ``--ray``, when Ray is not installed or
    nothing listens at a cluster address (``ray.init`` would otherwise retry for minutes).
    ``local`` and ``auto`` are left to Ray; a Ray already initialised here is used as it is."""
    import socket

    from dcfair.api import InvalidInput

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


def _run_on_ray(address: str, jobs: Optional[int], todo, texts: Dict[str, str], records: list, done: int,
                total: int, on_done) -> None:
    """The Ray backend of :func:`run_points` (same records, same files, same resumption)."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no phoning home from a simulator
    check_ray(address)
    import ray
    import logging

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
        pending: Dict[Any, Tuple[int, Point, Path]] = {}

        def submit() -> None:
            while queue and len(pending) < limit:
                i, p, d = queue.pop(0)
                pending[remote.remote(p.scenario, texts[p.scenario], list(p.overrides), p.seed)] = (i, p, d)

        submit()
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    i, p, d = pending.pop(ref)
                    try:
                        r = ray.get(ref)
                    except Exception as e:  # noqa: BLE001 - a lost worker or node: reported as data
                        r = {"ok": False, "exit": 1, "message": f"ray: {type(e).__name__}: {e}"}
                    files = r.pop("files", None)
                    if r.get("ok") and files is not None:
                        _write_point(d, files, dict(_meta(p), wall_s=r.get("wall_s")))
                    rec = {"point": p, "dir": d, "cached": False, **r}
                    records[i] = rec
                    done += 1
                    if on_done:
                        on_done(done, total, p, rec)
                submit()
        except KeyboardInterrupt:
            for ref in pending:
                ray.cancel(ref, force=True)
            raise
    finally:
        if started:
            ray.shutdown()
