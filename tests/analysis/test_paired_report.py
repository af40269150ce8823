"""The paired result's reporting side, on synthetic rows: a flip of two equal answers carries its
reason and is listed last, another grade that reverses the direction is said, thin measures (few
pairs or few events) are marked, and the pair to open on is the one sharing the most questions."""

from __future__ import annotations

import pandas as pd
import pytest

from o3viz.analysis.paired import ROW_COLUMNS, PairedCompareRequest, Side, paired_compare

REQ = PairedCompareRequest(Side("A"), Side("B"))


def _row(key, question, *, source=None, check=None, answer="7", steps=5, self_checks=0, first_wrong=None):
    row = dict.fromkeys(ROW_COLUMNS, 0)
    row.update(key=key, name=key, dataset="d", model="m", question=question, record=None, importance=None)
    row.update(source_correct=source, check_correct=check, answer=answer, part="")
    row.update(correct=source if source is not None else check)
    row.update(steps=steps, t_active_computation=steps, self_checks=self_checks, first_wrong_pos=first_wrong)
    return row


def test_a_flip_of_two_equal_answers_says_why_and_comes_last():
    """The source graded "Evelyn" wrong in A and right in B: it stays a flip under the source's
    grade, with the reason beside it, after the flips whose answers differ."""
    a = pd.DataFrame([_row("a0", "Who ran fastest?", source=0, answer="Evelyn"),
                      _row("a1", "Simplify.", source=0, answer="3\\sqrt{13}"),
                      _row("a2", "What is 2+2?", source=0, answer="5"),
                      _row("a3", "What is 3+3?", source=1, answer="6")])  # fmt: skip
    b = pd.DataFrame([_row("b0", "Who ran fastest?", source=1, answer="Evelyn"),
                      _row("b1", "Simplify.", source=1, answer="3 \\sqrt{13}"),
                      _row("b2", "What is 2+2?", source=1, answer="4"),
                      _row("b3", "What is 3+3?", source=1, answer="6")])  # fmt: skip
    r = paired_compare(a, b, REQ)
    flips = r.flips()
    assert list(flips["key_a"]) == ["a2", "a0", "a1"]  # the real flip first
    assert list(flips["flip_note"]) == [""] + ["same answer; the source graded them differently"] * 2
    assert r.same_answer_flips == 2 and r.to_dict()["same_answer_flips"] == 2
    assert r.table.b_only == 3  # still counted: the table follows the chosen grade


def test_the_reason_names_the_grader():
    a = pd.DataFrame([_row("a0", "q0", check=0, answer="4"), _row("a1", "q1", source=0, answer="9")])
    b = pd.DataFrame([_row("b0", "q0", check=1, answer="4"), _row("b1", "q1", check=1, answer="9")])
    notes = list(paired_compare(a, b, REQ).flips()["flip_note"])
    assert notes == [
        "same answer; o3viz's check graded them differently",
        "same answer; the source graded one and o3viz's check the other",
    ]


def _reversed_grades(n=20):
    """Source: A 65%, B 70%; o3viz's check: A 95%, B 85% (the user's MATH-500 finding)."""
    src_a = [1] * 13 + [0] * 7
    src_b = [1] * 12 + [0] * 1 + [1] * 2 + [0] * 5
    chk_a = [1] * 19 + [0]
    chk_b = [1] * 17 + [0] * 3
    a = pd.DataFrame([_row(f"a{i}", f"q{i}", source=src_a[i], check=chk_a[i]) for i in range(n)])
    b = pd.DataFrame([_row(f"b{i}", f"q{i}", source=src_b[i], check=chk_b[i]) for i in range(n)])
    return a, b


def test_a_grade_that_reverses_the_direction_is_said():
    a, b = _reversed_grades()
    r = paired_compare(a, b, PairedCompareRequest(Side("A"), Side("B"), grade="source"))
    assert (r.acc_a, r.acc_b) == (0.65, 0.70)
    (line,) = r.reversals()
    assert line.startswith("Under o3viz's check the difference reverses: A 95.0% vs B 85.0% (n = 20)")
    rows = {g["grade"]: g for g in r.grade_table()}
    assert rows["source"]["shown"] and not rows["source"]["reverses"]
    assert rows["check"]["reverses"] and not rows["either"]["reverses"]  # either = source here
    assert r.to_dict()["reversals"] == [line]
    assert "disagree on 6 of 20 answers in A and 3 of 20 answers in B" in r.grade_disagreements()
    # seen from o3viz's check, the source's grade (and "either", the same here) reverses it
    other = paired_compare(a, b, PairedCompareRequest(Side("A"), Side("B"), grade="check"))
    assert [x.split(" the difference")[0] for x in other.reversals()] == ["Under the source's grade"]
    # the same direction under every grade: nothing to say
    b2 = b.assign(check_correct=b["source_correct"])
    a2 = a.assign(check_correct=a["source_correct"])
    assert paired_compare(a2, b2, REQ).reversals() == []


def test_thin_measures_are_marked_with_their_n_and_events():
    """Self-checks resting on one event and a first wrong step on 4 pairs are thin; steps over 40
    pairs are not."""
    a = pd.DataFrame([_row(f"a{i}", f"q{i}", source=1, self_checks=int(i == 0),
                           first_wrong=0.5 if i < 4 else None) for i in range(40)])  # fmt: skip
    b = pd.DataFrame([_row(f"b{i}", f"q{i}", source=1, steps=6, first_wrong=0.2 if i < 4 else None)
                      for i in range(40)])  # fmt: skip
    m = paired_compare(a, b, REQ).measures.set_index("measure")
    assert m.at["self_checks", "thin"] == "thin: 1 event" and m.at["self_checks", "events"] == 1
    assert m.at["first_wrong_pos", "thin"] == "thin: n = 4"
    assert m.at["steps", "thin"] == "" and m.at["steps", "events"] == 40 * 11
    assert m.at["share_active_computation", "thin"] == ""
    assert m.at["share_self_checking", "thin"] == "thin: 0 events"


def _stored(*sides):
    rows = []
    for dataset, model, questions in sides:
        rows += [{"dataset": dataset, "model": model, "question": q} for q in questions]
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    "sides, want",
    [
        # the big unrelated dataset is not picked: the two on the same questions are
        ((("gsm8k", "", [f"g{i}" for i in range(50)]), ("math-r1", "", ["Q1?", "Q2?", "Q3"]),
          ("math-qwen", "", ["q1", "q2", "q3", "other"])), (("math-qwen", ""), ("math-r1", ""))),
        # a paired run's A and B
        ((("page · A: daa=off", "m", ["t1", "t2"]), ("page · B: daa=allocate", "m", ["t1", "t2"]),
          ("x", "", ["t1"])), (("page · A: daa=off", ""), ("page · B: daa=allocate", ""))),
        # two systems of one dataset (the whole dataset, with its repeats, is not picked)
        ((("gsm", "ft", ["a", "b"]), ("gsm", "ver", ["a", "b"]), ("test", "", ["a", "b"])),
         (("gsm", "ft"), ("gsm", "ver"))),
    ],
)  # fmt: skip
def test_the_suggested_pair_shares_the_most_questions(sides, want):
    req = PairedCompareRequest.suggested(_stored(*sides))
    assert ((req.a.dataset, req.a.model), (req.b.dataset, req.b.model)) == want
    req.validate()


def test_no_pair_is_suggested_when_nothing_is_shared():
    assert PairedCompareRequest.suggested(_stored(("x", "", ["1", "2"]), ("y", "", ["3"]))) is None
    assert PairedCompareRequest.suggested(_stored(("x", "m", ["1", "2"]))) is None
    assert PairedCompareRequest.suggested(_stored()) is None
