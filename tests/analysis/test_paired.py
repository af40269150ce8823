"""Paired comparison of two runs: the statistics against known values (a textbook McNemar table, a
hand-computed exact p) and by simulation (the intervals cover the truth about 95% of the time), and
the pairing (keys, unpaired and repeated questions counted and listed, flips first)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from o3viz.analysis.paired import ROW_COLUMNS, PairedCompareRequest, Side, paired_compare
from o3viz.analysis.paired_stats import (
    Table2x2,
    mcnemar_chi2,
    mcnemar_exact,
    mean_difference,
    paired_difference,
    t975,
)
from o3viz.analysis.pairing import question_key
from o3viz.errors import UsageError

# Agresti, An Introduction to Categorical Data Analysis (2nd ed., 2007), Table 8.1: approval of the
# Prime Minister in two surveys of the same 1,600 people. Agresti gives McNemar z = -4.17
# (z^2 = 17.36) and the difference of proportions 0.55 - 0.59 = -0.04, 95% CI (-0.06, -0.02).
AGRESTI = Table2x2(both=794, a_only=150, b_only=86, neither=570)


def _exact_by_hand(b: int, c: int) -> float:
    n, k = b + c, min(b, c)
    tail = sum(Fraction(math.comb(n, i), 2**n) for i in range(k + 1))
    return float(min(Fraction(1), 2 * tail))


def test_mcnemar_on_agrestis_table():
    assert mcnemar_chi2(AGRESTI.a_only, AGRESTI.b_only) == pytest.approx(17.36, abs=0.01)
    p = mcnemar_exact(AGRESTI.a_only, AGRESTI.b_only)
    assert p == pytest.approx(_exact_by_hand(150, 86), rel=1e-12)
    assert 1e-5 < p < 1e-4  # exact p ≈ 3.8e-5, beside the asymptotic 3.1e-5 of z = -4.17
    d, lo, hi = paired_difference(AGRESTI)
    assert d == pytest.approx(-0.04)
    assert (round(lo, 2), round(hi, 2)) == (-0.06, -0.02)


def test_mcnemar_small_tables_by_hand():
    assert mcnemar_exact(1, 9) == 22 / 1024  # 2 * (C(10,0) + C(10,1)) / 2^10
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(5, 5) == 1.0
    assert mcnemar_exact(0, 5) == 2 / 32
    assert mcnemar_exact(12, 3) == pytest.approx(_exact_by_hand(12, 3))


def test_t_quantiles():
    assert t975(1) == 12.706 and t975(30) == 2.042
    assert t975(60) == pytest.approx(2.000, abs=1e-3)
    assert t975(120) == pytest.approx(1.980, abs=1e-3)


def test_paired_difference_covers_95_percent_by_simulation():
    """2,000 samples of 60 paired questions (A right 50%, B right 60%, correlated): the Agresti–Min
    interval holds the true difference (+0.10) in about 95% of them."""
    rng = np.random.default_rng(7)
    probs = [0.35, 0.15, 0.25, 0.25]  # both, A only, B only, neither
    truth = probs[2] - probs[1]
    hits = 0
    for counts in rng.multinomial(60, probs, size=2000):
        _, lo, hi = paired_difference(Table2x2(*map(int, counts)))
        hits += lo <= truth <= hi
    assert 0.93 <= hits / 2000 <= 0.97


def test_mean_difference_covers_95_percent_by_simulation():
    rng = np.random.default_rng(11)
    hits = 0
    for sample in rng.normal(1.5, 4.0, size=(2000, 15)):
        _, lo, hi = mean_difference(sample)
        hits += lo <= 1.5 <= hi
    assert 0.93 <= hits / 2000 <= 0.97
    assert mean_difference(np.array([1.0])) is None


def _row(key: str, question: str, correct, *, record=None, steps=5, model="m") -> dict:
    row = dict.fromkeys(ROW_COLUMNS, 0)
    row.update(key=key, name=f"trace {key}", dataset="d", model=model, question=question, record=record)
    row.update(steps=steps, correct=correct, source_correct=correct, check_correct=None, importance=None)
    row.update(first_wrong_pos=None, part="", t_active_computation=steps)
    return row


def _frames(pairs: list[tuple[int, int]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    a = [_row(f"a{i}", f"Question {i}?", ca, steps=3) for i, (ca, _) in enumerate(pairs)]
    b = [_row(f"b{i}", f"question  {i}", cb, steps=5) for i, (_, cb) in enumerate(pairs)]
    return pd.DataFrame(a), pd.DataFrame(b)


REQ = PairedCompareRequest(Side("A"), Side("B"))


def test_paired_compare_counts_and_flips_first():
    pairs = [(1, 1)] * 5 + [(1, 0)] * 2 + [(0, 1)] * 6 + [(0, 0)] * 3
    a, b = _frames(pairs)
    r = paired_compare(a, b, REQ)
    assert (r.table.both, r.table.a_only, r.table.b_only, r.table.neither) == (5, 2, 6, 3)
    assert r.acc_a == 7 / 16 and r.acc_b == 11 / 16
    assert r.p_mcnemar == pytest.approx(_exact_by_hand(2, 6))
    assert r.pairing.key_by == "question"
    assert list(r.rows["flip"][:8]) == ["A only"] * 2 + ["B only"] * 6
    steps = r.measures.set_index("measure").loc["steps"]
    assert (steps["n"], steps["diff"], steps["lo"], steps["hi"]) == (16, 2.0, 2.0, 2.0)
    assert "fewer than 30" in r.too_small()
    assert r.to_dict()["table"] == {"both": 5, "a_only": 2, "b_only": 6, "neither": 3}


def test_unpaired_and_repeated_questions_are_counted_and_listed():
    a, b = _frames([(1, 1), (0, 1), (1, 0)])
    a = pd.concat([a, pd.DataFrame([_row("a9", "Only in A", 1), _row("a10", "question 0", 0)])])
    b = pd.concat([b, pd.DataFrame([_row("b9", "Only in B", 1), _row("b10", "", 1)])])
    r = paired_compare(a, b, REQ)
    p = r.pairing
    assert r.n == 3 and r.n_a == 5 and r.n_b == 5
    assert (p.n_unpaired_a, p.unpaired_a, p.repeats_a) == (1, ["trace a9"], 1)
    assert (p.n_unpaired_b, p.unpaired_b) == (2, ["trace b9"])  # one listed, one without a question
    # the first trace of a repeated question is the one paired
    assert r.rows.set_index("pair_key").at["question 0", "key_a"] == "a0"


def test_same_dataset_pairs_by_record():
    """Two systems of one file's records (the same record hash at each line) pair by record, even
    where the question text repeats."""
    a = pd.DataFrame([_row(f"a{i}", "same text", 1, record=i + 1) | {"line_hash": f"h{i}"} for i in range(4)])
    b = pd.DataFrame(
        [_row(f"b{i}", "same text", i % 2, record=i + 1) | {"line_hash": f"h{i}"} for i in range(4)]
    )
    r = paired_compare(a, b, PairedCompareRequest(Side("gsm8k", "x"), Side("gsm8k", "y")))
    assert r.pairing.key_by == "record" and r.n == 4 and r.table.a_only == 2


def test_question_key_normalises():
    assert question_key("Janet’s ducks\nlay 16 eggs!") == question_key("JANET'S DUCKS LAY 16 EGGS")
    assert question_key(None) == ""


@pytest.mark.parametrize(
    "req, words",
    [
        (PairedCompareRequest(Side(""), Side("b")), "side A"),
        (PairedCompareRequest(Side("a", "m"), Side("a", "m")), "same traces"),
        (PairedCompareRequest(Side("a"), Side("b"), grade="vibes"), "grade"),
        (PairedCompareRequest(Side("a"), Side("b"), key_by="record"), "same dataset"),
        (PairedCompareRequest(Side("a"), Side("b"), min_pairs=0), "min_pairs"),
    ],
)
def test_request_validation(req, words):
    with pytest.raises(UsageError, match=words):
        req.validate()


def test_the_printed_result_says_nothing_is_graded_once():
    """With no question graded on both sides, ``o3viz compare --dataset`` printed the same sentence
    twice (the headline falls back to it, and it was printed again as the too-small note)."""
    from o3viz.cli.compare import format_result

    a, b = _frames([(None, None)] * 4)
    text = "\n".join(format_result(paired_compare(a, b, REQ)))
    assert text.count("No question is graded on both sides") == 1


def test_one_graded_question_is_said_in_the_singular():
    a, b = _frames([(1, 0)] + [(None, None)] * 3)
    assert paired_compare(a, b, REQ).too_small().startswith("Only 1 question is graded on both sides")
