"""Attention steering's math (``o3viz.hooks.steer``) and its contract through the o3viz attention
function: in the steered heads a row becomes the unsteered row with unmarked prompt keys scaled by
α, renormalised (PASTA's definition, exactly), and nothing changes in any other head."""

from __future__ import annotations

import math

import pytest
import torch

from o3viz.errors import UsageError
from o3viz.hooks.instrument import Recorder, RecorderSpec
from o3viz.hooks.steer import head_mask, parse_steer_heads, span_mass, steer_bias
from o3viz.testing.builders import make_tiny_llama, prefill_then_decode

pytestmark = [pytest.mark.model]

PROMPT = "Answer with one word. What is the capital city of France? Tell me about it."


def test_bias_is_log_alpha_on_unmarked_prompt_keys_only():
    b = steer_bias(6, [(1, 3), (4, 5)], 0.01, 9)
    la = math.log(0.01)
    assert b.tolist() == pytest.approx([la, 0, 0, la, 0, la, 0, 0, 0])


def test_heads_parse_and_mask():
    assert parse_steer_heads(" all ") == "all"
    assert parse_steer_heads("1.2,0.0") == [(1, 2), (0, 0)]
    m = head_mask([(1, 2)], 2, 3)
    assert m.tolist() == [[0, 0, 0], [0, 0, 1]]
    assert head_mask("all", 2, 3).sum() == 6
    for bad in ("1-2", "x.1", "", "1."):
        with pytest.raises(UsageError, match="steer heads"):
            parse_steer_heads(bad)
    with pytest.raises(UsageError, match="head 2.0 does not exist"):
        head_mask([(2, 0)], 2, 3)


def test_span_mass_sums_the_marked_columns():
    rows = torch.tensor([[0.1, 0.2, 0.3, 0.4]])
    assert span_mass(rows, [(1, 3)]).tolist() == pytest.approx([0.5])


@pytest.fixture(scope="module")
def tiny():
    return make_tiny_llama()


@pytest.mark.parametrize("alpha", [0.5, 0.01, 1e-12])
def test_steered_rows_are_the_unsteered_rows_scaled_by_alpha_and_renormalised(tiny, alpha):
    """Steer two heads of the last layer (layer 0 keeps an unchanged residual stream, so its rows
    and the unsteered rows of layer 1 are the reference). A span off by one token either way
    makes the expected rows differ by far more than the tolerance."""
    model, tok = tiny
    ids = tok(PROMPT)["input_ids"]
    c, p, span = len(ids), len(ids) - 1, (3, 7)
    spec = RecorderSpec(2, 4, p, keep_layers=[0, 1], dtype=torch.float32)
    plain, steered = Recorder(spec), Recorder(spec)
    heads = torch.zeros(2, 4)
    heads[1, 1] = heads[1, 3] = 1.0
    steered.set_bias(steer_bias(p, [span], alpha, c), heads, record_before=True)
    prefill_then_decode(model, ids, plain)
    prefill_then_decode(model, ids, steered)
    hp, hs = plain.steps_heads[0], steered.steps_heads[0]  # (2, H, C)
    w = torch.full((c,), alpha)
    w[span[0] : span[1]] = 1.0
    w[p:] = 1.0  # the generated (decode) token's own key is never scaled
    for h in (1, 3):
        expected = hp[1, h] * w / (hp[1, h] * w).sum()
        torch.testing.assert_close(hs[1, h], expected, atol=1e-6, rtol=1e-4)
    torch.testing.assert_close(hs[1, [0, 2]], hp[1, [0, 2]])  # unsteered heads: unchanged
    torch.testing.assert_close(hs[0], hp[0])  # the layer before: unchanged
    torch.testing.assert_close(steered.steps_before[0], plain.steps_mean[0])  # "before" is the unsteered row
    if alpha < 1e-6:  # α → 0: the unmarked prompt keys get nothing in the steered heads
        outside = torch.ones(c, dtype=torch.bool)
        outside[span[0] : span[1]] = False
        outside[p:] = False
        assert hs[1, [1, 3]][:, outside].max() < 1e-9
        assert hs[1, [1, 3]][:, span[0] : span[1]].min() > 1e-4  # every marked key still attended
        assert hp[1, [1, 3]][:, outside].min() > 1e-4
