"""The agreement table measures each pluggable verifier stored on the traces (issue 42) against
the human labels, beside the checks: ok is correct, wrong is wrong, unsure takes no part."""

from __future__ import annotations

from o3viz.analysis.labels import AUTO_VERIFIER, agreement_table, auto_verdicts
from o3viz.store.labels import Label
from o3viz.testing.builders import small_trace
from o3viz.trace.verdicts import VerdictRecord


def _trace():
    t = small_trace()
    t.final.verdicts = [
        VerdictRecord("claims", ["ok", "unsure"], info={"kind": "claim checker"}),
        VerdictRecord("prm:m", ["wrong", "ok"], [0.1, 0.9], {"kind": "prm"}),
    ]
    return t


def test_each_verifier_is_an_automatic_labeller_without_its_unsure_steps():
    auto = auto_verdicts("k", _trace())
    r = _trace().final.index
    assert auto[AUTO_VERIFIER + "claims"] == {("k", r, 0): "correct"}
    assert auto[AUTO_VERIFIER + "prm:m"] == {("k", r, 0): "wrong", ("k", r, 1): "correct"}


def test_the_table_has_a_row_per_verifier_and_person():
    r = _trace().final.index
    labels = [Label("k", r, 0, "ann", "wrong", first_error=True), Label("k", r, 1, "ann", "correct")]
    table = agreement_table(labels, {"k": _trace()})
    rows = {p.a: p for p in table.pairs if p.b == "ann"}
    assert {AUTO_VERIFIER + "claims", AUTO_VERIFIER + "prm:m"} <= set(rows)
    prm = rows[AUTO_VERIFIER + "prm:m"]
    assert prm.kappa.n == 2 and prm.disagree == []
    assert rows[AUTO_VERIFIER + "claims"].kappa.n == 1 and len(rows[AUTO_VERIFIER + "claims"].disagree) == 1
