"""The attention function behind enrichment: exact eager attention computed in blocks of query
rows, reducing each block's probabilities to what the trace keeps before the next block.

Installed through ``o3viz.hooks.instrument`` (the one attention-function mechanism) as
``o3viz_enrich``; its state is a ``WindowRecorder``, or None to compute without recording. A full 8k-token eager pass with ``output_attentions`` would hold
8k × 8k × 9 heads × 30 layers fp32 (70 GB); here one block is alive at a time (9 × 512 × 8k fp32,
150 MB) and a window's accumulators are (rows, keys) fp32.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

from o3viz.hooks.instrument import active_state, install, register_attention

ATTN_NAME = "o3viz_enrich"
BLOCK_ROWS = 512  # query rows per block: bounds the live probabilities to H × 512 × K fp32


class WindowRecorder:
    """Reductions of one window's attention for query rows ``[row_lo, row_hi)`` (window positions).

    ``acc`` (R, K) fp32 sums probabilities over layers and heads; ``layer_head`` (R, L, H) holds each
    head's share on the first ``prompt_len`` keys; ``per_head[layer]`` (R, H, K) fp16 keeps the rows
    of the kept layers.
    """

    def __init__(
        self,
        row_lo: int,
        row_hi: int,
        num_keys: int,
        prompt_len: int,
        num_layers: int,
        num_heads: int,
        keep_layers: list[int],
    ) -> None:
        rows = row_hi - row_lo
        self.row_lo, self.row_hi, self.prompt_len = row_lo, row_hi, prompt_len
        self.acc = torch.zeros(rows, num_keys, dtype=torch.float32)
        self.layer_head = torch.zeros(rows, num_layers, num_heads, dtype=torch.float32)
        self.per_head = {
            layer: torch.zeros(rows, num_heads, num_keys, dtype=torch.float16) for layer in keep_layers
        }
        self.calls = 0

    def add(self, layer: int, q0: int, probs: torch.Tensor) -> None:
        """``probs`` (H, b, K) fp32: rows ``q0 .. q0+b`` of one layer."""
        a, b = max(q0, self.row_lo), min(q0 + probs.shape[1], self.row_hi)
        if a >= b:
            return
        block = probs[:, a - q0 : b - q0]  # (H, r, K)
        r0, r1 = a - self.row_lo, b - self.row_lo
        self.acc[r0:r1] += block.sum(0)
        self.layer_head[r0:r1, layer] = block[:, :, : self.prompt_len].sum(-1).transpose(0, 1)
        if layer in self.per_head:
            self.per_head[layer][r0:r1] = block.transpose(0, 1).half()
        self.calls += 1


def blockwise_attention(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    """Eager attention, ``softmax(QK^T * scaling + mask) V``, in blocks of query rows.

    Shapes: query (B, H, Q, D), key/value (B, Hkv, K, D), mask (B, 1, Q, K) float; returns
    ((B, Q, H, D), None). Batch 0 is recorded when a recorder is active.
    """
    rec = active_state()
    rec = rec if isinstance(rec, WindowRecorder) else None
    b, h, q_len, d = query.shape
    n_rep = h // key.shape[1]
    keys = key.repeat_interleave(n_rep, dim=1) if n_rep > 1 else key  # (B, H, K, D)
    values = value.repeat_interleave(n_rep, dim=1) if n_rep > 1 else value
    k_len = keys.shape[2]
    out = torch.empty(b, h, q_len, d, dtype=query.dtype, device=query.device)
    keys_t = keys.float().transpose(-1, -2)  # (B, H, D, K), converted once for all blocks
    for s in range(0, q_len, BLOCK_ROWS):
        e = min(q_len, s + BLOCK_ROWS)
        # scale the small query block, not the (B, H, q, K) scores: one fewer large temporary
        scores = torch.matmul(query[:, :, s:e].float() * scaling, keys_t)  # (B, H, q, K)
        if attention_mask is not None:
            scores += attention_mask[:, :, s:e, :k_len]
        probs = torch.softmax(scores, dim=-1)
        del scores
        out[:, :, s:e] = torch.matmul(probs.to(values.dtype), values)
        if rec is not None:
            rec.add(module.layer_idx, s, probs[0])
        del probs
    return out.transpose(1, 2).contiguous(), None


@contextmanager
def recording(model, recorder: WindowRecorder | None) -> Iterator[None]:
    """Run ``model`` with ``blockwise_attention`` and ``recorder`` active; the previous attention
    implementation is restored when the last concurrent user leaves."""
    register_attention(ATTN_NAME, blockwise_attention)
    with install(model, ATTN_NAME, recorder):
        yield
