"""The one final-answer extractor (o3viz.text.answers): the order of its rules, non-numeric
answers, the tiers an imported text is read in, linear time on hostile text, and agreement of
capture, solve and the claim checker on what the answer is."""

from __future__ import annotations

import pytest

from o3viz.run.assemble import extract_answer as capture_answer
from o3viz.testing.cpu import best_cpu_seconds
from o3viz.text.answers import answer_in_regions, extract_answer, extract_strong_answer, round_answer
from o3viz.verify.claims.rules import find_final_answer


@pytest.mark.parametrize(
    ("text", "answer", "method"),
    [
        ("The answer is 12, or \\boxed{13}.", "13", "boxed"),  # boxed wins over "answer is"
        ("3 * 4 = 12. The answer is 15 apples.", "15 apples", "answer_label"),
        ("2 + 2 = 4, and then 9.", "9", "last_number"),
        ("Thus \\boxed{\\text{Evelyn}}", "\\text{Evelyn}", "boxed"),
        ("So final answer: Evelyn.", "Evelyn", "answer_label"),
        ("Angela: 1.4 / 6.8 ≈ 0.21\n\nThus, Evelyn’s average speed is the largest.", "Evelyn", "conclusion"),
        ("Q: ...\nA: 26", "26", "answer_label"),
        ("\\boxed{1} then \\boxed{2", "1", "boxed"),  # an unclosed box is skipped, not read to the end
    ],
)
def test_extractor_prefers_boxed_then_answer_is_then_last_number(text, answer, method):
    found = extract_answer(text)
    assert (found.text, found.method) == (answer, method)
    assert text[found.start : found.end] == answer


def test_a_number_after_the_conclusion_is_not_displaced_by_a_name():
    assert extract_answer("Thus, Evelyn wins with 3.6 points.").text == "3.6"


def test_import_reads_a_strong_answer_in_the_thinking_before_the_answers_last_number():
    # R1's math500_0004: the answer part lists speeds ending "(0.21)"; the thinking says "Evelyn"
    thinking = "So final answer: Evelyn.\n"
    answer = "Evelyn has the greatest average speed: Briana (0.88), Angela (0.21)."
    text = thinking + answer
    regions = {"thinking": [0, len(thinking)], "answer": [len(thinking), len(text)]}
    found = answer_in_regions(text, regions, "math")
    assert (found.text, found.method) == ("Evelyn", "answer_label")
    regions_no_label = {"answer": [0, len(answer)]}
    assert answer_in_regions(answer, regions_no_label, "math").text == "0.21"  # nothing better stated


@pytest.mark.parametrize(
    "text",
    [
        "Step: 17 * 23 = 391.\nThe answer is \\boxed{391}.",
        "It costs $1,250.",
        "We get 6 * 7 = 42\n#### 42",
        "no number at all",
    ],
)
def test_capture_solve_and_claims_read_the_same_answer(text):
    found = round_answer(text, "math")
    assert capture_answer(text, "math") == (found.text if found else None)
    strong = extract_strong_answer(text)
    final = find_final_answer(text)
    assert (final[2] if final else None) == (strong.text if strong else None)


def test_general_tasks_store_a_strong_answer_or_the_last_line():
    assert round_answer("Let me think.\nThe answer is Paris.", "general").text == "Paris"
    assert round_answer("x\n\nlast line \n", "general").text == "last line"


HOSTILE = [
    "the answer is" + " " * 200_000 + "x",
    "\\boxed{" * 100_000,
    "\n" * 500_000,
    " \n" * 300_000,
    "Answer:" + " \n" * 200_000,
    "$" * 300_000,
    "\\(" * 200_000,
    "1" + ",234" * 100_000,
    "Thus, " * 100_000,
    "answer " * 100_000,
    "nswer NSWER " * 50_000,
]


@pytest.mark.parametrize("text", HOSTILE, ids=[f"hostile{i}" for i in range(len(HOSTILE))])
def test_extractor_is_linear_on_hostile_text(text):
    assert best_cpu_seconds(lambda: (extract_answer(text), round_answer(text, "general")), budget=2.0) <= 2.0


@pytest.mark.parametrize(
    "answer,reference,same",
    [
        ("3√13", "3\\sqrt{13}", True),
        ("√(2)/2", "\\frac{\\sqrt{2}}{2}", True),
        ("−2π", "-2\\pi", True),
        ("2×3", "6", True),
        ("3√13", "3\\sqrt{14}", False),
        ("√", "\\sqrt{}", False),
    ],
)
def test_unicode_math_answers_compare_as_their_latex(answer, reference, same):
    from o3viz.text.answers import answers_equivalent

    assert answers_equivalent(answer, reference) is same


def test_an_answer_over_the_stated_bound_never_compares_equal():
    from o3viz.text.answers import MAX_ANSWER_CHARS, answers_equivalent

    long = "9" * (MAX_ANSWER_CHARS + 1)
    assert not answers_equivalent(long, long)
    assert answers_equivalent("9" * MAX_ANSWER_CHARS, "9" * MAX_ANSWER_CHARS)


def test_normalizing_a_long_run_of_blanks_is_linear():
    """``\\s*degrees?\\b`` restarted its scan of a run of blanks at every blank: quadratic (68 s on
    48,000 blanks under load). Normalizing unclipped text is one scan a run now."""
    from o3viz.text.equivalence import normalize_answer

    text = " " * 200_000 + "x"
    assert best_cpu_seconds(lambda: normalize_answer(text), budget=2.0) <= 2.0
    assert normalize_answer("90 degrees") == normalize_answer("90^\\circ") == normalize_answer("90")


def test_a_comma_in_a_tuple_separates_its_elements():
    """``(98,105)`` read as 98105: the thousands-comma rule ran inside tuples, so the point did not
    equal itself written with a space."""
    from o3viz.text.equivalence import answers_equivalent

    assert answers_equivalent("(98,105)", "(98, 105)")
    assert not answers_equivalent("(98,105)", "98105")
    assert answers_equivalent("98,105", "98105")  # a bare number keeps its thousands comma
