"""Issue 35, finding 6: "first wrong step" is claimed only where a check failed at that step; the
"answer changed" heuristic is shown as what it is, at the step where the reference was last held."""

from __future__ import annotations

from o3viz.analysis.wrong_step import first_wrong_step, reference_last_held
from o3viz.trace import Check, Round, Step, Task, Trace


def test_r1_math500_record_18_claims_no_first_wrong_step_at_573_and_marks_where_28_was_held(shared_data):
    """The 19th line of the file (record 18, reference 28, the model answers 56): step 573,
    "That also sums to 180.", is true, so it is not a first wrong step."""
    from o3viz.importers import import_trace

    t = import_trace(shared_data / "traces" / "topology_math500_deepseek_r1.jsonl", record=18)
    assert t.task.reference == "28" and t.final.answer == "56"
    assert t.final.steps[573].text == "That also sums to 180."
    wrong = first_wrong_step(t)
    failed_at = {c.step for c in t.final.checks if c.verdict == "wrong" and c.kind != "answer"}
    assert wrong is None or (wrong.step in failed_at and wrong.step != 573)
    held = reference_last_held(t)
    assert held is not None and held.step == 572 and held.node == "step:0:572"
    assert "28" in t.final.steps[572].text
    assert held.line.startswith("the running answer stopped matching the reference 28 after step 572")


def test_a_failed_check_at_a_step_is_still_the_first_wrong_step():
    steps = [Step(index=i, start=0, end=1, text=t) for i, t in enumerate(["x = 4", "2*6 = 13", "so 13"])]
    checks = [
        Check(kind="claim", name="2*6 = 13", verdict="wrong", step=1),
        Check(kind="answer", name="final answer 13", verdict="wrong", step=2),
    ]
    t = Trace(Task("q", reference="4"), [Round(index=0, steps=steps, checks=checks)])
    wrong = first_wrong_step(t)
    assert wrong.step == 1 and "2*6 = 13" in wrong.reason
    assert reference_last_held(t).step == 0  # the heuristic stays beside it, named as one
