"""How far importance scores can be trusted: bootstrap intervals, noise floors, the baselines and
the agreement between methods, on small hand-made answer samples."""

from __future__ import annotations

import numpy as np
import pytest

from o3viz.analysis.importance import add_importance, agreement
from o3viz.analysis.importance.agreement import agreement_of_columns
from o3viz.analysis.importance.resample import _kl, trust_series
from o3viz.analysis.importance.stats import (
    binary_entropy,
    entropy,
    interval,
    kendall_w,
    noise_floor,
    partial_spearman,
    spearman,
)
from o3viz.trace import Round, Step, Task, Trace
from o3viz.trace.importance import ImportanceRecord, step_view


def test_the_kl_between_two_splits_of_one_sample_is_positive_so_the_floor_is_above_zero():
    same = ["5", "5", "6", "7", "5", "6", "8", "5"]
    assert noise_floor(_kl, same[:4], same[4:]) > 0.05


def test_the_noise_floor_is_computed_from_each_steps_own_samples():
    """Issue 35: every step showed the same floor. The floor now pools the two samples the step's
    score compares, so steps with different rollouts get different floors."""
    answers = [["5", "6", "7", "8"], ["5", "5", "5", "6"], ["5", "5", "5", "5"]]
    s = trust_series(answers, [[True] * 4, [True] * 4, None], None)
    assert s["noise_floor"][0] != s["noise_floor"][1]
    assert s["noise_floor"][1] == noise_floor(_kl, answers[2], answers[1], 1)


def test_a_kl_interval_always_holds_its_estimate_even_where_the_bootstrap_is_biased():
    """Issue 35: a percentile bootstrap of the smoothed KL put 0.220 outside [0.270, 0.589]."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        kept = [str(x) for x in rng.integers(0, 4, rng.integers(1, 6))]
        other = [str(x) for x in rng.integers(0, 4, rng.integers(1, 6))]
        lo, hi = interval(_kl, kept, other, 0.9, 0, lowest=0.0)
        assert lo <= _kl(kept, other) <= hi


def test_an_accuracy_interval_holds_its_estimate_and_is_never_of_zero_width():
    from o3viz.analysis.importance.stats import wilson_difference

    for n1 in range(1, 6):
        for n2 in range(1, 6):
            for x1 in range(n1 + 1):
                for x2 in range(n2 + 1):
                    lo, hi = wilson_difference(x1, n1, x2, n2)
                    assert lo <= x1 / n1 - x2 / n2 <= hi and hi - lo > 0.1


def test_a_score_between_identical_distributions_does_not_clear_its_floor_and_a_real_change_does():
    here = [["5", "6", "7", "5", "6", "7", "5", "8"], ["5", "6", "7", "5", "6", "7", "5", "8"]]
    same = trust_series(here, [[True] * 8, None], None)
    assert same["clears_floor"] == [0.0]
    moved = trust_series([here[0], ["9"] * 8], [[True] * 8, None], None)
    assert moved["clears_floor"] == [1.0]
    assert moved["ci_low"][0] <= _kl(["9"] * 8, here[0]) <= moved["ci_high"][0]


def test_the_interval_narrows_with_more_rollouts():
    few = trust_series([["6", "6", "5", "6"], ["5", "6"] * 2], [[True] * 4, None], "5")
    many = trust_series([["6", "6", "5", "6"] * 16, ["5", "6"] * 32], [[True] * 64, None], "5")
    assert many["ci_high"][0] - many["ci_low"][0] < (few["ci_high"][0] - few["ci_low"][0]) / 2


def test_headroom_is_the_entropy_of_the_answers_before_the_step():
    s = trust_series([["1", "2", "1", "2"], ["1", "1", "1", "1"]], [[True] * 4, None], "1")
    assert s["headroom"] == [pytest.approx(binary_entropy(0.5))]
    assert entropy(["1"] * 4) == 0.0


def test_rank_statistics_match_their_definitions():
    x = np.arange(20.0)
    assert spearman(x, x**3) == pytest.approx(1.0)
    assert kendall_w([x, x[::-1]]) == pytest.approx(0.0)
    rng = np.random.default_rng(0)
    pos = rng.normal(size=200)
    a, b = pos + 0.1 * rng.normal(size=200), pos + 0.1 * rng.normal(size=200)
    assert spearman(a, b) > 0.9 and abs(partial_spearman(a, b, [pos])) < 0.3  # all of it was position


def _trace(n: int = 4) -> Trace:
    text = " ".join(f"s{i}" + "x" * i for i in range(n))
    steps, at = [], 0
    for i, word in enumerate(text.split(" ")):
        steps.append(Step(i, word, at, at + len(word)))
        at += len(word) + 1
    return Trace(Task("q", kind="math"), [Round(text=text, steps=steps)])


def test_every_record_carries_the_baselines_and_headroom_arrives_with_a_resampling_record():
    t = _trace()
    add_importance(t, ImportanceRecord("receiver", "receiver", [0.1, 0.4, 0.2, 0.3]))
    rec = t.final.importance[0]
    assert rec.series["baseline_position"] == [0.0, 1 / 3, 2 / 3, 1.0]
    assert rec.series["baseline_length"] == [2.0, 3.0, 4.0, 5.0]
    assert rec.series["baseline_headroom"] == [None] * 4
    res = ImportanceRecord(
        "resample", "resample", [0.0, 1.0, 0.0, 0.0], series={"headroom": [0.7, 0.1, 0, 0]}
    )
    add_importance(t, res)
    assert t.final.importance[0].series["baseline_headroom"] == [0.7, 0.1, 0, 0]
    back = Trace.from_dict(t.to_dict())
    assert back.final.importance == t.final.importance


def test_published_accuracy_gives_headroom_as_its_binary_entropy():
    t = _trace()
    pub = ImportanceRecord(
        "published", "thought-anchors", [1, 2, 3, 4], series={"accuracy": [0.5, 1.0, None, 0.9]}
    )
    add_importance(t, pub)
    h = t.final.importance[0].series["baseline_headroom"]
    assert h[0] == pytest.approx(np.log(2)) and h[1] == 0.0 and h[2] is None


def test_a_step_that_does_not_clear_its_floor_is_never_drawn_as_important():
    rec = ImportanceRecord("resample", "resample", [0.9, 0.5, 0.1], series={"clears_floor": [0.0, 1.0, 1.0]})
    sizes, _ = step_view([rec], 3)
    assert sizes == [0.0, 1.0, 0.5]  # the top score is under its floor: drawn smallest


def test_agreement_is_one_for_methods_that_rank_alike_and_low_for_opposite_ones():
    a = ImportanceRecord("receiver", "receiver", [1, 2, 3, 4, None])
    b = ImportanceRecord("suppression", "suppression", [4, 3, 2, 1, 0])
    c = ImportanceRecord("resample", "resample", [10, 20, 30, 40, 50])
    ag = agreement([a, b, c])
    assert ag.steps == 4 and ag.pairs[("receiver", "resample")] == pytest.approx(1.0)
    assert ag.pairs[("receiver", "suppression")] == pytest.approx(-1.0) and ag.w < 0.5
    assert "Kendall's W" in ag.line()
    pooled = agreement_of_columns([{"receiver": np.arange(5.0), "resample": np.arange(5.0)}] * 2)
    assert pooled.w == pytest.approx(1.0) and pooled.steps == 10


def test_when_no_rollout_differs_from_its_step_the_record_scores_resampling_and_says_so():
    from o3viz.analysis.importance.resample import _score_name

    series = {"counterfactual_accuracy": [None, None], "resampling_accuracy": [0.5, -0.25]}
    assert _score_name(series, "5") == "resampling_accuracy"
    series["counterfactual_accuracy"] = [None, 0.3]
    assert _score_name(series, "5") == "counterfactual_accuracy"
