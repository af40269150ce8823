"""Tests for the arithmetic claim checker (o3viz.verify.claims.check)."""

from __future__ import annotations

import json

import pytest

from o3viz.errors import TraceError
from o3viz.paths import data_dir
from o3viz.verify.claims.check import RULES, Claim, check_claims

DATA = data_dir()
GSM8K = DATA / "gsm8k" / "gsm8k_test.jsonl"


def verdicts(text: str, rule: str | None = None) -> list[tuple[str, str, str]]:
    """(expression, stated, verdict) of each claim, optionally of one rule only."""
    return [(c.expression, c.stated, c.verdict) for c in check_claims(text) if rule is None or c.rule == rule]


def only(text: str) -> Claim:
    claims = [c for c in check_claims(text) if c.rule != "final_answer_mismatch"]
    assert len(claims) == 1, claims
    return claims[0]


# --- a op b = c, chains, operators, separators, units --------------------------------------


@pytest.mark.parametrize(
    ("text", "expr", "verdict"),
    [
        ("Janet sells 16 - 3 - 4 = 9 duck eggs a day.", "16-3-4", "correct"),
        ("Janet sells 16 - 3 - 4 = 10 duck eggs a day.", "16-3-4", "wrong"),
        ("She makes 9 * 2 = $18 every day.", "9*2", "correct"),
        ("She makes 9 * 2 = $19 every day.", "9*2", "wrong"),
        ("3 × 4 = 12", "3*4", "correct"),
        ("3 × 4 = 13", "3*4", "wrong"),
        ("12 ÷ 4 = 3", "12/4", "correct"),
        ("12 ÷ 4 = 4", "12/4", "wrong"),
        ("3 · 5 = 15", "3*5", "correct"),
        ("3 x 4 = 12", "3*4", "correct"),
        ("3 x 4 = 14", "3*4", "wrong"),
        ("2^10 = 1024", "2^10", "correct"),
        ("2^10 = 1000", "2^10", "wrong"),
        ("(2 + 3) * 4 = 20", "(2+3)*4", "correct"),
        ("(2 + 3) * 4 = 14", "(2+3)*4", "wrong"),
        ("80,000+50,000=$130,000", "80000+50000", "correct"),
        ("80,000+50,000=$131,000", "80000+50000", "wrong"),
        ("75 miles / 15 mph = 5 hours", "75/15", "correct"),
        ("75 miles / 15 mph = 6 hours", "75/15", "wrong"),
        ("7 hours * $15/hour = $105", "7*15", "correct"),
        ("7 hours * $15/hour = $106", "7*15", "wrong"),
        ("0.5 * 3.2 = 1.6", "0.5*3.2", "correct"),
        ("0.5 * 3.2 = 1.7", "0.5*3.2", "wrong"),
        ("3/4 = 0.75", "3/4", "correct"),
        ("3/4 = 0.8", "3/4", "correct"),  # a correct rounding to one decimal
        ("3/4 = 0.57", "3/4", "wrong"),
        ("6/8 = 3/4", "6/8", "correct"),
        ("6/8 = 2/3", "6/8", "wrong"),
        ("83 plus 91 equals 174", "83+91", "correct"),
        ("83 plus 91 equals 147", "83+91", "wrong"),
    ],
)
def test_arithmetic_equalities_are_checked_exactly(text, expr, verdict):
    claim = only(text)
    assert (claim.expression, claim.verdict) == (expr, verdict)


def test_chain_checks_every_link():
    assert verdicts("2+3 = 5 = 10/2") == [("2+3", "5", "correct"), ("10/2", "5", "correct")]
    assert verdicts("2+3 = 5 = 12/2")[1] == ("12/2", "5", "wrong")


def test_running_chain_carries_the_result_on():
    # "16 - 3 = 13 - 4 = 9" is how people write running totals, not a false equation
    assert [v for *_, v in verdicts("16 - 3 = 13 - 4 = 9")] == ["correct", "correct"]
    assert "wrong" in [v for *_, v in verdicts("16 - 3 = 12 - 4 = 8")]


def test_chain_of_two_expressions_that_disagree_is_chain_mismatch():
    claims = [c for c in check_claims("2 * 6 = 3 * 5") if c.rule == "chain_mismatch"]
    assert [c.verdict for c in claims] == ["wrong"]
    assert [c.verdict for c in check_claims("2 * 6 = 3 * 4")] == ["correct"]


def test_claim_records_span_stated_text_value_and_step():
    text = "Intro line.\nShe makes 9 * 2 = $18 a day."
    claim = only(text)
    assert text[claim.start : claim.end] == "9 * 2 = $18"
    assert (claim.stated, claim.value, claim.step, claim.rule) == ("$18", "18", 1, "arith_eq")


def test_steps_given_as_ranges_set_the_step_index():
    text = "first 1 + 1 = 2 then 2 + 2 = 5"
    claims = check_claims(text, steps=[(0, 16), (16, len(text))])
    assert [(c.step, c.verdict) for c in claims] == [(0, "correct"), (1, "wrong")]


# --- GSM8K calculator annotations -----------------------------------------------------------


def test_calc_annotation_is_checked_and_visible_number_must_agree():
    good = "Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day."
    assert verdicts(good, "calc_annotation") == [("16-3-4", "9", "correct")]
    bad_annotation = "Janet sells 16 - 3 - 4 = <<16-3-4=8>>8 duck eggs a day."
    assert verdicts(bad_annotation, "calc_annotation")[0][2] == "unverifiable"  # counted once:
    assert [c.rule for c in check_claims(bad_annotation) if c.verdict == "wrong"] == ["arith_eq"]
    assert verdicts("Janet sells <<16-3-4=8>>8 duck eggs.", "calc_annotation")[0][2] == "wrong"
    bad_visible = "Janet sells <<16-3-4=9>>10 duck eggs a day."
    assert verdicts(bad_visible, "calc_annotation") == [("16-3-4", "10", "wrong")]


def test_annotation_does_not_hide_the_visible_equation():
    claims = check_claims("She makes 9 * 2 = $<<9*2=18>>18 every day.")
    assert sorted(c.rule for c in claims) == ["arith_eq", "calc_annotation"]
    assert all(c.verdict == "correct" for c in claims)


# --- percent-of and fraction-of ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rule", "verdict"),
    [
        ("20% of 50 is 10", "percent_of", "correct"),
        ("20% of 50 is 12", "percent_of", "wrong"),
        ("25% of $80 = $20", "percent_of", "correct"),
        ("half of 18 is 9", "fraction_of", "correct"),
        ("half of 18 is 8", "fraction_of", "wrong"),
        ("a third of 12 is 4", "fraction_of", "correct"),
        ("a third of 12 is 3", "fraction_of", "wrong"),
        ("3/4 of 20 = 15", "fraction_of", "correct"),
        ("twice 7 is 14", "arith_eq", "correct"),
        ("double 7 is 15", "arith_eq", "wrong"),
    ],
)
def test_percent_and_fraction_phrases(text, rule, verdict):
    claim = only(text)
    assert (claim.rule, claim.verdict) == (rule, verdict)


def test_percentages_are_read_both_ways():
    assert only("50% = 0.5").verdict == "correct"
    assert only("3/4 * 100 = 75%").verdict == "correct"
    assert only("0.75 * 100% = 75%").verdict == "correct"
    assert only("100% - 20% = 80%").verdict == "correct"
    assert only("0.24 * 100% = 42%").verdict == "wrong"


# --- LaTeX ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        (r"$\frac{3}{4} \times 8 = 6$", "correct"),
        (r"$\frac{3}{4} \times 8 = 7$", "wrong"),
        (r"\( \sqrt{16} + 2^{3} = 12 \)", "correct"),
        (r"\( \sqrt{16} + 2^{3} = 14 \)", "wrong"),
        (r"\[ 6 \cdot 7 = 42 \]", "correct"),
        (r"\[ 6 \cdot 7 = 48 \]", "wrong"),
        (r"$\left( 2 + 3 \right)^{2} = 25$", "correct"),
        (r"$\left( 2 + 3 \right)^{2} = 15$", "wrong"),
        (r"$\dfrac{10}{4} = 2.5$", "correct"),
        (r"$12 \div 3 = 4$", "correct"),
        (r"$\sqrt{2} \approx 1.414$", "correct"),
        (r"$\sqrt{2} \approx 1.7$", "wrong"),
    ],
)
def test_latex_math_is_normalized(text, verdict):
    assert only(text).verdict == verdict


def test_latex_nested_fraction_value():
    claim = only(r"$\frac{1}{\frac{1}{2} + \frac{1}{3}} = \frac{6}{5}$")
    assert (claim.value, claim.verdict) == ("1.2", "correct")


# --- rounding -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "verdict", "rule"),
    [
        ("10/3 = 3.33", "correct", "rounding"),
        ("10/3 = 3.3333", "correct", "rounding"),
        ("2/3 = 0.67", "correct", "rounding"),
        ("2/3 = 0.66", "correct", "rounding"),  # a repeating decimal cut short
        ("2/3 = 0.68", "wrong", "arith_eq"),
        ("1/3 = 0.4", "wrong", "arith_eq"),
        ("10/3 = 3", "correct", "rounding"),
        ("10/3 = 4", "unverifiable", "arith_eq"),  # a ceiling, maybe on purpose
        ("10/3 = 5", "wrong", "arith_eq"),
        ("22/7 ≈ 3.14", "correct", "rounding"),
        ("1000/7 ~ 143", "correct", "rounding"),
        ("1000/7 ≈ 150", "unverifiable", "arith_eq"),
        ("1000/7 ≈ 200", "wrong", "arith_eq"),
    ],
)
def test_rounding_rule(text, verdict, rule):
    claim = only(text)
    assert (claim.verdict, claim.rule) == (verdict, rule)


# --- no false alarms --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "The meeting is on 2023-10-05 at 10:30.",
        "It takes 3-4 hours = most of the afternoon.",
        "1. 5 + 3 = 8\n2. 6 + 1 = 7",
        "x + 2 = 5, so x = 3.",
        "2x + 3 = 7",
        "1 hour = 60 minutes",
        "1 dozen = 12 eggs",
        "He had 3 1/2 - 2 = 1 1/2 hours left.",
        "Yuri scored 1/2 (68) + 10 = 44 points",
        "The ratio x:z = 1: (-3/2) = 2: -3",
        "Pages 400-488 is 89 numbers.",
        "4 students drank 1.5 quarts = 4 * 1.5 = 6 quarts",
        "3182 - 319 + 1 = 3182 - 319 = 2863; 2863 + 1 = 2864.",
        "- 488 - 400 + 1 = 89 numbers.",
        r"\cos\theta = \frac{0}{7 \times \sqrt{157}} = 0",
        "60 questions x 40/100 = 24 easy questions",
    ],
)
def test_no_false_alarm(text):
    assert [c for c in check_claims(text) if c.verdict == "wrong"] == []


def test_equation_with_variables_is_unverifiable():
    claim = only("x + 2 = 5")
    assert (claim.verdict, claim.value) == ("unverifiable", "")


# --- contradiction rules ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("She makes 9 * 2 = 18 dollars.\n#### 18", "correct"),
        ("She makes 9 * 2 = 18 dollars.\n#### 19", "wrong"),
        (r"So $3 \times 4 = 12$. The answer is $\boxed{12}$.", "correct"),
        (r"So $3 \times 4 = 12$. The answer is $\boxed{\frac{24}{2}}$.", "correct"),
        (r"So $3 \times 4 = 12$. Thus $\boxed{13}$.", "wrong"),
        ("3 * 4 = 12. The answer is 15.", "wrong"),
        ("3 * 4 = 12\nAnswer: 12", "correct"),
        ("He pays 2.5 * 4 = 10 dollars, i.e. 1000 cents.\n#### 1000", "unverifiable"),
    ],
)
def test_final_answer_against_last_result(text, verdict):
    claims = [c for c in check_claims(text) if c.rule == "final_answer_mismatch"]
    assert [c.verdict for c in claims] == [verdict]


def test_same_expression_with_two_values_is_inconsistent():
    # noted, never "wrong": arith_eq already flags 7 * 8 = 54 (one error, one flag)
    claims = check_claims("First 7 * 8 = 56.\nLater 7 * 8 = 54.")
    flagged = [c for c in claims if c.rule == "inconsistent_quantity"]
    assert [(c.expression, c.stated, c.value, c.verdict) for c in flagged] == [
        ("7*8", "54", "56", "unverifiable")
    ]
    assert not [c for c in check_claims("7 * 8 = 56. Again 7 * 8 = 56.") if c.rule == "inconsistent_quantity"]


# --- to_dict / from_dict ----------------------------------------------------------------------


def test_claim_dict_round_trip():
    for claim in check_claims("9 * 2 = $<<9*2=18>>18\n3/4 = 0.57\n#### 18"):
        d = json.loads(json.dumps(claim.to_dict()))
        assert Claim.from_dict(d) == claim


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"start": "3"}, "start"),
        ({"end": 1.5}, "end"),
        ({"verdict": "maybe"}, "verdict"),
        ({"rule": "vibes"}, "rule"),
        ({"stated": None}, "stated"),
        ({"step": True}, "step"),
        ({"start": 9, "end": 2}, "end"),
    ],
)
def test_from_dict_names_the_bad_field(change, field):
    d = only("9 * 2 = 18").to_dict() | change
    with pytest.raises(TraceError, match=rf"claims\[3\]\.{field}"):
        Claim.from_dict(d, path="claims[3]")


def test_from_dict_rejects_missing_field_and_non_dict():
    d = only("9 * 2 = 18").to_dict()
    del d["value"]
    with pytest.raises(TraceError, match=r"claims\[i\]\.value: missing"):
        Claim.from_dict(d)
    with pytest.raises(TraceError, match="expected an object"):
        Claim.from_dict(["not", "a", "dict"])


def test_rules_listed_cover_every_rule_name_used():
    assert {
        "arith_eq",
        "calc_annotation",
        "percent_of",
        "fraction_of",
        "rounding",
        "final_answer_mismatch",
        "inconsistent_quantity",
        "chain_mismatch",
    } == set(RULES)


# --- real data ------------------------------------------------------------------------------


def _gsm8k_answers() -> list[str]:
    if not GSM8K.exists():
        pytest.skip(f"GSM8K data not found at {GSM8K} (shared data folder absent)")
    return [json.loads(line)["answer"] for line in GSM8K.read_text(encoding="utf-8").splitlines()]


def test_gsm8k_reference_solutions_false_alarm_rate_at_most_half_percent():
    from benchmarks.claims import count_false_alarms, strip_annotations

    answers = _gsm8k_answers()
    assert len(answers) == 1319
    for texts in (answers, [strip_annotations(a)[0] for a in answers]):
        total, wrong = count_false_alarms(texts)
        assert total > 5000
        assert wrong / total <= 0.005, (wrong, total)


def test_gsm8k_planted_errors_detection_rate_at_least_95_percent():
    # the first 500 solutions keep this test quick; the benchmark runs all 1,319
    from benchmarks.claims import measure_detection

    det = measure_detection(_gsm8k_answers()[:500], seed=1)
    caught = sum(c for c, _ in det.values())
    planted = sum(n for _, n in det.values())
    assert planted > 1000
    assert caught / planted >= 0.95, det


# --- hostile and odd input ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "(" * 3000 + "1" + ")" * 3000 + " = 1",  # deeper than Python's recursion limit
        "9^400^400 = 3",
        "10^400 + 1/2 = 10^400",
        "1" * 5000 + " + 1 = 2",
        "trailing backslash \\",
        "\\\n= 3",
        r"\frac{" * 300 + "1",
        "}}}{{{ = 5",
        "<<>> <<=>> <<1+1=2",
        "#### \n\\boxed{",
    ],
)
def test_hostile_input_gives_claims_not_exceptions(text):
    for claim in check_claims(text):
        assert 0 <= claim.start <= claim.end <= len(text)
        assert claim.verdict in ("correct", "wrong", "unverifiable")


def test_random_math_soup_never_raises_and_spans_stay_in_text():
    import random

    pieces = list("0123456789+-*/^()=.,%$ x<>#{}\\~≈:\n") + [
        r"\frac",
        r"\sqrt",
        "half of",
        " is ",
        "<<",
        ">>",
        "####",
        r"\boxed{",
        "of",
        "−",
        "²",
    ]
    rng = random.Random(7)
    for _ in range(2000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 30)))
        for claim in check_claims(text):
            assert 0 <= claim.start <= claim.end <= len(text)
            assert Claim.from_dict(claim.to_dict()) == claim


def test_values_are_written_exactly():
    from fractions import Fraction

    from o3viz.verify.claims.evaluate import format_value

    assert format_value(Fraction(7, 2)) == "3.5"
    assert format_value(Fraction(-7, 4)) == "-1.75"
    assert format_value(Fraction(10, 3)) == "10/3"
    assert format_value(Fraction(10**400) + Fraction(1, 2)).endswith("0000.5")
    assert only("1/8 = 0.125").value == "0.125"


def test_claim_outside_every_given_step_has_step_minus_one():
    claims = check_claims("intro. 2 + 2 = 4", steps=[(0, 6)])
    assert [c.step for c in claims] == [-1]
