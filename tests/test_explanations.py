"""The explanations of failing claims (python/dcfair/reproduce/explanations.toml): every table
names a reproduction, and the placeholders are filled from the runs' values, never typed in."""

from __future__ import annotations

from dcfair import reproduce


def _claim(holds=False, **readings):
    stats = lambda m, lo, hi: {"mean": m, "std": 0.0, "min": lo, "max": hi, "n": 2, "values": [lo, hi]}
    return {"id": "c", "holds": holds, "dcfair": stats(0.25, 0.2, 0.3),
            "explored": [{"reading": k, "dcfair": stats(*v), "holds": False} for k, v in readings.items()]}


def test_every_table_names_a_reproduction_and_every_text_is_a_string():
    reps = reproduce.load_all()
    written = reproduce.explanations()
    assert written, "explanations.toml is empty"
    for name, texts in written.items():
        assert name in reps, name
        for cid, text in texts.items():
            assert isinstance(text, str) and text.strip(), (name, cid)


def test_placeholders_take_the_runs_values():
    c = _claim(**{"no-swap": (0.5, 0.4, 0.6), "linux-3.18": (2e6, 1e6, 3e6)})
    text = reproduce.render_explanation("{value} {value%} {no-swap:min} {no-swap:max%} {linux-3.18/1e6} Mbit/s", c)
    assert text == "0.25 25 % 0.4 60 % 2 Mbit/s"
    # a reading the claim was not tried under: no explanation (its runs are missing)
    assert reproduce.render_explanation("see {other}", c) is None
    # line breaks of the TOML text are folded
    assert reproduce.render_explanation("a\n  b", c) == "a b"


def test_only_failing_claims_of_full_forms_are_explained(monkeypatch):
    monkeypatch.setattr(reproduce, "explanations", lambda: {"r": {"c": "it is {value}"}})
    doc = {"reproduction": "r", "quick": False, "claims": [_claim(), dict(_claim(holds=True), explanation="")]}
    reproduce.explain(doc)
    assert doc["claims"][0]["explanation"] == "it is 0.25"
    assert doc["claims"][1]["explanation"] == ""
