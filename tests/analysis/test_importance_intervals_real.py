"""Issue 35, finding 4: on real resampling output of the embedded model, every score lies within
its interval, a zero-width interval is explained, the noise floor comes from each step's own
rollouts, and every step without a score says why, in words true for that step."""

from __future__ import annotations

import pytest

from o3viz.analysis.importance.resample import resample_importance
from o3viz.analysis.importance.stats import noise_floor
from o3viz.analysis.importance.trust import _acc, _diff
from o3viz.clients import LocalBackend, RolloutCache, Sampling
from o3viz.trace import Round, Step, Task, Trace

pytestmark = [pytest.mark.model]

TEXT = "Janet has 3 apples. She buys 2 more apples. So she has 3 + 2 = 5 apples. The answer is 5."


def _trace() -> Trace:
    steps, at = [], 0
    for i, sent in enumerate(TEXT.replace(". ", ".|").split("|")):
        steps.append(Step(i, sent, at, at + len(sent)))
        at += len(sent) + 1
    task = Task(
        "Janet has 3 apples and buys 2 more. How many apples does she have?", kind="math", reference="5"
    )
    return Trace(task, [Round(text=TEXT, steps=steps)])


@pytest.fixture(scope="module")
def record(tmp_path_factory):
    from o3viz import load_model

    model, tok = load_model()
    t = _trace()
    return resample_importance(
        t,
        LocalBackend(model, tok),
        (model, tok),
        k=4,
        sampling=Sampling(max_tokens=16, seed=1),
        cache=RolloutCache(tmp_path_factory.mktemp("rollouts")),
        max_rollouts=16,  # 4 of the 5 prefixes: the last step is left unresampled
    )


def test_every_score_lies_within_its_interval_and_a_zero_width_one_is_explained(record):
    s, notes = record.series, record.info["step_notes"]
    assert "Wilson" in record.params["interval"]
    for i, v in enumerate(record.scores):
        if v is None:
            continue
        lo, hi = s["ci_low"][i], s["ci_high"][i]
        assert lo <= v <= hi, (i, v, lo, hi)
        if hi - lo <= 1e-12:
            assert "zero-width" in notes[str(i)]


def test_the_noise_floor_is_computed_from_each_steps_own_rollouts(record):
    answers, compared, ref = record.info["answers"], record.info["compared"], "5"

    def measure(a, b):
        return _diff(_acc(a, ref), _acc(b, ref))

    for i, v in enumerate(record.scores):
        if v is None:
            continue
        other = [a for a, d in zip(answers[i], compared[i], strict=True) if d]
        assert record.series["noise_floor"][i] == pytest.approx(
            noise_floor(measure, answers[i + 1], other, i + 1)
        )


def test_a_step_without_a_score_says_why_in_words_true_for_it(record):
    notes, answers = record.info["step_notes"], record.info["answers"]
    blank = [i for i, v in enumerate(record.scores) if v is None]
    assert blank, "the rollout cap leaves the last step without a score"
    for i in blank:
        why = notes[str(i)]
        if answers[i + 1] is None:
            assert f"after step {i}" in why and "rollout cap" in why
        elif answers[i] is None:
            assert f"before step {i}" in why
        else:
            assert "differed" in why and "nothing to compare" in why
    assert len(record.scores) - 1 in blank and "after step" in notes[str(len(record.scores) - 1)]
