"""The claim checker reads competition LaTeX (issue 63, finding 3): each misreading that put a
flag on a correct step of a recent model's solution, in an invented sentence of the same form,
and the errors in that notation it still finds. When a reading is in doubt the claim is
``unverifiable``, never ``wrong``."""

from __future__ import annotations

import pytest

from o3viz.verify.claims.check import check_claims


def flags(text: str) -> list[tuple[str, str]]:
    return [(c.expression, c.stated) for c in check_claims(text) if c.verdict == "wrong"]


def verdicts(text: str) -> list[tuple[str, str, str]]:
    return [(c.expression, c.stated, c.verdict) for c in check_claims(text)]


@pytest.mark.parametrize(
    "text",
    [
        # the bullets flattened onto one line, and split by a Unicode line separator
        "- \\(21 = 3 \\times 7\\) - \\(22 = 2 \\times 11\\)",
        "- \\(21 = 3 \\times 7\\)\u2028- \\(22 = 2 \\times 11\\)",
        "  - \\(21 = 3 \\times 7\\)   - \\(22 = 2 \\times 11\\)",
    ],
)
def test_a_list_bullet_is_no_minus_sign(text):
    assert verdicts(text) == [("3*7", "21", "correct"), ("2*11", "22", "correct")]


def test_display_math_ends_an_expression():
    text = "\\[-9 + (-8) = -17\\] \\[-17 + (-7) = -24\\] \\[ 8y - 8 - 8y = -3 \\] \\[ -8 = -3 \\]"
    assert flags(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "So x = 3 or x = 7.\nThe answer is \\boxed{3, 7}",
        "So x = -1 or x = 4.\nThe solutions are \\boxed{-1 \\text{ and } 4}",
        "We get x = 5.\nThe roots are \\boxed{2 \\pm 3}",
    ],
)
def test_a_multi_valued_answer_is_a_set(text):
    final = [c for c in check_claims(text) if c.rule == "final_answer_mismatch"]
    assert [c.verdict for c in final] == ["correct"]


def test_a_set_without_the_last_result_is_unverifiable_and_a_thousands_comma_is_one_number():
    final = [c for c in check_claims("So 2 + 2 = 4.\n\\boxed{3, 7}") if c.rule == "final_answer_mismatch"]
    assert [c.verdict for c in final] == ["unverifiable"]
    final = [
        c for c in check_claims("So 35 * 300 = 10,400.\n\\boxed{10,500}") if c.rule == "final_answer_mismatch"
    ]
    assert [c.verdict for c in final] == ["wrong"]


@pytest.mark.parametrize(
    "text",
    [
        "\\[ x = 2 \\pm \\sqrt{3} = 3.73 \\]",
        "\\[ x = \\frac{-2 \\pm 6}{2} = 2 \\]",
        "\\[ x = 5 \\pm 2 = 3 \\]",
    ],
)
def test_a_plus_minus_expression_is_not_paired_with_one_root(text):
    assert flags(text) == []


def test_a_factorial_is_not_a_number():
    assert flags("\\[ 12!(11 \\times 10 - 1) = 12! \\times 109 \\]") == []
    assert verdicts("\\[ 12!(11 \\times 10 - 1) = 12! \\times 109 \\]")[0][2] == "unverifiable"


@pytest.mark.parametrize(
    "text",
    [
        "The last digit of 3^5, which is 3.",
        "The units digit of \\(3^3\\), which is 7.",
        "The exponent of \\(13^{19}\\) is 19, which is 4 \\cdot 4 + 3.",
        "The divisors of 2^2 \\times 3^2 are 1, 2, 3, 4, 6, 9, 12, 18, 36.",
        "The units digits of \\(13^{19}\\) and \\(19^{13}\\) are 7 and 9.",
        "so \\(2^1 * 2^2\\) gives the remainder of \\(2^3\\) which is 3 when divided by 5.",
    ],
)
def test_is_after_a_property_is_no_equation(text):
    assert flags(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "Therefore, \\(31^2\\) is \\(\\boxed{600}\\) greater than \\(19^2\\).",
        "- \\(5^8\\) is \\(5\\) raised to the power of \\(8\\)",
        "So 7 \\times 8 is 6 more than 50.",
    ],
)
def test_is_before_a_comparison_is_no_equation(text):
    # found on ProcessBench's held-out half after its one measurement (a development fix since)
    assert flags(text) == []


def test_the_last_digit_is_not_the_power():
    assert [c.expression for c in check_claims("The last digit of 2^3, which is 8.")] == []


@pytest.mark.parametrize(
    "text",
    [
        "35 \\times 300 = 10\\;500",
        "35 \\times 300 = 10\\ 500",
        "35 \\times 300 = 10 500",
        "35 \\times 300 = 10, 500",
    ],
)
def test_a_spaced_thousands_group_is_not_cut_off(text):
    assert flags(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "\\[ 35 \\times 300 = 10,500 \\]",
        "\\[ \\frac{9^4}{k^4} = 81 \\]",
        "\\[ \\frac {9^4} {k^4} = 81 \\]",
        "\\[ \\cfrac{9^4}{k^4} = 81 \\]",
    ],
)
def test_a_fraction_and_a_thousands_comma_are_read_whole(text):
    assert flags(text) == []
    assert all(c.expression not in ("9^4", "k^4") for c in check_claims(text))


@pytest.mark.parametrize(
    "text",
    [
        "We have \\(p + q = \\frac12\\) and \\(pq = -\\frac16\\).",
        "Since \\(BD = \\frac{31}{2}\\) and \\(AC = 22\\), we substitute.",
        "We know \\(a + b = 7\\) and \\(ab = \\frac{43}{3}\\).",
        "\\[ 4^2 = 2^2 + 3^2 - 2 \\cdot 2 \\cdot 3 \\cos C \\]",
        "\\[ \\sqrt{12} = 2 \\sqrt{3} \\]",
        "\\[ f \\left( \\frac{1}{3} \\right) = 2 \\times \\frac{1}{3} = \\frac{2}{3} \\]",
        "$$355\\div 6=58\\;\\mathrm{R}\\;5.$$",
    ],
)
def test_terms_with_variables_are_not_numbers(text):
    assert flags(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "- New position: 1st - 5 = 6th",
        "- New position: 8th - 3 = 11th",
        "So $3/16 = 1/8 + 1/16 = 0.0011_2$.",
        "\\[ 0.101_2 = \\frac{5}{8} = 0.625 \\]",
        "\\[ \\frac14 \\text{ inch} = 10 \\text{ miles} \\]",
        "\\[ \\frac{1}{2} \\text{ inch} = 20 \\text{ miles} \\]",
        "a \\( 2009 \\times 2009 \\) square is \\(\\boxed{1004.5}\\).",
    ],
)
def test_ordinals_bases_and_units_are_not_arithmetic(text):
    assert flags(text) == []


def test_modular_arithmetic_is_not_checked_as_equality():
    text = (
        "\\[4^4 = (4^2)^2 = (-1)^2 = 1 \\pmod{17},\\] \\[8^4 = (8^2)^2 = 13^2 = 169 \\equiv -1 \\pmod{17}.\\]"
    )
    assert flags(text) == []


def test_a_claim_false_modulo_its_own_modulus_is_still_wrong():
    text = "So $17\\cdot5\\cdot42=735$ is the multiplicative inverse of 17 mod 83."
    assert flags(text) == [("17*5*42", "735")]
    assert flags("\\(3 \\cdot 7 = 20 \\equiv 1 \\pmod{4}\\)") == [("3*7", "20")]


def test_a_remainder_is_not_a_quotient():
    assert flags("The remainder of 17 divided by 5 is 2.") == []
    assert flags("The remainder of 1000 - 7 \\cdot 142 is 5.") == [("1000-7*142", "5")]


def test_uppercase_units_and_words_still_carry_a_claim():
    assert flags("50 miles / 10 MPG = 500 gallons of gas") == [("50/10", "500")]
    assert flags("Total number of M&M's: 300+312+150=150.96 M&M's") == [("300+312+150", "150.96")]
    assert flags("Ella earned $33 / 3 hours of dog walking = $12 per hour.") == [("33/3", "$12")]


def test_markdown_bold_is_not_a_power():
    assert verdicts("**Answer: 5** 3 + 4 = 7") == [("3+4", "7", "correct")]
    assert verdicts("2**3 = 8") == [("2^3", "8", "correct")]


def final_verdicts(text: str) -> list[str]:
    return [c.verdict for c in check_claims(text) if c.rule == "final_answer_mismatch"]


def test_an_answer_in_another_unit_is_not_a_mismatch():
    assert final_verdicts("So 2 + 3 = 5 cm.\n\\boxed{50 \\text{ mm}}") == ["unverifiable"]
    assert final_verdicts("So 10 + 5 = 15 minutes.\nThe answer is \\boxed{0.25} hours") == ["unverifiable"]
    assert final_verdicts("So 2 + 3 = 5 cm.\n\\boxed{6 \\text{ cm}}") == ["wrong"]


@pytest.mark.parametrize(
    ("text", "expr"),
    [
        ("\\[ 3 + 4 = 8 \\]", "3+4"),
        ("The sum is \\(53 + 57 + 61 + 48 = 221\\), which is correct.", "53+57+61+48"),
        ("5 + 6, which is \\(12\\).", "5+6"),
        (
            "\\[ \\text{Total fruits} = 52 + 24 + 44 + 48 \\] \\[ \\text{Total fruits} = 178 \\]",
            "52+24+44+48",
        ),
        (
            "\\(\\frac{32 \\cdot 11}{1485} + \\frac{20 \\cdot 15}{1485} = \\frac{652}{1485} = \\frac{92}{585}\\)",
            "((652)/(1485))",
        ),
        ("\\[ x = 5050 - 77 \\times 68 = 5050 - 5256 = -206 \\]", "5050-77*68"),
        ("- \\(3 \\times 8 = 21\\)\n- \\(22 = 2 \\times 11\\)", "3*8"),
    ],
)
def test_errors_in_latex_are_still_found(text, expr):
    assert expr in [e for e, _ in flags(text)]
