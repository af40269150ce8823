"""Compare's steering data and figure: a steered run and its unsteered twin measured on the same
marked key columns, per step, both on one axis; nothing to draw says why."""

from __future__ import annotations

import numpy as np
import pytest

from o3viz.analysis.steering import span_share, steering_pair
from o3viz.figures import steering_figure
from o3viz.run.capture import CaptureConfig, DAAConfig, RunRequest, capture
from o3viz.run.config import SteerSpan
from o3viz.testing.builders import make_tiny_llama

PROMPT = "Answer with one word. What is the capital city of France? Tell me about it."


@pytest.fixture(scope="module")
def pair():
    model, tok = make_tiny_llama()
    base = RunRequest(prompt=PROMPT, max_new_tokens=12, capture=CaptureConfig(layers="none"))
    off = capture(model, tok, base)
    steer = DAAConfig(mode="steer", spans=[SteerSpan("Answer with one word.")], steer_alpha=0.001)
    on = capture(
        model,
        tok,
        RunRequest(prompt=PROMPT, max_new_tokens=12, capture=CaptureConfig(layers="none"), daa=steer),
    )
    return off, on


@pytest.mark.model
def test_both_sides_are_measured_on_the_steered_runs_spans(pair):
    off, on = pair
    p = steering_pair(off, on, "plain", "steered")
    assert p.spans == ["Answer with one word."] and p.alpha == 0.001 and p.heads.startswith("all ")
    assert not p.a.steered and p.b.steered and p.a.name == "plain"
    ranges = on.final.attention.steer.ranges
    rows = off.final.attention.mean.astype(np.float32)
    (s, e) = ranges[0]
    np.testing.assert_allclose(p.a.tokens, rows[:, s:e].sum(-1), rtol=1e-6)
    assert len(p.b.steps) == len(on.final.steps)
    assert np.mean(p.b.tokens) > 2 * np.mean(p.a.tokens)  # α = 0.001 in every head moves attention there
    assert steering_pair(off, off) is None


def test_span_share_of_a_step_is_the_mean_over_its_tokens(pair):
    _, on = pair
    rnd = on.final
    steps, tokens = span_share(rnd, rnd.attention.steer.ranges)
    st0 = rnd.steps[0]
    assert steps[0] == pytest.approx(np.mean(tokens[st0.token_start : st0.token_end]))


def test_the_figure_draws_both_sides_on_one_axis_and_says_why_when_empty(pair):
    off, on = pair
    fig = steering_figure(steering_pair(off, on, "plain", "steered"))
    assert len(fig.data) == 2 and "marked spans" in fig.layout.title.text
    assert fig.data[0].name == "A unsteered" and fig.data[1].name.startswith("B steered, α=0.001")
    top = max(v for d in fig.data for v in d.y if v is not None)
    assert fig.layout.yaxis.range[0] == 0 and fig.layout.yaxis.range[1] >= top  # one scale holds both
    empty = steering_figure(None)
    assert "Neither trace was steered" in empty.layout.annotations[0].text
