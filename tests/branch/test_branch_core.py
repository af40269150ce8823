"""Branching on a tiny random model (the embedded tokenizer): an edit continues the prompt, the
steps before the fork and the edited step with the parent's settings; resampling writes one round
per rollout through the rollout cache; resample-until stops and counts its tries; bad input gets
one line."""

from __future__ import annotations

import pytest

from o3viz.branch import (
    BranchCost,
    Continuer,
    edit_and_continue,
    find_fork,
    request_from_trace,
    resample_from,
    resample_until,
)
from o3viz.clients import RolloutCache, Sampling
from o3viz.errors import UsageError
from o3viz.paths import REPO_ROOT
from o3viz.testing.builders import make_tiny_llama, small_trace
from o3viz.trace import Task, Trace, load_trace

pytestmark = [pytest.mark.model]

SAMPLE = REPO_ROOT / "sample_traces" / "gsm8k_word_problem.o3trace.json.gz"
EDIT = "This is 24 + 18 = 42 muffins in all."


@pytest.fixture(scope="module")
def tiny():
    model, tok = make_tiny_llama()
    return Continuer(model=model, tokenizer=tok)


@pytest.fixture(scope="module")
def parent():
    return load_trace(SAMPLE)


def test_an_edit_continues_the_prefix_and_the_edited_step_with_the_parents_settings(tiny, parent, tmp_path):
    b = edit_and_continue(parent, "0:2", EDIT, tiny, parent_key="ab12", max_new_tokens=12)
    fork = find_fork(parent, "0:2")
    assert b.parent.key == "ab12" and b.parent.step == "0:2" and b.parent.kind == "edit"
    assert b.parent.edited == EDIT and b.parent.original == parent.rounds[0].steps[2].text
    assert b.final.rendered_prompt.endswith(fork.before + EDIT)
    assert b.final.segments[-1].label == "reply prefix" and b.final.info["reply_prefix_chars"] == len(
        fork.before + EDIT
    )
    assert b.provenance.settings["daa"]["mode"] == parent.provenance.settings["daa"]["mode"] == "observe"
    assert (
        b.final.attention is not None and b.final.attention.daa is not None
    )  # capture and DAA as the parent had
    assert len(b.final.tokens) == 12
    assert load_trace(b.save(tmp_path / "b.o3trace.json.gz")) == b


def test_the_request_keeps_a_tasks_verify_loop():
    solved = load_trace(REPO_ROOT / "sample_traces" / "solve_math_gsm8k.o3trace.json.gz")
    req = request_from_trace(find_fork(solved, "0:1"), "x", 16)
    assert req.task_id == "gsm8k:0" and req.loops and req.max_rounds == 3 and req.prefix == "x"


def test_a_branch_of_a_steered_run_steers_the_same_spans_and_heads():
    from o3viz.branch.fork import _daa_config
    from o3viz.run.config import DAAConfig, SteerSpan
    from o3viz.run.provenance import settings_of
    from o3viz.run.request import RunRequest

    daa = DAAConfig(
        mode="steer", spans=(SteerSpan(text="Paris", occurrence=1),), steer_heads=[(0, 1), (2, 3)]
    )
    settings = settings_of(RunRequest(prompt="Is Paris in France? Paris.", daa=daa))
    back = _daa_config(settings["daa"])
    assert back.mode == "steer" and back.spans == daa.spans and back.steer_heads == [(0, 1), (2, 3)]
    back.validate()


def test_resampling_writes_one_round_per_rollout_and_reuses_the_cache(tiny, parent, tmp_path):
    sampling, cache = Sampling(max_tokens=8, seed=1), RolloutCache(tmp_path / "c")
    r = resample_from(parent, "0:2", 3, tiny, sampling, cache)
    assert len(r.rounds) == 3 and r.parent.kind == "resample" and r.parent.info["k"] == 3
    assert sum(r.parent.info["answers"].values()) == 3 and all("group" in x.info for x in r.rounds)
    fork = find_fork(parent, "0:2")
    assert all(x.rendered_prompt.endswith(fork.before) for x in r.rounds)
    again = resample_from(
        parent, "0:2", 3, Continuer(model=tiny.model, tokenizer=tiny.tokenizer), sampling, cache
    )
    assert [x.text for x in again.rounds] == [x.text for x in r.rounds]


def test_resample_until_counts_its_tries_and_stops_at_the_cap(tiny, parent, tmp_path):
    sampling, cache = Sampling(max_tokens=6), RolloutCache(tmp_path / "c")
    found = resample_until(parent, "0:2", tiny, sampling, cache, says="zzzz never said", max_tries=5)
    assert found.parent.info["tries"] == 1 and found.parent.info["found"]
    capped = resample_until(parent, "0:2", tiny, sampling, cache, until="answer", max_tries=2)
    assert capped.parent.info["tries"] == len(capped.rounds) <= 2


def test_a_branch_of_a_branch_forks_after_its_own_prefix(tiny, parent):
    b = edit_and_continue(parent, "0:2", EDIT, tiny, max_new_tokens=10)
    if not b.final.steps:
        pytest.skip("the random model wrote no step")
    assert find_fork(b, "0:0").before == find_fork(parent, "0:2").before + EDIT


@pytest.mark.parametrize(
    "step, says",
    [
        ("x", "not a step id"),
        ("0:99", "round 0 has"),
        ("5:0", "the trace has 1 round"),
        ("0:-1", "not a step id"),
    ],
)
def test_a_bad_step_id_is_one_line(step, says):
    with pytest.raises(UsageError, match=says):
        find_fork(small_trace(), step)


@pytest.mark.parametrize("text, says", [("  ", "is empty"), ("x" * 4001, "over the limit of 4,000")])
def test_an_empty_or_overlong_edit_is_one_line(tiny, text, says):
    with pytest.raises(UsageError, match=says):
        edit_and_continue(small_trace(), "0:0", text, tiny)


def test_a_trace_without_a_prompt_is_one_line():
    t = small_trace()
    bare = Trace(Task(""), t.rounds, t.provenance)
    for r in bare.rounds:
        r.prompt = ""
    with pytest.raises(UsageError, match="no prompt"):
        find_fork(bare, "0:0")


def test_the_cost_names_tokens_times_continuations_and_a_time():
    assert BranchCost(8, 128, 20.0).tokens == 1024 and "about 51 s" in BranchCost(8, 128, 20.0).line()
    assert (
        "not measured here yet" in BranchCost(8, 128).line()
    )  # never a constant passed off as a measurement


def test_an_edits_default_budget_is_the_parents_remaining_length(tiny, parent):
    """Issue 35, finding 8: the edit's default budget (96) was smaller than its 151-token parent."""
    fork = find_fork(parent, "0:2")
    left = sum(t.start >= fork.step.start for t in parent.final.tokens)
    assert fork.remaining_tokens == left and fork.default_budget == left > 96
    assert request_from_trace(fork, "x").max_new_tokens == left


def test_a_branch_keeps_its_parents_prefix_numbering_and_link(tiny, parent):
    b = edit_and_continue(parent, "0:2", EDIT, tiny, parent_key="ab12", max_new_tokens=6)
    assert b.parent.key == "ab12" and b.parent.info["max_new_tokens"] == 6
    before = find_fork(parent, "0:2").before
    steps = b.parent.info["prefix_steps"]
    assert [i for i, _, _ in steps] == [0, 1]  # numbered as in the parent
    assert [before[a:z] for _, a, z in steps] == [s.text for s in parent.final.steps[:2]]
    from o3viz.analysis.align import branch_step_offset

    assert branch_step_offset(b) == 3  # its own step 0 is the parent's step 3


def test_the_cost_comes_from_this_machines_measured_speed(tiny, parent, tmp_path):
    """Issue 35, finding 8: "about 5 s" took 59 s. A branch records its speed; the next estimate uses it."""
    import time

    from o3viz.branch.fork import measured_cost
    from o3viz.run.speed import SpeedLog

    t0 = time.perf_counter()
    edit_and_continue(parent, "0:2", EDIT, tiny, max_new_tokens=8)
    took = time.perf_counter() - t0
    speed = SpeedLog().tokens_per_s(tiny.name, "edit")
    assert speed is not None and speed >= 8 / took * 0.9  # timed around the generation only
    assert SpeedLog().tokens_per_s("local:*", "edit") == speed
    cost = measured_cost(1, 8, tiny.name, "edit")
    assert cost.seconds is not None and cost.seconds <= took * 1.1 and "measured here" in cost.line()
