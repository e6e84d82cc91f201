"""dcfair: a lab for fairness in data-center switches.

A deterministic packet-level network simulator (Rust, ``dcfair._engine``) with a Python face:
scenarios, runs, sweeps, paper reproductions and reports. The everyday entry points::

    import dcfair
    sc = dcfair.Scenario.load("scenarios/papers/hcf/longflows.toml")     # parse + validate
    res = dcfair.run(sc.set("queue.kind", "hcf").set("sim.duration_s", 20), seed=2, out="out/hcf")
    res.summary["metrics"]["jain_index"], res.flows, res.ports, res.timeseries
    table = dcfair.sweep(sc, vary={"queue.kind": ["droptail", "hcf"]}, seeds=3, out="out/sw")
    dcfair.report("out/sw")                                              # out/sw/report.html

Invalid input raises :class:`dcfair.InvalidInput` (``.key``, ``.reason``). docs/api.md is the
reference. The names below are loaded lazily so that ``dcfair --help`` works even before the
extension is built.
"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("dcfair")
except _metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "__version__",
    "InvalidInput",
    "Result",
    "Scenario",
    "engine_version",
    "load_scenario",
    "parse_set",
    "read_scenario",
    "report",
    "run",
    "sweep",
]

_FROM_API = {"InvalidInput", "load_scenario", "parse_set", "read_scenario"}
#: name -> (module, attribute)
_LAZY = {
    "run": ("dcfair.api", "run_scenario"),
    "Scenario": ("dcfair.scenario", "Scenario"),
    "Result": ("dcfair.results", "Result"),
    "sweep": ("dcfair.sweeps", "sweep"),
    "report": ("dcfair.reports", "write_report"),
}


def __getattr__(name):
    if name in _FROM_API:
        from dcfair import api

        return getattr(api, name)
    if name in _LAZY:
        from importlib import import_module

        module, attr = _LAZY[name]
        return getattr(import_module(module), attr)
    if name == "engine_version":
        from dcfair._engine import version

        return version
    raise AttributeError(f"module 'dcfair' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
