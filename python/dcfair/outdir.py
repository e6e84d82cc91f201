"""Output directories are checked before anything is computed.

Rules:

- :func:`check_out_dir` is called by ``dcfair run --out``, sweeps, reproductions and the demo
  before the first run: a path that is a file, a parent that cannot be created, a directory
  that cannot be written (permissions, a read-only file system) or a disk with less free space
  than the results will take is refused as :class:`dcfair.InvalidInput` naming the option and
  the path (exit status 2), so no computed result is lost at the write.
- ``dcfair run`` leaves the file system as it found it: a directory created to try a write is
  removed again (the run creates its output directory only once it succeeded). Sweeps and
  reproductions keep it (``keep``): they write there next, and two of them may start at once.
- :func:`estimate_bytes` is a rough size of one run's result files, from what the engine says
  it built (flows, measured ports, sampling); the free-space check asks for it plus a margin.
- Every file dcfair's Python side writes goes through :func:`atomic_write` (or a
  :func:`temp_for` name and :func:`os.replace`): a temporary name of this process, then a
  rename, so a reader never sees half a file and two processes writing the same file (two
  sweeps into one directory) never take each other's temporary.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Dict, Optional

#: Free space kept beyond the estimate, bytes.
MARGIN_BYTES = 1 << 20


def temp_for(path: "os.PathLike[str] | str") -> Path:
    """A temporary name beside ``path``, private to this process."""
    path = Path(path)
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def atomic_write(path: "os.PathLike[str] | str", data) -> None:
    """Writes ``data`` (str or bytes) to ``path`` through :func:`temp_for` and a rename."""
    tmp = temp_for(path)
    if isinstance(data, str):
        tmp.write_text(data)
    else:
        tmp.write_bytes(data)
    os.replace(tmp, path)


def estimate_bytes(info: Optional[Dict[str, Any]]) -> int:
    """Rough size of one run's result files from ``load_scenario(..., build=True)``'s answer:
    about 200 bytes per flows.csv row, 400 per ports.csv row, 40 per time-series sample."""
    if not info:
        return 64 << 10
    flows, ports = int(info.get("flows", 0)), int(info.get("measured_ports", 1))
    size = 4096 + 200 * flows + 400 * ports
    interval = info.get("sample_interval_s")
    if interval:
        samples = float(info.get("duration_s", 0.0)) / float(interval)
        size += int(40 * samples * (flows + ports))
    return size


def check_out_dir(path: "os.PathLike[str] | str", key: str, need_bytes: int = 0, keep: bool = False) -> None:
    """Refuses (``InvalidInput(key, ...)``) an output directory that cannot take the results;
    see the module rules. ``keep``: leave a directory it created (a sweep that writes there next,
    and may race another one into it)."""
    from dcfair.errors import InvalidInput

    p = Path(path)
    if p.exists() and not p.is_dir():
        raise InvalidInput(key, f"{p} is a file, not a directory")
    made = []  # directories created here, deepest last, removed again at the end
    probe = None
    try:
        missing = []
        q = p
        while not q.exists():
            missing.append(q)
            if q.parent == q:
                break
            q = q.parent
        if q.exists() and not q.is_dir():
            raise InvalidInput(key, f"cannot create {p}: {q} is a file")
        for d in reversed(missing):
            try:
                d.mkdir()
            except FileExistsError:
                continue  # made meanwhile by another process: fine
            except OSError as e:
                raise InvalidInput(key, f"cannot create {p}: {e.strerror or e}") from None
            if not keep:
                made.append(d)
        probe = p / f".dcfair-write-test-{os.getpid()}"
        try:
            with open(probe, "wb") as f:
                f.write(b"x")
        except OSError as e:
            probe = None
            raise InvalidInput(key, f"cannot write into {p}: {e.strerror or e}") from None
        free = shutil.disk_usage(p).free
        if need_bytes and free < need_bytes + MARGIN_BYTES:
            raise InvalidInput(key, f"{p} has {free / 2**20:.1f} MiB free; the results need about "
                               f"{(need_bytes + MARGIN_BYTES) / 2**20:.1f} MiB")
    finally:
        if probe is not None:
            try:
                probe.unlink()
            except OSError:
                pass
        for d in reversed(made):
            try:
                d.rmdir()
            except OSError:
                pass
