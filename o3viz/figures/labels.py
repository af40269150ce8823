"""People's labels drawn where the steps are: a glyph above each labelled step on the reasoning
map (✓ correct in green, ✗ wrong in red, ? unsure in grey) and the same glyph in its outline row.

>>> rows = label_rows([{"id": "step:0:1", "kind": "step", "chip": "✗1"}], {"step:0:1": "wrong"})
>>> rows[0]["chip"]
'✗1 · labelled ✗'
"""

from __future__ import annotations

import plotly.graph_objects as go

from o3viz.figures._style import BAD_COLOR, GOOD_COLOR

GLYPHS = {"correct": "✓", "wrong": "✗", "unsure": "?"}
COLORS = {"correct": GOOD_COLOR, "wrong": BAD_COLOR, "unsure": "#6b7280"}
LIFT = 0.42  # how far above its step a glyph sits, in the map's y units (rows are 1 apart)


def label_rows(rows: list[dict], verdicts: dict[str, str]) -> list[dict]:
    """The outline's rows with "labelled ✓/✗/?" in the chip of each labelled step (copies)."""
    out = []
    for r in rows:
        v = verdicts.get(r.get("id", "")) if r.get("kind") == "step" else None
        if v is not None:
            r = {**r, "chip": " · ".join(x for x in (r.get("chip") or "", f"labelled {GLYPHS[v]}") if x)}
        out.append(r)
    return out


def mark_labels(fig: go.Figure, verdicts: dict[str, str]) -> go.Figure:
    """``fig`` (a reasoning map) with a glyph above every step of ``verdicts`` (node id → verdict)
    that it draws; steps it does not draw (an episode closed on a long map) get none."""
    at: dict[str, tuple[float, float]] = {}
    for tr in fig.data:
        ids = getattr(tr, "customdata", None)
        if ids is None or tr.x is None or tr.y is None:
            continue
        for node, x, y in zip(ids, tr.x, tr.y, strict=False):
            if isinstance(node, str) and node in verdicts:
                at.setdefault(node, (x, y))
    for verdict in GLYPHS:
        nodes = [n for n in at if verdicts[n] == verdict]
        if not nodes:
            continue
        fig.add_trace(
            go.Scatter(
                x=[at[n][0] for n in nodes],
                y=[at[n][1] + LIFT for n in nodes],
                mode="text",
                text=[GLYPHS[verdict]] * len(nodes),
                textfont={"color": COLORS[verdict], "size": 13},
                hovertext=[f"{n}: labelled {verdict}" for n in nodes],
                hoverinfo="text",
                name=f"labelled {verdict}",
                showlegend=False,
            )
        )
    return fig
