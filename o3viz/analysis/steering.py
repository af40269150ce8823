"""How much attention the marked spans of a steered run got, step by step, in that run and in its
unsteered twin: ``steering_pair(a, b)`` reads the spans from whichever trace was steered and
measures both final rounds on the same key columns (the twin has the same prompt, so the same
tokens), for Compare's steering figure.

The attention is each generated token's mean row over all layers and heads
(``AttentionRecord.mean``), summed over the marked key columns, then averaged over the tokens of
each reasoning step: the share of a step's attention that went to the marked spans.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from o3viz.trace import Round, SteerRecord, Trace


@dataclass
class SteeringSide:
    """One trace of the pair: its per-step span share (S,) and per-token share (G,)."""

    name: str
    steered: bool
    steps: list[float] = field(default_factory=list)
    tokens: list[float] = field(default_factory=list)
    answer: str | None = None
    verdict: str | None = None


@dataclass
class SteeringPair:
    """Both sides measured on the steered trace's spans."""

    spans: list[str]  # the marked texts
    alpha: float
    heads: str  # "all 270 heads", "layers 3, 7 (auto)", ...
    a: SteeringSide
    b: SteeringSide


def steer_record(trace: Trace) -> SteerRecord | None:
    att = trace.final.attention if trace.rounds else None
    return att.steer if att is not None else None


def span_share(rnd: Round, ranges: list[tuple[int, int]]) -> tuple[list[float], list[float]]:
    """(per-step, per-token) share of attention on the key ``ranges``; empty without attention."""
    att = rnd.attention
    if att is None or att.num_generated == 0:
        return [], []
    rows = att.mean.astype(np.float32)
    per_token = sum((rows[:, s:e].sum(-1) for s, e in ranges), np.zeros(rows.shape[0], np.float32))
    steps = []
    for s in rnd.steps:
        lo, hi = min(s.token_start, len(per_token)), min(s.token_end, len(per_token))
        steps.append(float(per_token[lo:hi].mean()) if hi > lo else float("nan"))
    return steps, [float(x) for x in per_token]


def _heads_label(st: SteerRecord, num_layers: int, num_heads: int) -> str:
    if st.head_choice == "all" or len(st.heads) == num_layers * num_heads:
        return f"all {len(st.heads)} heads"
    layers = sorted({layer for layer, _ in st.heads})
    label = f"{len(st.heads)} heads in layer{'s' if len(layers) > 1 else ''} {', '.join(map(str, layers))}"
    return label + (" (auto)" if st.head_choice == "auto" else "")


def steering_pair(a: Trace, b: Trace, a_name: str = "A", b_name: str = "B") -> SteeringPair | None:
    """The pair's span attention, or None when neither trace was steered (or one lacks attention)."""
    st = steer_record(a) or steer_record(b)
    if st is None or any(t.final.attention is None for t in (a, b)):
        return None
    ranges = st.ranges
    sides = []
    for t, name in ((a, a_name), (b, b_name)):
        steps, tokens = span_share(t.final, ranges)
        sides.append(
            SteeringSide(name, steer_record(t) is not None, steps, tokens, t.final.answer, t.final.verdict)
        )
    steered = (a if steer_record(a) else b).final
    att = steered.attention
    texts = [steered.rendered_prompt[s.start : s.end] for s in st.spans]
    return SteeringPair(texts, st.alpha, _heads_label(st, att.num_layers, att.num_heads), *sides)
