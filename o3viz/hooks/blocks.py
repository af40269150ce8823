"""Attention probabilities computed in blocks of query rows: the one kernel behind every place
o3viz reads whole-sequence attention (capture's prefill recording, enrichment, the receiver-head
analysis).

``probability_blocks`` yields one block of query rows at a time, ``softmax(QK^T * scaling + mask
[+ bias])`` in fp32, and each caller reduces the block to what it keeps (head mean, top-k rows,
step sums) before the next one: at most ``H × block × K`` fp32 is alive, never ``H × Q × K``.
A full 8k-token eager pass with ``output_attentions`` would hold 8k × 8k × 9 heads × 30 layers
fp32 (70 GB); here one block is (9 × 512 × 8k fp32, 150 MB).

Masks: with the o3viz mask function (``o3viz.hooks.instrument.causal_skip_mask``) a plain causal
forward gets ``None`` instead of a (B, 1, Q, K) float mask, exactly when transformers' sdpa would
rely on ``is_causal``; the kernel then applies the same causal rule per block, so no Q × K mask
is ever built either. The rule is key j visible to query row i iff ``j <= i + q_offset``:
``q_offset`` is the caller's (a KV-cache chunk whose first row sits at position K - Q passes
``K - Q``, bottom-right); by default it is transformers' convention for a None mask, top-left
(0) for several rows (Q == K, or an empty static cache whose later keys are padding) and every
key for one row.

Causal trimming: under that rule, rows ``s .. e`` see no key at or beyond ``e + q_offset``, so a
block computes only keys ``[0, K_b)``, ``K_b = min(K, e + q_offset)``: a whole-sequence causal
forward does about half the score work of the full (Q, K) rectangle. With a float mask every key
is computed (the mask may allow any of them).
"""

from __future__ import annotations

from collections.abc import Iterator

import torch

BLOCK_ROWS = 512  # most query rows per block
BLOCK_BYTES = 64 * 2**20  # fp32 probabilities of one block (B × H × rows × K) at most, above 16 rows


def block_rows(batch_heads: int, k_len: int) -> int:
    """Query rows per block so one block's (B·H, rows, K) fp32 stays within ``BLOCK_BYTES``: 512
    rows up to 3.6k keys with 9 heads, 56 rows at 32k keys.

    >>> block_rows(9, 1024), block_rows(9, 32768)
    (512, 56)
    """
    return max(16, min(BLOCK_ROWS, BLOCK_BYTES // (4 * batch_heads * max(k_len, 1))))


def causal_offset(q_len: int, k_len: int, q_offset: int | None = None) -> int:
    """The causal rule's offset for a None mask: key j is visible to row i iff ``j <= i + offset``
    (the module docstring); ``q_offset`` None is transformers' convention.

    >>> causal_offset(5, 5), causal_offset(1, 9), causal_offset(3, 9, q_offset=6)
    (0, 8, 6)
    """
    if q_offset is not None:
        return q_offset
    return k_len - 1 if q_len == 1 else 0


def probability_blocks(
    query: torch.Tensor,
    key: torch.Tensor,
    mask: torch.Tensor | None,
    scaling: float,
    bias: torch.Tensor | None = None,
    block: int | None = None,
    q_offset: int | None = None,
) -> Iterator[tuple[int, torch.Tensor]]:
    """Yield ``(s, probs)``: probs (B, H, b, K_b) fp32 are the attention probabilities of query rows
    ``s .. s+b``, blocks in order; keys beyond K_b are zero / invisible (K_b = K with a float mask,
    else trimmed to the causal horizon of the block's last row, see the module docstring).
    Shapes: query (B, H, Q, D), key (B, Hkv, K, D), mask (B, 1, Q, K) float or None (causal, with
    ``q_offset``), bias (H, K) added to every row or None; ``block`` rows per block (None:
    ``block_rows``)."""
    h, q_len = query.shape[1], query.shape[2]
    n_rep = h // key.shape[1]
    keys_t = key.float().transpose(-1, -2)  # (B, Hkv, D, K), converted once for all blocks
    if n_rep > 1:
        keys_t = keys_t.repeat_interleave(n_rep, dim=1)  # (B, H, D, K)
    k_len = keys_t.shape[-1]
    offset = causal_offset(q_len, k_len, q_offset) if mask is None else 0
    cols = torch.arange(k_len, device=query.device)
    block = block or block_rows(query.shape[0] * h, k_len)
    for s in range(0, q_len, block):
        e = min(q_len, s + block)
        kb = k_len if mask is not None else max(1, min(k_len, e + offset))  # keys this block can see
        # scale the small query block, not the (B, H, b, K_b) scores: one fewer large temporary
        scores = torch.matmul(query[:, :, s:e].float() * scaling, keys_t[..., :kb])  # (B, H, b, K_b)
        if mask is not None:
            scores += mask[:, :, s:e, :k_len]
        elif s + offset < kb - 1:  # some row of the block has keys after its horizon
            rows = torch.arange(s, e, device=query.device)[:, None] + offset
            scores.masked_fill_(cols[None, :kb] > rows, float("-inf"))  # (b, K_b) bool
        if bias is not None:
            scores += bias[:, None, :kb]
        yield s, torch.softmax(scores, dim=-1)
        del scores
