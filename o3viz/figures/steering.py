"""The steering figure of Compare: the share of each step's attention that went to the marked spans,
in the steered run and its unsteered twin, on one axis (``o3viz.analysis.steering``)."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from o3viz.analysis.steering import SteeringPair
from o3viz.figures._style import A_COLOR, B_COLOR, base_layout, clip_label, empty_figure, esc

TITLE = "How much of each step's attention went to the marked spans?"


def _legend(side, pair: SteeringPair, tag: str) -> str:
    how = f"steered, α={pair.alpha:g}, {pair.heads}" if side.steered else "unsteered"
    return f"{tag} {how}"


def steering_figure(pair: SteeringPair | None, *, height: int = 300) -> go.Figure:
    """Per-step span share of A and B (x: step, y: share of the step's attention, 0–1 scale shared)."""
    if pair is None:
        return empty_figure(TITLE, "Neither trace was steered (or one has no recorded attention).")
    fig = go.Figure()
    top = 0.0
    for side, color, tag in ((pair.a, A_COLOR, "A"), (pair.b, B_COLOR, "B")):
        ys = [None if math.isnan(v) else v for v in side.steps]
        top = max([top, *(v for v in ys if v is not None)])
        fig.add_trace(
            go.Scatter(
                x=list(range(len(ys))),
                y=ys,
                mode="lines+markers",
                line={"color": color, "width": 2, "dash": "solid" if side.steered else "dot"},
                marker={"size": 7},
                name=esc(_legend(side, pair, tag)),
                hovertemplate=f"{tag} {esc(clip_label(side.name, 30))} step %{{x}}: %{{y:.3f}}<extra></extra>",
            )
        )
        if not side.steps:  # say so instead of dropping the side silently
            fig.add_annotation(
                text=esc(f"{clip_label(side.name, 30)}: no steps"),
                xref="paper",
                yref="paper",
                x=0.0 if color == A_COLOR else 1.0,
                y=0.95,
                showarrow=False,
                font={"size": 11, "color": color},
            )
    spans = "; ".join(f"“{clip_label(t, 48)}”" for t in pair.spans)
    note = f"marked: {spans} · mean over all layers and heads, averaged over each step's tokens"
    base_layout(
        fig, f"{TITLE}<br><sup>{esc(note)}</sup>", height=height, margin={"l": 60, "r": 20, "t": 64, "b": 45}
    )
    fig.update_layout(
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "right", "x": 1.0}
    )
    long = max(len(pair.a.steps), len(pair.b.steps)) > 20
    fig.update_xaxes(title_text="step of the final round", dtick=None if long else 1)
    fig.update_yaxes(
        title_text="share on the spans", range=[0, min(1.0, max(top * 1.15, 0.05))], tickformat=".0%"
    )
    return fig
