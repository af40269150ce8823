"""The verification layer's bookkeeping: verdicts, the transition matrix, feedback, task sources."""

from __future__ import annotations

import pytest

from o3viz.errors import UsageError
from o3viz.run.solve import candidate_program, extract_code, revision_prompt
from o3viz.tasks.spec import gsm8k_reference, load_task, prompt_task
from o3viz.text.answers import extract_answer as final_answer
from o3viz.trace import Check
from o3viz.verify.policy import (
    answer_check,
    choose_action,
    feedback_for,
    numbers_equal,
    round_verdict,
)


def test_round_verdict_fails_on_any_failing_check_and_passes_only_with_evidence():
    assert round_verdict([Check("claim", "a", "correct"), Check("claim", "b", "wrong")]) == "fail"
    assert round_verdict([Check("test", "t", "pass")]) == "pass"
    assert round_verdict([Check("claim", "a", "unverifiable")]) == "unverifiable"
    assert round_verdict([]) == "unverifiable"


@pytest.mark.parametrize(
    ("checks", "confidence", "last", "action"),
    [
        ([Check("test", "t", "fail")], 0.99, False, "revise_tests"),
        ([Check("test", "t", "timeout")], 0.1, False, "revise_tests"),
        ([Check("answer", "a", "wrong"), Check("claim", "c", "wrong")], 0.99, False, "revise_answer"),
        ([Check("claim", "c", "wrong")], 0.99, False, "revise_claims"),
        ([Check("test", "t", "pass")], 0.1, False, "accept"),
        ([Check("claim", "c", "unverifiable")], 0.95, False, "accept_confident"),
        ([], 0.5, False, "recheck"),
        ([Check("test", "t", "fail")], 0.1, True, "stop_max_rounds"),
    ],
)
def test_transition_matrix_maps_verdicts_to_actions(checks, confidence, last, action):
    assert choose_action(checks, confidence, 0.9, last) == action


def test_feedback_names_failing_tests_and_correct_values_of_wrong_claims():
    fb = feedback_for("revise_tests", [Check("test", "assert f(2) == 4", "fail", message="got 5")], None)
    assert "assert f(2) == 4" in fb and "got 5" in fb
    fb = feedback_for(
        "revise_answer",
        [Check("claim", "3*4 = 13", "wrong", expression="3*4", stated="13", computed="12")],
        "13",
    )
    assert "13 is wrong" in fb and "3*4 = 12" in fb
    assert feedback_for("accept", [], None) == ""


def test_final_answer_extraction_and_equivalence():
    assert final_answer("9 * 2 = 18 dollars.\nThe answer is $1,018.").text in ("$1,018.", "$1,018", "1,018")
    assert numbers_equal(final_answer("9 * 2 = 18 dollars.\nThe answer is $1,018.").text, "1018")
    assert final_answer("#### 72").text == "72"
    assert final_answer("it is \\boxed{3.5}").text == "3.5"
    assert final_answer("no digits") is None
    assert numbers_equal("18.0", "18") and numbers_equal("1/2", "0.5") and not numbers_equal("17", "18")
    assert answer_check(final_answer("The answer is 18."), "18").verdict == "correct"
    assert answer_check(final_answer("The answer is 17."), "18").verdict == "wrong"
    assert answer_check(None, "18").verdict == "unverifiable"
    assert answer_check(final_answer("17"), None).verdict == "unverifiable"


def test_code_extraction_prefers_the_block_defining_the_entry_point():
    text = "Here:\n```python\nx = 1\n```\nand\n```python\ndef add(a, b):\n    return a + b\n```"
    code, span = extract_code(text, "add")
    assert code.startswith("def add") and text[span[0] : span[1]] == code
    code, _ = extract_code("```python\ndef f():\n    return 1\n", "f")  # unterminated block
    assert "return 1" in code


def test_task_sources_resolve_gsm8k_and_reject_unknown_ids(shared_data):
    spec = load_task("gsm8k:0")
    assert spec.task.reference == "18" and spec.task.kind == "math" and "Janet" in spec.prompt
    with pytest.raises(UsageError, match="out of range"):
        load_task("gsm8k:999999")
    with pytest.raises(UsageError, match="unknown task"):
        load_task("nope:1")
    assert gsm8k_reference("so\n#### 1,234") == "1234"
    assert prompt_task("What is 17*23?").task.kind == "math"


def test_revision_prompt_carries_the_feedback_and_a_trimmed_attempt():
    spec = prompt_task("What is 3*4?")
    p = revision_prompt(spec, "x" * 5000, "Your final answer 13 is wrong.")
    assert "13 is wrong" in p and len(p) < 2000 and p.startswith("What is 3*4?")


def test_candidate_program_completes_a_bare_signature():
    from o3viz.tasks.spec import TaskSpec
    from o3viz.trace import Task

    spec = TaskSpec(Task("def f(x):\n    ", kind="code"), "", tests=["assert f(1) == 2"], entry_point="f")
    prog, _ = candidate_program(spec, "return x + 1")
    assert prog == "def f(x):\n    return x + 1"
