"""Issue 63 finding 1 and issue 62 break 5: a stated answer is an answer to the question (not an
intermediate result), each reading says how sure it is, the dataset figures count only flips
between confident readings, agreement with a hand reading of real traces, and linear time on
hostile step text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from o3viz.analysis.answer_figures import trace_answer_figures
from o3viz.analysis.answer_reading import CONFIDENT, question_target, read_step
from o3viz.analysis.running_answer import same_answer
from o3viz.importers import import_trace
from o3viz.text.answers import answers_equivalent
from o3viz.trace import Round, Step, Task, Trace

pytestmark = [pytest.mark.light]

HAND = Path(__file__).parent / "data" / "running_answer_hand.json"
MATH500 = (
    "topology_math500_deepseek_r1",
    "topology_pilot_math500_qwen7b",
    "topology_pilot_math500_llama8b",
)


@pytest.mark.parametrize(
    ("question", "text"),
    [
        ("Suppose $\\sin D = 0.7$ in the diagram below. What is $DE$?", "So angle at E is 90 degrees."),
        ("Find the smallest possible value of $a.$", "So quotient: a^2 - 2a - 3 = (a-3)(a+1)."),
        ("Find the smallest possible value of $a.$", "So indeed, a=3 gives a triple root x=-1."),
        ("What is the smallest possible value of $c$?", "So the period is π (taking k=0)."),
        ("What is the sum of the divisors of 284?", "I can be confident that the answer is correct."),
        ("What is $h$?", "**Final Answer:**\n\n\\["),
        ("How many values can be obtained?", "So 2*3*4*5+1 is ((2*3)*4)*5+1."),
        ("Enter your answer in the form $(r,\\theta)$.", "So r is 3."),
        ("What is the smallest possible value of $c$?", "So, \\( c = \\pi + 2\\pi k \\)."),
        ("Find the number of $x$-intercepts.", "So, x = 0.0001 is excluded."),  # found on held-out data
    ],
)
def test_intermediate_results_and_misreadings_state_no_answer(question, text):
    found = read_step(text, question_target(question))
    assert found is None or found.confidence not in CONFIDENT, found


@pytest.mark.parametrize(
    ("question", "text", "answer", "confidence"),
    [
        ("Find the angle between these lines, in degrees.", "So the angle is 90 degrees.", "90", "concluded"),
        ("Find the smallest possible value of $a.$", "So the smallest possible a is 3.", "3", "concluded"),
        ("What is $DE$?", "So, DE is √51.", "√51", "concluded"),
        ("What is $x$?", "Therefore, x is 124 degrees.", "124", "concluded"),
        ("What is $w$?", "Therefore, the answer is \\( w = 6 - 5i \\), which is right.", "6 - 5i", "marked"),
        ("What is the distance?", "Thus answer is 3√13 units.", "3√13", "marked"),
        ("What is $c$?", "Wait, maybe the answer is \\( \\pi \\), but I'm not sure.", "\\pi", "uncertain"),
        ("What is $x$?", "That's 9.", "9", "uncertain"),
        ("What is $x$?", "So the answer is \\boxed{4}.", "4", "marked"),
        (None, "So x = 4.", "4", "uncertain"),  # no question: nothing to match the subject against
    ],
)
def test_answers_to_the_question_are_read_with_their_confidence(question, text, answer, confidence):
    found = read_step(text, question_target(question))
    assert found is not None and (found.text, found.confidence) == (answer, confidence)
    assert text[found.start : found.start + len(answer)] == answer


def _trace(texts: list[str], question: str, reference: str = "4") -> Trace:
    steps, at = [], 0
    for i, t in enumerate(texts):
        steps.append(Step(index=i, start=at, end=at + len(t), text=t))
        at += len(t) + 1
    return Trace(Task(question, reference=reference), [Round(text=" ".join(texts), steps=steps)])


def test_a_flip_that_rests_on_an_uncertain_reading_is_counted_apart():
    t = _trace(["So x = 4.", "That's 5.", "So the answer is 4."], "What is $x$?")
    f = trace_answer_figures(t)
    assert (f.flips_right_to_wrong, f.flips_wrong_to_right, f.flips_uncertain) == (0, 0, 2)
    assert f.convergence_step == "step:0:0"  # the confident running answer never changed
    g = trace_answer_figures(_trace(["So x = 4.", "So x = 5.", "So the answer is 4."], "What is $x$?"))
    assert (g.flips_right_to_wrong, g.flips_wrong_to_right, g.flips_uncertain) == (1, 1, 0)


def _agrees(case: dict, trace: Trace) -> bool:
    """o3viz agrees with the hand reading: no answer read with confidence where the hand reads
    none; the hand's answer read (at any confidence) where it reads one."""
    st = trace.final.steps[case["step"]]
    found = read_step(trace.final.text[st.start : st.end], question_target(trace.task.question))
    if case["answer"] is None:
        return found is None or found.confidence not in CONFIDENT
    return found is not None and (
        same_answer(found.text, case["answer"]) or answers_equivalent(found.text, case["answer"])
    )


def test_the_rule_agrees_with_a_hand_reading_of_real_traces(shared_data):
    cases = json.loads(HAND.read_text())
    traces: dict[tuple[str, int], Trace] = {}
    agree: dict[str, list[bool]] = {"dev": [], "held_out": []}
    for case in cases:
        key = (case["file"], case["record"])
        if key not in traces:
            path = shared_data / "traces" / f"{case['file']}.jsonl"
            traces[key] = import_trace(path, record=case["record"], claims=False)
        st = traces[key].final.steps[case["step"]]
        assert case["snippet"] in traces[key].final.text[st.start : st.end]  # the step the hand read
        agree[case["split"]].append(_agrees(case, traces[key]))
    assert len(agree["dev"]) >= 50 and len(agree["held_out"]) >= 40
    # measured when the rule was frozen: dev 51 of 55, held-out (read after freezing) 38 of 40
    assert sum(agree["dev"]) / len(agree["dev"]) >= 0.9, agree["dev"]
    assert sum(agree["held_out"]) / len(agree["held_out"]) >= 0.9, agree["held_out"]


def test_math500_right_answers_lost_are_near_the_hand_count(shared_data):
    # by hand (issue 63 and this fix's reading): 0 of 20 (R1), 1-2 of 20 (Qwen-7B), 0 of 20 (Llama-8B);
    # before this fix o3viz said 7, 10 and 6
    for name in MATH500:
        path = shared_data / "traces" / f"{name}.jsonl"
        lost = sum(
            trace_answer_figures(import_trace(path, record=i, claims=False)).flips_right_to_wrong > 0
            for i in range(20)
        )
        assert lost <= 2, (name, lost)


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    "text",
    [
        "So =" + "1=" * 25_000 + "?x",  # issue 62 break 5, at 130× its length
        "So " + "=1" * 25_000 + " x",
        "So the answer is " + "(" * 25_000,
        "So $" + "$" * 50_000,
        "So " + "is " * 16_000 + "9",
        "Thus " + "a, " * 16_000 + "x = 4.",
        "So " + " ." * 25_000,
        "." + " " * 50_000 + "So x = " + "\\(" * 10_000,
        "The answer is " + "$1, " * 12_000,
    ],
    ids=["equals", "equals2", "brackets", "dollars", "verbs", "commas", "ends", "spans", "label"],
)
def test_hostile_steps_are_read_in_bounded_time(text):
    """A bound, not a speed measure: each step is 50,000 characters of a hostile shape; every
    reader on the path (the marked answer, the conclusion, the question's words) is linear."""
    q = question_target("What is $x$? " * 600)
    for _ in range(3):
        read_step(text, q)


def test_dataset_figures_show_uncertain_flips_apart():
    from o3viz.analysis.answer_dataset import answer_dataset_figures

    sure = _trace(["So x = 4.", "So x = 5.", "So the answer is 4."], "What is $x$?")
    unsure = _trace(["So x = 4.", "That's 5.", "So the answer is 4."], "What is $x$?")
    (g,) = answer_dataset_figures([("a", "d", "m", sure), ("b", "d", "m", unsure)])
    assert g.flip_rate.keys == ["a"] and g.flip_rate.value == 0.5
    assert g.uncertain_flips.keys == ["b"] and g.uncertain_flips.n == 2


@pytest.mark.timeout(20)
def test_a_trace_of_hostile_steps_gets_its_running_answer_in_bounded_time():
    """Issue 62 break 5 as found: every step "So =1=1…=1?x" (385 characters). The old pattern took
    20–27 ms a step (a 2,000-step trace: 53 s), so 5,000 such steps took minutes; read in linear
    time they take well under a second. A bound under a generous timeout, not a speed measure."""
    from o3viz.analysis.running_answer import stated_record

    hostile = "So =" + "1=" * 190 + "?x"
    texts = [hostile] * 5_000
    rec = stated_record(_trace(texts, "What is $x$?" * 700).final, "4", question="What is $x$?" * 700)
    assert len(rec.answers) == 5_000 and not any(rec.answers)
