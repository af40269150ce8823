"""Importance figures: built from plain records, titles ask their question, ranks hide units."""

from __future__ import annotations

import numpy as np

from o3viz.figures.importance import (
    head_kurtosis_figure,
    importance_scores_figure,
    ranked,
    step_matrix_figure,
)
from o3viz.trace import Step
from o3viz.trace.importance import ImportanceRecord

STEPS = [Step(i, f"Step {i} text.", 0, 0, type="plan_generation" if i == 1 else None) for i in range(4)]


def _recs():
    sup = ImportanceRecord(
        "suppression",
        "suppression",
        [0.1, 3.0, 0.5, None],
        [(2, 1, 1.0)],
        matrix=np.tril(np.ones((4, 4), np.float32), -1),
    )
    recv = ImportanceRecord(
        "receiver",
        "receiver",
        [0.002, 0.001, None, None],
        head_kurtosis=np.zeros((3, 2), np.float32),
        receiver_heads=[(2, 1)],
        model={"proxy": True},
    )
    return sup, recv


def test_scores_figure_has_one_row_per_method_ranked_0_to_1():
    sup, recv = _recs()
    fig = importance_scores_figure([sup, recv], STEPS)
    z = np.array(fig.data[0].z, dtype=float)
    assert z.shape == (2, 4) and np.nanmax(z) == 1 and np.nanmin(z) == 0
    assert list(fig.data[0].y) == ["attention suppression", "receiver heads · proxy reader"]
    assert fig.layout.title.text.startswith("Which steps mattered?")
    assert "plan_generation" in fig.data[0].text[0][1]


def test_ranked_scores_ignore_units_and_keep_gaps():
    assert ranked([10.0, None, 0.0]) == [1.0, None, 0.0] and ranked([None]) == [None]


def test_matrix_figure_shows_only_earlier_steps_and_log_scale_changes_values():
    sup, _ = _recs()
    plain, log = step_matrix_figure(sup, STEPS), step_matrix_figure(sup, STEPS, log=True)
    z = np.array(plain.data[0].z, dtype=float)
    assert np.isnan(z[0, 0]) and np.isnan(z[0, 3]) and z[3, 0] == 1
    assert np.array(log.data[0].z, dtype=float)[3, 0] == 0  # log10(1)
    assert "earlier step" in plain.layout.xaxis.title.text


def test_resampling_matrix_keeps_its_sign_on_a_scale_centred_at_zero():
    m = np.zeros((4, 4), np.float32)
    m[2, 1], m[3, 0] = 0.75, -0.5  # step 2 reappears more when step 1 is kept; step 3 less
    rec = ImportanceRecord("resample", "resample", [0.1, 0.2, 0.3, None], [(2, 1, 1.0)], matrix=m)
    fig = step_matrix_figure(rec, STEPS, log=True)  # log does not apply to a signed matrix
    z = np.array(fig.data[0].z, dtype=float)
    assert z[2, 1] == 0.75 and z[3, 0] == -0.5
    assert fig.data[0].zmid == 0 and fig.data[0].zmin == -0.75 and fig.data[0].zmax == 0.75
    assert "resampling" in fig.layout.title.text


def test_kurtosis_figure_rings_the_receiver_heads():
    _, recv = _recs()
    fig = head_kurtosis_figure(recv)
    assert list(fig.data[1].x) == [2] and list(fig.data[1].y) == [1]


def test_a_resampled_step_without_a_score_says_why_on_hover_and_the_interval_is_named():
    """Issue 35, finding 4: the caption blamed "the last step, or past the tokens read" for a step
    whose resampled first sentences were all alike."""
    from o3viz.figures.importance import resample_interval_figure

    why = "none of the 4 resampled first sentences differed in meaning from this step"
    rec = ImportanceRecord(
        "resample", "resample", [0.5, None, 0.2],
        series={"ci_low": [0.1, None, 0.0], "ci_high": [0.9, None, 0.6], "noise_floor": [0.2, None, 0.3],
                "clears_floor": [1.0, None, 0.0]},
        params={"interval": "Newcombe's hybrid score interval (Wilson intervals of the two accuracies, combined)"},
        info={"step_notes": {"1": why}},
    )  # fmt: skip
    steps = [Step(i, f"s{i}", 0, 2) for i in range(3)]
    hover = importance_scores_figure([rec], steps).data[0].text[0]
    assert why in hover[1] and why not in hover[0]
    assert "last step" not in importance_scores_figure([rec], steps).layout.title.text
    assert "Newcombe–Wilson" in resample_interval_figure(rec, steps).layout.title.text
