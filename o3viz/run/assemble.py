"""Turning a finished generation into trace parts: generated tokens with offsets, steps, decision
points, the answer, and the ``AttentionRecord`` (dense arrays, step-level allocation) built from
a ``Recorder``'s per-step rows.

Step-level allocation ``step_alloc`` (S, K), K = segments + S: for step s, the attention rows of
its tokens (the all-layer all-head ``mean``) are summed over each prompt segment's keys and over
each step's keys, averaged over the step's tokens and normalised to 1. Steps partition the
generated tokens (whitespace between steps belongs to the step before), so columns t < s are
earlier steps, column s is the step attending to itself, and columns t > s are zero.
"""

from __future__ import annotations

import re

import numpy as np
import torch

from o3viz.hooks.recorder import Recorder
from o3viz.run.config import ENTROPY_THRESHOLD, MARGIN_THRESHOLD
from o3viz.run.prompt import cumulative_offsets
from o3viz.text.answers import round_answer
from o3viz.text.spans import split_spans, token_ranges
from o3viz.trace.attention import AttentionRecord
from o3viz.trace.core import Alt, DecisionPoint, Segment, Step, Token

_SELF_CHECK = re.compile(
    r"\b(let me (check|verify|double[- ]check)|to verify|checking|let's check|verify)\b", re.I
)
_BACKTRACK = re.compile(
    r"\b(wait|actually|hmm|i made a mistake|that's wrong|that is wrong|let me redo|"
    r"on second thought)\b",
    re.I,
)
_FINAL = re.compile(r"\b(the answer is|final answer|so the answer)\b", re.I)


def generated_tokens(tokenizer, ids: list[int], logprobs, entropies, tops) -> tuple[str, list[Token]]:
    """(text, tokens) with ``[start, end)`` offsets into the text; special tokens have empty pieces."""
    text = tokenizer.decode(ids, skip_special_tokens=True)
    offsets = cumulative_offsets(tokenizer, ids, text, skip_special=True)
    tokens = []
    for i, (s, e) in enumerate(offsets):
        top = [Alt(t, tokenizer.decode([t]), float(p)) for t, p in tops[i]]
        tokens.append(Token(ids[i], text[s:e], s, e, float(logprobs[i]), float(entropies[i]), top))
    return text, tokens


def classify_step(text: str, is_last: bool) -> str:
    if _BACKTRACK.search(text):
        return "backtrack"
    if _SELF_CHECK.search(text):
        return "self_check"
    return "final" if (_FINAL.search(text) or is_last) else "step"


def build_steps(text: str, tokens: list[Token]) -> list[Step]:
    """Steps from ``split_spans`` with token ranges that partition the generated tokens."""
    spans = split_spans(text)
    if not spans:
        return []
    ranges = token_ranges(spans, [(t.start, t.end) for t in tokens])
    starts = [0]
    for a, _ in ranges[1:]:
        starts.append(max(a, starts[-1]))
    steps = []
    for i, (s, e) in enumerate(spans):
        end = starts[i + 1] if i + 1 < len(spans) else len(tokens)
        kind = classify_step(text[s:e], i == len(spans) - 1)
        steps.append(Step(i, text[s:e], s, e, starts[i], end, kind))
    return steps


def decision_points(
    tokens: list[Token],
    entropy_threshold: float = ENTROPY_THRESHOLD,
    margin_threshold: float = MARGIN_THRESHOLD,
) -> list[DecisionPoint]:
    """Tokens with entropy ≥ threshold or top-2 margin ≤ threshold; alternatives exclude the chosen."""
    out = []
    for i, t in enumerate(tokens):
        probs = [a.prob for a in t.top]
        margin = probs[0] - probs[1] if len(probs) > 1 else 1.0
        if (t.entropy or 0.0) >= entropy_threshold or margin <= margin_threshold:
            alts = [a for a in t.top if a.id != t.id]
            out.append(DecisionPoint(i, float(t.entropy or 0.0), float(margin), alts))
    return out


def extract_answer(text: str, kind: str) -> str | None:
    """The round's answer as ``solve`` and the importers read it (``o3viz.text.answers.round_answer``:
    boxed, then "the answer is", then the last number for math; else the last line)."""
    found = round_answer(text, kind)
    return found.text if found else None


def answer_confidence(text: str, answer: str | None, tokens: list[Token]) -> float | None:
    """Mean probability of the tokens that spell the answer's last occurrence in the text."""
    if not answer or (pos := text.rfind(answer)) < 0:
        return None
    lps = [t.logprob for t in tokens if t.end > pos and t.start < pos + len(answer) and t.logprob is not None]
    return float(np.mean(np.exp(lps))) if lps else None


def dense_rows(rows: list[torch.Tensor], width: int, dtype) -> np.ndarray:
    """Stack rows of growing length (…, K_g) into (G, …, width), zero beyond each row's keys."""
    lead = tuple(rows[0].shape[:-1]) if rows else ()
    out = np.zeros((len(rows), *lead, width), dtype=dtype)
    for g, r in enumerate(rows):
        out[g, ..., : r.shape[-1]] = r.float().numpy() if r.dtype == torch.bfloat16 else r.numpy()
    return out


def step_allocation(mean: np.ndarray, prompt_len: int, segments: list[Segment], steps: list[Step]):
    """(S, K) float32 allocation matrix and its K labels (see the module docstring)."""
    k = len(segments) + len(steps)
    alloc = np.zeros((len(steps), k), dtype=np.float32)
    cols = [(s.token_start, s.token_end) for s in segments]
    cols += [(prompt_len + st.token_start, prompt_len + st.token_end) for st in steps]
    cum = np.concatenate([np.zeros((mean.shape[0], 1)), np.cumsum(mean.astype(np.float64), axis=1)], axis=1)
    for i, st in enumerate(steps):
        if st.token_end <= st.token_start:
            continue
        rows = cum[st.token_start : st.token_end]
        vec = np.array([(rows[:, b] - rows[:, a]).mean() for a, b in cols])
        total = vec.sum()
        alloc[i] = vec / total if total > 0 else vec
    labels = [f"seg {s.index}" for s in segments] + [f"step {st.index}" for st in steps]
    return alloc, labels


def attention_record(
    rec: Recorder, num_generated: int, dtype, keep_heads: list[int] | None, head_average: bool
) -> AttentionRecord:
    """Dense arrays from the recorder's per-step rows (C = P + G columns)."""
    spec = rec.spec
    g = min(num_generated, len(rec.steps_mean))
    width = spec.prompt_len + g
    mean = dense_rows(rec.steps_mean[:g], width, dtype)
    per_head = dense_rows(rec.steps_heads[:g], width, dtype) if spec.keep_layers and g else None
    layer_head = np.stack([t.numpy() for t in rec.steps_layer_head[:g]]) if g else None
    prefill = None
    if spec.keep_layers and all(layer in rec.prefill for layer in spec.keep_layers):
        prefill = np.stack([rec.prefill[layer].float().numpy().astype(dtype) for layer in spec.keep_layers])
    info = {
        "row_query": "row g is the attention of generated token g (query position P+g)",
        "top_k": spec.top_k,
        "head_average": head_average,
        "heads": keep_heads,
        "prefill_layers": list(spec.keep_layers) if prefill is not None else [],
    }
    return AttentionRecord(
        spec.num_layers,
        spec.num_heads,
        spec.prompt_len,
        mean,
        list(spec.keep_layers),
        per_head,
        layer_head,
        prefill,
        info=info,
    )
