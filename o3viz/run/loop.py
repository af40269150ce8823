"""The one generation loop: every run (``capture``, the verify loop's rounds, ``--explore``
branches, compressed runs with KV-cache release) generates here. Model forwards with a KV cache,
greedy or seeded sampling, and the one computation of a token's logprob, entropy and top-5
(``token_stats_rows``; enrichment uses it too) and of the EOS ids (``eos_ids``).

Per-step behaviour plugs in through the one hook protocol, ``o3viz.hooks.step.StepHook``:
recording attention (``Recorder``), the DAA bias (``DAATrack``), KV-cache release and restore
(``o3viz.compress.release.ReleaseHook``), the logit lens and routing (``InternalsRun``) and
streaming (``Streamer``, which calls the one ``OnToken``).

Every chosen token is fed through the model once more, at position ``P + g`` (explicit
``position_ids``, so positions survive KV-cache entries being removed), before the loop checks
for EOS or a stop request, so each generated token is also a query: the recorder's row g is the
attention *of* generated token g over keys ``[0, P + g]`` (the attention that produced token
g + 1). The last such forward costs one decode step and its logits are unused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import torch

from o3viz.hooks.step import LoopState, StepHook
from o3viz.run.request import RunRequest

TOP_K = 5


class OnToken(Protocol):
    """The one streaming callback of a run: token ``index`` decoded to ``text_piece`` (may be empty
    while a character is incomplete), of at most ``total`` tokens."""

    def __call__(self, index: int, text_piece: str, total: int) -> None: ...


class Streamer(StepHook):
    """Incremental detokenisation for ``OnToken`` (holds back pieces that end mid-character)."""

    def __init__(self, tokenizer, callback: OnToken, total: int):
        self.tok, self.callback, self.total = tokenizer, callback, total
        self.ids: list[int] = []
        self.prefix, self.read = 0, 0

    def on_token(self, state: LoopState, g: int, token_id: int) -> None:
        self.ids.append(token_id)
        piece = ""
        if self.tok is not None:
            head = self.tok.decode(self.ids[self.prefix : self.read], skip_special_tokens=True)
            new = self.tok.decode(self.ids[self.prefix :], skip_special_tokens=True)
            if len(new) > len(head) and not new.endswith("\ufffd"):
                piece = new[len(head) :]
                self.prefix, self.read = self.read, len(self.ids)
        self.callback(g, piece, self.total)


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
    req: RunRequest,
    *,
    stop_ids: set[int],
    hooks: Sequence[StepHook] = (),
    forced_first: int | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Generated:
    """Generate up to ``req.max_new_tokens`` after ``input_ids`` with ``req``'s decoding settings
    (``min_new_tokens``: EOS suppressed that long; ``do_sample``, ``temperature``, ``seed``).

    ``hooks`` run at every step in order (``o3viz.hooks.step``); ``forced_first`` replaces the
    first choice (explored branches); ``should_stop()`` is polled after every token.
    """
    from transformers import DynamicCache

    device, p = model.device, len(input_ids)
    gen = torch.Generator().manual_seed(req.seed) if req.do_sample else None
    state = LoopState(model, DynamicCache(config=model.config), p, list(hooks))
    out = Generated()
    ids = torch.tensor([input_ids], device=device)
    logits = model(input_ids=ids, past_key_values=state.cache, use_cache=True, logits_to_keep=1).logits[0, -1]
    for h in state.hooks:
        h.on_prefill(state)
    suppress = torch.tensor(sorted(stop_ids), device=device, dtype=torch.long)
    for g in range(req.max_new_tokens):
        logits = logits.float()
        if g < req.min_new_tokens and suppress.numel():
            logits[suppress] = float("-inf")
        first = g == 0 and forced_first is not None
        tok = forced_first if first else choose(logits, req.do_sample, req.temperature, gen)
        _append(out, logits, tok)
        logits = _step(state, g, tok)
        if tok in stop_ids and g >= req.min_new_tokens:
            out.reason = "eos"
            break
        if should_stop is not None and should_stop():
            out.stopped, out.reason = True, "stopped"
            break
    for h in state.hooks:
        h.on_end(state)
    return out


def _append(out: Generated, logits: torch.Tensor, tok: int) -> None:
    lp, ent, top = token_stats(logits, tok)
    out.ids.append(tok)
    out.logprobs.append(lp)
    out.entropies.append(ent)
    out.tops.append(top)


def _step(state: LoopState, g: int, tok: int) -> torch.Tensor:
    """Feed token g at position P + g with the hooks around it; the next logits (V,)."""
    model, device = state.model, state.model.device
    for h in state.hooks:
        h.before_forward(state, g, tok)
    logits = model(
        input_ids=torch.tensor([[tok]], device=device),
        position_ids=torch.tensor([[state.prompt_len + g]], device=device),
        past_key_values=state.cache,
        use_cache=True,
        logits_to_keep=1,
    ).logits[0, -1]
    for h in state.hooks:
        h.after_forward(state, g, tok)
    for h in state.hooks:
        h.on_token(state, g, tok)
    return logits
