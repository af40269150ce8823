"""Issue 35, finding 5: one rule for a reply cut short, on every path. A run stopped at its token
limit or by hand is not graded, and says why; the Library's correct column and the verdict agree."""

from __future__ import annotations

import pytest

from o3viz.analysis.provenance import check_grade, grading
from o3viz.errors import ModelLoadError
from o3viz.run.solve import solve
from o3viz.store.store import Store
from o3viz.tasks.spec import TaskSpec
from o3viz.trace import Check, Round, Task, Trace
from o3viz.verify.cut_short import apply_cut_short, graded_verdict

pytestmark = [pytest.mark.model]

JANET = (
    "Janet's ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes muffins "
    "for her friends every day with four. She sells the remainder at the farmers' market daily for "
    "$2 per fresh duck egg. How much in dollars does she make every day at the farmers' market?"
)


@pytest.fixture(scope="module")
def model():
    from o3viz import load_model

    try:
        return load_model()
    except ModelLoadError as exc:
        pytest.skip(f"default model unavailable: {exc}")


def _spec() -> TaskSpec:
    return TaskSpec(Task(JANET, kind="math", source="gsm8k", reference="18"), prompt=JANET)


def _agree(trace: Trace, tmp_path) -> dict:
    store = Store(tmp_path / "home")
    row = store.row(store.add(trace, source="run"))
    assert row["correct"] is None and row["verdict"] == "unverifiable"  # the column and the verdict agree
    return row


def test_a_run_stopped_at_its_token_limit_is_not_graded_and_says_why(model, tmp_path):
    trace = solve(*model, JANET, spec=_spec(), rounds=1, max_new_tokens=24)
    rnd = trace.final
    assert (
        rnd.info["stop_reason"] == "max_new_tokens" and rnd.answer is not None
    )  # there was a number to grade
    answer = next(c for c in rnd.checks if c.kind == "answer")
    assert (
        answer.verdict == "unverifiable" and answer.message == "not graded: stopped at the limit (24 tokens)"
    )
    assert rnd.verdict == "unverifiable" and rnd.info["not_graded"] == "stopped at the limit (24 tokens)"
    assert check_grade(trace) is None
    assert "o3viz's answer check: not graded, stopped at the limit (24 tokens)" in grading(trace).lines()
    _agree(trace, tmp_path)


def test_a_run_stopped_by_hand_is_not_graded_and_says_so(model, tmp_path):
    seen = []
    trace = solve(
        *model,
        JANET,
        spec=_spec(),
        rounds=1,
        max_new_tokens=40,
        should_stop=lambda: len(seen) > 5 or seen.append(1),
    )
    rnd = trace.final
    assert rnd.info["stop_reason"] == "stopped" and rnd.verdict == "unverifiable"
    assert "o3viz's answer check: not graded, stopped by hand" in grading(trace).lines()
    _agree(trace, tmp_path)


def test_a_trace_saved_before_the_rule_reads_the_same_and_a_finished_one_keeps_its_grade():
    rnd = Round(index=0, verdict="fail", info={"stop_reason": "length", "generated_tokens": 64})
    rnd.checks = [Check(kind="answer", name="final answer 16", verdict="wrong", step=0)]
    old = Trace(Task("q", kind="math", reference="18"), [rnd])
    assert graded_verdict(rnd) == "unverifiable" and check_grade(old) is None
    assert (
        apply_cut_short(rnd) == "stopped at the limit (64 tokens)" and rnd.checks[0].verdict == "unverifiable"
    )
    done = Round(index=0, verdict="fail", info={"stop_reason": "eos"})
    assert graded_verdict(done) == "fail" and apply_cut_short(done) is None
