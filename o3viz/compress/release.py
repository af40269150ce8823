"""Progressive release during generation: ``ReleaseHook``, a hook of the one generation loop
(``o3viz.hooks.step.StepHook``, run by ``o3viz.run.loop.run_loop``), measures the attention each
context segment receives, evicts long-unused segments from the KV cache and restores them when
demand returns, recording every event. ``o3viz.run.compressed`` puts it into a run.

**Eviction is real cache surgery** (``mode="eviction"``): the released segment's key/value entries
are removed from every layer of the ``DynamicCache``. Every token keeps its original RoPE position:
the loop passes explicit ``position_ids`` (prompt length + step), so later tokens' positions are
unchanged, as in H2O. The causal mask is built from the cache length, which stays consistent
because we only remove entries. **Restore** recomputes the segment's entries by running its
tokens again at their original positions over the cached entries before it, and inserts them back
in position order; this is exact when nothing before the segment is released at that moment, and
the event's reason says when it is not. Where a cache has no plain per-layer tensors (sliding
window, linear attention), the fallback ``mode="reprefill"`` rebuilds the cache from the tokens
still present, at their original positions, after each release or restore. Those forwards run
inside ``LoopState.paused()``: no recorder records them, and the DAA bias (if any) is read at the
keys' original positions.

**Attention received** comes from the run's own ``Recorder`` (the one the capture keeps its rows
with): once entries are released the hook sets the recorder's ``key_positions`` (each cache
entry's original position), and after each step reads the entries' attention from its
``last_mean`` row (mean over layers and heads, fp32). A segment's demand at a step is its share
of the attention (attention sinks excluded) divided by its share of the cached entries, clipped
to [0, 1]: 1 means at least a uniform share.

**Rules** (``CompressionConfig``): a segment whose demand stays below ``release_floor`` for
``release_window`` consecutive steps is released, oldest first, one per step, never the sink
tokens nor the last ``protect_last`` segments. A released segment receives no attention, so its
demand is read from the output instead: it is restored when ``restore_min_hits`` distinct tokens
among the last ``restore_window`` generated ones occur in it and nowhere in the cached context.
Each step's score is ``w * redundancy + (1 - w) * (1 - demand)`` as in ``o3viz.compress.context``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch

from o3viz.compress.context import CompressedContext, CompressionConfig
from o3viz.compress.kv import KVState, SurgeryMode, supports_surgery
from o3viz.compress.record import build_compression_record
from o3viz.errors import UsageError
from o3viz.hooks.instrument import ATTN_NAME
from o3viz.hooks.recorder import Recorder
from o3viz.hooks.step import LoopState, StepHook
from o3viz.trace.compression import CompressionEvent, CompressionRecord


@dataclass
class ReleaseResult:
    """What progressive release did during one generation (``ReleaseHook.result``)."""

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


# ---------------------------------------------------------------- the rules


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


class ReleaseHook(StepHook):
    """Progressive release of ``segments`` (token ranges into ``input_ids``: ``(start, end)`` pairs
    or objects with ``token_start``/``token_end``) as a hook of the generation loop; it reads the
    attention from ``recorder`` (which must come before it in the loop's hooks) and owns the
    loop's KV cache. ``redundancy`` per segment enters the score (default 0)."""

    def __init__(
        self,
        model,
        recorder: Recorder,
        input_ids,
        segments: Sequence[Any],
        config: CompressionConfig | None = None,
        redundancy: Sequence[float] | None = None,
    ):
        self.cfg = cfg = config or CompressionConfig()
        self.ids = torch.as_tensor(input_ids, dtype=torch.long).flatten().cpu()
        ranges = _segment_ranges(segments, len(self.ids))
        n_seg = len(ranges)
        red = [float(r) for r in redundancy] if redundancy is not None else [0.0] * n_seg
        if len(red) != n_seg:
            raise UsageError(f"redundancy has {len(red)} values for {n_seg} segments")
        pinned = [a < cfg.sink_tokens or s >= n_seg - cfg.protect_last for s, (a, _) in enumerate(ranges)]
        self.tracker = _Tracker(ranges, red, pinned, [0] * n_seg, [False] * n_seg, [0] * n_seg)
        self.recorder, self.prefill_impl = recorder, model.config._attn_implementation
        self.kv: KVState | None = None
        self.out: list[int] = []
        self.events: list[CompressionEvent] = []
        self.memory: list[int] = []  # (G,) cache entries after each step
        self.scores: list[list[float]] = []  # (G, S)

    def on_prefill(self, state: LoopState) -> None:
        n = len(self.ids)
        seg_of = torch.full((n,), -1, dtype=torch.long)
        for s, (a, b) in enumerate(self.tracker.ranges):
            seg_of[a:b] = s
        mode = _choose_mode(self.cfg, state.cache)
        around = lambda keys: self._surgery(state, keys)  # noqa: E731
        self.kv = KVState(state.model, state.cache, self.ids.clone(), torch.arange(n), seg_of, mode, around)

    def before_forward(self, state: LoopState, g: int, token_id: int) -> None:
        kv = self.kv
        self.out.append(token_id)
        kv.append(token_id, state.prompt_len + g)
        gaps = len(kv) != state.prompt_len + g + 1  # some entries are released
        self.recorder.set_key_positions(kv.positions.to(state.model.device) if gaps else None)
        self.recorder.last_mean = None

    def after_forward(self, state: LoopState, g: int, token_id: int) -> None:
        kv, cfg = self.kv, self.cfg
        demand = _demand(
            cache_attention(self.recorder, kv, state.model), kv, len(self.tracker.ranges), cfg.sink_tokens
        )
        recent = self.out[-cfg.restore_window :]
        self.scores.append(_apply_rules(g, self.tracker, demand, kv, self.ids, recent, cfg, self.events))
        self.memory.append(len(kv))
        state.cache = kv.cache  # a re-prefill builds a new cache

    def on_end(self, state: LoopState) -> None:
        self.recorder.set_key_positions(None)  # later forwards (explored branches) hold every key

    @contextmanager
    def _surgery(self, state: LoopState, keys: torch.Tensor) -> Iterator[None]:
        """A forward that is not a generation step: nothing records, the bias is read at ``keys``."""
        saved = self.recorder.key_positions
        self.recorder.set_key_positions(keys.to(state.model.device))
        try:
            with state.paused():
                yield
        finally:
            self.recorder.set_key_positions(saved)

    def result(self, gen: Any, tokenizer) -> ReleaseResult:
        """The run's ``ReleaseResult``; ``gen`` is the loop's output (ids, logprobs, entropies, tops)."""
        text = tokenizer.decode(gen.ids, skip_special_tokens=True) if tokenizer is not None else ""
        mode = self.kv.mode if self.kv is not None else "eviction"
        info = _release_info(self.cfg, mode, self.prefill_impl, len(self.ids))
        return ReleaseResult(
            text, list(gen.ids), list(gen.logprobs), self.events, self.memory, self.scores, mode, info,
            list(gen.entropies), list(gen.tops),
        )  # fmt: skip


def cache_attention(recorder: Recorder, kv: KVState, model=None) -> torch.Tensor:
    """(N,) fp32 attention each cache entry received at the latest step, averaged over layers and
    heads: the recorder's ``last_mean`` row read at the entries' original positions."""
    row = recorder.last_mean
    if row is None or row.shape[0] != int(kv.positions[-1]) + 1:
        name = type(model).__name__ if model is not None else "the model"
        raise UsageError(
            f"{name} does not route its attention through transformers' AttentionInterface; "
            "progressive release needs the attention each cache entry receives"
        )
    return row[kv.positions.to(row.device)].float().cpu()


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
