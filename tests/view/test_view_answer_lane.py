"""The running answer in the trace view (issue 53): Inspect's map and a long trace's overview carry
the lane with its first-right mark at the step the per-trace figures name, Compare's two maps carry
one each, and a step's details list what it states and what a probe forced after it."""

from __future__ import annotations

from o3viz.analysis.answer_figures import trace_answer_figures
from o3viz.app import inspect_view_data
from o3viz.trace import Round, Step, Task, Trace
from o3viz.trace.answers import AnswerRecord
from o3viz.view import compare_view_data, trace_view_data


def _trace(n: int, right_at: int, forced: bool = False) -> Trace:
    texts = [
        f"So the value is {i}." if i in (2, right_at, n - 1) else f"Then {i} * 3 = {3 * i}." for i in range(n)
    ]
    steps, at = [], 0
    for i, t in enumerate(texts):
        steps.append(Step(i, t, at, at + len(t)))
        at += len(t) + 1
    rnd = Round(text=" ".join(texts), steps=steps, answer=str(right_at))
    if forced:
        answers = [None] * n
        answers[1] = "7"
        rnd.answers.append(
            AnswerRecord(
                "forced:local:SmolLM2-135M-Instruct", "forced", answers, [None] * n,
                [None if a is None else a == str(right_at) for a in answers], [None] * n,
                {"model": "HuggingFaceTB/SmolLM2-135M-Instruct", "other_model": True},
            )
        )  # fmt: skip
    return Trace(Task("q", reference=str(right_at)), [rnd])


def _mark(fig: dict, kind: str) -> list:
    return [t["customdata"] for t in fig["data"] if t.get("meta") == f"answer-lane:{kind}"]


def test_inspect_and_the_notebook_draw_the_lane_on_the_map_and_the_overview():
    short, long = _trace(30, 12), _trace(400, 250)
    assert _mark(inspect_view_data(short)["map"], "first_correct") == [["step:0:12"]]
    assert _mark(trace_view_data(short)["map"], "first_correct") == [["step:0:12"]]
    for data in (inspect_view_data(long), trace_view_data(long)):
        first = trace_answer_figures(long).first_correct_step
        assert _mark(data["overview"], "first_correct") == [[first]] == [["step:0:250"]]
        assert _mark(data["map"], "first_correct") == [[first]]
        assert not _mark(data["strip"], "first_correct")  # the strip stays one row


def test_a_steps_details_say_what_it_states_and_what_was_forced():
    nodes = inspect_view_data(_trace(30, 12, forced=True))["nodes"]
    # the question ("q") names nothing, so "So the value is 12" is an uncertain reading (issue 63)
    assert "stated in step 12 (an uncertain reading): 12 · right" in nodes["step:0:12"]["facts"]
    assert "stated in step 2 (an uncertain reading): 2 · wrong" in nodes["step:0:2"]["facts"]
    assert (
        "forced after step 1 by SmolLM2-135M-Instruct (not the trace's model): 7 · wrong"
        in nodes["step:0:1"]["facts"]
    )
    assert not [f for f in nodes["step:0:5"]["facts"] if "stated" in f or "forced" in f]


def test_compare_draws_both_lanes():
    data = compare_view_data(_trace(30, 12), _trace(30, 20))
    assert [_mark(m, "first_correct") for m in data["maps"]] == [[["step:0:12"]], [["step:0:20"]]]
