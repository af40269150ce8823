"""Context compression before the model: segments, scores, lossless pointers, and the record.

``compress_context(text)`` splits the input into segments (lines, or sentences where there are
no line breaks), finds repeats (``o3viz.compress.repeats``), scores each segment and replaces
the compressible ones by a short pointer to an earlier occurrence:

- ``⟦=§12⟧``: an exact copy of segment 12; ``⟦=§12-15⟧``: a run of exact copies of segments
  12..15 with the same text between them (one pointer for a repeated paragraph);
- ``⟦~§12⟧``: a near-duplicate of segment 12; its edit (difflib opcodes over word/char pieces)
  is kept in the pointer table, in the order the ``~`` pointers appear.

A literal ``⟦`` in the input is written ``⟦⟦``, so any text, including one that already holds
pointer syntax, round-trips: ``compress_context(x).expand() == x`` byte for byte.

**The score.** For a segment with redundancy ``r`` and demand ``d`` (both in [0, 1])::

    score = w * r + (1 - w) * (1 - d)          # w = config.redundancy_weight, default 0.5

- ``r``: the share of the segment an earlier occurrence covers: 1 for an exact copy of an earlier
  segment, else the larger of the share of its tokens inside an exactly repeated span of at least
  ``min_repeat_tokens`` tokens and the estimated shingle Jaccard with its best earlier
  near-duplicate (MinHash).
- ``d`` before the model: relevance to the question, the share of the question's content words
  (lower-cased, stop words dropped) that occur in the segment; 0 without a question. During
  generation ``o3viz.compress.release`` uses the attention the segment receives instead.

A segment is compressed when ``score >= compress_threshold`` (0.7) and a pointer can stand for it
(an earlier source exists, ``r >= min_redundancy``, and the segment has more tokens than a
pointer, or extends the previous segment's range pointer); a
compressed segment is expanded when ``score <= expand_threshold`` (0.3); in between it keeps its
previous state (pass ``previous=`` to recompress with hysteresis), so a segment doesn't flap.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from o3viz.compress.pointers import (
    Pointer,
    escape,
    expand_text,
    make_edit,
)
from o3viz.compress.repeats import (
    covered_tokens,
    minhash_signatures,
    near_duplicate_sources,
    split_segments,
    tokenize_regex,
    tokenize_with,
)
from o3viz.errors import UsageError
from o3viz.trace.compression import CompressionEvent

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an the of to in on at for by with and or is are was were be been it its this that what which who "
    "how many much does do did from as if then than so not no yes you your we our i me my he she they".split()
)


@dataclass
class CompressionConfig:
    """Settings of compression (before the model) and progressive release (during generation)."""

    compress_threshold: float = 0.7  # compress a segment when its score >= this
    expand_threshold: float = 0.3  # expand a compressed segment when its score <= this
    redundancy_weight: float = 0.5  # w in score = w*r + (1-w)*(1-d)
    min_repeat_tokens: int = 8  # m: shortest exactly repeated token span that counts as covered
    min_segment_tokens: int = 6  # shorter segments are never replaced (a pointer costs ~5 tokens)
    min_redundancy: float = 0.5  # a pointer needs an earlier occurrence covering this share
    shingle: int = 3  # tokens per shingle for near-duplicate detection
    num_perm: int = 32  # MinHash signature length
    bands: int = 8  # LSH bands (num_perm / bands rows each)
    max_segment_chars: int = 2000  # longer lines are split into sentences
    # progressive release during generation (o3viz.compress.release)
    release_floor: float = 0.2  # relative attention (1 = uniform share) below which a segment is unused
    release_window: int = 16  # W: consecutive steps below the floor before a release
    sink_tokens: int = 4  # the first tokens are never released (attention sinks, StreamingLLM)
    protect_last: int = 1  # the last N segments (the question) are never released
    restore_window: int = 8  # recent generated tokens checked for demand of a released segment
    restore_min_hits: int = 2  # distinct recent tokens found only in a released segment to restore it
    surgery: Literal["auto", "evict", "reprefill"] = "auto"  # KV-cache edit method

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ``UsageError`` (one line) for settings that cannot run."""
        if not 0 <= self.expand_threshold < self.compress_threshold <= 1:
            raise UsageError(
                "thresholds must satisfy 0 <= expand < compress <= 1, "
                f"got expand={self.expand_threshold} compress={self.compress_threshold}"
            )
        if self.num_perm % self.bands or self.min_repeat_tokens < 1 or self.shingle < 1:
            raise UsageError("num_perm must be a multiple of bands; min_repeat_tokens and shingle >= 1")


@dataclass
class ContextSegment:
    """One segment: ``original[start:end]``, its tokens, scores, state and pointer source."""

    index: int
    start: int
    end: int
    token_start: int
    token_end: int
    redundancy: float
    demand: float
    score: float
    state: str = "kept"  # kept | compressed | expanded
    source: int | None = None  # earlier segment it repeats (exact or near), if any
    kind: str = ""  # "exact" | "near" | "" (no source)
    cstart: int = 0  # its piece in the compressed text: [cstart, cend)
    cend: int = 0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["tokens"] = self.token_end - self.token_start
        d["pointer_to"] = self.source if self.state == "compressed" else None
        return d


@dataclass
class CompressedContext:
    """The compressed text the model reads, plus everything needed to expand it exactly."""

    text: str
    segments: list[ContextSegment]
    pointers: list[Pointer]
    original_tokens: int
    compressed_tokens: int
    config: CompressionConfig
    events: list[CompressionEvent] = field(default_factory=list)
    timing: dict[str, float] = field(default_factory=dict)
    tokenizer: str = "regex"  # what counted the tokens: "regex" (words + punctuation) or a model's

    @property
    def ratio(self) -> float:
        """compressed / original tokens (1.0 = nothing saved)."""
        return self.compressed_tokens / self.original_tokens if self.original_tokens else 1.0

    def expand(self) -> str:
        """The original text, byte for byte, rebuilt from ``text`` and the pointer table only."""
        return expand_text(self.text, self.segments, self.pointers)

    def pointer_table(self) -> list[dict]:
        return [p.to_dict() for p in self.pointers]

    def to_dict(self) -> dict:
        return {
            "text": self.text,
            "segments": [s.to_dict() for s in self.segments],
            "pointers": self.pointer_table(),
            "original_tokens": self.original_tokens,
            "compressed_tokens": self.compressed_tokens,
            "ratio": self.ratio,
            "config": asdict(self.config),
            "events": [e.to_dict() for e in self.events],
            "timing": self.timing,
            "tokenizer": self.tokenizer,
        }


# ---------------------------------------------------------------- compression


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def question_demand(texts: list[str], question: str | None) -> np.ndarray:
    """(S,) share of the question's content words found in each segment (0 without a question)."""
    q = content_words(question or "")
    if not q:
        return np.zeros(len(texts))
    return np.array([len(q & content_words(t)) / len(q) for t in texts])


def score_segments(redundancy: np.ndarray, demand: np.ndarray, config: CompressionConfig) -> np.ndarray:
    """score = w * r + (1 - w) * (1 - d), see the module docstring."""
    w = config.redundancy_weight
    return w * redundancy + (1 - w) * (1 - demand)


def _as_text(tokens_or_text: Any, tokenizer) -> str:
    if isinstance(tokens_or_text, str):
        return tokens_or_text
    if tokenizer is None:
        raise UsageError("token ids need a tokenizer to be decoded; pass tokenizer= or a string")
    return tokenizer.decode(list(tokens_or_text), skip_special_tokens=False)


def _segment_tokens(spans: list[tuple[int, int]], toks) -> np.ndarray:
    """(S, 2) token range of each char span: tokens that end after its start and start before its end."""
    if not spans:
        return np.zeros((0, 2), dtype=np.int64)
    arr = np.asarray(spans, dtype=np.int64)
    first = np.searchsorted(toks.ends, arr[:, 0], side="right")
    last = np.searchsorted(toks.starts, arr[:, 1], side="left")
    return np.stack([first, np.maximum(first, last)], axis=1)


def _redundancy(text: str, spans, seg_tok, toks, config: CompressionConfig):
    """(S,) redundancy, (S,) source segment (-1 none) and (S,) kind code (0 none, 1 exact, 2 near)."""
    cov = np.concatenate([[0], np.cumsum(covered_tokens(toks.ids, config.min_repeat_tokens))])
    n = np.maximum(seg_tok[:, 1] - seg_tok[:, 0], 1)
    coverage = (cov[seg_tok[:, 1]] - cov[seg_tok[:, 0]]) / n
    sig, valid = minhash_signatures(toks.ids, seg_tok, config.shingle, config.num_perm)
    source, jaccard = near_duplicate_sources(sig, valid, config.bands)
    kind = np.where(source >= 0, 2, 0)
    first_of: dict[str, int] = {}
    for i, (s, e) in enumerate(spans):  # exact copies of a whole earlier segment: one dict lookup each
        j = first_of.setdefault(text[s:e], i)
        if j != i:
            source[i], kind[i], jaccard[i] = j, 1, 1.0
    return np.maximum(coverage, jaccard), source, kind


def _decide(score: float, eligible: bool, prev: str, config: CompressionConfig) -> str:
    """The hysteresis rule: compress >= upper, expand <= lower, otherwise keep the previous state."""
    if score >= config.compress_threshold and eligible:
        return "compressed"
    if prev == "compressed" and (score <= config.expand_threshold or not eligible):
        return "expanded"
    return prev


def _count_tokens(text: str, tokenizer) -> int:
    if tokenizer is None:
        return len(tokenize_regex(text))
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def compress_context(
    tokens_or_text: Any,
    *,
    tokenizer=None,
    config: CompressionConfig | None = None,
    question: str | None = None,
    previous: CompressedContext | None = None,
) -> CompressedContext:
    """Compress ``tokens_or_text`` (a string, or token ids decoded with ``tokenizer``).

    Tokens are the model tokenizer's when one is given (timed as ``timing["tokenize_s"]``), else
    words and punctuation from a regex (cheap; whitespace is never a token). ``question`` supplies
    the demand; ``previous`` a prior compression of the same text whose states give hysteresis.
    The pre-model decisions are ``events`` at step -1.
    """
    config = config or CompressionConfig()
    t0 = time.perf_counter()
    text = _as_text(tokens_or_text, tokenizer)
    toks = tokenize_regex(text) if tokenizer is None else tokenize_with(tokenizer, text)
    t1 = time.perf_counter()
    spans = split_segments(text, config.max_segment_chars)
    seg_tok = _segment_tokens(spans, toks)
    redundancy, source, kind = _redundancy(text, spans, seg_tok, toks, config)
    demand = question_demand([text[s:e] for s, e in spans], question)
    scores = score_segments(redundancy, demand, config)
    t2 = time.perf_counter()
    # a pointer only pays when the segment has more tokens than the pointer itself
    min_tokens = max(config.min_segment_tokens, _count_tokens(f"⟦~§{len(spans)}⟧", tokenizer) + 1)
    segments, events = _build_segments(
        spans, seg_tok, redundancy, demand, scores, source, kind, config, previous, min_tokens
    )
    ctext, pointers = _write(text, segments)
    t3 = time.perf_counter()
    ctx = CompressedContext(
        text=ctext,
        segments=segments,
        pointers=pointers,
        original_tokens=len(toks),
        compressed_tokens=_count_tokens(ctext, tokenizer),
        config=config,
        events=events,
        tokenizer="regex" if tokenizer is None else getattr(tokenizer, "name_or_path", "model"),
    )
    ctx.timing = {
        "tokenize_s": t1 - t0,
        "analyze_s": t2 - t1,
        "write_s": t3 - t2,
        "count_s": time.perf_counter() - t3,
        "total_s": time.perf_counter() - t0,
    }
    return ctx


def _build_segments(spans, seg_tok, redundancy, demand, scores, source, kind, config, previous, min_tokens):
    """ContextSegments with their new states, and a step -1 event for every change of state."""
    prev_states = {s.index: s.state for s in previous.segments} if previous is not None else {}
    segments, events = [], []
    # plain lists: indexing numpy scalars one by one would dominate the run time on 1M tokens
    cols = (
        seg_tok[:, 0].tolist(),
        seg_tok[:, 1].tolist(),
        np.round(redundancy, 4).tolist(),
        np.round(demand, 4).tolist(),
        np.round(scores, 4).tolist(),
        source.tolist(),
        kind.tolist(),
    )
    for i, ((s, e), t0, t1, r, d, sc, src, k) in enumerate(zip(spans, *cols, strict=True)):
        src = src if src >= 0 else None
        # a short exact copy still pays when it extends the previous segment's range pointer
        extends = (
            k == 1 and i > 0 and segments[i - 1].state == "compressed" and segments[i - 1].kind == "exact"
        )
        extends = extends and segments[i - 1].source == src - 1
        eligible = src is not None and r >= config.min_redundancy and (t1 - t0 >= min_tokens or extends)
        prev = prev_states.get(i, "kept")
        state = _decide(sc, eligible, prev, config)
        segments.append(ContextSegment(i, s, e, t0, t1, r, d, sc, state, src, ("", "exact", "near")[k]))
        if state != prev and state in ("compressed", "expanded"):
            verb = "compress" if state == "compressed" else "expand"
            why = (
                f"score {sc:.3f} >= {config.compress_threshold}"
                if verb == "compress"
                else f"score {sc:.3f} <= {config.expand_threshold}"
            )
            events.append(
                CompressionEvent(
                    -1,
                    i,
                    verb,
                    sc,
                    f"{why} (r={r:.2f}, d={d:.2f}, {segments[-1].kind or 'no'} copy of §{src})",
                )
            )
    return segments, events


def _exact_run(text: str, segments: list[ContextSegment], i: int) -> int:
    """End (exclusive) of the run of exact copies from ``i`` whose sources are consecutive segments
    with the same text between them, so one range pointer ``⟦=§a-b⟧`` stands for all of them."""
    k = i + 1
    while k < len(segments):
        seg, prev = segments[k], segments[k - 1]
        if seg.state != "compressed" or seg.kind != "exact" or seg.source != prev.source + 1:
            break
        a, b = segments[prev.source], segments[seg.source]
        if text[prev.end : seg.start] != text[a.end : b.start]:
            break
        k += 1
    return k


def _write(text: str, segments: list[ContextSegment]) -> tuple[str, list[Pointer]]:
    """The compressed text (gaps and kept segments escaped, compressed ones as pointers)."""
    out: list[str] = []
    pointers: list[Pointer] = []
    pos = length = i = 0
    while i < len(segments):
        seg = segments[i]
        gap = escape(text[pos : seg.start])
        out.append(gap)
        length += len(gap)
        k = i + 1
        piece = escape(text[seg.start : seg.end])
        if seg.state == "compressed" and seg.kind == "exact":
            k = _exact_run(text, segments, i)
            first, last = seg.source, segments[k - 1].source
            pointers.append(Pointer(seg.index, first, "exact", count=k - i))
            piece = f"⟦=§{first}⟧" if k == i + 1 else f"⟦=§{first}-{last}⟧"
        elif seg.state == "compressed":
            src = segments[seg.source]
            edit = make_edit(text[src.start : src.end], text[seg.start : seg.end])
            pointers.append(Pointer(seg.index, src.index, "near", edit))
            piece = f"⟦~§{src.index}⟧"
        for s in segments[i:k]:
            s.cstart, s.cend = length, length + len(piece)
        out.append(piece)
        length += len(piece)
        pos = segments[k - 1].end
        i = k
    out.append(escape(text[pos:]))
    return "".join(out), pointers
