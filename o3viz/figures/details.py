"""What the Inspect page shows for one clicked node: its text, tokens, verdicts, alternatives and
where its step's attention went (a bar chart)."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

import networkx as nx
import plotly.graph_objects as go

from o3viz.figures._style import base_layout, empty_figure
from o3viz.figures.attention import step_labels
from o3viz.trace import Trace

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
        t = int(node.split(":")[2])
        dp = next((p for p in rnd.decision_points if p.token_index == t), None)
        if dp is not None:
            det.alternatives = [{"token": a.text, "prob": a.prob} for a in dp.alternatives]
    return det


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


def attention_bar(det: NodeDetails, top: int = 12) -> go.Figure:
    """Where the node's step put its attention: the top targets (segments and earlier steps)."""
    if not det.attention:
        return empty_figure(
            "Where this step's attention went", "No step-level attention for this node.", height=200
        )
    pairs = det.attention[:top][::-1]
    fig = go.Figure(
        go.Bar(
            x=[v for _, v in pairs],
            y=[k for k, _ in pairs],
            orientation="h",
            marker_color=["#64748b" if k.startswith("seg") else "#0ea5e9" for k, _ in pairs],
            hovertemplate="%{y}<br>share %{x:.3f}<extra></extra>",
        )
    )
    fig.update_xaxes(title="share of the step's attention", tickformat=".0%")
    return base_layout(
        fig,
        f"Where step {det.step}'s attention went",
        height=120 + 24 * len(pairs),
        margin={"l": 230, "r": 20, "t": 50, "b": 40},
    )
