"""The Python API: read, validate and run scenarios.

The command line is a thin layer over these functions, and so are sweeps and reproductions.

- :func:`run_scenario` (``dcfair.run``): a :class:`~dcfair.Scenario` (or a path) in, a
  :class:`~dcfair.Result` out, with the tables as DataFrames.
- :func:`run` (``dcfair.api.run``): the summary dict only, without the tables; the command
  line and the point runner use it.

Errors:

- :class:`InvalidInput` (a ``ValueError`` with ``.key`` and ``.reason``): the scenario file,
  an override or a scenario key is wrong. The command line exits with 2.
- ``OSError``: writing the results failed. ``RuntimeError``: an internal error. Exit 1.
- ``KeyboardInterrupt``: Ctrl-C during a run; nothing is written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, Union

from dcfair import _engine
from dcfair.errors import InvalidInput
from dcfair.overrides import Override, Overrides, normalize, split_assignment
from dcfair.scenario import Scenario, read_scenario

if TYPE_CHECKING:  # pragma: no cover
    from dcfair.results import Result

__all__ = ["InvalidInput", "load_scenario", "parse_set", "read_scenario", "run", "run_scenario"]

PathLike = Union[str, "os.PathLike[str]"]
#: ``progress(sim_time_s, duration_s, events, wall_time_s)``, called about every 0.2 s.
Progress = Callable[[float, float, int, float], Any]


def parse_set(items: Optional[List[str]]) -> List[Override]:
    """``["queue.kind=hcf", ...]`` -> ``[("queue.kind", "hcf"), ...]``; InvalidInput("--set", ...)."""
    out = []
    for item in items or []:
        try:
            out.append(split_assignment(item))
        except ValueError as e:
            raise InvalidInput("--set", str(e)) from None
    return out


def _source(path: Optional[PathLike], text: Optional[str], origin: Optional[str]):
    if (path is None) == (text is None):
        raise TypeError("give exactly one of path or text=")
    if text is None:
        return read_scenario(path), origin or os.fspath(path)
    return text, origin or "<string>"


def _overrides(overrides: Overrides) -> List[Override]:
    try:
        return normalize(overrides)
    except ValueError as e:
        raise InvalidInput("--set", str(e)) from None


def load_scenario(
    path: Optional[PathLike] = None,
    *,
    text: Optional[str] = None,
    origin: Optional[str] = None,
    overrides: Overrides = None,
    build: bool = False,
) -> Dict[str, Any]:
    """Parses and validates a scenario (a file, or ``text=``) without running it.

    ``overrides``: ``{"queue.kind": "hcf"}``, ``["queue.kind=hcf"]`` or ``[("queue.kind", "hcf")]``.
    With ``build=True`` the network and workloads are also built as a run would build them, so
    the errors a run gives before its first event (hosts that cannot reach each other, a
    measured port that does not exist) are raised here too.
    Returns at least ``{"name", "seed", "duration_s", "memory_bytes", "threads"}``,
    ``memory_bytes`` the engine's estimate of the memory a run needs (what its admission holds
    against the bound), ``threads`` the most threads a run uses on this machine (``sim.threads``,
    at most the cores).
    """
    text, origin = _source(path, text, origin)
    return _engine.load_scenario(text, origin, _overrides(overrides), build)


def run(
    path: Optional[PathLike] = None,
    *,
    text: Optional[str] = None,
    origin: Optional[str] = None,
    overrides: Overrides = None,
    seed: Optional[int] = None,
    out: Optional[PathLike] = None,
    progress: Optional[Progress] = None,
    command: Optional[str] = None,
) -> Dict[str, Any]:
    """Runs a scenario and returns its summary (the parsed ``summary.json``).

    ``seed`` replaces the scenario's seed. With ``out``, ``summary.json``, ``flows.csv`` and
    ``ports.csv`` are written there once the run has succeeded, then ``provenance.json``: the
    engine build, ``command`` (the command line that asked for the run; None from Python), the
    scenario's text and origin, the overrides and the seed. A failed or interrupted run leaves
    ``out`` as it was (and does not create it).
    """
    text, origin = _source(path, text, origin)
    _check_seed(seed)
    out_dir = None if out is None else os.fspath(out)
    ov = _overrides(overrides)
    summary = json.loads(_engine.run(text, origin, ov, seed, out_dir, progress))
    if out_dir is not None:
        from dcfair.outdir import atomic_write

        doc = {"engine_build": summary.get("engine_build"), "command": command, "scenario_origin": origin,
               "overrides": [list(o) for o in ov], "seed": seed, "scenario": text}
        atomic_write(Path(out_dir) / "provenance.json", (json.dumps(doc, indent=1) + "\n").encode("utf-8"))
    return summary


def queue_kind_summaries() -> List[Tuple[str, str]]:
    """Each queue discipline with its one-line summary, in registry order, as ``dcfair kinds``
    prints them."""
    return list(_engine.queue_kinds())


def queue_kinds() -> List[str]:
    """The queue disciplines (``queue.kind`` values) this engine knows, in registry order."""
    return [name for name, _ in queue_kind_summaries()]


def _check_seed(seed: Optional[int]) -> None:
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64):
        raise InvalidInput("seed", f"must be an integer in [0, 2^64), got {seed!r}")


def as_scenario(scenario: "Union[Scenario, PathLike]", overrides: Overrides = None) -> "Scenario":
    """A :class:`~dcfair.Scenario` from a Scenario or a path, with ``overrides`` added."""
    if isinstance(scenario, Scenario):
        sc = scenario
    elif isinstance(scenario, (str, os.PathLike)):
        sc = Scenario(read_scenario(scenario), origin=os.fspath(scenario), path=Path(scenario))
    else:
        raise TypeError(f"expected a dcfair.Scenario or a path, got {type(scenario).__name__}")
    return sc.with_overrides(overrides) if overrides else sc


def run_scenario(
    scenario: "Union[Scenario, PathLike, None]" = None,
    seed: Optional[int] = None,
    out: Optional[PathLike] = None,
    progress: Optional[Progress] = None,
    *,
    overrides: Overrides = None,
    text: Optional[str] = None,
    origin: Optional[str] = None,
) -> "Result":
    """Runs a scenario and returns its :class:`~dcfair.Result` (summary and DataFrames).

    ``scenario``: a :class:`~dcfair.Scenario` or a path (or ``text=`` TOML); ``overrides`` are
    added on top. ``seed`` replaces the scenario's seed. With ``out``, the result files are
    written there once the run has succeeded (as :func:`run` does). ``progress`` as in
    :func:`run`. This is ``dcfair.run``.
    """
    from dcfair.results import Result

    if text is not None:
        if scenario is not None:
            raise TypeError("give a scenario or text=, not both")
        sc = Scenario(text, origin or "<string>")
        sc = sc.with_overrides(overrides) if overrides else sc
    elif scenario is None:
        raise TypeError("run() needs a scenario (a dcfair.Scenario or a path) or text=")
    else:
        sc = as_scenario(scenario, overrides)
    _check_seed(seed)
    out_dir = None if out is None else os.fspath(out)
    summary, tables = _engine.run_tables(sc.text, sc.origin, list(sc.overrides), seed, out_dir, progress)
    return Result.from_engine(summary, tables, dir=out_dir, scenario=sc)
