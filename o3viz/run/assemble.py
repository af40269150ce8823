"""Turning a finished generation into trace parts: generated tokens with offsets, steps (typed and
linked by the one step classifier, ``o3viz.text.classify``), decision points, the answer and its
confidence, and the ``AttentionRecord`` (dense arrays, step-level allocation) built from a
``Recorder``'s per-step rows.

The step-level allocation ``step_alloc`` comes from ``o3viz.run.allocation.step_allocation``.

Answer confidence is the mean probability of the tokens that spell the answer (its char span),
or of every token when no span is given: ``capture`` and ``solve`` both use ``answer_confidence``.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from o3viz.hooks.recorder import Recorder
from o3viz.run.config import ENTROPY_THRESHOLD, MARGIN_THRESHOLD
from o3viz.run.prompt import cumulative_offsets
from o3viz.text.answers import round_answer
from o3viz.text.classify import build_steps as classify_steps
from o3viz.text.spans import split_spans, token_ranges
from o3viz.trace.attention import AttentionRecord
from o3viz.trace.parts import Alt, DecisionPoint, Step, Token


def generated_tokens(tokenizer, ids: list[int], logprobs, entropies, tops) -> tuple[str, list[Token]]:
    """(text, tokens) with ``[start, end)`` offsets into the text; special tokens have empty pieces."""
    text = tokenizer.decode(ids, skip_special_tokens=True)
    offsets = cumulative_offsets(tokenizer, ids, text, skip_special=True)
    tokens = []
    for i, (s, e) in enumerate(offsets):
        top = [Alt(t, tokenizer.decode([t]), float(p)) for t, p in tops[i]]
        tokens.append(Token(ids[i], text[s:e], s, e, float(logprobs[i]), float(entropies[i]), top))
    return text, tokens


def build_steps(text: str, tokens: list[Token], final_pos: int | None = None) -> tuple[list[Step], dict]:
    """Steps of generated ``text`` (``split_spans``) with token ranges that partition ``tokens``,
    typed and linked by the one classifier (``o3viz.text.classify.build_steps``: Thought Anchors
    ``type``, ``kind`` and the ``parent`` of a backtrack); ``final_pos`` is where the answer sits.
    Returns the steps and ``{step index: rule letter}`` for every backtrack."""
    spans = split_spans(text)
    if not spans:
        return [], {}
    steps, rules = classify_steps(text, spans, final_pos)
    ranges = token_ranges(spans, [(t.start, t.end) for t in tokens])
    starts = [0]
    for a, _ in ranges[1:]:
        starts.append(max(a, starts[-1]))
    for i, st in enumerate(steps):
        st.token_start, st.token_end = starts[i], starts[i + 1] if i + 1 < len(spans) else len(tokens)
    return steps, rules


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


def answer_span(text: str, answer: str | None) -> tuple[int, int] | None:
    """The char span of ``answer``'s last occurrence in ``text``, or None."""
    if not answer or (pos := text.rfind(answer)) < 0:
        return None
    return pos, pos + len(answer)


def answer_confidence(tokens: list[Token], span: tuple[int, int] | None) -> float | None:
    """Mean probability of the tokens overlapping the char ``span`` (every token when None)."""
    probs = [
        math.exp(t.logprob)
        for t in tokens
        if t.logprob is not None and (span is None or (t.end > span[0] and t.start < span[1]))
    ]
    return sum(probs) / len(probs) if probs else None


def dense_rows(rows: list[torch.Tensor], width: int, dtype) -> np.ndarray:
    """Stack rows of growing length (…, K_g) into (G, …, width), zero beyond each row's keys."""
    lead = tuple(rows[0].shape[:-1]) if rows else ()
    out = np.zeros((len(rows), *lead, width), dtype=dtype)
    for g, r in enumerate(rows):
        out[g, ..., : r.shape[-1]] = r.float().numpy() if r.dtype == torch.bfloat16 else r.numpy()
    return out


def attention_record(
    rec: Recorder, num_generated: int, dtype, keep_heads: list[int] | None, head_average: bool
) -> AttentionRecord:
    """Dense arrays from the recorder's per-step rows (C = P + G columns)."""
    spec = rec.spec
    g = min(num_generated, len(rec.steps_mean))
    width = spec.prompt_len + g
    mean = dense_rows(rec.steps_mean[:g], width, dtype)
    per_head = (
        dense_rows(rec.steps_heads[:g], width, dtype) if spec.keep_layers and g and rec.steps_heads else None
    )
    per_head_top = None
    if spec.keep_layers and g and rec.steps_heads_top:  # long generations: top-k pairs, never dense
        top = rec.steps_heads_top[:g]
        values = np.stack([v.float().numpy() if v.dtype == torch.bfloat16 else v.numpy() for v, _ in top])
        index = np.stack([i.numpy() for _, i in top])
        # fewer keys than k in the whole run: every row is all its keys, in order (recorder padding)
        per_head_top = (values[..., :width].astype(dtype), index[..., :width])
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
    record = AttentionRecord(
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
    record.per_head_top = per_head_top
    return record
