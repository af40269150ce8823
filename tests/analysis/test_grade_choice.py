"""The grade a headline uses is the one the data supports (issue 63, finding 4): on the MATH-500
files the source's grade and o3viz's check disagreed on 10 of 60 traces and o3viz was right in all
10, yet the default "the source's, else o3viz's" headlined 70% where the answers were 87% right.
Where the two grades disagree on more than 2%, every headline shows both figures and says which one
it uses; the notebook's paired view shows the same warnings and never prints a missing answer as
``nan``. Data without a reference (finding 6) keeps its grade-free figures: claims, steps and
backtracks of ungraded traces are drawn, not dropped."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from o3viz.analysis.dataset import COLUMNS, dataset_summary, frame
from o3viz.analysis.grade_choice import choose_grade, resolve_grade
from o3viz.analysis.paired import ROW_COLUMNS, PairedCompareRequest, Side, paired_compare
from o3viz.cli.compare import format_result
from o3viz.figures.dataset import claim_rates_figure, first_wrong_figure, rates_figure, type_mix_figure
from o3viz.text.classify import TYPES
from o3viz.view.paired import paired_page


def _index_rows(source: list, check: list, *, claims: int = 4, errors: int = 0) -> list[dict]:
    rows = []
    for i, (s, c) in enumerate(zip(source, check, strict=True)):
        row = dict.fromkeys(COLUMNS, 0)
        either = s if s is not None else c
        row.update(key=f"{i:016x}", name=f"t{i}", dataset="d", model="m", steps=10, chars=800)
        row.update(correct=either, source_correct=s, check_correct=c, importance=None)
        row.update(claims=claims, claim_errors=errors if i % 2 else 0, backtracks=i % 3)
        row.update(first_wrong_pos=0.5 if errors and i % 2 else None, verdict=None)
        for t in TYPES:
            row[f"t_{t}"] = 2
        rows.append(row)
    return rows


def _math500_like() -> list[dict]:
    """60 traces: the source grades 42 right, o3viz's check 52; they disagree on 10 (17%)."""
    check = [1] * 52 + [0] * 8
    source = [1] * 42 + [0] * 10 + [0] * 8
    return _index_rows(source, check)


def test_a_broken_source_grade_does_not_make_the_headline():
    df = frame(_math500_like())  # the default grade: the data's choice
    s = dataset_summary(df)
    assert s.grade_choice.grade == "check_first" and s.grade_choice.asked == "auto"
    assert (s.correct, s.graded) == (52, 60)  # 87%, not the source's 70%
    first, why = s.grade_choice.lines()
    assert "87% correct by o3viz's check (else the source's grade) (52 of 60) (used)" in first
    assert "70% correct by the source's grade (42 of 60)" in first
    assert "disagree on 10 of 60 answers graded by both (17%, over 2%)" in why


def test_a_chosen_grade_is_kept_and_both_figures_still_shown():
    s = dataset_summary(frame(_math500_like(), grade="either"))
    assert s.grade_choice.grade == "either" and (s.correct, s.graded) == (42, 60)
    assert any(
        "(used)" not in part and "o3viz's check" in part for part in s.grade_choice.lines()[0].split(";")
    )
    assert s.grade_choice.lines()[1] == "Graded by the source's grade (else o3viz's check), as chosen."


def test_grades_that_agree_keep_the_source_and_say_nothing_more():
    check = [1] * 99 + [0] * 101
    source = [1] * 100 + [0] * 100  # one disagreement in 200: 0.5%, under the limit
    c = choose_grade(source, check)
    assert (c.grade, c.disagree, c.both, c.split, c.lines()) == ("either", 1, 200, False, [])
    assert resolve_grade(pd.DataFrame({"steps": [1]})).grade == "either"  # no grade columns at all


def _paired_rows(side: str, source: list, check: list) -> pd.DataFrame:
    rows = []
    for i, (s, c) in enumerate(zip(source, check, strict=True)):
        row = dict.fromkeys(ROW_COLUMNS, 0)
        row.update(key=f"{side}{i}", name=f"{side}{i}", dataset=side, model="m", question=f"q{i}")
        row.update(record=None, part="", correct=s, source_correct=s, check_correct=c, importance=None)
        row.update(first_wrong_pos=None, answer=np.nan if i == 0 else f"{i}", steps=5)
        rows.append(row)
    return pd.DataFrame(rows)


def _reversed() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Source: A 65%, B 70% ("+5 for B"); o3viz's check: A 95%, B 85%, reversing it."""
    a = _paired_rows("A", [1] * 13 + [0] * 7, [1] * 19 + [0])
    b = _paired_rows("B", [1] * 12 + [0] + [1] * 2 + [0] * 5, [0] + [1] * 17 + [0] * 2)
    return a, b


def test_compare_by_default_uses_the_check_and_says_the_source_reverses_it():
    a, b = _reversed()
    r = paired_compare(a, b, PairedCompareRequest(Side("A"), Side("B")))
    assert r.request.grade == "check_first" and r.grade_choice.asked == "auto"
    assert (r.acc_a, r.acc_b) == (0.95, 0.85)
    lines = r.grade_lines()
    assert "o3viz's check (else the source's grade): A 95.0%, B 85.0% (n = 20) (used)" in lines[0]
    assert "the source's grade: A 65.0%, B 70.0% (n = 20)" in lines[0]
    assert any(line.startswith("Under the source's grade") for line in r.reversals())
    text = "\n".join(format_result(r))
    assert "grades: " in text and "reverses" in text
    assert r.to_dict()["grade_asked"] == "auto"


def test_the_notebook_view_shows_the_warnings_and_no_nan():
    a, b = _reversed()
    page = paired_page(paired_compare(a, b, PairedCompareRequest(Side("A"), Side("B"))))
    assert "class='warn'" in page
    assert "(used)" in page and "the difference reverses" in page
    assert "disagree on" in page  # the disagreement line
    assert ">nan<" not in page and "<td>—</td>" in page  # A's first answer is missing


def test_ungraded_data_keeps_its_claims_steps_and_backtracks():
    rows = _index_rows([None] * 40, [None] * 40, claims=10, errors=2)  # no reference, no source grade
    s = dataset_summary(frame(rows))
    assert s.graded == 0
    claims = s.claim_rates.query("group == 'ungraded'")
    assert int(claims["claims"].sum()) == 400
    assert claims["error_rate"].item() == 40 / 400
    assert int(s.first_wrong.query("group == 'ungraded'")["traces"].sum()) == 20
    for fig in (
        claim_rates_figure(s.claim_rates),
        first_wrong_figure(s.first_wrong),
        type_mix_figure(s.type_mix),
        rates_figure(s.rates),
    ):
        names = [t.name for t in fig.data]
        assert any("ungraded" in n for n in names), fig.layout.title.text
        assert all(
            json.loads(cd)["group"] == "ungraded"
            for t in fig.data
            if "ungraded" in t.name
            for cd in t.customdata
        )


def test_traces_without_a_reference_keep_the_source_grade_when_the_check_is_chosen():
    """A scope mixing a source-graded benchmark without references (ProcessBench) and MATH-500 traces
    whose source grade is broken: the check decides where it can, the source's grade elsewhere, so
    the 400 traces without a reference stay graded."""
    rows = _math500_like() + _index_rows([1] * 200 + [0] * 200, [None] * 400)
    s = dataset_summary(frame(rows))
    assert s.grade_choice.grade == "check_first"
    assert (s.correct, s.graded) == (52 + 200, 460)
    assert (
        "55% correct by o3viz's check (else the source's grade) (252 of 460) (used)"
        in s.grade_choice.lines()[0]
    )


def test_graded_data_draws_no_empty_ungraded_group():
    s = dataset_summary(frame(_math500_like()))
    assert "ungraded" not in set(s.claim_rates["group"])
