"""Attention suppression: forwards in which chosen key positions receive no attention, per batch
row (``suppressed[b, k]`` True = no query of row b may attend to key k).

Built on the same mechanism as capture and enrichment: an attention function and a mask function
registered with transformers' ``AttentionInterface`` / ``AttentionMaskInterface`` under one name
(``o3viz_suppress``), switched on with ``attention_implementation`` in a context manager. The mask
function is transformers' ``eager_mask`` with the causal mask function AND-ed with
"key not suppressed in this row", so causality, sliding windows and padding all stay as the model
defines them; the attention function is transformers' own sdpa. No modeling code is touched.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import torch

from o3viz.hooks.instrument import attention_implementation

ATTN_NAME = "o3viz_suppress"

_ACTIVE: ContextVar[torch.Tensor | None] = ContextVar("o3viz_suppressed_keys", default=None)


def suppression_mask(*args, mask_function=None, **kwargs):
    """``eager_mask`` with keys suppressed per batch row when a suppression is active."""
    from transformers.masking_utils import and_masks, causal_mask_function, eager_mask

    mask_function = mask_function or causal_mask_function
    sup = _ACTIVE.get()
    if sup is not None:
        keep = ~sup

        def not_suppressed(batch_idx, head_idx, q_idx, kv_idx):
            return keep.to(kv_idx.device)[batch_idx, kv_idx.clamp(max=keep.shape[1] - 1)] | (
                kv_idx >= keep.shape[1]
            )

        mask_function = and_masks(mask_function, not_suppressed)
    return eager_mask(*args, mask_function=mask_function, **kwargs)


def register() -> None:
    """Register sdpa attention and the suppression mask under ``ATTN_NAME`` (idempotent)."""
    from transformers import AttentionInterface, AttentionMaskInterface
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    AttentionInterface.register(ATTN_NAME, sdpa_attention_forward)
    AttentionMaskInterface.register(ATTN_NAME, suppression_mask)


@contextmanager
def suppressing(model, suppressed: torch.Tensor | None) -> Iterator[None]:
    """Run ``model`` with ``suppressed`` (B, K) bool active; ``None`` gives the plain model."""
    register()
    with attention_implementation(model, ATTN_NAME):
        token = _ACTIVE.set(suppressed)
        try:
            yield
        finally:
            _ACTIVE.reset(token)
