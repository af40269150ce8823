"""Shared look of every o3viz figure: colours for node kinds, verdicts and step types, the base
layout, and labels for people (clipped, LaTeX made readable)."""

from __future__ import annotations

import html

import plotly.graph_objects as go

# Green is pass/correct and red is fail/wrong on every page; the pair is Okabe-Ito's bluish green
# and vermillion, which colour-blind readers can still tell apart (and the marks differ in shape).
GOOD_COLOR, BAD_COLOR = "#009E73", "#D55E00"
UNGRADED_COLOR = "#9ca3af"  # no verdict to give: unverifiable, or an answer without a reference
VERDICT_COLORS = {
    "pass": GOOD_COLOR,
    "correct": GOOD_COLOR,
    "fail": BAD_COLOR,
    "wrong": BAD_COLOR,
    "error": "#E69F00",
    "timeout": "#E69F00",
    "unverifiable": UNGRADED_COLOR,
}
# The running answer (o3viz.figures.answer_lane): right and wrong are the verdict colours; the
# probability of the reference is a thin neutral line, no verdict.
ANSWER_COLORS = {True: GOOD_COLOR, False: BAD_COLOR, None: UNGRADED_COLOR}
P_REFERENCE_COLOR = "#475569"
# One palette for Thought Anchors step types, shared by the map, the outline, tables and Compare
# (Okabe-Ito and Tol's indigo: colour-blind safe; no green or red, which mean pass and fail).
STEP_TYPE_COLORS = {
    "problem_setup": "#8C8C8C",
    "plan_generation": "#0072B2",
    "fact_retrieval": "#56B4E9",
    "active_computation": "#E69F00",
    "uncertainty_management": "#CC79A7",
    "result_consolidation": "#C9B400",
    "self_checking": "#332288",
    "final_answer_emission": "#000000",
    "untyped": "#BBBBBB",
}
STEP_TYPE_LABELS = {
    "problem_setup": "setup",
    "plan_generation": "plan",
    "fact_retrieval": "recall fact",
    "active_computation": "compute",
    "uncertainty_management": "doubt / backtrack",
    "result_consolidation": "consolidate",
    "self_checking": "self-check",
    "final_answer_emission": "state answer",
    "untyped": "untyped",
}
VERDICT_ORDER = ("pass", "correct", "unverifiable", "timeout", "error", "fail", "wrong")
A_COLOR, B_COLOR = "#2563eb", "#ea580c"  # trace A and trace B in every comparison figure
# Sequential scales hold no red or green (those mean fail and pass) and rise in lightness without a
# dip, so "more" always reads as "lighter": Viridis for every attention and layer × head map.
HEAT_SCALE = "Viridis"
# Low token probability (or high entropy) as a deeper tint of Okabe-Ito blue over white: one hue,
# sequential, and not the red that means wrong.
TOKEN_RGB = (0, 114, 178)
# A signed change that is no verdict (attention gained / lost): Okabe-Ito blue and reddish purple.
GAIN_COLOR, LOSS_COLOR = "#0072B2", "#CC79A7"
SELECT_COLOR = "#111827"  # the outline of the selected node / step, in every figure


def tint(color: str, alpha: float) -> str:
    """``#rrggbb`` as ``rgba(r,g,b,alpha)``: a light background of a palette colour.

    >>> tint("#009E73", 0.15)
    'rgba(0,158,115,0.15)'
    """
    r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha:g})"


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


def warm_figures() -> float:
    """Build one small figure of each kind o3viz draws (markers and lines with text and hover, a
    heatmap with a colour bar, bars, shapes, annotations) in the house style, and serialise it.
    plotly creates a property's validator the first time the property is set, about half a second
    for a first heatmap on 2 cores, so the app calls this once at start, in the background, rather
    than in a reader's first Inspect. Returns the seconds it took.

    >>> warm_figures() >= 0
    True
    """
    import time

    t0 = time.perf_counter()
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=[0, 1],
            y=["a", "b"],
            mode="markers+lines+text",
            text=["a", "b"],
            customdata=["a", "b"],
            hovertext=["a", "b"],
            hovertemplate="%{hovertext}<extra></extra>",
            marker={
                "size": [8, 9],
                "color": ["#111827", "#009E73"],
                "symbol": "circle",
                "line": {"width": 1},
            },
            line={"width": 1, "color": "#94a3b8", "dash": "dot"},
            showlegend=False,
            meta="warm",
        )
    )
    fig.add_trace(
        go.Heatmap(
            z=[[0.0, 1.0]],
            x=["0", "1"],
            y=["a"],
            customdata=[[0.0, 1.0]],
            hovertext=[["a", "b"]],
            hovertemplate="%{hovertext}<extra></extra>",
            colorscale="Viridis",
            colorbar={"thickness": 12, "title": {"text": "share", "side": "right"}, "tickformat": ".0%"},
            xgap=1,
            ygap=1,
            zmin=0,
            zmax=1,
        )
    )
    fig.add_trace(
        go.Bar(x=[1, 2], y=["a", "b"], orientation="h", marker={"color": "#0072B2"}, text=["1", "2"])
    )
    fig.add_shape(
        type="rect", x0=0, x1=1, y0=0, y1=1, line={"color": "white", "width": 2}, fillcolor="rgba(0,0,0,0)"
    )
    fig.add_annotation(
        text="warm", showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper", font={"size": 11}
    )
    fig.update_xaxes(type="category", title="x", tickfont={"size": 11}, showgrid=False, range=[0, 1])
    fig.update_yaxes(type="category", autorange="reversed", title="y", automargin=True, zeroline=False)
    base_layout(fig, "warm", height=300, margin={"l": 10, "r": 10, "t": 70, "b": 50})
    fig.to_json()
    return time.perf_counter() - t0


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


def readable(text: str) -> str:
    """LaTeX made readable in labels: ``\\frac{a}{b}`` → ``a/b``, ``\\cdot`` → ``·``, ``$`` and
    ``\\boxed`` dropped. Text without a backslash or ``$`` is returned as it is (code stays code).

    >>> readable(r"So $x = \\frac{3}{4} \\cdot 2$, i.e. \\boxed{1.5}")
    'So x = 3/4 · 2, i.e. 1.5'
    """
    from o3viz.text.latex import readable_latex  # the one converter: \\overline{BC} is B̅C̅, not \\overlineBC

    return readable_latex(text)


def counted(n: int, word: str) -> str:
    """``n`` and ``word``, plural unless ``n`` is 1, with thousands separators.

    >>> counted(1, "flip"), counted(1319, "flip")
    ('1 flip', '1,319 flips')
    """
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def esc(text: str) -> str:
    """Text for Plotly labels and hovers: ``<``, ``>`` and ``&`` escaped; quotes kept as they are
    (Plotly shows ``&quot;`` literally)."""
    return html.escape(str(text), quote=False)


def clip_label(text: object, n: int = 40) -> str:
    """One line, at most ``n`` characters, cut with "…": the one cap for names and labels drawn
    anywhere (hover and tick labels, pickers, the Library table). Bounded work whatever the input's
    size (a name can be 1 MB).

    >>> clip_label("a  very   long name", 9)
    'a very l…'
    """
    text = " ".join(str(text)[: n * 4 + 16].split())
    return text if len(text) <= n else text[: n - 1] + "…"
