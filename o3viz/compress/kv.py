"""KV-cache surgery for progressive release (used by ``o3viz.compress.release``): removing a segment's
entries from every layer of a ``DynamicCache``, recomputing and re-inserting them at their original
positions, and the re-prefill fallback for caches without plain per-layer tensors.

Every cached entry carries its token id, original position and segment, so positions survive
any number of releases and restores (RoPE positions are passed explicitly as ``position_ids``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Literal

import torch

SurgeryMode = Literal["eviction", "reprefill"]
# What a forward that is not a generation step runs inside, given the original positions of its
# keys (N,): the release hook pauses the recorders and points the DAA bias at those positions.
Around = Callable[[torch.Tensor], AbstractContextManager]


def _plain_forward(_keys: torch.Tensor) -> AbstractContextManager:
    return nullcontext()


def supports_surgery(cache: Any) -> bool:
    """True when every layer of ``cache`` is a plain ``DynamicLayer`` (full attention tensors)."""
    from transformers.cache_utils import DynamicCache, DynamicLayer

    layers = getattr(cache, "layers", None)
    return (
        isinstance(cache, DynamicCache)
        and bool(layers)
        and all(type(layer) is DynamicLayer for layer in layers)
    )


def evict_entries(cache: Any, keep: torch.Tensor) -> None:
    """Keep only the cache entries at indices ``keep`` (1-D, ascending) in every layer."""
    for layer in cache.layers:
        if layer.is_initialized and layer.keys.numel():
            idx = keep.to(layer.keys.device)
            layer.keys = layer.keys.index_select(-2, idx)  # (B, kv_heads, N', head_dim)
            layer.values = layer.values.index_select(-2, idx)


def insert_entries(cache: Any, at: int, keys: list[torch.Tensor], values: list[torch.Tensor]) -> None:
    """Insert per-layer (B, kv_heads, n, head_dim) entries before cache index ``at``."""
    for layer, k, v in zip(cache.layers, keys, values, strict=True):
        layer.keys = torch.cat([layer.keys[..., :at, :], k, layer.keys[..., at:, :]], dim=-2)
        layer.values = torch.cat([layer.values[..., :at, :], v, layer.values[..., at:, :]], dim=-2)


def prefill(model, ids: torch.Tensor, positions: torch.Tensor, cache=None):
    """Run ``ids`` (n,) at ``positions`` (n,) into ``cache`` (new if None); (logits (V,), cache)."""
    from transformers import DynamicCache

    cache = cache if cache is not None else DynamicCache(config=model.config)
    out = model(
        input_ids=ids[None].to(model.device),
        position_ids=positions[None].to(model.device),
        past_key_values=cache,
        use_cache=True,
        logits_to_keep=1,
    )
    return out.logits[0, -1].float(), out.past_key_values


class KVState:
    """The cache plus, per cached entry, its token id, original position and segment (-1: none)."""

    def __init__(
        self,
        model,
        cache,
        ids: torch.Tensor,
        positions: torch.Tensor,
        seg_of: torch.Tensor,
        mode: SurgeryMode,
        around: Around = _plain_forward,
    ):
        self.model, self.cache, self.mode, self.around = model, cache, mode, around
        self.ids, self.positions, self.seg_of = ids, positions, seg_of  # (N,) each, on CPU
        self.present = Counter(ids.tolist())

    def __len__(self) -> int:
        return len(self.ids)

    def append(self, token: int, position: int) -> None:
        self.ids = torch.cat([self.ids, torch.tensor([token])])
        self.positions = torch.cat([self.positions, torch.tensor([position])])
        self.seg_of = torch.cat([self.seg_of, torch.tensor([-1])])
        self.present[token] += 1

    def release(self, seg: int) -> int:
        """Drop segment ``seg``'s entries; returns how many."""
        keep = torch.nonzero(self.seg_of != seg).flatten()
        dropped = len(self) - len(keep)
        self.present.subtract(self.ids[self.seg_of == seg].tolist())
        self.ids, self.positions, self.seg_of = self.ids[keep], self.positions[keep], self.seg_of[keep]
        if self.mode == "eviction":
            evict_entries(self.cache, keep)
        else:
            self._reprefill()
        return dropped

    def restore(self, seg: int, ids: torch.Tensor, positions: torch.Tensor) -> int:
        """Recompute ``seg``'s entries at their original positions; returns how many entries
        before it were missing (0 = the recomputation is exact)."""
        at = int((self.positions < positions[0]).sum())
        missing = int(positions[0]) - at
        self.ids = torch.cat([self.ids[:at], ids, self.ids[at:]])
        self.positions = torch.cat([self.positions[:at], positions, self.positions[at:]])
        self.seg_of = torch.cat([self.seg_of[:at], torch.full((len(ids),), seg), self.seg_of[at:]])
        self.present.update(ids.tolist())
        if self.mode == "eviction":
            from transformers import DynamicCache

            prefix = DynamicCache(config=self.model.config)
            for li, layer in enumerate(self.cache.layers):
                prefix.update(layer.keys[..., :at, :], layer.values[..., :at, :], li)
            with self.around(self.positions[: at + len(ids)]):  # the keys: the prefix, then the segment
                _, prefix = prefill(self.model, ids, positions, prefix)
            insert_entries(
                self.cache,
                at,
                [layer.keys[..., at:, :] for layer in prefix.layers],
                [layer.values[..., at:, :] for layer in prefix.layers],
            )
        else:
            self._reprefill()
        return missing

    def _reprefill(self) -> None:
        """Fallback: rebuild the whole cache from the entries still present, at their positions."""
        with torch.no_grad(), self.around(self.positions):
            _, self.cache = prefill(self.model, self.ids, self.positions)
