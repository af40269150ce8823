"""What the Inspect page shows for one clicked node: its text, tokens, verdicts, alternatives and
where its step's attention went (a bar chart)."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

import networkx as nx
import numpy as np
import plotly.graph_objects as go

from o3viz.figures._style import base_layout, clip_label, empty_figure
from o3viz.figures.attention import step_labels
from o3viz.trace import Trace
from o3viz.trace.ids import parse_id

MAX_DETAIL_TOKENS = 400


@dataclass
class NodeDetails:
    """Plain data about one node (rows are dicts, ready for a dataframe)."""

    node: str
    kind: str
    text: str
    verdict: str | None = None
    score: float | None = None
    round: int | None = None
    step: int | None = None
    facts: dict = field(default_factory=dict)
    tokens: list[dict] = field(default_factory=list)
    alternatives: list[dict] = field(default_factory=list)
    checks: list[dict] = field(default_factory=list)
    attention: list[tuple[str, float]] = field(default_factory=list)  # (target label, share), largest first


def _round(trace: Trace, r: int | None):
    return next((x for x in trace.rounds if x.index == r), None) if r is not None else None


def node_details(trace: Trace, G: nx.DiGraph, node: str) -> NodeDetails:
    """Details of ``node``; raises ``KeyError`` for an id not in ``G``."""
    d = G.nodes[node]
    det = NodeDetails(
        node, d["kind"], d.get("text", ""), d.get("verdict"), d.get("score"), d.get("round"), d.get("step")
    )
    det.facts = {
        k: v for k, v in d.items() if k not in ("text", "label") and v is not None and not isinstance(v, dict)
    }
    rnd = _round(trace, det.round)
    if rnd is None:
        return det
    step = next((s for s in rnd.steps if s.index == det.step), None) if det.step is not None else None
    if step is not None:
        t0, t1 = step.token_start, min(step.token_end, step.token_start + MAX_DETAIL_TOKENS)
        det.tokens = [
            {
                "#": i,
                "token": t.text,
                "p": math.exp(t.logprob) if t.logprob is not None else None,
                "entropy": t.entropy,
                "top alternatives": ", ".join(f"{a.text!r} {a.prob:.2f}" for a in t.top[1:4]),
            }
            for i, t in enumerate(rnd.tokens[t0:t1], start=t0)
        ]
        det.checks = [
            {"name": c.name, "verdict": c.verdict, "message": c.message, "computed": c.computed}
            for c in rnd.checks
            if c.step == step.index
        ]
        det.attention = _step_attention(rnd, step.index)
    if det.kind == "decision":
        t = parse_id(node).index
        dp = next((p for p in rnd.decision_points if p.token_index == t), None)
        if dp is not None:
            det.alternatives = [{"token": a.text, "prob": a.prob} for a in dp.alternatives]
    return det


def step_targets(rnd, step_index: int) -> list[tuple[str, float]]:
    """Where step ``step_index`` put its attention: (target name, share), largest first."""
    return _step_attention(rnd, step_index)


def _step_attention(rnd, step_index: int) -> list[tuple[str, float]]:
    att = rnd.attention
    if att is None or att.step_alloc is None or step_index >= att.step_alloc.shape[0]:
        return []
    names = step_labels(rnd)
    row = att.step_alloc[step_index].astype(float)
    pairs = [
        (names.get(lab, html.escape(lab)), float(v))
        for lab, v in zip(att.alloc_labels, row, strict=False)
        if v > 0
    ]
    return sorted(pairs, key=lambda p: -p[1])


def share_bar(pairs: list[tuple[str, float]], title: str, *, top: int = 12) -> go.Figure:
    """Top ``(target, share)`` pairs as horizontal bars, largest on top; prompt segments grey."""
    if not pairs:
        return empty_figure(title, "No attention was recorded here.", height=200)
    pairs = pairs[:top][::-1]
    fig = go.Figure(
        go.Bar(
            x=[v for _, v in pairs],
            y=[clip_label(k, 30) for k, _ in pairs],
            orientation="h",
            marker_color=["#8C8C8C" if k.startswith("seg") else "#0072B2" for k, _ in pairs],
            hovertemplate="%{y}<br>share %{x:.2f}<extra></extra>",
        )
    )
    fig.update_xaxes(title="share of the attention", tickformat=".0%", tickfont={"size": 11})
    fig.update_yaxes(tickfont={"size": 11}, automargin=True)
    return base_layout(fig, title, height=110 + 24 * len(pairs), margin={"l": 10, "r": 10, "t": 44, "b": 40})


def step_decisions(rnd, step) -> list[dict]:
    """The decision points inside ``step`` (token index, token, entropy, margin, alternatives),
    the token-level detail shown only for the opened step."""
    rows = []
    for dp in rnd.decision_points:
        if not step.token_start <= dp.token_index < step.token_end:
            continue
        tok = rnd.tokens[dp.token_index].text if dp.token_index < len(rnd.tokens) else ""
        rows.append(
            {
                "token #": dp.token_index,
                "chosen": tok,
                "entropy (nats)": round(float(dp.entropy), 2),
                "top-2 margin": round(float(dp.margin), 2),
                "alternatives": ", ".join(f"{a.text!r} {a.prob:.2f}" for a in dp.alternatives[:4]),
            }
        )
    return rows


def token_attention(rnd, t: int) -> list[tuple[str, float]]:
    """Where generated token ``t``'s attention went: its row summed over each prompt segment and
    each earlier step (the targets of the step-level allocation), largest first, shares of 1."""
    att = rnd.attention
    if att is None or not 0 <= t < att.num_generated:
        return []
    row = att.mean[t].astype(np.float64)
    cum = np.concatenate([[0.0], np.cumsum(row)])
    names = step_labels(rnd)
    spans = [(f"seg {s.index}", s.token_start, s.token_end) for s in rnd.segments]
    P = att.prompt_len
    spans += [
        (f"step {s.index}", P + s.token_start, P + s.token_end) for s in rnd.steps if s.token_start <= t
    ]
    pairs = [
        (names.get(lab, html.escape(lab)), float(cum[min(b, len(row))] - cum[min(a, len(row))]))
        for lab, a, b in spans
    ]
    total = sum(v for _, v in pairs)
    if total <= 0:
        return []
    return sorted(((k, v / total) for k, v in pairs if v > 0), key=lambda p: -p[1])


def token_facts(rnd, step, confidence: float | None) -> str:
    """The details panel's token line for one step: its token range and mean token probability,
    or "no token data (imported text)" for a step that has no tokens (imported text).

    >>> from o3viz.trace import Round, Step
    >>> token_facts(Round(text="2+2=4.", steps=[Step(0, "2+2=4.", 0, 6)]), Step(0, "2+2=4.", 0, 6), None)
    'no token data (imported text)'
    """
    if step.token_end <= step.token_start or not rnd.tokens:
        return "no token data (imported text)"
    p = "—" if confidence is None else f"{confidence:.2f}"
    return f"tokens {step.token_start}–{step.token_end - 1} · mean token probability {p}"
