"""Forks on the reasoning map: each branch of the trace as a short dashed lane leaving its step,
with the branch's answer and verdict at its end (a diamond in the verdict's colour)."""

from __future__ import annotations

import plotly.graph_objects as go

from o3viz.figures._style import VERDICT_COLORS, clip_label, esc
from o3viz.figures.map_layout import Fork, MapLayout, fork_ends

FORK_COLOR = "#6b7280"


def add_fork_lanes(fig: go.Figure, lay: MapLayout, forks: list[Fork]) -> None:
    """Draw ``forks`` on ``fig``; the end markers' ``customdata`` is the fork step (a click opens it)."""
    ends = fork_ends(lay, forks)
    if not ends:
        return
    xs, ys = [], []
    for _, x0, y0, x1, y1 in ends:
        xs += [x0, x0 + 0.25, x1, None]
        ys += [y0, y1, y1, None]
    fig.add_trace(
        go.Scatter(
            x=xs, y=ys, mode="lines", line={"color": FORK_COLOR, "width": 1.6, "dash": "dot"},
            hoverinfo="skip", name="forks",
        )
    )  # fmt: skip
    texts = [f"{'✎' if f.kind == 'edit' else '⟳'} {clip_label(f.answer or '—', 14)}" for f, *_ in ends]
    fig.add_trace(
        go.Scatter(
            x=[e[3] for e in ends],
            y=[e[4] for e in ends],
            mode="markers+text",
            marker={
                "size": 11,
                "symbol": "diamond",
                "color": [VERDICT_COLORS.get(f.verdict or "", "#9ca3af") for f, *_ in ends],
                "line": {"width": 1, "color": "#1f2937"},
            },
            text=[esc(t) for t in texts],
            textposition="middle right",
            textfont={"size": 11, "color": "#334155"},
            customdata=[f.step for f, *_ in ends],
            hovertext=[
                esc(
                    f"{f.kind} branch at {f.step}: {clip_label(f.label, 80)} → answer {f.answer or '—'} · {f.verdict or '—'}"
                )
                for f, *_ in ends
            ],
            hovertemplate="%{hovertext}<extra></extra>",
            name="fork ends",
            meta="fork-ends",
        )
    )
