"""The one reference reducer (o3viz.text.reference): GSM8K's ``#### N``, the model-solutions file's
"A: N", ``\\boxed{}`` and a bare number reduce to the answer; short answers stay as they are; prose
stays text (and is never graded ``fail``)."""

from __future__ import annotations

import pytest

from o3viz.tasks.spec import gsm8k_reference
from o3viz.text.reference import reduce_reference, reference_answer


@pytest.mark.parametrize(
    ("given", "answer", "method"),
    [
        ("She makes 9 * 2 = $<<9*2=18>>18 every day.\n#### 18", "18", "hashes"),
        ("Janet sells 16 - 3 - 4 = 9 duck eggs a day.\nA: 18", "18", "answer_label"),
        ("So the answer is $\\boxed{\\frac{14}{3}}$.", "\\frac{14}{3}", "boxed"),
        ("18", "18", "number"),
        (" 1,234 ", "1,234", "number"),
        ("$18", "$18", "number"),
        (18, "18", "number"),
        ("\\left( 3, \\frac{\\pi}{2} \\right)", "\\left( 3, \\frac{\\pi}{2} \\right)", "as_is"),
        ("\\text{Evelyn}", "\\text{Evelyn}", "as_is"),
        ("p - q", "p - q", "as_is"),
        ("Janet sells 9 duck eggs a day.\nShe makes 18 dollars every day.", None, "text"),
        ("The first one is larger, because its base grows faster than the other one.", None, "text"),
    ],
)
def test_a_reference_reduces_to_its_answer(given, answer, method):
    ref = reduce_reference(given)
    assert (ref.answer, ref.method) == (answer, method)


def test_no_reference_is_none_and_the_task_loader_uses_the_same_reducer():
    assert reduce_reference(None) is None and reduce_reference("  ") is None
    assert reference_answer("It takes 2/2=1 bolt.\n#### 3") == "3"
    assert gsm8k_reference("2,000 + 1 = 2,001\n#### 2,001") == "2001"
