"""The generation loop shared by ``capture``, ``--explore`` branches and the benchmarks: model
forwards with a KV cache, greedy or seeded sampling, and the one computation of a token's
logprob, entropy and top-5 (``token_stats_rows``; the release loop and enrichment use it too)
and of the EOS ids (``eos_ids``).

Every chosen token is fed through the model once more (``forward(token)``) before the loop
checks for EOS or a stop request, so each generated token is also a query: the recorder's row g
is the attention *of* generated token g over keys ``[0, P + g]`` (the attention that produced
token g + 1). The last such forward costs one decode step and its logits are unused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import torch

TOP_K = 5


class TokenHook(Protocol):
    def __call__(self, index: int, token_id: int) -> None: ...


@dataclass
class Generated:
    """What the loop produced: ids and per-token statistics of the distribution they came from."""

    ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    entropies: list[float] = field(default_factory=list)
    tops: list[list[tuple[int, float]]] = field(default_factory=list)  # top-5 (id, prob)
    stopped: bool = False  # should_stop() ended the loop
    reason: str = "max_new_tokens"  # why the loop ended: max_new_tokens | eos | stopped


def eos_ids(model, tokenizer) -> set[int]:
    """Every id that ends generation: the generation config's and the tokenizer's EOS."""
    ids: set[int] = set()
    for src in (getattr(model, "generation_config", None), tokenizer):
        e = getattr(src, "eos_token_id", None)
        ids.update([e] if isinstance(e, int) else (e or []))
    return ids


@dataclass(frozen=True)
class TokenStats:
    """Statistics of N next-token distributions (one per row of logits)."""

    logprob: torch.Tensor  # (N,) log-probability of the chosen token
    entropy: torch.Tensor  # (N,) entropy in nats
    top_p: torch.Tensor  # (N, k) the k largest probabilities, descending
    top_ids: torch.Tensor  # (N, k) their token ids


def token_stats_rows(logits: torch.Tensor, chosen: torch.Tensor, k: int = TOP_K) -> TokenStats:
    """The one computation of a next-token distribution's statistics: ``logits`` (N, V), ``chosen``
    (N,). Entropy is ``entr(p) = -p log p`` with 0 where p = 0, so a ``-inf`` logit (suppressed
    EOS, banned tokens) adds 0 rather than ``0 · -inf = nan``."""
    logp = torch.log_softmax(logits.float(), dim=-1)
    p = logp.exp()
    vals, idx = p.topk(k, dim=-1)
    logprob = logp.gather(-1, chosen.to(logp.device, torch.long)[:, None])[:, 0]
    return TokenStats(logprob, torch.special.entr(p).sum(-1), vals, idx)


def token_stats(logits: torch.Tensor, chosen: int) -> tuple[float, float, list[tuple[int, float]]]:
    """(logprob of ``chosen``, entropy in nats, top-5 (id, prob)) of one next-token distribution (V,)."""
    st = token_stats_rows(logits[None], torch.tensor([chosen]))
    return (
        float(st.logprob[0]),
        float(st.entropy[0]),
        list(zip(st.top_ids[0].tolist(), st.top_p[0].tolist(), strict=True)),
    )


def choose(logits: torch.Tensor, do_sample: bool, temperature: float, gen: torch.Generator | None) -> int:
    if not do_sample:
        return int(logits.argmax())
    probs = torch.softmax(logits.float().cpu() / max(temperature, 1e-5), dim=-1)
    return int(torch.multinomial(probs, 1, generator=gen))


@torch.inference_mode()
def run_loop(
    model,
    input_ids: list[int],
    *,
    max_new_tokens: int,
    stop_ids: set[int],
    min_new_tokens: int = 0,
    do_sample: bool = False,
    temperature: float = 1.0,
    seed: int = 0,
    forced_first: int | None = None,
    before_forward: TokenHook | None = None,
    after_forward: Callable[[], None] | None = None,
    on_token: TokenHook | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Generated:
    """Generate up to ``max_new_tokens`` after ``input_ids``.

    ``before_forward(g, id)`` runs before token g is fed (the DAA bias is extended there),
    ``after_forward()`` after every forward (the recorder closes its step), ``on_token(g, id)``
    once token g is final. EOS is suppressed for the first ``min_new_tokens`` tokens.
    """
    from transformers import DynamicCache

    device = model.device
    gen = torch.Generator().manual_seed(seed) if do_sample else None
    cache = DynamicCache(config=model.config)
    out = Generated()
    ids = torch.tensor([input_ids], device=device)
    logits = model(input_ids=ids, past_key_values=cache, use_cache=True, logits_to_keep=1).logits[0, -1]
    if after_forward:
        after_forward()
    suppress = torch.tensor(sorted(stop_ids), device=device, dtype=torch.long)
    for g in range(max_new_tokens):
        logits = logits.float()
        if g < min_new_tokens and suppress.numel():
            logits[suppress] = float("-inf")
        tok = (
            forced_first
            if (g == 0 and forced_first is not None)
            else choose(logits, do_sample, temperature, gen)
        )
        lp, ent, top = token_stats(logits, tok)
        out.ids.append(tok)
        out.logprobs.append(lp)
        out.entropies.append(ent)
        out.tops.append(top)
        if before_forward:
            before_forward(g, tok)
        step = torch.tensor([[tok]], device=device)
        logits = model(input_ids=step, past_key_values=cache, use_cache=True, logits_to_keep=1).logits[0, -1]
        if after_forward:
            after_forward()
        if on_token:
            on_token(g, tok)
        if tok in stop_ids and g >= min_new_tokens:
            out.reason = "eos"
            break
        if should_stop is not None and should_stop():
            out.stopped, out.reason = True, "stopped"
            break
    return out
