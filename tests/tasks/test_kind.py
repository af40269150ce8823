"""Task kind: one rule (``o3viz.tasks.kind.detect_task_type``) for a free prompt, so ``capture``
and ``solve`` give the same prompt the same kind."""

from __future__ import annotations

import pytest

from o3viz.run.capture import CaptureConfig, capture
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


def test_capture_and_solve_give_a_free_prompt_the_same_kind():
    model, tok = make_tiny_llama()
    off = CaptureConfig(enabled=False)
    for prompt, kind in DISAGREED:
        captured = capture(model, tok, prompt, max_new_tokens=2, capture=off).task.kind
        solved = solve(model, tok, prompt, max_rounds=1, max_new_tokens=2, capture=off).task.kind
        assert captured == solved == kind, prompt
