"""Task kind: one rule (``o3viz.tasks.kind.detect_task_type``) for a free prompt, so ``capture``
and ``solve`` give the same prompt the same kind."""

from __future__ import annotations

import pytest

from o3viz.run.capture import CaptureConfig, RunRequest, capture
from o3viz.run.solve import solve
from o3viz.tasks.kind import detect_task_type
from o3viz.tasks.spec import prompt_task
from o3viz.testing.builders import make_tiny_llama


def test_task_type_detection():
    assert detect_task_type("Natalia sold 48 clips in April and half as many in May. How many?") == "math"
    assert detect_task_type("Solve x + 3 = 10") == "math"
    assert detect_task_type("def add(a, b):\n    return a + b") == "code"
    assert detect_task_type("Write a Python function that sorts a list.") == "code"
    assert detect_task_type("Why is the sky blue?") == "general"


# Prompts on which the two old rules (capture's and solve's) disagreed.
DISAGREED = [
    ("Write a function that adds 2 and 3.", "code"),
    ("How many legs does a spider have?", "general"),
    ("Tom has 3 apples and 5 pears.", "math"),
]


@pytest.mark.parametrize(("prompt", "kind"), DISAGREED)
def test_free_prompt_gets_the_same_kind_from_solve_and_capture(prompt, kind):
    assert prompt_task(prompt).task.kind == kind


@pytest.mark.model
def test_capture_and_solve_give_a_free_prompt_the_same_kind():
    model, tok = make_tiny_llama()
    off = CaptureConfig(enabled=False)
    for prompt, kind in DISAGREED:
        req = RunRequest(prompt=prompt, rounds=1, max_new_tokens=2, capture=off)
        captured = capture(model, tok, req).task.kind
        solved = solve(model, tok, req).task.kind
        assert captured == solved == kind, prompt


# Questions on which the importers' old rule (its own regexes) and the one rule disagreed.
IMPORT_DISAGREED = [
    ("Tom has 3 apples and 5 pears. How many fruits?", "math"),  # the importers said general
    ("What does the function return for 3?", "general"),  # the importers said code (function…return)
]


@pytest.mark.parametrize(("question", "kind"), IMPORT_DISAGREED)
def test_an_imported_question_gets_the_kind_capture_gives_the_same_prompt(question, kind):
    from o3viz.importers.build import build_trace
    from o3viz.importers.formats import Imported

    imported = build_trace(
        Imported(format="text", question=question, thinking="Let me think.", answer="It is 8.")
    )
    assert imported.task.kind == detect_task_type(question) == kind


def test_import_evidence_still_decides_kind_through_the_one_rule():
    assert detect_task_type("Reverse it.", answer="```python\nprint(1)\n```") == "code"
    assert detect_task_type("What is it?", reference="42") == "math"
    assert detect_task_type("Simplify \\frac{a}{b}.") == "math"


@pytest.mark.model
def test_solve_keeps_the_answer_and_confidence_capture_stored():
    model, tok = make_tiny_llama()
    off = CaptureConfig(enabled=False)
    for prompt in ("Why is the sky blue?", "Tom has 3 apples and 5 pears."):  # general, math
        req = RunRequest(prompt=prompt, rounds=1, max_new_tokens=12, capture=off)
        captured = capture(model, tok, req).final
        solved = solve(model, tok, req).final
        assert solved.text == captured.text, prompt
        assert (solved.answer, solved.confidence) == (captured.answer, captured.confidence), prompt
