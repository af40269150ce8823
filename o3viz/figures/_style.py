"""Shared look of every o3viz figure: colours for node kinds and verdicts, the base layout."""

from __future__ import annotations

import plotly.graph_objects as go

KIND_COLORS = {
    "task": "#334155",
    "segment": "#94a3b8",
    "round": "#6366f1",
    "step": "#0ea5e9",
    "decision": "#f59e0b",
    "alternative": "#fcd34d",
    "branch": "#a855f7",
    "check": "#64748b",
    "answer": "#14b8a6",
    "compression": "#ec4899",
}
VERDICT_COLORS = {
    "pass": "#16a34a",
    "correct": "#16a34a",
    "fail": "#dc2626",
    "wrong": "#dc2626",
    "error": "#ea580c",
    "timeout": "#d97706",
    "unverifiable": "#9ca3af",
}
VERDICT_ORDER = ("pass", "correct", "unverifiable", "timeout", "error", "fail", "wrong")
A_COLOR, B_COLOR = "#2563eb", "#ea580c"  # trace A and trace B in every comparison figure
HEAT_SCALE = "Viridis"
DIFF_SCALE = "RdBu_r"
FONT = "Inter, -apple-system, Segoe UI, Roboto, sans-serif"


def base_layout(fig: go.Figure, title: str, *, height: int = 420, **kw) -> go.Figure:
    """Apply the house style: white background, light grid, compact margins, a left title."""
    settings = {
        "title": {"text": title, "x": 0.01, "xanchor": "left", "font": {"size": 15}},
        "template": "plotly_white",
        "height": height,
        "margin": {"l": 50, "r": 20, "t": 50, "b": 40},
        "font": {"family": FONT, "size": 12},
        "hoverlabel": {"font": {"family": FONT, "size": 12}, "align": "left"},
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.0, "xanchor": "right", "x": 1.0},
    }
    settings.update(kw)
    fig.update_layout(**settings)
    return fig


def empty_figure(title: str, message: str, *, height: int = 260) -> go.Figure:
    """A figure that says why there is nothing to draw (e.g. a trace without attention)."""
    fig = go.Figure()
    fig.add_annotation(
        text=message,
        showarrow=False,
        x=0.5,
        y=0.5,
        xref="paper",
        yref="paper",
        font={"size": 13, "color": "#64748b"},
    )
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return base_layout(fig, title, height=height)


def clip_label(text: str, n: int = 40) -> str:
    """One line, at most ``n`` characters (hover and tick labels)."""
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"
