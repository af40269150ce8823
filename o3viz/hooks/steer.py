"""Attention steering (PASTA, Zhang et al. 2024): the pure tensor side of DAA's ``steer`` mode.

In the chosen heads, every prompt key outside the marked spans has its attention multiplied by α
and the row is renormalised. Multiplying a softmax output by α and renormalising is the same as
adding ``log α`` to that key's logit, so steering is an additive per-key bias (``steer_bias``),
applied by the o3viz attention function (``o3viz.hooks.instrument``) through the recorder exactly
like DAA's allocation, with a 0/1 strength per layer and head (``head_mask``) saying which heads.

Only prompt keys are scaled: generated tokens keep their attention (PASTA emphasises part of the
*input*; scaling the model's own continuation down would only make it lose its place).

>>> [round(x, 3) for x in steer_bias(5, [(1, 3)], 0.5, 6).tolist()]  # 5 prompt keys, 1 generated
[-0.693, 0.0, 0.0, -0.693, -0.693, 0.0]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from o3viz.errors import UsageError

if TYPE_CHECKING:  # torch is imported where a tensor is made: the CLI reads STEER_ALPHA without it
    import torch

STEER_ALPHA = 0.01  # PASTA's default scaling coefficient
SteerHeads = str | Sequence[tuple[int, int]]  # "all" | "auto" | [(layer, head), ...]
HEAD_WORDS = ("all", "auto")


def parse_steer_heads(text: str) -> str | list[tuple[int, int]]:
    """``all``, ``auto`` or comma-separated ``layer.head`` pairs (``--steer-heads``, the Run page).

    >>> parse_steer_heads("3.1, 0.7"), parse_steer_heads("auto")
    ([(3, 1), (0, 7)], 'auto')
    """
    text = text.strip()
    if text in HEAD_WORDS:
        return text
    out = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        layer, dot, head = part.partition(".")
        if not (dot and layer.isdigit() and head.isdigit()):
            raise UsageError(
                f"steer heads: expected auto, all or layer.head pairs like 3.1,5.0, not {part!r}"
            )
        out.append((int(layer), int(head)))
    if not out:
        raise UsageError("steer heads: expected auto, all or layer.head pairs like 3.1,5.0")
    return out


def head_mask(heads: str | Sequence[tuple[int, int]], num_layers: int, num_heads: int) -> torch.Tensor:
    """(L, H) float32: 1 in the steered heads (``"all"`` or a list of (layer, head)), else 0."""
    import torch

    if isinstance(heads, str):
        if heads != "all":
            raise UsageError(f"steer heads {heads!r} must be resolved to a list first")
        return torch.ones(num_layers, num_heads)
    mask = torch.zeros(num_layers, num_heads)
    for layer, head in heads:
        if not (0 <= layer < num_layers and 0 <= head < num_heads):
            raise UsageError(
                f"head {layer}.{head} does not exist; the model has layers 0..{num_layers - 1} "
                f"and heads 0..{num_heads - 1}"
            )
        mask[layer, head] = 1.0
    return mask


def span_mask(ranges: Sequence[tuple[int, int]], length: int) -> torch.Tensor:
    """(length,) bool: True on the key positions inside any ``[start, end)`` range."""
    import torch

    mask = torch.zeros(length, dtype=torch.bool)
    for start, end in ranges:
        mask[start:end] = True
    return mask


def steer_bias(prompt_len: int, ranges: Sequence[tuple[int, int]], alpha: float, length: int) -> torch.Tensor:
    """(length,) float32 logit bias: ``log α`` on prompt keys ``[0, prompt_len)`` outside the
    marked ``ranges``, 0 on the marked keys and on every generated position."""
    import torch

    bias = torch.zeros(length)
    outside = ~span_mask(ranges, length)
    outside[prompt_len:] = False
    bias[outside] = math.log(alpha)
    return bias


def span_mass(rows: torch.Tensor, ranges: Sequence[tuple[int, int]]) -> torch.Tensor:
    """Attention mass on the marked keys: ``rows`` (..., K) -> (...,)."""
    return (rows * span_mask(ranges, rows.shape[-1]).to(rows.device, rows.dtype)).sum(-1)
