"""What the reasoning map and the episode overview share around their marks: the lanes' tick
labels (a square of each lane's colour), the round bands headed by their verdict, and the final
answer's label. Both figures draw on the same lanes and x axis (``o3viz.figures.map_layout``)."""

from __future__ import annotations

import plotly.graph_objects as go

from o3viz.analysis.outline import BAD, GOOD, Outline
from o3viz.figures._style import STEP_TYPE_COLORS, STEP_TYPE_LABELS, VERDICT_COLORS, clip_label, esc, readable
from o3viz.figures.map_layout import ANSWER, CHECKS, MapLayout

__all__ = ["add_round_bands", "answer_label", "lane_ticks"]


def answer_label(outline: Outline) -> str:
    """The final answer as the map labels it: short text and its verdict."""
    verdict = outline.verdict or "no verdict"
    mark = "✓ " if verdict in GOOD else "✗ " if verdict in BAD else ""
    return f"{mark}{clip_label(readable(outline.answer or '(no answer)'), 28)} · {verdict}"


def lane_ticks(lanes: list[str], checks: str = "checks") -> list[str]:
    """The lanes' names as tick labels, each after a square of its colour; ``checks`` names the
    checks lane (``checks: prm:m`` when it shows a verifier's verdicts)."""
    names = {CHECKS: esc(checks), ANSWER: "answer"}
    out = []
    for lane in lanes:
        color = STEP_TYPE_COLORS.get(lane, "#334155")
        out.append(
            f'<span style="color:{color}">■</span> {names.get(lane, STEP_TYPE_LABELS.get(lane, lane))}'
        )
    return out


def add_round_bands(fig: go.Figure, outline: Outline, lay: MapLayout) -> None:
    """A band behind each round (alternating greys, the figure's full height) headed by its
    number and verdict."""
    verdicts = {r.id: r for r in outline.rounds}
    for k, (rid, x0, x1) in enumerate(lay.rounds):
        r = verdicts[rid]
        fig.add_shape(
            type="rect",
            x0=x0,
            x1=x1,
            y0=0,
            y1=1,
            xref="x",
            yref="paper",
            fillcolor="#f4f6f9" if k % 2 == 0 else "#e9edf3",
            line={"width": 0},
            layer="below",
        )
        verdict = r.verdict or "no verdict"
        fig.add_annotation(
            x=x0,
            y=1.0,
            xref="x",
            yref="paper",
            xanchor="left",
            yanchor="bottom",
            showarrow=False,
            text=f"<b>Round {r.index}</b> · <span style='color:{VERDICT_COLORS.get(verdict, '#64748b')}'>"
            f"{esc(verdict)}</span>",
            font={"size": 12, "color": "#1f2937"},
            captureevents=False,
        )
