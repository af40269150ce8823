"""The reasoning map: what a trace did, at a glance. One lane per Thought Anchors step type, steps in
order left to right, rounds as bands headed by their verdict, backtracks as arcs back to the step
they reconsider, checks as green/red marks, and each round's answer at its end. Token-level detail
(decision points, alternatives) is not drawn here: the details panel shows it for the opened step.

Scales from a 20-token run to a 2,000-step import: markers shrink with the number of steps, the
order spine is drawn only while it stays readable, and no step text is drawn on the map (hover
shows it; the outline beside the map lists it), so labels never overlap. The only labels are the
lane names, the round headers, the final answer and the selected node.
"""

from __future__ import annotations

import textwrap

import numpy as np
import plotly.graph_objects as go

from o3viz.analysis.outline import Outline, OutlineStep
from o3viz.analysis.verdicts import LaneVerdicts
from o3viz.figures._style import (
    STEP_TYPE_COLORS,
    STEP_TYPE_LABELS,
    VERDICT_COLORS,
    base_layout,
    clip_label,
    esc,
    readable,
)
from o3viz.figures.answer_lane import AnswerLane
from o3viz.figures.map_answers import LANE_PX, add_answer_lane
from o3viz.figures.map_checks import check_traces, verdict_traces
from o3viz.figures.map_edges import SPINE_UP_TO, edge_traces  # noqa: F401 (re-exported)
from o3viz.figures.map_forks import add_fork_lanes
from o3viz.figures.map_frame import add_round_bands, answer_label, lane_ticks  # noqa: F401 (re-exported)
from o3viz.figures.map_layout import ANSWER, CHECKS, ROUND_GAP, Fork, MapLayout, map_layout  # noqa: F401 (re-exported)

PLOT_PX = 640  # the width the marker sizes are planned for
EDGE_PX = 36  # pixels at the planned width (the map is drawn ~370 px wide at 1280: ~20 px)
FOCUS_WINDOW = 40  # steps each side of a searched node, when the trace is wider than twice that
_KIND_SYMBOL = {"backtrack": "triangle-left", "self_check": "diamond", "final": "hexagram", "step": "circle"}


def _marker_px(n_units: float) -> float:
    return float(np.clip(0.75 * PLOT_PX / max(n_units, 1.0), 5.0, 16.0))


HOVER_WIDTH = 64  # characters per line of a hover label: a wider label is cut off by the plot's edge


def hover_lines(text: str, width: int = HOVER_WIDTH) -> str:
    """``text`` escaped for a plotly hover label and wrapped at ``width`` characters: plotly draws
    one line as wide as it is, and a label wider than the plot is cut off at the plot's edge.

    >>> hover_lines("a " * 40, width=20).count("<br>")
    3
    """
    return "<br>".join(esc(line) for line in textwrap.wrap(text, width) or [""])


def _step_hover(s: OutlineStep) -> str:
    bits = [
        f"<b>{esc(STEP_TYPE_LABELS.get(s.type, s.type))}</b> · step {s.index} of round {s.round}"
        + (" (type inferred)" if s.inferred else ""),
        hover_lines(clip_label(readable(s.text), 160)),
    ]
    if s.kind != "step":
        bits.append(f"kind: {s.kind}" + (f", branches from step {s.parent}" if s.parent is not None else ""))
    if s.importance is not None:
        bits.append(f"importance: {s.importance:.2f}")
    if s.confidence is not None:
        bits.append(f"mean token probability: {s.confidence:.2f}")
    if s.checks:
        bits.append("checks: " + ", ".join(esc(f"{c.name} {c.verdict}") for c in s.checks[:6]))
    return "<br>".join(bits)


def _step_traces(outline: Outline, lay: MapLayout, size: float) -> list[go.Scatter]:
    groups: dict[tuple[str, str], list[OutlineStep]] = {}
    for s in outline.steps:
        groups.setdefault((s.type, s.kind), []).append(s)
    traces = []
    for (typ, kind), members in groups.items():
        sizes = [size * (0.6 + 1.4 * s.importance) if s.importance is not None else size for s in members]
        bump = 1.5 if kind in ("backtrack", "final") else 1.0
        traces.append(
            go.Scatter(
                x=np.array([lay.pos[s.id][0] for s in members]),
                y=np.array([lay.pos[s.id][1] for s in members]),
                mode="markers",
                marker={
                    "color": STEP_TYPE_COLORS.get(typ, "#BBBBBB"),
                    "size": np.array(sizes) * bump,
                    "symbol": _KIND_SYMBOL.get(kind, "circle"),
                    "line": {"width": 1, "color": "white" if kind == "step" else "#1f2937"},
                },
                customdata=np.array([s.id for s in members], dtype=object),
                hovertext=np.array([_step_hover(s) for s in members], dtype=object),
                hovertemplate="%{hovertext}<extra></extra>",
                name=f"step: {STEP_TYPE_LABELS.get(typ, typ)}",
            )
        )
    return traces


def _answer_traces(outline: Outline, lay: MapLayout) -> list[go.Scatter]:
    rounds = [r for r in outline.rounds if r.answer_id in lay.pos]
    if not rounds:
        return []
    final = rounds[-1]
    x, y = lay.pos[final.answer_id]
    star = go.Scatter(
        x=[lay.pos[r.answer_id][0] for r in rounds],
        y=[lay.pos[r.answer_id][1] for r in rounds],
        mode="markers",
        marker={
            "size": 20,
            "symbol": "star",
            "color": [VERDICT_COLORS.get(r.verdict or "", "#64748b") for r in rounds],
            "line": {"width": 1, "color": "#1f2937"},
        },
        customdata=[r.answer_id for r in rounds],
        hovertext=[
            esc(f"answer of round {r.index}: {clip_label(r.answer or '(none)', 120)} · {r.verdict or '—'}")
            for r in rounds
        ],
        hovertemplate="%{hovertext}<extra></extra>",
        name="answer",
    )
    label = go.Scatter(  # SVG text (not an annotation), so a test can find it inside the plot area
        x=[x],
        y=[y + 0.42],
        mode="text",
        text=[esc(answer_label(outline)) + " "],  # clear of the star
        textposition="middle left",
        textfont={"size": 13, "color": VERDICT_COLORS.get(outline.verdict or "", "#334155")},
        hoverinfo="skip",
        name="final answer",
        meta="answer-label",
    )
    return [star, label]


def _selection(fig: go.Figure, lay: MapLayout, outline: Outline, selected: str | None, highlight) -> None:
    marks = [n for n in (*highlight, *([selected] if selected else [])) if n in lay.pos]
    if marks:
        fig.add_trace(
            go.Scatter(
                x=[lay.pos[n][0] for n in marks],
                y=[lay.pos[n][1] for n in marks],
                mode="markers",
                marker={
                    "size": 26,
                    "color": "rgba(0,0,0,0)",
                    "line": {"width": 3, "color": ["#111827" if n == selected else "#f59e0b" for n in marks]},
                },
                hoverinfo="skip",
                name="selected / search",
            )
        )
    node = outline.find(selected) if selected else None
    if selected in lay.pos and node is not None:
        x, y = lay.pos[selected]
        text = getattr(node, "text", None) or getattr(node, "name", "")
        if selected.startswith(("answer:", "round:")):  # the answer has its own label; rounds a header
            return
        right_half = (x - lay.rounds[0][1]) > 0.6 * (lay.rounds[-1][2] - lay.rounds[0][1])
        fig.add_annotation(
            x=x,
            y=y,
            text=esc(clip_label(readable(text), 48)),
            showarrow=True,
            arrowhead=0,
            ax=0,
            ay=34 if y < 1.5 else -34,
            xanchor="right" if right_half else "left",
            font={"size": 12, "color": "#111827"},
            bgcolor="rgba(255,255,255,0.92)",
            bordercolor="#111827",
            borderwidth=1,
        )


def _first_wrong_ring(fig: go.Figure, pos: tuple[float, float]) -> None:
    fig.add_trace(
        go.Scatter(
            x=[pos[0]],
            y=[pos[1]],
            mode="markers",
            marker={
                "size": 34,
                "color": "rgba(0,0,0,0)",
                "line": {"width": 2.5, "color": VERDICT_COLORS["fail"], "dash": "dot"},
            },
            hovertext=["first wrong step"],
            hoverinfo="text",
            name="first wrong step",
        )
    )


def reasoning_map_figure(
    outline: Outline,
    *,
    selected: str | None = None,
    highlight: tuple[str, ...] | list[str] = (),
    focus: str | None = None,
    lanes: list[str] | None = None,
    dep_min: float = 0.0,
    height: int | None = None,
    title: str | None = None,
    x_of: dict[str, float] | None = None,
    x_range: tuple[float, float] | None = None,
    show_answer: bool = True,
    first_wrong: str | None = None,
    forks: list[Fork] | tuple[Fork, ...] = (),
    verdicts: LaneVerdicts | None = None,
    answer_lane: AnswerLane | None = None,
) -> go.Figure:
    """The map of ``outline``. ``customdata`` of every marker is its node id (for clicks).

    ``selected`` gets a ring and its text; ``highlight`` (search matches) get rings; ``focus``
    moves the view to that node on traces too wide to read whole. ``lanes``, ``x_of`` and
    ``x_range`` put two maps on one scale (Compare); dependency arcs are drawn for steps of
    importance at least ``dep_min``; ``show_answer=False`` leaves out the answer's star and label
    (a zoomed-in episode that does not reach it); ``first_wrong`` (a step id) gets a red dashed ring
    ("first wrong step", the one rule of ``o3viz.analysis.wrong_step``); ``forks`` (branches) leave
    their steps as short lanes ending in the branch's answer and verdict; ``verdicts`` (one
    verifier's, ``o3viz.analysis.verdicts.lane_verdicts``) fill the checks lane instead of the
    checks, and the lane is named after the verifier. ``answer_lane`` (``o3viz.figures.answer_lane``)
    adds the running answer as a row under the lanes, on the same x axis (the figure grows by
    ``LANE_PX`` unless ``height`` is given)."""
    lay = map_layout(outline, lanes, x_of)
    size = _marker_px(x_range[1] - x_range[0] if x_range else lay.width)
    fig = go.Figure(edge_traces(outline, lay, dep_min))
    fig.add_traces(_step_traces(outline, lay, size))
    if verdicts is None:
        fig.add_traces(check_traces(outline, lay, size))
    else:  # the chosen verifier's verdicts, and nothing else, so the lane says one thing
        fig.add_traces(verdict_traces(outline, lay, size, verdicts))
    if show_answer:  # an episode without the answer opens with show_answer=False
        fig.add_traces(_answer_traces(outline, lay))
    add_round_bands(fig, outline, lay)
    _selection(fig, lay, outline, selected, highlight)
    if first_wrong in lay.pos:
        _first_wrong_ring(fig, lay.pos[first_wrong])
    add_fork_lanes(fig, lay, list(forks))
    n = len(outline.steps)
    sub = "colour = step type · ◀ backtrack (arc to the step it reconsiders) · ◆ self-check"
    sub += " · ■ ✗ checks" if verdicts is None else ""
    more = []  # a second line: one line of legend would be cut off at 1280 px
    if outline.has_importance:
        more.append(
            f"size = importance{'' if verdicts else ' (rank within the trace)'} · grey arcs = depends on"
        )
    if verdicts is not None:  # the lane's name says whose; the legend says what the marks mean
        more.append(f"■ ok ✗ wrong ○ unsure by {esc(clip_label(verdicts.verifier, 16))}")
    sub += "<br>" + " · ".join(more) if more else ""
    title = title or f"What happened: {n} step{'s' if n != 1 else ''} in {len(outline.rounds)} round" + (
        "s" if len(outline.rounds) != 1 else ""
    )
    base_layout(
        fig,
        f"{esc(title)}<br><span style='font-size:11px;color:#64748b'>{sub}</span>",
        height=height or int(np.clip(70 + 34 * len(lay.lanes), 300, 520)) + (LANE_PX if answer_lane else 0),
        margin={"l": 10, "r": 16, "t": 100 if more else 84, "b": 28},
        showlegend=False,
        dragmode="pan",
        clickmode="event+select",
        hovermode="closest",
    )
    fig.update_layout(
        title={"yref": "container", "y": 1, "yanchor": "top", "pad": {"t": 10}}
    )  # above the bands
    x0, x1 = lay.rounds[0][1] - 0.3 if lay.rounds else -1, lay.rounds[-1][2] + 0.8 if lay.rounds else 1
    pad = (x1 - x0) * EDGE_PX / PLOT_PX  # the star (20 px) must not be cut at the edge however long
    x0, x1 = x0 - pad, x1 + pad
    if x_range is not None:
        x0, x1 = x_range
    elif focus in lay.pos and x1 - x0 > 2 * FOCUS_WINDOW:
        fx = lay.pos[focus][0]
        x0, x1 = max(x0, fx - FOCUS_WINDOW), min(x1, fx + FOCUS_WINDOW)
    fig.update_xaxes(
        range=[x0, x1],
        showticklabels=False,
        showgrid=False,
        zeroline=False,
        title={"text": "reasoning steps in order →", "font": {"size": 11, "color": "#64748b"}},
    )
    fig.update_yaxes(
        range=[len(lay.lanes) - 0.2, -0.6],
        tickvals=list(range(len(lay.lanes))),
        ticktext=lane_ticks(lay.lanes, verdicts.label if verdicts else "checks"),
        tickfont={"size": 12},
        showgrid=True,
        gridcolor="#e5e7eb",
        zeroline=False,
        automargin=True,
    )
    if answer_lane is not None:
        add_answer_lane(fig, answer_lane, {k: v[0] for k, v in lay.pos.items()}, size=size)
    return fig
