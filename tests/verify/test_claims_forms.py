"""The forms people write arithmetic in (issues 16 and 23): one-letter units, verbal operations
and results ("X divided by Y yields Z", "the product of X and Y is Z", "two thirds of X is Z",
"X squared is Z" and their relatives), percentages "on" an amount, spelled-out numbers; each caught when wrong, passed when
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
        # issue 23: verbal forms of arithmetic, each with its relatives
        ("48 divided by 4 yields 13", "48 divided by 4 yields 12", "48/4"),
        ("12 divided by 4 equals 4", "12 divided by 4 equals 3", "12/4"),
        ("Dividing 48 by 4 gives 13", "Dividing 48 by 4 gives 12", "48/4"),
        ("the product of 6 and 7 is 43", "the product of 6 and 7 is 42", "(6*7)"),
        ("The sum of 5 and 6 is 12", "The sum of 5 and 6 is 11", "(5+6)"),
        ("the quotient of 12 and 4 is 4", "the quotient of 12 and 4 is 3", "(12/4)"),
        ("the difference between 10 and 4 is 5", "the difference between 10 and 4 is 6", "(10-4)"),
        ("the difference between 4 and 10 is 5", "the difference between 4 and 10 is 6", "(10-4)"),
        ("6 times 7 equals 43", "6 times 7 equals 42", "6*7"),
        ("two thirds of 12 is 9", "two thirds of 12 is 8", "2/3*12"),
        ("three quarters of 8 is 5", "three quarters of 8 is 6", "3/4*8"),
        ("half of 18 is 8", "half of 18 is 9", "1/2*18"),
        ("5 squared is 26", "5 squared is 25", "5^2"),
        ("the square of 5 is 26", "the square of 5 is 25", "5^2"),
        ("3 cubed is 28", "3 cubed is 27", "3^3"),
        ("the cube of 3 is 28", "the cube of 3 is 27", "3^3"),
        ("20 percent of 50 is 11", "20 percent of 50 is 10", "20%*50"),
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
        "1/5 is 6.4 hectares, so the whole field is 32 hectares.",  # a fraction naming a quantity
        "The sum of her savings and 40 is what she spends.",
        "The area is 5 feet squared, and 3 percent of students walk.",
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
