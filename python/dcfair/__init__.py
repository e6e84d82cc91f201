"""dcfair: a lab for fairness in data-center switches.

A deterministic packet-level network simulator (Rust, ``dcfair._engine``) with a Python face:
scenarios, runs, sweeps, paper reproductions and reports. The everyday entry points::

    import dcfair
    info = dcfair.load_scenario("scenarios/papers/hcf/longflows.toml")   # parse + validate
    summary = dcfair.run("scenarios/papers/hcf/longflows.toml",
                         overrides={"queue.kind": "hcf", "sim.duration_s": 20}, out="out/hcf")

Invalid input raises :class:`dcfair.InvalidInput` (``.key``, ``.reason``). The names below
are loaded lazily so that ``dcfair --help`` works even before the extension is built.
"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("dcfair")
except _metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "__version__",
    "InvalidInput",
    "engine_version",
    "load_scenario",
    "parse_set",
    "read_scenario",
    "run",
]

_FROM_API = {"InvalidInput", "load_scenario", "parse_set", "read_scenario", "run"}


def __getattr__(name):
    if name in _FROM_API:
        from dcfair import api

        return getattr(api, name)
    if name == "engine_version":
        from dcfair._engine import version

        return version
    raise AttributeError(f"module 'dcfair' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
