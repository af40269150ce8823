"""The paired comparison against a red team: questions that differ only in an operator, a sign or a
superscript never pair; two files in one dataset pair by record only when their records are
provably the same; McNemar's exact p is the exact binomial sum without big integers."""

from __future__ import annotations

import math
from fractions import Fraction

import pandas as pd
import pytest

from o3viz.analysis.paired import ROW_COLUMNS, PairedCompareRequest, Side, paired_compare
from o3viz.analysis.paired_stats import binom_tail_half, mcnemar_exact
from o3viz.analysis.pairing import question_key, record_mismatches
from o3viz.errors import UsageError

# ---------------------------------------------------------------- the question key

DIFFERENT = [
    ("What is 7 + 3?", "What is 7 - 3?"),
    ("Is 12 > 5?", "Is 12 < 5?"),
    ("What is 3²?", "What is 32?"),  # NFKC reads the superscript as a digit
    ("Find x₁ + x₂", "Find x1 + x2"),
    ("Take ½ of 8", "Take 1/2 of 8"),
    ("What is 7 * 3?", "What is 7 / 3?"),
    ("Is 4 = 4.0?", "Is 4 ≠ 4.0?"),
    ("Compute 5!", "Compute 5"),  # a factorial, not an exclamation
    ("Compute 5!!", "Compute 5!"),
    ("What is (2+3)*4?", "What is 2+3*4?"),
    ("What is 1,000 - 1?", "What is 1.000 - 1?"),
    ("What is 12 apples?", "What is 1 2 apples?"),
    ("What is 7 + 3?", "What is ٧ + 3?"),  # an Arabic-Indic seven is not folded into an ASCII one
]
SAME = [
    ("Janet’s  ducks lay 16 eggs.", "janet's ducks lay 16 eggs"),
    ("What is 7 + 3?", "what is 7+3"),
    ("What is ７ + ３？", "What is 7 + 3?"),  # full-width forms
    ("What is 7 − 3?", "What is 7 - 3?"),  # a minus sign
    ("Great\u00a0eggs!", "great eggs"),
    ("Caf\u0065\u0301 prices", "Café prices"),  # combining accent
    ("  Is 12 > 5 ?  ", "Is 12>5?"),
    ("What is 7\u200b+3?", "What is 7+3?"),  # a zero-width space writes nothing
    ("Is 12\u2060>\ufeff5?", "Is 12 > 5?"),
]


@pytest.mark.parametrize("x, y", DIFFERENT)
def test_questions_that_ask_different_things_have_different_keys(x, y):
    assert question_key(x) != question_key(y)


@pytest.mark.parametrize("x, y", SAME)
def test_the_same_question_written_otherwise_has_one_key(x, y):
    assert question_key(x) == question_key(y)


def _row(key: str, question: str, correct, *, record=None, line_hash="", model="m") -> dict:
    row = dict.fromkeys(ROW_COLUMNS, 0)
    row.update(key=key, name=f"trace {key}", dataset="d", model=model, question=question, record=record)
    row.update(line_hash=line_hash, correct=correct, source_correct=correct, check_correct=None)
    row.update(importance=None, first_wrong_pos=None, part="")
    return row


def test_an_operator_apart_is_unpaired_not_a_pair():
    """Red team: "What is 7 + 3?" paired with "What is 7 - 3?", and the table, the interval and
    McNemar's p were computed on the wrong pairs with 0 unpaired."""
    a = pd.DataFrame([_row("a0", "What is 7 + 3?", 1), _row("a1", "Is 12 > 5?", 1), _row("a2", "3²", 0)])
    b = pd.DataFrame([_row("b0", "What is 7 - 3?", 0), _row("b1", "Is 12 < 5?", 0), _row("b2", "32", 1)])
    r = paired_compare(a, b, PairedCompareRequest(Side("A"), Side("B")))
    assert r.n == 0 and r.pairing.n_unpaired_a == 3 and r.pairing.n_unpaired_b == 3
    assert r.table.n == 0


# ---------------------------------------------------------------- record pairing


def _file(name: str, questions: list[str], model: str, correct: list[int]) -> pd.DataFrame:
    """The rows one file makes when imported into dataset ``d``: records 1..n, a hash per record."""
    return pd.DataFrame(
        [
            _row(f"{model}{i}", q, c, record=i + 1, line_hash=f"{name}:{q}", model=model)
            for i, (q, c) in enumerate(zip(questions, correct, strict=True))
        ]
    )


QS = [f"What is {i} + {i}?" for i in range(8)]
SYSTEMS = PairedCompareRequest(Side("d", "x"), Side("d", "y"))


def test_two_files_in_other_orders_pair_by_question_not_by_line():
    """Red team: two models' files imported into one dataset in different orders paired line 1
    with line 1."""
    a = _file("x.jsonl", QS, "x", [1, 1, 1, 1, 0, 0, 0, 0])
    b = _file("y.jsonl", QS[::-1], "y", [1, 1, 1, 1, 0, 0, 0, 0])  # the same grades, reversed order
    r = paired_compare(a, b, SYSTEMS)
    assert r.pairing.key_by == "question" and r.n == 8
    assert (r.rows["question_a"] == r.rows["question_b"]).all()
    assert (r.table.a_only, r.table.b_only) == (4, 4)  # by line it would be no flip at all
    assert record_mismatches(a, b) == 8
    with pytest.raises(UsageError, match="--key record: A and B are not the same records"):
        paired_compare(a, b, PairedCompareRequest(Side("d", "x"), Side("d", "y"), key_by="record"))


def test_one_files_records_fanned_out_pair_by_record():
    """GSM8K's four systems of one file: every system's row of a record has the record's hash, so
    they pair by record (even a repeated question)."""
    qs = QS[:3] + [QS[0]]
    a = _file("all.jsonl", qs, "x", [1, 0, 1, 0])
    b = _file("all.jsonl", qs, "y", [0, 0, 1, 1])
    r = paired_compare(a, b, SYSTEMS)
    assert r.pairing.key_by == "record" and r.n == 4 and r.pairing.repeats_a == 0
    assert record_mismatches(a, b) == 0


def test_one_differing_record_or_a_missing_hash_is_enough_to_fall_back():
    a = _file("all.jsonl", QS, "x", [1] * 8)
    b = _file("all.jsonl", QS, "y", [0] * 8)
    b.loc[3, "line_hash"] = "other"
    assert record_mismatches(a, b) == 1
    assert paired_compare(a, b, SYSTEMS).pairing.key_by == "question"
    b.loc[3, "line_hash"] = ""
    assert paired_compare(a, b, SYSTEMS).pairing.key_by == "question"
    b = _file("all.jsonl", QS, "y", [0] * 8)
    b.loc[5, "question"] = "What is 5 - 5?"  # same hash, another question: not provably the same
    assert record_mismatches(a, b) == 1


def test_duplicated_questions_on_one_side_are_counted_not_paired_twice():
    a = pd.DataFrame([_row("a0", "Q one?", 1), _row("a1", "q one", 0), _row("a2", "Q two?", 1)])
    b = pd.DataFrame([_row("b0", "Q one", 0), _row("b1", "Q two", 1)])
    r = paired_compare(a, b, PairedCompareRequest(Side("A"), Side("B")))
    assert r.n == 2 and r.pairing.repeats_a == 1 and r.pairing.n_unpaired_a == 0
    assert r.rows.set_index("pair_key").at["q one", "key_a"] == "a0"


# ---------------------------------------------------------------- McNemar's exact p


def _tail_by_integers(k: int, n: int) -> Fraction:
    """P(X ≤ k), X ~ Binomial(n, ½), exactly (the old implementation's sum, by recurrence)."""
    term = total = math.comb(n, k)
    for i in range(k, 0, -1):
        term = term * i // (n - i + 1)
        total += term
    return Fraction(total, 2**n)


def _p_by_integers(b: int, c: int) -> float:
    n, k = b + c, min(b, c)
    return float(min(Fraction(1), 2 * _tail_by_integers(k, n))) if n else 1.0


def test_mcnemar_equals_the_integer_sum_for_every_table_up_to_200_discordant():
    worst = 0.0
    for n in range(1, 201):
        for b in range(n + 1):
            want = _p_by_integers(b, n - b)
            worst = max(worst, abs(mcnemar_exact(b, n - b) - want) / want)
    assert worst < 1e-12


@pytest.mark.parametrize("b, c", [(400, 601), (700, 1300), (3000, 3400), (9000, 10_999), (5, 19_994)])
def test_mcnemar_beyond_the_small_path_is_the_same_p(b, c):
    want = _p_by_integers(b, c)
    assert mcnemar_exact(b, c) == pytest.approx(want, rel=1e-10)
    assert mcnemar_exact(c, b) == mcnemar_exact(b, c)


def test_mcnemar_known_values():
    assert mcnemar_exact(1, 9) == 22 / 1024
    assert mcnemar_exact(0, 6) == 2 / 64  # the fewest flips that reach p < 0.05
    assert mcnemar_exact(150, 86) == pytest.approx(3.8e-5, rel=0.05)  # Agresti's Table 8.1
    assert mcnemar_exact(9999, 10_000) == 1.0 and mcnemar_exact(4, 5) == 1.0
    assert mcnemar_exact(0, 20_000) == 0.0  # 2⁻¹⁹⁹⁹⁹ underflows, as a float of the exact value does
    assert binom_tail_half(0, 1074) == 2.0**-1074


def test_mcnemar_builds_no_big_integers(monkeypatch):
    """Red team: 19,999 flips took about 30 s, summing C(n, i) as Python integers. The p must come
    from floats: with ``math.comb`` gone it still answers, at any n a dataset can hold."""

    def no_comb(*_):
        raise AssertionError("math.comb called: big integers")

    monkeypatch.setattr(math, "comb", no_comb)
    assert 0 < mcnemar_exact(9000, 10_999) < 1e-40
    assert 0.99 < mcnemar_exact(99_999, 100_001) <= 1.0
    assert mcnemar_exact(10, 30) > 0
