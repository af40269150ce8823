"""The running-answer lane drawn on the reasoning map and the episode overview: the lane's data
(``o3viz.figures.answer_lane.AnswerLane``) as plotly traces on a row of its own under the map's
lanes, sharing its x axis (``y2``: marks, stated, forced; ``y3``: the probability of the reference,
0–1, at the right). Colours are the verdict colours of every page: green right, red wrong, grey
ungraded."""

from __future__ import annotations

from collections.abc import Mapping

import plotly.graph_objects as go

from o3viz.figures._style import ANSWER_COLORS, P_REFERENCE_COLOR, UNGRADED_COLOR, clip_label, esc, readable
from o3viz.figures.answer_lane import AnswerLane, changes

LANE_PX = 100  # px a figure grows by when it gains the lane (its marks, stated and forced rows)
LANE_SHARE = 0.26  # of the plot's height, the lane's part when the figure's height is fixed
MARKS_Y, STATED_Y, FORCED_Y = -1.0, 0.0, 1.0  # the lane's rows, top to bottom
LABEL_SHIFT_PX = 16  # the "first right" label sits this far above its row: clear of every mark (≤ 14 px)
LEGEND_LINE_CHARS = 80  # a legend line's visible characters at most (11 px type: ~530 px, never cut)
_MARK = {  # kind -> (symbol, what its hover says)
    "first_correct": ("triangle-up", "first right"),
    "loss": ("triangle-down", "lost: right, then wrong"),
    "regain": ("triangle-up", "right again"),
    "final": ("square-open", "final running answer"),  # open: a turn at the last step shows inside
}

__all__ = ["LANE_PX", "LANE_SHARE", "add_answer_lane"]


def _point_hover(answer: str, correct: bool | None, source: str, p_ref: float | None) -> str:
    word = {True: "right", False: "wrong", None: "ungraded (no reference)"}[correct]
    line = f"<b>{esc(source)}</b><br>{esc(clip_label(readable(answer), 80))} · {word}"
    return line + (f"<br>p(reference) {p_ref:.2f}" if p_ref is not None else "")


def _answer_traces(
    lane: AnswerLane, x_of: Mapping[str, float], size: float, changes_only: bool = False
) -> list[go.Scatter]:
    """The stated (● on its row) and forced (◆) answers, one trace per source and verdict; with
    ``changes_only``, only where the answer changes (``changes``)."""
    out = []
    for source, y, symbol in (("stated", STATED_Y, "circle"), ("forced", FORCED_Y, "diamond")):
        shown = changes(lane.points, source) if changes_only else lane.points
        for correct, word in ((True, "right"), (False, "wrong"), (None, "ungraded")):
            pts = [
                p for p in shown
                if p.step in x_of and getattr(p, source) is not None and getattr(p, f"{source}_correct") is correct
            ]  # fmt: skip
            if not pts:
                continue
            out.append(
                go.Scatter(
                    x=[x_of[p.step] for p in pts],
                    y=[y] * len(pts),
                    yaxis="y2",
                    mode="markers",
                    marker={
                        "symbol": symbol if correct is not False else f"{symbol}-open",
                        "size": size,
                        "color": ANSWER_COLORS[correct],
                        "line": {"width": 1.5, "color": ANSWER_COLORS[correct]},
                    },
                    customdata=[p.step for p in pts],
                    hovertext=[
                        _point_hover(
                            getattr(p, source), correct, getattr(p, f"{source}_source"), p.p_reference
                        )
                        for p in pts
                    ],
                    hovertemplate="%{hovertext}<extra></extra>",
                    name=f"{source} answer: {word}",
                    meta=f"answer-lane:{source}:{word}",
                )
            )
    return out


def _p_trace(lane: AnswerLane, x_of: Mapping[str, float]) -> list[go.Scatter]:
    pts = [p for p in lane.points if p.step in x_of and p.p_reference is not None]
    if not pts:
        return []
    return [
        go.Scatter(
            x=[x_of[p.step] for p in pts],
            y=[p.p_reference for p in pts],
            yaxis="y3",
            mode="lines",
            line={"color": P_REFERENCE_COLOR, "width": 1.2},
            customdata=[p.step for p in pts],
            hovertext=[f"p(reference) {p.p_reference:.2f} · {esc(p.forced_source)}" for p in pts],
            hovertemplate="%{hovertext}<extra></extra>",
            name="p(reference)",
            meta="answer-lane:p-reference",
        )
    ]


def _mark_traces(lane: AnswerLane, x_of: Mapping[str, float]) -> list[go.Scatter]:
    """One trace per kind of mark (``meta`` ``answer-lane:<kind>``; ``customdata``: the step id)."""
    out = []
    for kind, (symbol, what) in _MARK.items():
        marks = [m for m in lane.marks if m.kind == kind and m.step in x_of]
        if not marks:
            continue
        xs = [x_of[m.step] for m in marks]
        label = kind == "first_correct"  # the one label; the others say what they are on hover
        out.append(
            go.Scatter(
                x=xs,
                y=[MARKS_Y] * len(marks),
                yaxis="y2",
                mode="markers",
                marker={
                    "symbol": symbol, "size": 14 if kind == "final" else 11,
                    "color": [ANSWER_COLORS[m.correct] for m in marks],
                    "opacity": [0.35 if m.uncertain else 1.0 for m in marks],  # faint: an uncertain reading
                },
                # the label is an annotation above the row (``_first_label``); kept here for hover and tests
                text=[f"first right · step {m.step.rsplit(':', 1)[-1]}" for m in marks] if label else None,
                customdata=[m.step for m in marks],
                hovertext=[
                    f"<b>{what}</b> at step {esc(m.step.rsplit(':', 1)[-1])}: "
                    f"{esc(clip_label(readable(m.answer or '—'), 60))}"
                    + ("<br>rests on an uncertain reading: not counted in the dataset figures" if m.uncertain else "")
                    for m in marks
                ],
                hovertemplate="%{hovertext}<extra></extra>",
                name=what,
                meta=f"answer-lane:{kind}",
            )
        )  # fmt: skip
    return out


def _first_label(fig: go.Figure, lane: AnswerLane, x_of: Mapping[str, float], mid: float) -> None:
    """The "first right" label, above the marks' row (``LABEL_SHIFT_PX``) so it touches no mark,
    running away from the plot's middle so it stays inside the plot."""
    first = lane.mark("first_correct")
    if first is None or first.step not in x_of:
        return
    x = x_of[first.step]
    fig.add_annotation(
        text=f"first right · step {esc(first.step.rsplit(':', 1)[-1])}", x=x, y=MARKS_Y, xref="x",
        yref="y2", yshift=LABEL_SHIFT_PX, xanchor="right" if x > mid else "left", showarrow=False,
        font={"size": 11, "color": "#334155"}, name="answer-lane:first-right-label", captureevents=False,
    )  # fmt: skip


def _lines(bits: list[str], width: int = LEGEND_LINE_CHARS) -> str:
    """``bits`` joined by " · ", broken into lines of at most ``width`` visible characters."""
    lines: list[list[str]] = [[]]
    for bit in bits:
        line = lines[-1]
        if line and len(_visible(" · ".join([*line, bit]))) > width:
            lines.append([bit])
        else:
            line.append(bit)
    return "<br>".join(" · ".join(line) for line in lines)


def _visible(html: str) -> str:
    """``html`` without its tags (what a reader sees)."""
    out, inside = [], False
    for c in html:
        inside = (inside or c == "<") and c != ">"
        if not inside and c != ">":
            out.append(c)
    return "".join(out)


def _legend(lane: AnswerLane) -> str:
    dot = "<span style='color:{}'>{}</span>"
    bits = [
        "<b>Running answer</b>",
        f"{dot.format(ANSWER_COLORS[True], '●')} right {dot.format(ANSWER_COLORS[False], '○')} wrong"
        + ("" if lane.reference else f" {dot.format(UNGRADED_COLOR, '●')} ungraded (no reference)"),
        "● stated" + (" ◆ forced" if lane.has_forced else ""),
        "▲ first right ▼ lost (faint: an uncertain reading)",
    ]
    if lane.has_p_reference:
        bits.append(f"{dot.format(P_REFERENCE_COLOR, '—')} p(reference)")
    if lane.forced_by:
        bits.append(
            f"forced by {esc(lane.forced_by)}" + (" (not the trace's model)" if lane.other_model else "")
        )
    return _lines(bits)


def add_answer_lane(
    fig: go.Figure,
    lane: AnswerLane,
    x_of: Mapping[str, float],
    *,
    size: float = 8.0,
    share: float = LANE_SHARE,
    changes_only: bool = False,
) -> None:
    """Draw ``lane`` on ``fig`` (a map whose x axis places step ``s`` at ``x_of[s]``) as a row at the
    bottom, ``share`` of the plot's height: its own y axis (``y2``: marks, stated, forced), the
    probability of the reference on a 0–1 axis (``y3``, right), the map's rows above it.
    ``changes_only``: answers only where they change (an overview stays a few dozen marks)."""
    xs = [x_of[p.step] for p in lane.points if p.step in x_of]
    mid = (min(xs) + max(xs)) / 2 if xs else 0.0
    x_range = fig.layout.xaxis.range
    if x_range is not None:
        mid = (x_range[0] + x_range[1]) / 2
    fig.add_traces(_answer_traces(lane, x_of, max(size, 6.0), changes_only))
    fig.add_traces(_p_trace(lane, x_of))
    fig.add_traces(_mark_traces(lane, x_of))
    first = lane.mark("first_correct")
    if first is not None and first.step in x_of:  # the moment it knew, through the map too
        fig.add_vline(
            x=x_of[first.step], line={"color": ANSWER_COLORS[True], "width": 1, "dash": "dot"}, layer="below"
        )
    _first_label(fig, lane, x_of, mid)
    rows = [MARKS_Y, STATED_Y, *([FORCED_Y] if lane.has_forced else [])]
    legend = _legend(lane)
    fig.update_layout(
        yaxis={"domain": [share + 0.07 + 0.03 * legend.count("<br>"), 1.0]},  # room for each legend line
        yaxis2={
            "domain": [0.0, share],
            "anchor": "x",
            "range": [rows[-1] + 0.6, MARKS_Y - 1.0],  # room above the marks for the label
            "tickvals": rows[1:],
            "ticktext": ["stated", "forced"][: len(rows) - 1],
            "tickfont": {"size": 11},
            "showgrid": True,
            "gridcolor": "#e5e7eb",
            "zeroline": False,
            "fixedrange": True,
        },
        xaxis={"anchor": "y2"},
    )
    if lane.has_p_reference:
        fig.update_layout(
            yaxis3={
                "overlaying": "y2",
                "side": "right",
                "range": [-0.05, 1.05],
                "tickvals": [0, 1],
                "tickfont": {"size": 10, "color": P_REFERENCE_COLOR},
                "showgrid": False,
                "zeroline": False,
                "fixedrange": True,
                "title": {"text": "p(ref)", "font": {"size": 10, "color": P_REFERENCE_COLOR}},
            }
        )
    fig.add_annotation(
        text=legend, x=0.0, y=share, xref="paper", yref="paper", xanchor="left", yanchor="bottom",
        showarrow=False, font={"size": 11, "color": "#475569"}, captureevents=False,
    )  # fmt: skip
