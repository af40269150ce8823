"""The claim checker must not flag correct arithmetic: self-corrections, one error counted once,
and numbers read with their units and variables. Each case comes from real text (an R1-distill
MATH-500 trace, GPT-3 GSM8K solutions, PRM800K steps) or restates a user report."""

from __future__ import annotations

import pytest

from o3viz.verify.claims.check import check_claims


def _wrong(text: str) -> list[tuple[str, str, str, str]]:
    return [(c.expression, c.stated, c.value, c.rule) for c in check_claims(text) if c.verdict == "wrong"]


# --- self-corrections ------------------------------------------------------------------------

R1_TRACE = (
    "Wait, earlier I thought that 2 * 3 * (4 * 5) + 1 = 126.\n"
    "But 2 * 3 * (4 * 5) + 1 is 121, not 126.\n"
    "If I group 3 * (4 * 5) + 1, that would be 3 * 20 + 1 = 60 + 1 = 61.\n"
    "Then 4 * 5 = 61.\n"
    "Wait, no: 4 * 5 is 20.\n"
)


def test_the_correction_is_not_the_error():
    claims = check_claims(R1_TRACE)
    wrong = [c for c in claims if c.verdict == "wrong"]
    # the two wrong statements are the errors, each once; the corrections are not
    assert [(c.step, c.expression, c.stated) for c in wrong] == [(0, "2*3*(4*5)+1", "126"), (3, "4*5", "61")]
    fixed = [c for c in claims if c.step in (1, 4)]
    assert fixed and all(c.verdict != "wrong" for c in fixed)


def test_a_consistency_check_reports_only_computed_values():
    claims = check_claims(R1_TRACE)
    for c in claims:
        if c.rule == "inconsistent_quantity":
            assert c.verdict != "wrong"
            assert c.value in ("", "121", "20")  # computed, never the earlier stated 126 / 61


@pytest.mark.parametrize(
    "text",
    [
        "So 2 * 3 * (4 * 5) + 1 is 121, not 126.",
        "First 5 + 6 = 12. Wait, that's wrong: 5 + 6 = 11.\nAgain 5 + 6 = 11.",
    ],
)
def test_later_correct_statement_is_never_wrong(text):
    assert all(c.verdict != "wrong" for c in check_claims(text) if "= 11" in text[c.start : c.end + 1])
    assert not [w for w in _wrong(text) if w[1] != "12"]


def test_inconsistent_pair_counts_once():
    # 7 * 8 = 54 is one error: arith_eq flags it; the repeated value is a consequence
    assert _wrong("First 7 * 8 = 56.\nLater 7 * 8 = 54.") == [("7*8", "54", "56", "arith_eq")]


# --- one error, one flag ---------------------------------------------------------------------


def test_annotation_and_equation_on_one_statement_count_once():
    # MR-GSM8K: the visible equation and its calculator annotation state the same wrong result
    text = "He has $27000-54 = $<<27000-54=26456>>26456 left"
    claims = check_claims(text)
    assert [c.rule for c in claims if c.verdict == "wrong"] == ["arith_eq"]
    twin = [c for c in claims if c.rule == "calc_annotation"]
    assert twin and twin[0].verdict == "unverifiable" and "same error" in twin[0].note


def test_restated_wrong_claim_counts_once():
    text = "So 12 * 3 = 38 apples.\nAs above, 12 * 3 = 38, and 38 + 2 = 40."
    assert _wrong(text) == [("12*3", "38", "36", "arith_eq")]
    repeat = [c for c in check_claims(text) if c.step == 1 and c.expression == "12*3"]
    assert repeat[0].verdict == "unverifiable" and "repeats" in repeat[0].note


# --- numbers read with their units and variables ---------------------------------------------


def test_grouping_does_not_pair_a_sub_expression_with_the_whole_result():
    text = "Wait, so grouping 3 * 4 and 5 + 1 gives 72, then 2 * 72 = 144."
    assert _wrong(text) == []
    assert _wrong("Then grouping 4 * 5 first gives 61.") == []


def test_and_still_separates_two_finished_claims():
    assert _wrong("16 - 3 = 13 and 5 + 1 = 7") == [("5+1", "7", "6", "arith_eq")]


def test_a_variable_glued_to_a_number_is_a_term():
    claims = check_claims("So 49 - 3ab = 6")
    assert [(c.expression, c.verdict) for c in claims] == [("49-3*ab", "unverifiable")]
    assert _wrong("It weighs 3 + 4 = 7kg") == []  # a glued unit stays a unit


@pytest.mark.parametrize(
    "text",
    [
        "He can get 200 sticks from a 2 x 4 piece of wood = 200 sticks",
        "a 2 x 4 board is 8 feet long, and a 2 x 6 board is 10 feet long",
        "Cut a 4 x 8 sheet of plywood = 32 square feet",
    ],
)
def test_dimensions_are_not_products(text):
    assert _wrong(text) == []


def test_space_grouped_thousands():
    text = "The brokerage fee is $350 000 x 5/100 = $17 500.\nThe total is $350 000 + $17 500 = $367 500."
    claims = check_claims(text)
    assert [(c.expression, c.verdict) for c in claims] == [
        ("350000*5/100", "correct"),
        ("350000+17500", "correct"),
    ]
    wrong = check_claims("So $350 000 + $17 500 = $368 500.")
    assert [(c.value, c.verdict) for c in wrong] == [("367500", "wrong")]


def test_thin_space_thousands():
    claims = check_claims("So $350\u2009000 + $17\u202f500 = $367\u2009500.")
    assert [(c.value, c.verdict) for c in claims] == [("367500", "correct")]


# --- the final answer ------------------------------------------------------------------------


def test_boxed_dollar_amount_is_read_as_its_number():
    claims = check_claims("The total is 40 + 5 = 45 dollars.\n$\\boxed{\\$45.00}$")
    final = [c for c in claims if c.rule == "final_answer_mismatch"]
    assert [(c.stated, c.verdict) for c in final] == [("45.00", "correct")]


def test_answer_combining_later_numbers_is_not_wrong():
    text = "The meal is 5 * 8 = 40 dollars, and he adds a 5 dollar tip.\n$\\boxed{\\$45.00}$"
    assert _wrong(text) == []


def test_boxed_result_of_the_last_equation_is_that_result():
    text = "We have 2 + 1 = 3, so $3 \\times 3 = \\boxed{9}$"
    assert _wrong(text) == []
    final = [c for c in check_claims(text) if c.rule == "final_answer_mismatch"]
    assert [(c.value, c.verdict) for c in final] == [("9", "correct")]
    assert _wrong("So the answer is $5+4+2=\\boxed{11}$.") == []


def test_answer_in_another_base_is_not_compared():
    assert _wrong("In base 9, 3 + 1 = 4 digits.\nThe answer is $40_9$.") == []


def test_calculator_float_noise_cut_short_is_not_wrong():
    # GPT-3 GSM8K solutions copy the annotation's 14.999999999999998 as 14.99
    text = "The total is $4.20 + $9.45 + $1.35 = $<<4.20+9.45+1.35=14.999999999999998>>14.99."
    assert _wrong(text) == []
    assert _wrong("The total is $4.20 + $9.45 = $<<4.20+9.45=13.65>>13.56.") != []


def test_visible_space_grouped_result_is_read_whole_at_a_sentence_end():
    # GPT-3 GSM8K: the annotation computes in thousands, the visible text is right
    text = "The fee is $400 000 x 3/100 = $<<400*3/100=12.0>>12 000.\nSo $12 000 + $20 000 = $<<12000+20000=32000>>32 000."
    assert _wrong(text) == []
    note = [c.note for c in check_claims(text) if c.rule == "calc_annotation" and c.step == 0]
    assert note == ["the visible equation is right; its annotation is not"]


@pytest.mark.parametrize("text", ["Is 4 * 5 = 25? No, 4 * 5 = 20.", "4 * 5 = 25? No: 4 * 5 is 20."])
def test_a_question_answered_by_a_correction_is_not_an_error(text):
    assert _wrong(text) == []


def test_a_stated_slip_corrected_later_is_still_the_error():
    # "I mean 20" corrects it, but the text did state 25: that statement is the one error
    assert _wrong("4 * 5 = 25, I mean 20.") == [("4*5", "25", "20", "arith_eq")]


def test_a_product_of_measures_is_still_checked():
    # GSM8K: the volume is a product, not a size ("feet long" names no object)
    assert _wrong("The pool is 14 feet wide x 25 feet long x 4 feet deep = 2.24 cubic feet") != []
    assert _wrong("He cuts a 2 x 4 inch board = 12 sticks") == []


def test_words_between_addends_keep_the_sum_whole():
    # GPT-3 GSM8K: "the first week" sits between the operands of one sum
    text = "It grew 3 inches the first week + 2 inches the second week + 4 inches the third week = 9 inches."
    assert _wrong(text) == []
