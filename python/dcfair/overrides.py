"""`--set KEY=VALUE` overrides: syntax only (the engine checks keys and values).

Kept free of the extension so the command line can check its arguments before loading it.
"""

from __future__ import annotations

import json
import math
from typing import Iterable, List, Mapping, Tuple, Union

Override = Tuple[str, str]
Overrides = Union[Mapping[str, object], Iterable[Union[str, Tuple[str, object]]], None]


def split_assignment(item: str) -> Override:
    """``"queue.kind=hcf"`` -> ``("queue.kind", "hcf")``; ValueError unless KEY=VALUE."""
    key, sep, value = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ValueError(f"expected KEY=VALUE, got {item!r}")
    if any(c.isspace() for c in key):
        raise ValueError(f"the key in {item!r} contains white space")
    return key, value


def to_literal(value: object) -> str:
    """A Python value as the engine reads an override: a TOML literal, bare words are strings."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    return json.dumps(value)  # lists of numbers or strings are valid TOML arrays


def normalize(overrides: Overrides) -> List[Override]:
    """Accepts a mapping, ``KEY=VALUE`` strings or ``(key, value)`` pairs; returns str pairs."""
    if overrides is None:
        return []
    items = overrides.items() if isinstance(overrides, Mapping) else overrides
    out: List[Override] = []
    for item in items:
        if isinstance(item, str):
            out.append(split_assignment(item))
        else:
            key, value = item
            out.append((str(key), to_literal(value)))
    return out
