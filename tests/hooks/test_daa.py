"""DAA: the relevance function on synthetic tensors, descriptor rules, task-type detection, the
strength forms, and on a tiny random model that allocate mode moves attention towards relevant
keys while observe mode leaves attention untouched."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from o3viz.errors import UsageError
from o3viz.hooks.daa import (
    build_relevance,
    descriptor_positions,
    is_descriptor,
    relevance,
    resolve_strength,
)
from o3viz.run.capture import CaptureConfig, DAAConfig, RunRequest, capture
from o3viz.testing.builders import make_tiny_llama

pytestmark = [pytest.mark.model]

PROMPT = "Tom has 3 apples and buys 5 more apples at the shop. How many apples does Tom have now?"


def test_relevance_matches_the_articles_formula_by_hand():
    emb = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    e_task = torch.tensor([1.0, 0.0])
    r = relevance(emb, e_task, torch.arange(3), focus=2, alpha=0.6)
    expected = [0.6 * 1 + 0.4 / 3, 0.6 * 0 + 0.4 / 2, 0.6 * (1 / 2**0.5) + 0.4 / 1]
    torch.testing.assert_close(r, torch.tensor(expected))


def test_descriptor_rules_per_task_type():
    assert [is_descriptor(p, "math") for p in [" 3", " +", " apples", " x", " the"]] == [
        True,
        True,
        False,
        True,
        False,
    ]
    assert [is_descriptor(p, "code") for p in [" sort_list", "(", " the", " return"]] == [
        True,
        True,
        False,
        True,
    ]
    assert [is_descriptor(p, "general") for p in [" sky", " the", " is", " blue"]] == [
        True,
        False,
        False,
        True,
    ]


def test_descriptors_come_from_the_question_span_only_and_fall_back_to_all_of_it():
    pieces = ["<s>", " 7", " apples", " cost", " 2", "</s>", " 9"]
    assert descriptor_positions(pieces, 1, 5, "math") == [1, 4]
    assert descriptor_positions(pieces, 2, 4, "math") == [2, 3]  # no number inside: the whole question


def test_build_relevance_focus_is_the_last_descriptor_and_bias_is_standardised():
    torch.manual_seed(0)
    emb = torch.randn(7, 16)
    state = build_relevance(emb, ["<s>", " 7", " apples", " cost", " 2", " each", "?"], (1, 7), "math")
    assert state.descriptors == [1, 4] and state.focus == 4
    z = state.bias(state.values)
    assert abs(float(z.mean())) < 1e-5 and abs(float(z.std()) - 1) < 1e-5
    before = state.values.shape[0]
    state.extend(torch.randn(2, 16))
    assert state.values.shape[0] == before + 2


def test_strength_accepts_scalar_per_layer_and_per_head_and_rejects_other_shapes():
    assert resolve_strength(2.0, 3, 2).tolist() == [[2.0, 2.0]] * 3
    assert resolve_strength([0, 1, 2], 3, 2)[:, 0].tolist() == [0, 1, 2]
    assert resolve_strength([[1, 2]] * 3, 3, 2).shape == (3, 2)
    with pytest.raises(UsageError):
        resolve_strength([1, 2], 3, 2)


@pytest.fixture(scope="module")
def tiny():
    return make_tiny_llama(num_layers=2, max_positions=512)


def test_allocate_moves_attention_towards_relevant_keys(tiny):
    model, tok = tiny
    tr = capture(
        model, tok, RunRequest(prompt=PROMPT, max_new_tokens=6, daa=DAAConfig(mode="allocate", strength=2.0))
    )
    att = tr.final.attention
    d = att.daa
    assert d.mode == "allocate" and d.before is not None and d.relevance.shape == (att.mean.shape[1],)
    r = d.relevance.astype(np.float32)
    after, before = att.mean.astype(np.float32), d.before.astype(np.float32)
    # every row puts more attention-weighted relevance on its keys after allocation than before
    assert ((after * r).sum(1) > (before * r).sum(1)).all()
    np.testing.assert_allclose(after.sum(1), 1.0, atol=1e-3)
    assert [tr.final.prompt_tokens[j].text.strip() for j in d.descriptor_tokens] == ["3", "5"]


def test_observe_records_relevance_and_leaves_attention_unchanged(tiny):
    model, tok = tiny
    cfg = CaptureConfig(layers="none", dtype="float32")
    off = capture(model, tok, RunRequest(prompt=PROMPT, max_new_tokens=5, capture=cfg))
    obs = capture(
        model, tok, RunRequest(prompt=PROMPT, max_new_tokens=5, capture=cfg, daa=DAAConfig(mode="observe"))
    )
    assert off.final.attention.daa is None
    assert obs.final.attention.daa.before is None and obs.final.attention.daa.task_type == "math"
    np.testing.assert_array_equal(obs.final.attention.mean, off.final.attention.mean)
