"""The reasoning map's lines: the order spine (while it stays readable), the dependency arcs where
the trace has them, and backtrack arcs back to the step they reconsider. Pure plotly traces in the
map's coordinates (``o3viz.figures.map_layout``)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from o3viz.analysis.outline import Outline
from o3viz.figures._style import STEP_TYPE_COLORS
from o3viz.figures.map_layout import MapLayout
from o3viz.trace.ids import make_id

SPINE_UP_TO = 600  # steps; beyond this the order spine is a blur, so it is left out

__all__ = ["SPINE_UP_TO", "arc", "edge_traces", "line_trace"]


def arc(x0: float, y0: float, x1: float, y1: float, lift: float) -> tuple[list[float], list[float]]:
    """A quadratic curve from (x0, y0) to (x1, y1) bowing by ``lift`` lanes (9 points, then a gap).

    >>> xs, ys = arc(0.0, 1.0, 4.0, 1.0, 0.5)
    >>> len(xs), xs[0], xs[8], min(ys[:9])
    (10, 0.0, 4.0, 0.75)
    """
    t = np.linspace(0.0, 1.0, 9)
    cx, cy = (x0 + x1) / 2, min(y0, y1) - lift
    xs = (1 - t) ** 2 * x0 + 2 * (1 - t) * t * cx + t**2 * x1
    ys = (1 - t) ** 2 * y0 + 2 * (1 - t) * t * cy + t**2 * y1
    return [*(float(v) for v in xs), np.nan], [*(float(v) for v in ys), np.nan]


def line_trace(xs, ys, color: str, width: float, name: str, dash: str = "solid") -> go.Scatter:
    """Lines through ``xs``/``ys`` (NaN breaks them), without hover or a legend entry."""
    return go.Scatter(
        x=np.asarray(xs, dtype=float),
        y=np.asarray(ys, dtype=float),
        mode="lines",
        line={"color": color, "width": width, "dash": dash},
        hoverinfo="skip",
        name=name,
        showlegend=False,
    )


def edge_traces(outline: Outline, lay: MapLayout, dep_min: float) -> list[go.Scatter]:
    """The order spine, dependency arcs (of steps of importance at least ``dep_min``, where the
    trace has them) and backtrack arcs."""
    out, steps = [], outline.steps
    if len(steps) <= SPINE_UP_TO:
        xs, ys = [], []
        for r in outline.rounds:
            for a, b in zip(r.steps, r.steps[1:], strict=False):
                xs += [lay.pos[a.id][0], lay.pos[b.id][0], np.nan]
                ys += [lay.pos[a.id][1], lay.pos[b.id][1], np.nan]
        out.append(line_trace(xs, ys, "#d4d8de", 1.0, "order"))
    xs, ys = [], []
    for s in steps:
        if s.importance is not None and s.importance < dep_min:
            continue
        for d in s.depends_on[:8]:
            src = make_id("step", s.round, d)
            if src in lay.pos:
                (x0, y0), (x1, y1) = lay.pos[src], lay.pos[s.id]
                ax, ay = arc(x0, y0, x1, y1, 0.35)
                xs, ys = xs + ax, ys + ay
    if xs:
        out.append(line_trace(xs, ys, "rgba(90,100,120,0.45)", 1.0, "depends on"))
    xs, ys = [], []
    for s in steps:
        parent = make_id("step", s.round, s.parent) if s.parent is not None else None
        if parent in lay.pos:
            (x0, y0), (x1, y1) = lay.pos[parent], lay.pos[s.id]
            ax, ay = arc(x0, y0, x1, y1, 0.6)
            xs, ys = xs + ax, ys + ay
    if xs:
        out.append(line_trace(xs, ys, STEP_TYPE_COLORS["uncertainty_management"], 2.0, "backtrack"))
    return out
