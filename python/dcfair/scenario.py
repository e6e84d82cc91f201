"""`Scenario`: a scenario file as a Python object, with dotted-key overrides.

    sc = dcfair.Scenario.load("scenarios/papers/hcf/longflows.toml")
    sc.name                                   # 'hcf-longflows'
    hcf = sc.set("queue.kind", "hcf")         # a new Scenario; sc is unchanged
    short = hcf.with_overrides({"sim.duration_s": 20, "measure.sample_interval_s": 0.01})
    short.validate()                          # raises dcfair.InvalidInput naming the key, or returns short
    short.get("queue.kind")                   # 'hcf'

Rules:

- A Scenario is immutable: the scenario's text exactly as read (``.text``), where it came from
  (``.path``, ``.origin`` for messages), and the overrides applied on top, in order
  (``.overrides``, ``(key, TOML literal)`` pairs, the same as ``dcfair run --set``).
  ``set``/``with_overrides`` return a new Scenario with more overrides; the text never changes.
- The engine is the only judge of keys and values: ``validate()`` asks it (the same check a run
  makes first). ``load`` validates the file as read; ``set`` does not validate, so several keys
  that only make sense together (a shorter run and a shorter window) can be set one by one.
- ``read_scenario`` reads a scenario file's text (``dcfair.read_scenario``, ``dcfair.api.read_scenario``);
  a file that cannot be read is ``InvalidInput`` naming it, as a bad key is.
- ``get`` reads a value back (file plus overrides) for display; it parses override values the
  way the engine does (TOML literals, bare words are strings) but checks nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, Iterable, Optional, Tuple

from dcfair.errors import InvalidInput
from dcfair.overrides import Override, Overrides, normalize

try:  # Python >= 3.11
    import tomllib as _toml
except ImportError:  # pragma: no cover - Python 3.9, 3.10
    import tomli as _toml  # type: ignore[no-redef]

_MISSING = object()


def read_scenario(path: "str | os.PathLike[str]") -> str:
    """The text of a scenario file; :class:`InvalidInput` naming the file if it can't be read."""
    name = os.fspath(path)
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InvalidInput(name, "no such file") from None
    except IsADirectoryError:
        raise InvalidInput(name, "is a directory, not a scenario file") from None
    except PermissionError:
        raise InvalidInput(name, "permission denied") from None
    except UnicodeDecodeError as e:
        raise InvalidInput(name, f"not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise InvalidInput(name, f"cannot read: {e.strerror or e}") from None


def parse_literal(value: str) -> Any:
    """An override value as the engine reads it: a TOML literal, else the bare string."""
    try:
        return _toml.loads(f"v = {value}")["v"]
    except Exception:  # noqa: BLE001 - anything that is not a literal is a string
        return value


class Scenario:
    """A scenario (TOML text) plus dotted-key overrides. See the module docstring."""

    __slots__ = ("text", "origin", "path", "overrides", "_info")

    def __init__(self, text: str, origin: str = "<string>", path: Optional[Path] = None,
                 overrides: Iterable[Override] = ()):
        self.text = text
        self.origin = origin
        self.path = path
        self.overrides: Tuple[Override, ...] = tuple(overrides)
        self._info: Optional[Dict[str, Any]] = None

    # ------------------------------------------------------------------ making one

    @classmethod
    def load(cls, path: "str | os.PathLike[str]", overrides: Overrides = None) -> "Scenario":
        """Reads and validates a scenario file; :class:`dcfair.InvalidInput` names what is wrong."""
        text = read_scenario(path)
        sc = cls(text, origin=os.fspath(path), path=Path(path))
        if overrides:
            sc = sc.with_overrides(overrides)
        return sc.validate()

    @classmethod
    def from_text(cls, text: str, origin: str = "<string>", overrides: Overrides = None) -> "Scenario":
        """A scenario from TOML text (validated); ``origin`` names it in messages."""
        sc = cls(text, origin=origin)
        if overrides:
            sc = sc.with_overrides(overrides)
        return sc.validate()

    def set(self, key: str, value: Any) -> "Scenario":
        """A new Scenario with ``key`` (dotted path, e.g. ``queue.kind``) set to ``value``."""
        return self.with_overrides([(key, value)])

    def with_overrides(self, overrides: Overrides) -> "Scenario":
        """A new Scenario with more overrides: a mapping, ``KEY=VALUE`` strings or pairs."""
        try:
            more = normalize(overrides)
        except ValueError as e:
            raise InvalidInput("--set", str(e)) from None
        return Scenario(self.text, self.origin, self.path, self.overrides + tuple(more))

    # ------------------------------------------------------------------ checking and reading

    def validate(self) -> "Scenario":
        """Asks the engine to check the scenario and to build its network and workloads as a
        run would (hosts that cannot reach each other, unknown port names: what a run refuses
        before its first event); returns ``self`` or raises ``InvalidInput``."""
        from dcfair import _engine

        self._info = dict(_engine.load_scenario(self.text, self.origin, list(self.overrides), True))
        return self

    def info(self) -> Dict[str, Any]:
        """The engine's view: ``{"name", "seed", "duration_s"}`` (validates; cached)."""
        if self._info is None:
            from dcfair import _engine

            self._info = dict(_engine.load_scenario(self.text, self.origin, list(self.overrides)))
        return self._info

    @property
    def name(self) -> str:
        return self.info()["name"]

    @property
    def seed(self) -> int:
        return self.info()["seed"]

    @property
    def duration_s(self) -> float:
        return self.info()["duration_s"]

    def get(self, key: str, default: Any = _MISSING) -> Any:
        """The value at dotted ``key`` after the overrides (KeyError, or ``default``, if unset)."""
        value: Any = _MISSING
        for k, v in reversed(self.overrides):
            if k == key:
                value = parse_literal(v)
                break
            if key.startswith(k + "."):  # a table replaced as a whole
                break
        if value is _MISSING:
            node: Any = _toml.loads(self.text)
            for part in key.split("."):
                if not isinstance(node, dict) or part not in node:
                    node = _MISSING
                    break
                node = node[part]
            value = node
        if value is _MISSING:
            if default is _MISSING:
                raise KeyError(key)
            return default
        return value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Scenario):
            return NotImplemented
        return (self.text, self.origin, self.overrides) == (other.text, other.origin, other.overrides)

    def __hash__(self) -> int:
        return hash((self.text, self.origin, self.overrides))

    def __repr__(self) -> str:
        where = os.fspath(self.path) if self.path is not None else self.origin
        ov = "".join(f", {k}={v}" for k, v in self.overrides)
        return f"Scenario({where!r}{ov})"
