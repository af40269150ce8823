"""The forms people write arithmetic in (issue 16): one-letter units, verbal operations and
results, percentages "on" an amount, spelled-out numbers; each caught when wrong, passed when
right, and number words that are not arithmetic raise no alarm."""

from __future__ import annotations

import pytest

from o3viz.verify.claims.check import check_claims
from o3viz.verify.claims.words import phrase_value


def verdicts(text: str) -> list[tuple[str, str]]:
    return [(c.expression, c.verdict) for c in check_claims(text) if c.rule != "final_answer_mismatch"]


@pytest.mark.parametrize(
    ("wrong", "right", "expr"),
    [
        ("7.5 m + 2.25 m = 9.85 m", "7.5 m + 2.25 m = 9.75 m", "7.5+2.25"),
        ("2 h + 3 h = 6 h", "2 h + 3 h = 5 h", "2+3"),
        ("Multiply 6 by 7 to get 43", "Multiply 6 by 7 to get 42", "6*7"),
        ("Subtract 4 from 10 to get 5", "Subtract 4 from 10 to get 6", "10-4"),
        ("5 + 6, which is 12", "5 + 6, which is 11", "5+6"),
        ("15% tip on $40 is $7", "15% tip on $40 is $6", "15%*40"),
        ("twelve times three is thirty-eight", "twelve times three is thirty-six", "12*3"),
        ("three plus four is eight", "three plus four is seven", "3+4"),
    ],
)
def test_form_is_caught_when_wrong_and_passed_when_right(wrong, right, expr):
    assert verdicts(wrong) == [(expr, "wrong")]
    assert verdicts(right) == [(expr, "correct")]


@pytest.mark.parametrize(
    "text",
    [
        "The team played (L+8) + L = 2L + 8 = 22 games.",  # one-letter variables, not units
        "we get 4s + 16 = 2s + 32",
        "Since 2/5 is equal to 12.8 hectares, then 1/5 is 6.4 hectares.",
        "One of the 3 boys is 7 years old.",
        "Two friends share 10 apples, so each gets 5.",
        "Seven-Eleven sells 3 + 4 = 7 sodas.",
    ],
)
def test_words_and_letters_that_are_not_arithmetic_raise_no_alarm(text):
    assert [c for c in check_claims(text) if c.verdict == "wrong"] == []


@pytest.mark.parametrize(
    ("phrase", "value"),
    [
        ("twelve", 12),
        ("thirty-eight", 38),
        ("one hundred and five", 105),
        ("two thousand three hundred", 2300),
        ("one", None),  # a pronoun more often than a number
        ("three two", None),
        ("hundred", None),
    ],
)
def test_spelled_out_numbers_are_read_or_refused(phrase, value):
    assert phrase_value(phrase) == value
