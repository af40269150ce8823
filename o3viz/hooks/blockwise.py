"""The enrichment attention function: exact eager attention computed in blocks of query rows
(``o3viz.hooks.blocks.probability_blocks``, the one blocked kernel), reducing each block's
probabilities to what the trace keeps before the next block.

Installed through ``o3viz.hooks.instrument`` (the one attention-function mechanism) as
``o3viz_enrich``; its state is a ``WindowRecorder``, or None to compute without recording. One
block is alive at a time (9 × 512 × 8k fp32, 150 MB; blocks of a causal read stop at their last
row's horizon, so a block hands over keys ``[0, K_b)``) and a recorder's accumulators are
(rows, keys) fp32 for the rows it records: enrichment forwards one chunk of query rows at a time
with a KV cache (``o3viz.importers.enrich``), so that is a chunk's rows, not a window's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

from o3viz.hooks.blocks import BLOCK_ROWS, probability_blocks
from o3viz.hooks.instrument import active_state, install, register_attention

ATTN_NAME = "o3viz_enrich"
__all__ = ["ATTN_NAME", "BLOCK_ROWS", "WindowRecorder", "blockwise_attention", "recording"]


class WindowRecorder:
    """Reductions of one window's attention for query rows ``[row_lo, row_hi)`` (window positions).

    ``acc`` (R, K) fp32 sums probabilities over layers and heads; ``layer_head`` (R, L, H) holds each
    head's share on the first ``prompt_len`` keys; ``per_head[layer]`` (R, H, K) fp16 keeps the rows
    of the kept layers, or with ``head_top_k`` only each row's k largest keys, ``per_head_top[layer]``
    = (values (R, H, k) fp16, int32 keys (R, H, k)), reduced block by block (a long text).
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
        head_top_k: int | None = None,
    ) -> None:
        rows = row_hi - row_lo
        self.head_top_k = head_top_k  # at most num_keys
        self.row_lo, self.row_hi, self.prompt_len = row_lo, row_hi, prompt_len
        self.acc = torch.zeros(rows, num_keys, dtype=torch.float32)
        self.layer_head = torch.zeros(rows, num_layers, num_heads, dtype=torch.float32)
        k = self.head_top_k
        self.per_head = {
            layer: torch.zeros(rows, num_heads, num_keys, dtype=torch.float16)
            for layer in (keep_layers if k is None else [])
        }
        self.per_head_top = {
            layer: (
                torch.zeros(rows, num_heads, k, dtype=torch.float16),
                torch.zeros(rows, num_heads, k, dtype=torch.int32),
            )
            for layer in (keep_layers if k is not None else [])
        }
        self.calls = 0
        # the forward is plain causal (no padding) and its queries are the last Q of its K keys (a
        # KV-cache chunk): the kernel applies that rule itself and trims each block's keys, instead
        # of reading every key through the (B, 1, Q, K) mask
        self.causal_chunk = False

    def add(self, layer: int, q0: int, probs: torch.Tensor) -> None:
        """``probs`` (H, b, K_b) fp32: rows ``q0 .. q0+b`` of one layer, keys ``[0, K_b)`` (the
        rest are invisible to these rows, ``o3viz.hooks.blocks``)."""
        a, b = max(q0, self.row_lo), min(q0 + probs.shape[1], self.row_hi)
        if a >= b:
            return
        block = probs[:, a - q0 : b - q0]  # (H, r, K_b): keys from K_b on are invisible (zero)
        r0, r1, kb = a - self.row_lo, b - self.row_lo, block.shape[-1]
        self.acc[r0:r1, :kb] += block.sum(0)
        self.layer_head[r0:r1, layer] = block[:, :, : self.prompt_len].sum(-1).transpose(0, 1)
        if layer in self.per_head:
            self.per_head[layer][r0:r1, :, :kb] = block.transpose(0, 1).half()
        if layer in self.per_head_top:
            if kb < self.head_top_k:  # fewer visible keys than k: the zeros after them fill the rest
                block = torch.nn.functional.pad(block, (0, self.head_top_k - kb))
            vals, idx = block.transpose(0, 1).topk(self.head_top_k, dim=-1)  # (r, H, k)
            values, index = self.per_head_top[layer]
            values[r0:r1], index[r0:r1] = vals.half(), idx.to(torch.int32)
        self.calls += 1


def blockwise_attention(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    """Eager attention, ``softmax(QK^T * scaling + mask) V``, in blocks of query rows
    (``probability_blocks``). Shapes: query (B, H, Q, D), key/value (B, Hkv, K, D), mask
    (B, 1, Q, K) float or None (causal); returns ((B, Q, H, D), None). Batch 0 is recorded when a
    recorder is active; a recorder with ``causal_chunk`` set stands for the mask (bottom-right
    causal, ``q_offset = K - Q``)."""
    rec = active_state()
    rec = rec if isinstance(rec, WindowRecorder) else None
    b, h, q_len, d = query.shape
    mask, q_offset = attention_mask, None
    if rec is not None and rec.causal_chunk:  # bottom-right causal, applied by the kernel
        mask, q_offset = None, key.shape[2] - q_len
    n_rep = h // value.shape[1]
    values = value.repeat_interleave(n_rep, dim=1) if n_rep > 1 else value  # (B, H, K, D)
    out = torch.empty(b, h, q_len, d, dtype=query.dtype, device=query.device)
    for s, probs in probability_blocks(query, key, mask, scaling, q_offset=q_offset):
        e, kb = s + probs.shape[2], probs.shape[-1]  # keys from K_b on are invisible to the block
        out[:, :, s:e] = torch.matmul(probs.to(values.dtype), values[:, :, :kb])
        if rec is not None:
            rec.add(module.layer_idx, s, probs[0])
        del probs
    return out.transpose(1, 2).contiguous(), None


@contextmanager
def recording(model, recorder: WindowRecorder | None) -> Iterator[None]:
    """Run ``model`` with ``blockwise_attention`` and ``recorder`` active; the previous attention
    implementation is restored when the last concurrent user leaves."""
    register_attention(ATTN_NAME, blockwise_attention, skip_causal_mask=True)
    with install(model, ATTN_NAME, recorder):
        yield
