"""Causal key trimming in the blocked kernel (``o3viz.hooks.blocks``): each block of query rows
computes only the keys its last row can see, its probabilities equal plain eager softmax attention
for a whole sequence (Q == K) and for a KV-cache chunk (Q < K, bottom-right), and the trimmed
kernel computes about half the score elements of the full rectangle."""

from __future__ import annotations

import pytest
import torch

from o3viz.hooks import blocks
from o3viz.hooks.blocks import probability_blocks

pytestmark = [pytest.mark.model]


def _eager(q, k, scaling, offset: int, bias=None) -> torch.Tensor:
    """(H, Q, K) plain softmax attention of batch 0, key j visible to row i iff j <= i + offset."""
    keys = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
    scores = q.float() @ keys.float().transpose(-1, -2) * scaling  # (B, H, Q, K)
    i = torch.arange(q.shape[2])[:, None]
    j = torch.arange(k.shape[2])[None, :]
    scores = scores.masked_fill(j > i + offset, float("-inf"))
    if bias is not None:
        scores = scores + bias[:, None, :]
    return torch.softmax(scores, dim=-1)[0]


def _assembled(parts, k_len: int) -> torch.Tensor:
    """(H, Q, K) from the kernel's blocks; keys beyond a block's K_b are zero."""
    h = parts[0][1].shape[1]
    out = torch.zeros(h, sum(p.shape[2] for _, p in parts), k_len)
    for s, probs in parts:
        out[:, s : s + probs.shape[2], : probs.shape[-1]] = probs[0]
    return out


@pytest.mark.parametrize(
    ("q_len", "k_len", "q_offset"),
    [(61, 61, None), (61, 61, 0), (23, 80, 57), (1, 40, None)],
    ids=["whole", "whole-explicit", "kv-cache-chunk", "one-row"],
)
@pytest.mark.parametrize("block", [1, 8, 16, 1000])
def test_trimmed_blocks_equal_eager_softmax_attention(q_len, k_len, q_offset, block):
    torch.manual_seed(0)
    q, k = torch.randn(1, 4, q_len, 8), torch.randn(1, 2, k_len, 8)
    bias = torch.randn(4, k_len)
    offset = k_len - q_len  # bottom-right: the chunk's rows are the sequence's last q_len positions
    parts = list(probability_blocks(q, k, None, 0.3, block=block, q_offset=q_offset))
    assert [s for s, _ in parts] == list(range(0, q_len, block))
    for s, probs in parts:  # each block stops at its last row's horizon
        assert probs.shape[-1] == min(k_len, s + probs.shape[2] + offset)
    torch.testing.assert_close(_assembled(parts, k_len), _eager(q, k, 0.3, offset))
    with_bias = list(probability_blocks(q, k, None, 0.3, bias, block=block, q_offset=q_offset))
    torch.testing.assert_close(_assembled(with_bias, k_len), _eager(q, k, 0.3, offset, bias))


def test_a_float_mask_is_read_over_every_key():
    """With a mask the kernel cannot know which keys are invisible: every block is K wide."""
    torch.manual_seed(0)
    q, k = torch.randn(1, 4, 23, 8), torch.randn(1, 2, 80, 8)
    allowed = torch.arange(80)[None, :] <= torch.arange(23)[:, None] + 57
    mask = torch.where(allowed, 0.0, torch.finfo(torch.float32).min)[None, None]
    parts = list(probability_blocks(q, k, mask, 0.3, block=8))
    assert {p.shape[-1] for _, p in parts} == {80}
    torch.testing.assert_close(_assembled(parts, 80), _eager(q, k, 0.3, 57))


def test_without_a_q_offset_several_rows_keep_transformers_top_left_rule():
    """A None mask with Q < K and no ``q_offset`` is transformers' empty static cache (later keys
    are padding): top-left, as ``causal_skip_mask`` hands it over."""
    torch.manual_seed(0)
    q, k = torch.randn(1, 2, 10, 8), torch.randn(1, 2, 30, 8)
    parts = list(probability_blocks(q, k, None, 0.3, block=4))
    torch.testing.assert_close(_assembled(parts, 30), _eager(q, k, 0.3, 0))


def test_trimmed_kernel_computes_about_half_the_score_elements(monkeypatch):
    """Counted, not timed: the score matmuls of a 512-row causal read cover the lower triangle
    plus one block's overhang per block, not the 512 × 512 rectangle."""
    sizes: list[int] = []
    real = torch.matmul

    def counting(a, b):
        out = real(a, b)
        sizes.append(out.numel())
        return out

    monkeypatch.setattr(blocks.torch, "matmul", counting)
    t, block, h = 512, 32, 2
    q, k = torch.randn(1, h, t, 8), torch.randn(1, h, t, 8)
    for _ in probability_blocks(q, k, None, 0.3, block=block):
        pass
    full = h * t * t
    triangle = h * t * (t + block) // 2  # sum over blocks of block × (its end)
    assert sum(sizes) == triangle
    assert sum(sizes) <= 0.54 * full
