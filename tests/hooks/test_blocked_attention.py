"""Prefill attention computed in blocks of query rows equals the unblocked computation (transformers'
eager attention with ``output_attentions``), dense or cut to top-k rows, for any block size; a
block placed at the wrong rows breaks that contract; and nothing of size tokens² is allocated."""

from __future__ import annotations

import pytest
import torch
from transformers import DynamicCache

from o3viz.hooks.blocks import probability_blocks
from o3viz.hooks.instrument import instrument
from o3viz.hooks.recorder import Recorder, RecorderSpec
from o3viz.testing.builders import make_tiny_llama

pytestmark = [pytest.mark.model]

TOKENS = 97  # a prime, so no block size divides it


def _ids(tok, n: int) -> list[int]:
    text = "Count the sheep, then the goats, and explain each step of the sum. " * (n // 8 + 1)
    return tok(text, add_special_tokens=False)["input_ids"][:n]


def _reference(model, ids: list[int]) -> list[torch.Tensor]:
    """Per layer (P, P): head-averaged eager attention of one unblocked forward."""
    impl = model.config._attn_implementation
    model.set_attn_implementation("eager")
    try:
        with torch.inference_mode():
            out = model(input_ids=torch.tensor([ids]), output_attentions=True)
    finally:
        model.set_attn_implementation(impl)
    return [a[0].float().mean(0) for a in out.attentions]


def _record(model, ids: list[int], **spec) -> Recorder:
    c = model.config
    layers = list(range(c.num_hidden_layers))
    rec = Recorder(RecorderSpec(c.num_hidden_layers, c.num_attention_heads, len(ids), layers, **spec))
    with instrument(model, rec), torch.inference_mode():
        cache = DynamicCache(config=c)
        model(input_ids=torch.tensor([ids]), past_key_values=cache, use_cache=True, logits_to_keep=1)
        rec.end_step()
    return rec


@pytest.fixture(scope="module")
def tiny():
    return make_tiny_llama(num_layers=2, max_positions=4096)


@pytest.mark.parametrize("block", [1, 7, 32, 1000])
def test_blocked_prefill_equals_unblocked_eager_attention(tiny, block):
    model, tok = tiny
    ids = _ids(tok, TOKENS)
    ref = _reference(model, ids)
    rec = _record(model, ids, block_rows=block, dtype=torch.float32)
    for layer, want in enumerate(ref):
        torch.testing.assert_close(rec.prefill[layer], want, atol=1e-6, rtol=1e-5)


def test_top_k_prefill_rows_are_the_k_largest_of_the_unblocked_rows(tiny):
    model, tok = tiny
    ids = _ids(tok, TOKENS)
    ref = _reference(model, ids)
    rec = _record(model, ids, block_rows=16, prefill_top_k=5, dtype=torch.float32)
    for layer, want in enumerate(ref):
        values, index = rec.prefill_top[layer]
        assert values.shape == index.shape == (TOKENS, 5)
        torch.testing.assert_close(values, want.topk(5, dim=-1).values, atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(want.gather(1, index.long()), values, atol=1e-6, rtol=1e-5)


def _assembled(blocks, k: int) -> torch.Tensor:
    """(H, Q, K) from ``(s, probs)`` blocks of batch 0, each written at the rows it claims; a
    block's keys from its width K_b on are invisible (zero)."""
    parts = list(blocks)
    h = parts[0][1].shape[1]
    out = torch.full((h, sum(p.shape[2] for _, p in parts), k), float("nan"))
    for s, probs in parts:
        rows = out[:, s : s + probs.shape[2]]
        rows[:] = 0.0
        rows[..., : probs.shape[-1]] = probs[0, :, : rows.shape[1]]
    return out


def _contract(kernel) -> None:
    """The kernel's blocks, with a float causal mask and with the skipped (None) mask, equal one
    unblocked softmax."""
    torch.manual_seed(1)
    q, k = torch.randn(1, 4, 50, 8), torch.randn(1, 2, 50, 8)
    causal = torch.ones(50, 50, dtype=torch.bool).tril()
    mask = torch.where(causal, 0.0, torch.finfo(torch.float32).min)[None, None]
    keys = k.repeat_interleave(2, dim=1)
    want = torch.softmax(q @ keys.transpose(-1, -2) * 0.3 + mask, dim=-1)[0]
    for m in (mask, None):
        torch.testing.assert_close(_assembled(kernel(q, k, m, 0.3, block=16), 50), want)


def test_probability_blocks_meet_the_contract():
    _contract(probability_blocks)


def test_a_block_placed_one_row_late_breaks_the_contract():
    def late(*args, **kwargs):
        for s, probs in probability_blocks(*args, **kwargs):
            yield (s + 1 if s else s), probs  # the classic off-by-one at a block boundary

    with pytest.raises(AssertionError):
        _contract(late)
