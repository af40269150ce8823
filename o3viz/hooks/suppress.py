"""Attention suppression: forwards in which chosen key positions receive no attention, per batch
row (``suppressed[b, k]`` True = no query of row b may attend to key k).

Built on the one install mechanism (``o3viz.hooks.instrument.install``): an attention function
registered with transformers' ``AttentionInterface`` together with the eager mask under one name
(``o3viz_suppress``), switched on in a context manager that restores the previous implementation.
The function takes the model's own float mask (causal, sliding window, padding: as the model
defines them), sets the suppressed keys of each batch row to the dtype's minimum, and calls
transformers' own sdpa. No modeling code is touched.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from o3viz.hooks.instrument import active_state, install, register_attention

ATTN_NAME = "o3viz_suppress"


@dataclass
class Suppression:
    """``keys`` (B, T) bool: key positions row b must not attend to (absolute positions)."""

    keys: torch.Tensor | None


def suppressed_attention(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    """sdpa with the active suppression applied to the float mask (B, 1, Q, K)."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    state = active_state()
    sup = state.keys if isinstance(state, Suppression) else None
    if sup is not None and attention_mask is not None:
        k_len = key.shape[2]
        blocked = sup[:, None, None, :k_len].to(attention_mask.device)  # (B, 1, 1, K)
        attention_mask = attention_mask[..., :k_len].masked_fill(
            blocked, torch.finfo(attention_mask.dtype).min
        )
    return sdpa_attention_forward(
        module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
    )


@contextmanager
def suppressing(model, suppressed: torch.Tensor | None) -> Iterator[None]:
    """Run ``model`` with ``suppressed`` (B, K) bool active; ``None`` gives the plain model."""
    register_attention(ATTN_NAME, suppressed_attention)
    with install(model, ATTN_NAME, Suppression(suppressed)):
        yield
