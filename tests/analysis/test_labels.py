"""The automatic labellers read from a trace, and the agreement table people see."""

from __future__ import annotations

from dataclasses import dataclass

from o3viz.analysis.labels import AUTO_CHECKS, AUTO_FIRST_WRONG, agreement_table, auto_verdicts
from o3viz.trace import Check, Round, Step, Task, Trace


@dataclass
class L:
    key: str
    round: int
    step: int
    labeller: str
    verdict: str
    first_error: bool = False
    type: str | None = None


def _trace() -> Trace:
    texts = ["2+2 = 4", "4*3 = 13", "so 13", "done"]
    steps = [Step(index=i, start=0, end=1, text=t, type="active_computation") for i, t in enumerate(texts)]
    checks = [Check(kind="claim", name="4*3 = 13", verdict="wrong", step=1)]
    return Trace(task=Task(question="q"), rounds=[Round(index=0, steps=steps, checks=checks)])


def test_the_first_wrong_step_labels_up_to_it_and_the_checks_label_every_step():
    auto = auto_verdicts("k", _trace())
    assert auto[AUTO_FIRST_WRONG] == {("k", 0, 0): "correct", ("k", 0, 1): "wrong"}
    assert [auto[AUTO_CHECKS][("k", 0, i)] for i in range(4)] == ["correct", "wrong", "correct", "correct"]


def test_the_table_pairs_people_and_scores_the_checker_against_each():
    labels = [L("k", 0, i, "ann", v) for i, v in enumerate(["correct", "wrong", "wrong", "unsure"])]
    labels += [L("k", 0, i, "bob", v) for i, v in enumerate(["correct", "wrong", "correct"])]
    labels.append(L("k", 0, 2, "bob", "correct", type="result_consolidation"))
    table = agreement_table(labels, {"k": _trace()})
    pairs = {(p.a, p.b): p for p in table.pairs}
    assert pairs[("ann", "bob")].kappa.n == 3 and pairs[("ann", "bob")].disagree == [
        ("k", "0:2", "wrong", "correct")
    ]
    checker = pairs[(AUTO_CHECKS, "ann")]
    assert (checker.precision.value, checker.recall.value, checker.recall.n) == (1.0, 0.5, 2)
    assert (
        table.types == [("auto: step classifier · bob", table.types[0][1])] and table.types[0][1].value == 0.0
    )
    assert table.alpha is None  # two people: κ, not α
    assert table.rows()[0]["labellers"] == "ann · bob"


def test_importance_says_which_steps_mattered_and_is_held_against_the_first_errors():
    from o3viz.analysis.labels import AUTO_IMPORTANCE, mattered
    from o3viz.trace.importance import ImportanceRecord

    trace = _trace()
    trace.final.importance = [ImportanceRecord("suppression", "suppression", [0.1, 0.9, 0.3, 0.2])]
    assert mattered("k", trace) == {
        ("k", 0, 0): False,
        ("k", 0, 1): True,
        ("k", 0, 2): False,
        ("k", 0, 3): False,
    }
    labels = [L("k", 0, 0, "ann", "correct"), L("k", 0, 1, "ann", "wrong", first_error=True)]
    pair = next(p for p in agreement_table(labels, {"k": trace}).pairs if p.a == AUTO_IMPORTANCE)
    assert (pair.kappa.n, pair.precision.value, pair.recall.value) == (2, 1.0, 1.0)
