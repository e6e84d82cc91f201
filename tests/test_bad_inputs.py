"""The bad-input catalogue (tests/data/bad_inputs/cases.toml): every case through `dcfair run`,
`dcfair validate` and the Python API, each expected to refuse it before anything runs or is
written, with exit status 2 (``dcfair.InvalidInput`` in Python) and one line naming the key.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dcfair import api, cli

try:
    import tomllib
except ImportError:  # pragma: no cover
    import tomli as tomllib

HERE = Path(__file__).resolve().parent / "data" / "bad_inputs"
CASES = tomllib.loads((HERE / "cases.toml").read_text())["case"]
VIAS = ("run", "validate", "api")


def test_the_catalogue_is_large_and_every_case_names_its_key():
    assert len(CASES) >= 40
    assert len({c["name"] for c in CASES}) == len(CASES), "case names are unique"
    for c in CASES:
        assert c["key"] and set(c.get("via", VIAS)) <= set(VIAS), c


def _params():
    for c in CASES:
        for via in c.get("via", VIAS):
            yield pytest.param(c, via, id=f"{via}: {c['name']}")


def _argv(case: dict, via: str, out: Path) -> list:
    argv = [via, case.get("file", "base.toml")]
    for s in case.get("set", []):
        argv += ["--set", s]
    if via == "run":
        argv += case.get("args") or ["--out", str(out)]
        argv.append("--quiet")
    else:
        argv += case.get("args", [])
    return argv


@pytest.mark.parametrize("case, via", list(_params()))
def test_a_bad_input_is_refused_naming_its_key(case, via, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(HERE)
    out = tmp_path / "out"
    if via == "api":
        from dcfair.overrides import split_assignment

        with pytest.raises(api.InvalidInput) as e:
            api.load_scenario(case.get("file", "base.toml"), overrides=[split_assignment(s) for s in case.get("set", [])],
                              build=True)
        assert case["key"] in f"{e.value.key}: {e.value.reason}", (case, str(e.value))
        return
    with pytest.raises(SystemExit) if case.get("args") and via != "run" or case["key"] == "--set" else _no_exit():
        code = cli.main(_argv(case, via, out))
        assert code == 2, (case, code, capsys.readouterr())
    err = capsys.readouterr().err
    assert case["key"] in err, (case, err)
    assert "Traceback" not in err and "panicked" not in err, err
    assert len([line for line in err.splitlines() if line.startswith("dcfair")]) <= 1, err
    assert not out.exists(), "nothing is written for bad input"


class _no_exit:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_docs_list_every_case():
    doc = (HERE.parents[2] / "docs" / "cli.md").read_text()
    section = doc[doc.index("## Bad input"):]
    section = section[:section.index("\n## ", 1)]
    for c in CASES:
        assert f"| {c['name']} | `{c['key']}` |" in section, c["name"]
    assert f"holds {len(CASES)} cases" in section


def test_a_bad_memory_bound_is_refused_naming_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(HERE)
    monkeypatch.setenv("DCFAIR_MAX_MEMORY_MB", "lots")
    out = tmp_path / "out"
    assert cli.main(["run", "base.toml", "--out", str(out), "--quiet"]) == 2
    assert "DCFAIR_MAX_MEMORY_MB" in capsys.readouterr().err
    assert not out.exists()
