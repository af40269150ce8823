"""Progressive release during generation: a small greedy decoding loop that measures the attention
each context segment receives, evicts long-unused segments from the KV cache and restores them
when demand returns, recording every event.

**Eviction is real cache surgery** (``mode="eviction"``): the released segment's key/value entries
are removed from every layer of the ``DynamicCache``. Every token keeps its original RoPE position:
the loop passes explicit ``position_ids`` (prompt length + step), so later tokens' positions are
unchanged, as in H2O. The causal mask is built from the cache length, which stays consistent
because we only remove entries. **Restore** recomputes the segment's entries by running its
tokens again at their original positions over the cached entries before it, and inserts them back
in position order; this is exact when nothing before the segment is released at that moment, and
the event's reason says when it is not. Where a cache has no plain per-layer tensors (sliding
window, linear attention), the fallback ``mode="reprefill"`` rebuilds the cache from the tokens
still present, at their original positions, after each release or restore.

**Attention received.** Decode steps run under o3viz's attention function
(``o3viz.hooks.instrument.instrument``, the one mechanism capture also uses) with a ``Recorder``
that keeps only the latest step's row averaged over layers and heads, indexed by cache entry
(``key_index="cache"``: evicted entries leave gaps in the positions). The prefill, restores and
re-prefills are not recorded (sdpa). A segment's demand at a step is its
share of the attention (mean over layers and heads, attention sinks excluded) divided by its share
of the cached entries, clipped to [0, 1]: 1 means at least a uniform share.

**Rules** (``CompressionConfig``): a segment whose demand stays below ``release_floor`` for
``release_window`` consecutive steps is released, oldest first, one per step, never the sink
tokens nor the last ``protect_last`` segments. A released segment receives no attention, so its
demand is read from the output instead: it is restored when ``restore_min_hits`` distinct tokens
among the last ``restore_window`` generated ones occur in it and nowhere in the cached context.
Each step's score is ``w * redundancy + (1 - w) * (1 - demand)`` as in ``o3viz.compress.context``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch

from o3viz.compress.context import CompressedContext, CompressionConfig
from o3viz.compress.kv import KVState, SurgeryMode, prefill, supports_surgery
from o3viz.compress.record import build_compression_record
from o3viz.errors import UsageError
from o3viz.hooks.instrument import ATTN_NAME, Recorder, RecorderSpec, instrument
from o3viz.run.loop import eos_ids, token_stats
from o3viz.trace.compression import CompressionEvent, CompressionRecord


class OnToken(Protocol):
    def __call__(self, step: int, token_id: int, piece: str) -> None: ...


@dataclass
class ReleaseResult:
    """Output of ``generate_with_release``."""

    text: str
    tokens: list[int]
    logprobs: list[float]  # (G,) log-probability of each chosen token
    events: list[CompressionEvent]
    memory_tokens: list[int]  # (G,) KV-cache entries after each step
    step_scores: list[list[float]]  # (G, S) score of each segment at each step
    mode: SurgeryMode
    info: dict[str, Any] = field(default_factory=dict)
    entropies: list[float] = field(
        default_factory=list
    )  # (G,) entropy (nats) of each next-token distribution
    top: list[list[tuple[int, float]]] = field(default_factory=list)  # (G, 5) (token id, probability)

    def to_record(
        self,
        ctx: CompressedContext | None = None,
        *,
        original_tokens: int | None = None,
        segments: list[dict] | None = None,
    ) -> CompressionRecord:
        """The trace's record: the compression's (``ctx``) plus these events and series."""
        if ctx is not None:
            return build_compression_record(
                ctx,
                self.events,
                mode=f"pointer+{self.mode}",
                info=self.info,
                memory_tokens=self.memory_tokens,
                step_scores=self.step_scores,
            )
        n = original_tokens if original_tokens is not None else (self.memory_tokens[:1] or [0])[0]
        return CompressionRecord(
            segments=segments or [],
            events=list(self.events),
            original_tokens=n,
            compressed_tokens=n,
            mode=self.mode,
            info=dict(self.info),
            memory_tokens=self.memory_tokens,
            step_scores=self.step_scores,
        )


# ---------------------------------------------------------------- the generation loop


def _segment_ranges(segments: Sequence[Any], n: int) -> list[tuple[int, int]]:
    """Token ranges from ``(start, end)`` pairs or objects with ``token_start``/``token_end``."""
    out = []
    for s in segments:
        a, b = (s.token_start, s.token_end) if hasattr(s, "token_start") else (int(s[0]), int(s[1]))
        if not 0 <= a <= b <= n:
            raise UsageError(f"segment token range [{a}, {b}) is outside the {n} input tokens")
        out.append((a, b))
    return out


@dataclass
class _Tracker:
    """Per-segment bookkeeping of the release rules."""

    ranges: list[tuple[int, int]]
    redundancy: list[float]
    pinned: list[bool]
    below: list[int]
    released: list[bool]
    hold: list[int]  # steps left during which a restored segment is not released again

    def score(self, s: int, demand: float, w: float) -> float:
        return round(w * self.redundancy[s] + (1 - w) * (1 - demand), 4)


def _demand(att: torch.Tensor, kv: KVState, n_seg: int, sink: int) -> torch.Tensor:
    """(S,) attention share / entry share per segment, sinks excluded, clipped to [0, 1]."""
    live = kv.positions >= sink
    bins = (kv.seg_of + 1).clamp(min=0)
    mass = torch.bincount(bins[live], weights=att[live].double(), minlength=n_seg + 1)[1:]
    count = torch.bincount(bins[live], minlength=n_seg + 1)[1:].double()
    share = mass / mass.sum().clamp(min=1e-12)
    entry_share = count / max(int(live.sum()), 1)
    return torch.where(count > 0, share / entry_share.clamp(min=1e-12), torch.zeros_like(share)).clamp(0, 1)


def _recall_hits(recent: list[int], seg_ids: set[int], kv: KVState) -> int:
    """Distinct recent output tokens that occur in the segment and nowhere in the cached context."""
    return sum(1 for t in set(recent) if t in seg_ids and kv.present[t] <= 0)


def _apply_rules(step, tr: _Tracker, demand, kv, input_ids, recent, cfg, events) -> list[float]:
    """Update counters, release one and restore one segment at most; returns the step's scores."""
    w, scores = cfg.redundancy_weight, []
    for s in range(len(tr.ranges)):
        if tr.released[s]:
            ids = set(input_ids[tr.ranges[s][0] : tr.ranges[s][1]].tolist())
            d = min(1.0, _recall_hits(recent, ids, kv) / cfg.restore_min_hits)
        else:
            d = float(demand[s])
            tr.below[s] = tr.below[s] + 1 if d < cfg.release_floor else 0
            tr.hold[s] = max(tr.hold[s] - 1, 0)
        scores.append(tr.score(s, d, w))
    ready = [
        s
        for s in range(len(tr.ranges))
        if not tr.released[s]
        and not tr.pinned[s]
        and tr.below[s] >= cfg.release_window
        and tr.hold[s] == 0
        and tr.ranges[s][1] > tr.ranges[s][0]
    ]
    if ready:  # oldest first, one per step: release is progressive
        s = ready[0]
        n = kv.release(s)
        tr.released[s] = True
        events.append(
            CompressionEvent(
                step,
                s,
                "release",
                scores[s],
                f"attention < {cfg.release_floor} of a "
                f"uniform share for {tr.below[s]} steps; {n} KV entries removed ({kv.mode})",
            )
        )
    wanted = [
        s
        for s in range(len(tr.ranges))
        if tr.released[s]
        and _recall_hits(recent, set(input_ids[tr.ranges[s][0] : tr.ranges[s][1]].tolist()), kv)
        >= cfg.restore_min_hits
    ]
    if wanted:
        s = wanted[0]
        a, b = tr.ranges[s]
        missing = kv.restore(s, input_ids[a:b], torch.arange(a, b))
        tr.released[s], tr.below[s], tr.hold[s] = False, 0, cfg.release_window
        how = "exact" if missing == 0 else f"approximate: {missing} earlier entries were released"
        events.append(
            CompressionEvent(
                step,
                s,
                "restore",
                scores[s],
                f"output uses {cfg.restore_min_hits}+ "
                f"tokens found only in it; {b - a} entries recomputed ({how})",
            )
        )
    return scores


def _choose_mode(cfg: CompressionConfig, cache) -> SurgeryMode:
    if cfg.surgery == "reprefill":
        return "reprefill"
    if supports_surgery(cache):
        return "eviction"
    if cfg.surgery == "evict":
        raise UsageError(
            f"KV-cache eviction is not supported for {type(cache).__name__} with layers "
            f"{sorted({type(x).__name__ for x in getattr(cache, 'layers', [])})}; use surgery='reprefill'"
        )
    return "reprefill"


def _start(model, input_ids: torch.Tensor, ranges, cfg: CompressionConfig):
    """Prefill the prompt; (first-token logits (V,), KVState)."""
    n = len(input_ids)
    seg_of = torch.full((n,), -1, dtype=torch.long)
    for s, (a, b) in enumerate(ranges):
        seg_of[a:b] = s
    logits, cache = prefill(model, input_ids, torch.arange(n))
    mode = _choose_mode(cfg, cache)
    return logits, KVState(model, cache, input_ids.clone(), torch.arange(n), seg_of, mode)


@torch.no_grad()
def generate_with_release(
    model,
    tokenizer,
    input_ids,
    segments: Sequence[Any],
    *,
    config: CompressionConfig | None = None,
    max_new_tokens: int = 64,
    on_token: OnToken | None = None,
    redundancy: Sequence[float] | None = None,
) -> ReleaseResult:
    """Greedy generation from ``input_ids`` ((n,) or (1, n)) with progressive release of ``segments``
    (token ranges into ``input_ids``: ``(start, end)`` pairs or objects with ``token_start`` /
    ``token_end``). ``redundancy`` per segment enters the score (default 0). ``on_token(step,
    token_id, piece)`` is called for each generated token.
    """
    cfg = config or CompressionConfig()
    ids = torch.as_tensor(input_ids, dtype=torch.long).flatten().cpu()
    ranges = _segment_ranges(segments, len(ids))
    n_seg = len(ranges)
    red = [float(r) for r in redundancy] if redundancy is not None else [0.0] * n_seg
    if len(red) != n_seg:
        raise UsageError(f"redundancy has {len(red)} values for {n_seg} segments")
    pinned = [a < cfg.sink_tokens or s >= n_seg - cfg.protect_last for s, (a, _) in enumerate(ranges)]
    tr = _Tracker(ranges, red, pinned, [0] * n_seg, [False] * n_seg, [0] * n_seg)
    prefill_impl = model.config._attn_implementation
    eos = eos_ids(model, tokenizer)
    logits, kv = _start(model, ids, ranges, cfg)
    out, logprobs, events, memory, scores, entropies, top = [], [], [], [], [], [], []
    rec = _demand_recorder(model)
    with instrument(model, rec):
        for step in range(max_new_tokens):
            token = int(logits.argmax())
            for acc, value in zip((logprobs, entropies, top), token_stats(logits, token), strict=True):
                acc.append(value)
            out.append(token)
            if on_token is not None:
                on_token(step, token, tokenizer.decode([token]) if tokenizer is not None else "")
            if token in eos:
                break
            logits, att = _decode_step(model, kv, rec, token, len(ids) + step)
            demand = _demand(att, kv, n_seg, cfg.sink_tokens)
            scores.append(_apply_rules(step, tr, demand, kv, ids, out[-cfg.restore_window :], cfg, events))
            memory.append(len(kv))
    text = tokenizer.decode(out, skip_special_tokens=True) if tokenizer is not None else ""
    info = _release_info(cfg, kv.mode, prefill_impl, len(ids))
    return ReleaseResult(text, out, logprobs, events, memory, scores, kv.mode, info, entropies, top)


def _demand_recorder(model) -> Recorder:
    """A recorder of each decode step's row averaged over layers and heads, over cache entries;
    it records only inside ``_decode_step``."""
    c = model.config
    spec = RecorderSpec(
        c.num_hidden_layers, c.num_attention_heads, 0, prefill=False, dtype=torch.float32, key_index="cache"
    )
    rec = Recorder(spec)
    rec.record = False
    return rec


def _decode_step(
    model, kv: KVState, rec: Recorder, token: int, position: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Feed one token at its original ``position``; (next logits (V,), attention it paid (N,)),
    the attention averaged over layers and heads."""
    kv.append(token, position)
    rec.record = True
    try:
        res = model(
            input_ids=torch.tensor([[token]], device=model.device),
            position_ids=torch.tensor([[position]], device=model.device),
            past_key_values=kv.cache,
            use_cache=True,
        )
    finally:
        rec.record = False
    rec.end_step()
    att = rec.pop_mean()
    if att is None or att.shape[0] != len(kv):
        raise UsageError(
            f"{type(model).__name__} does not route its attention through transformers' AttentionInterface; "
            "progressive release needs the attention each cache entry receives"
        )
    return res.logits[0, -1].float(), att


def _release_info(cfg: CompressionConfig, mode: str, prefill_impl: str, n_prompt: int) -> dict:
    how = "released entries removed" if mode == "eviction" else "cache re-prefilled from the present tokens"
    return {
        "release_floor": cfg.release_floor,
        "release_window": cfg.release_window,
        "restore_window": cfg.restore_window,
        "restore_min_hits": cfg.restore_min_hits,
        "sink_tokens": cfg.sink_tokens,
        "decode_attn_implementation": ATTN_NAME,
        "prefill_attn_implementation": prefill_impl,
        "prompt_tokens": n_prompt,
        "positions": f"original (explicit position_ids); {how}",
    }


def segment_token_ranges(
    ctx: CompressedContext, prompt: str, offsets: Sequence[tuple[int, int]], at: int | None = None
) -> list[tuple[int, int]]:
    """Token ranges, in a rendered ``prompt`` with token char ``offsets``, of the segments of
    ``ctx`` (whose compressed text appears in the prompt at char ``at``, found if None).

    >>> from o3viz.compress.context import compress_context
    >>> ctx = compress_context("a b c d e f g h\\na b c d e f g h")
    >>> segment_token_ranges(ctx, "Q: " + ctx.text, [(0, 2), (3, 4), (5, 6), (7, 8), (9, 10)])[0]
    (1, 5)
    """
    from o3viz.text.spans import token_ranges

    start = prompt.find(ctx.text) if at is None else at
    if start < 0:
        raise UsageError("the compressed text does not occur in the prompt")
    return token_ranges([(start + s.cstart, start + s.cend) for s in ctx.segments], list(offsets))
