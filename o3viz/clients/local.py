"""The local model as a generation client (``LocalBackend``): the K samples of one prefix share its
KV cache. The prefix is prefilled once, the cache is repeated K times, and the K continuations
decode as one batch (``generate_shared_prefix``). ``fork_cache`` is the one way a prefilled cache
is cut to a prefix (suppression's masked passes, the answer probes): nothing is recomputed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from o3viz.clients.base import Sampling

__all__ = ["LocalBackend", "decode_shared_prefix", "fork_cache", "generate_shared_prefix"]


@dataclass
class LocalBackend:
    """The local model; K samples of one prefix decode as one batch from a shared prefix cache."""

    model: Any
    tokenizer: Any
    name: str = ""
    batch: int = 8
    budget_tokens: int = 0  # rollouts decoded here × their token budget (cache hits are not counted)
    seconds: float = 0.0  # the time those took: this machine's speed, as the cost lines count it

    def __post_init__(self) -> None:
        info = getattr(self.model, "o3viz_info", None)
        self.name = self.name or f"local:{getattr(info, 'model_id', None) or self.model.config._name_or_path}"

    def complete(self, prompt: str, k: int, sampling: Sampling, first: int = 0) -> list[str]:
        t0, out = time.perf_counter(), []
        ids = self.tokenizer(prompt, add_special_tokens=False, return_tensors="pt")["input_ids"]
        while len(out) < k:
            n = min(self.batch, k - len(out))
            out += generate_shared_prefix(self.model, self.tokenizer, ids, n, sampling, first + len(out))
        self.budget_tokens += k * sampling.max_tokens
        self.seconds += time.perf_counter() - t0
        return out


def generate_shared_prefix(
    model, tokenizer, ids, k: int, sampling: Sampling, seed_offset: int = 0
) -> list[str]:
    """``k`` sampled continuations of ``ids`` (1, P) as text (``decode_shared_prefix``)."""
    rows = decode_shared_prefix(model, tokenizer, ids, k, sampling, seed_offset)
    return [tokenizer.decode(row, skip_special_tokens=True) for row in rows]


def decode_shared_prefix(
    model,
    tokenizer,
    ids,
    k: int,
    sampling: Sampling,
    seed_offset: int = 0,
    *,
    logits_processor: list | None = None,
    stopping_criteria: list | None = None,
):
    """The new token ids (k, G) of ``k`` sampled continuations of ``ids`` (1, P): one prefill of
    ``ids[:, :-1]``, its cache repeated ``k`` times, then one batched ``generate`` (rows that end
    early are padded with the pad id). ``logits_processor`` runs before the temperature and top-p
    warpers, so it sees the model's own logits (k, V) at every step."""
    import torch
    from transformers import DynamicCache, LogitsProcessorList, StoppingCriteriaList

    device = next(model.parameters()).device
    ids = ids.to(device)
    cache = DynamicCache(config=model.config)
    with torch.inference_mode():
        if ids.shape[1] > 1:
            model(input_ids=ids[:, :-1], past_key_values=cache, use_cache=True)
        cache.batch_repeat_interleave(k)
        torch.manual_seed(sampling.seed * 1_000_003 + seed_offset)
        gen = model.generate(
            input_ids=ids.expand(k, -1),
            attention_mask=torch.ones(k, ids.shape[1], dtype=torch.long, device=device),
            past_key_values=cache,
            do_sample=sampling.temperature > 0,
            temperature=sampling.temperature or None,
            top_p=sampling.top_p,
            top_k=0,
            max_new_tokens=sampling.max_tokens,
            pad_token_id=tokenizer.pad_token_id,
            logits_processor=LogitsProcessorList(logits_processor or []),
            stopping_criteria=StoppingCriteriaList(stopping_criteria or []),
        )
    return gen[:, ids.shape[1] :]


def fork_cache(model, base, length: int, batch: int = 1):
    """A fresh ``DynamicCache`` holding ``base``'s first ``length`` positions, repeated ``batch``
    times: each layer's keys and values (B, kv_heads, length, head_dim) are sliced, never
    recomputed; ``base`` is left as it was."""
    from transformers import DynamicCache

    cache = DynamicCache(config=model.config)
    for layer_idx, layer in enumerate(base.layers):
        k, v = layer.keys[:, :, :length], layer.values[:, :, :length]
        cache.update(
            k.expand(batch, -1, -1, -1).contiguous(), v.expand(batch, -1, -1, -1).contiguous(), layer_idx
        )
    return cache
