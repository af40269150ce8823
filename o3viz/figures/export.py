"""Standalone HTML for any figure: plotly.js is inlined so the file works offline."""

from __future__ import annotations

import plotly.graph_objects as go


def figure_html(fig: go.Figure) -> bytes:
    """The figure as one self-contained HTML page (about 4.7 MB, most of it plotly.js)."""
    return fig.to_html(include_plotlyjs=True, full_html=True).encode("utf-8")
