"""The Dataset page's running-answer figures (issue 53): per dataset and model, the share of traces
with an early correct point, where the answer settles, the share whose answer flips from right to
wrong, and what stopping at the first correct point saves, each bar with its 95% interval and n,
beside the published figure it is compared with, named as the paper's (never as ours). The two
that count changes of answer (where it settles, right → wrong) say that they count only answers
read with confidence (``READ_WITH_CONFIDENCE``; ``o3viz.analysis.running_answer.RULE``).

Plain data in: one row per bar (``group``: "dataset · model", ``value`` and its interval ``lo`` and
``hi`` as fractions, ``n`` traces, ``sel``: the JSON selection that names its traces, which a click
hands back in ``customdata`` so the page lists them, as the other Dataset figures do).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import plotly.graph_objects as go

from o3viz.figures._style import GOOD_COLOR, base_layout, clip_label, empty_figure, esc

Measure = Literal["early_correct", "convergence", "flip_rate", "tokens_saved"]
MIN_N = 5  # a bar over fewer traces is drawn hollow: too few to read a rate from
# the reading rule under the figures that count changes of answer (o3viz.analysis.running_answer.RULE)
READ_WITH_CONFIDENCE = (
    'an answer read with confidence: boxed, "the answer is", or a conclusion about what the question '
    "asks (not an intermediate result)"
)
RULE_LINES = (  # the same, on two lines of a half-width figure: one line was cut at its right edge
    'answers read with confidence: boxed, "the answer is", or a conclusion',
    "about what the question asks (never an intermediate result)",
)
RULED = ("convergence", "flip_rate")  # the figures whose subtitle states it


@dataclass(frozen=True)
class Published:
    """A paper's figure for a measure: ``lo``–``hi`` (equal for one number), as a fraction."""

    lo: float
    hi: float
    label: str  # who says it, on what, e.g. "DEER (arXiv 2504.15895), AIME24"


# What each figure asks, its axis, and the published figure it sits beside.
MEASURES: dict[str, tuple[str, str, Published]] = {
    "early_correct": (
        "How often was it right before the end?",
        "traces with a correct running answer before the last 10% of the reasoning",
        Published(0.75, 0.75, "DEER (arXiv 2504.15895): 75% of AIME24 samples"),
    ),
    "convergence": (
        "When does the answer settle?",
        "where the answer read with confidence last changed (mean share of the reasoning)",
        Published(0.60, 0.60, "Answer Convergence (arXiv 2506.02536): ~60% of steps"),
    ),
    "flip_rate": (
        "How often is a right answer lost?",
        "traces whose answer went right → wrong, both read with confidence",
        Published(0.15, 0.15, "fragile correctness: ~15% of answers flip"),
    ),
    "tokens_saved": (
        "What would stopping at the first right answer save?",
        "share of the reasoning after the first correct point (mean)",
        Published(0.19, 0.80, "DEER (arXiv 2504.15895): 19–80% shorter"),
    ),
}

__all__ = ["MEASURES", "MIN_N", "READ_WITH_CONFIDENCE", "Published", "answer_dataset_figure"]


def _hover(r: dict) -> str:
    lo, hi = r.get("lo"), r.get("hi")
    ci = f" (95% CI {lo:.0%}–{hi:.0%})" if lo is not None and hi is not None else ""
    return f"<b>{esc(clip_label(r['group'], 60))}</b><br>{r['value']:.0%}{ci} · n = {r['n']:,}<br>click to list them"


def answer_dataset_figure(measure: Measure, rows: Sequence[dict], *, height: int = 300) -> go.Figure:
    """One horizontal bar per ``rows`` item (see the module docstring) with its interval, n on the
    bar, hollow under ``MIN_N`` traces, and the published figure as a dashed line (a band for a
    range) named as the paper's. A bar's ``customdata`` is its ``sel``.

    >>> fig = answer_dataset_figure("flip_rate", [{"group": "math500 · R1", "value": 0.2, "lo": 0.1,
    ...     "hi": 0.3, "n": 40, "sel": "{}"}])
    >>> fig.data[0].x[0], fig.layout.shapes[0].x0
    (0.2, 0.15)
    """
    title, axis, pub = MEASURES[measure]
    rows = [r for r in rows if r.get("value") is not None]
    if not rows:
        return empty_figure(title, "No graded trace in this scope has a running answer.", height=height)
    full = [r["n"] >= MIN_N for r in rows]
    fig = go.Figure(
        go.Bar(
            orientation="h",
            x=[r["value"] for r in rows],
            y=[clip_label(r["group"], 36) for r in rows],
            marker={
                "color": [GOOD_COLOR if f else "rgba(0,0,0,0)" for f in full],
                "line": {"color": GOOD_COLOR, "width": 2},
            },
            error_x={
                "type": "data",
                "symmetric": False,
                "array": [max((r.get("hi") or r["value"]) - r["value"], 0.0) for r in rows],
                "arrayminus": [max(r["value"] - (r.get("lo") or r["value"]), 0.0) for r in rows],
                "thickness": 1.2,
                "color": "#334155",
            },
            text=[f"n = {r['n']:,}" for r in rows],
            textposition="inside",
            insidetextanchor="start",
            textfont={"size": 11},
            customdata=[r.get("sel") for r in rows],
            hovertext=[_hover(r) for r in rows],
            hovertemplate="%{hovertext}<extra></extra>",
            name="ours",
        )
    )
    if pub.hi > pub.lo:
        fig.add_vrect(x0=pub.lo, x1=pub.hi, fillcolor="#94a3b8", opacity=0.18, line_width=0, layer="below")
    fig.add_vline(x=pub.lo, line={"color": "#334155", "width": 1.5, "dash": "dash"})
    fig.add_annotation(
        x=pub.lo, y=1.0, xref="x", yref="paper", yanchor="bottom", showarrow=False,
        xanchor="left" if pub.lo < 0.5 else "right",  # the label stays inside the figure
        text=esc(pub.label), font={"size": 11, "color": "#334155"},
    )  # fmt: skip
    rule = "".join(f"<br>{esc(line)}" for line in RULE_LINES) if measure in RULED else ""
    base_layout(
        fig,
        f"{esc(title)}<br><span style='font-size:11px;color:#64748b'>bar: this scope, 95% interval, n; "
        f"dashed: the paper's figure · hollow: fewer than 5 traces{rule}</span>",
        height=height,
        margin={"l": 10, "r": 20, "t": 118 if rule else 86, "b": 40},
        showlegend=False,
        clickmode="event+select",
    )
    fig.update_xaxes(range=[0, 1], tickformat=".0%", title={"text": axis, "font": {"size": 11}})
    fig.update_yaxes(automargin=True, autorange="reversed", tickfont={"size": 11})
    return fig
