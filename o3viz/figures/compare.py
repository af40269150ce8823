"""Comparison figures: per-step curves of two runs overlaid on relative progress, the difference
heatmap, verdict counts side by side, and a compact picture of the step alignment."""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from o3viz.analysis.compare import Comparison
from o3viz.analysis.outline import UNTYPED, Outline
from o3viz.figures._style import (
    A_COLOR,
    B_COLOR,
    DIFF_SCALE,
    VERDICT_COLORS,
    base_layout,
    clip_label,
    empty_figure,
)
from o3viz.figures.answer_lane import AnswerLane
from o3viz.figures.map_answers import LANE_PX
from o3viz.figures.reasoning_map import ANSWER, CHECKS, map_layout, reasoning_map_figure
from o3viz.text.classify import TYPES
from o3viz.trace.ids import make_id

_TAG_COLORS = {"equal": "#94a3b8", "replace": "#f59e0b", "insert": B_COLOR, "delete": A_COLOR}
_FORK_COLORS = {
    "shared": "#e5e7eb",
    "fork": "#CC79A7",
}  # a branch against its parent: prefix greyed, the edit


def curves_figure(c: Comparison) -> go.Figure:
    """Each per-step series of A and B on a shared 0–100% progress axis (runs of any lengths)."""
    names = [k for k, (a, b) in c.curves.items() if a or b]
    if not names:
        return empty_figure("Per-step curves", "Neither trace has steps.")
    fig = make_subplots(
        rows=len(names), cols=1, shared_xaxes=True, vertical_spacing=0.07, subplot_titles=names
    )
    for row, name in enumerate(names, start=1):
        for label, series, color in (
            (c.a_name, c.curves[name][0], A_COLOR),
            (c.b_name, c.curves[name][1], B_COLOR),
        ):
            if not series:  # say so instead of dropping the side silently
                fig.add_annotation(
                    text=f"{html.escape(clip_label(label, 30))}: not recorded",
                    xref="x domain",
                    yref="y domain",
                    x=1.0 if color == B_COLOR else 0.0,
                    y=1.0,
                    xanchor="right" if color == B_COLOR else "left",
                    showarrow=False,
                    font={"size": 11, "color": color},
                    row=row,
                    col=1,
                )
                continue
            x = np.linspace(0, 100, len(series)) if len(series) > 1 else np.array([0.0])
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=series,
                    mode="lines+markers" if len(series) <= 60 else "lines",
                    marker={"size": 6 if len(series) > 1 else 10},
                    line={"color": color, "width": 2},
                    name=html.escape(label),
                    legendgroup=label,
                    showlegend=row == 1,
                    customdata=np.arange(len(series)),
                    hovertemplate=f"{html.escape(label)} step %{{customdata}}: %{{y:.3f}}<extra></extra>",
                ),
                row=row,
                col=1,
            )
    fig.update_xaxes(title_text="progress through the final round (% of its steps)", row=len(names), col=1)
    fig.update_annotations(font_size=12)
    return base_layout(
        fig,
        "Per-step curves of the final rounds, on relative progress",
        height=200 + 170 * len(names),
        margin={"l": 50, "r": 20, "t": 90, "b": 50},
    )


def diff_heatmap(c: Comparison) -> go.Figure:
    """B − A heatmap (progress × prompt tokens or segments), or a figure that says why not."""
    d = c.diff
    if d.values is None:
        return empty_figure("Attention difference", f"No difference heatmap: {d.reason}.")
    lim = float(np.abs(d.values).max()) or 1.0
    fig = go.Figure(
        go.Heatmap(
            z=d.values,
            x=[html.escape(clip_label(x, 16)) + f"·{i}" for i, x in enumerate(d.columns)],
            y=[f"{int(100 * i / d.values.shape[0])}%" for i in range(d.values.shape[0])],
            colorscale=DIFF_SCALE,
            zmid=0,
            zmin=-lim,
            zmax=lim,
            hovertemplate="progress %{y}<br>%{x}<br>B − A %{z:+.4f}<extra></extra>",
            colorbar={"title": "B − A", "thickness": 12},
        )
    )
    fig.update_xaxes(type="category", tickfont={"size": 11}, nticks=24, title="prompt")
    fig.update_yaxes(autorange="reversed", title="progress through the final round", tickfont={"size": 11})
    return base_layout(fig, f"Attention difference B − A: {html.escape(d.what)}", height=520)


def verdicts_figure(c: Comparison) -> go.Figure:
    """Verdict counts of A and B side by side (all rounds)."""
    if not c.verdicts:
        return empty_figure("Verdicts", "Neither trace has verification checks.")
    vs = list(c.verdicts)
    fig = go.Figure(
        [
            go.Bar(x=vs, y=[c.verdicts[v][0] for v in vs], name=html.escape(c.a_name), marker_color=A_COLOR),
            go.Bar(x=vs, y=[c.verdicts[v][1] for v in vs], name=html.escape(c.b_name), marker_color=B_COLOR),
        ]
    )
    fig.update_xaxes(tickfont={"color": "#334155"})
    for i, v in enumerate(vs):
        fig.add_shape(
            type="rect",
            xref="x",
            yref="paper",
            x0=i - 0.5,
            x1=i + 0.5,
            y0=-0.02,
            y1=0,
            fillcolor=VERDICT_COLORS.get(v, "#94a3b8"),
            line_width=0,
        )
    return base_layout(fig, "Verdicts, all rounds", height=320, barmode="group")


def alignment_figure(c: Comparison) -> go.Figure:
    """The step alignment as two lanes (A left, B right) joined where steps match or were replaced."""
    if not c.steps:
        return empty_figure("Step alignment", "Neither trace has steps.")
    xs, ys, colors, hover = [], [], [], []
    for row, s in enumerate(c.steps):
        for lane, idx, text in ((0, s.a_index, s.a_text), (1, s.b_index, s.b_text)):
            if idx is not None:
                xs.append(lane)
                ys.append(row)
                colors.append({**_TAG_COLORS, **_FORK_COLORS}[s.tag])
                hover.append(f"{'AB'[lane]} step {idx} · {s.tag}<br>{html.escape(clip_label(text, 90))}")
    fig = go.Figure(
        go.Scattergl(
            x=xs,
            y=ys,
            mode="markers",
            marker={"color": colors, "size": 9, "symbol": "square"},
            hovertext=hover,
            hovertemplate="%{hovertext}<extra></extra>",
            showlegend=False,
        )
    )
    forked = any(s.tag in _FORK_COLORS for s in c.steps)
    for tag, color in {**_TAG_COLORS, **(_FORK_COLORS if forked else {})}.items():
        fig.add_trace(
            go.Scatter(
                x=[None], y=[None], mode="markers", name=tag, marker={"color": color, "symbol": "square"}
            )
        )
    fig.update_xaxes(
        tickvals=[0, 1],
        ticktext=[html.escape(clip_label(c.a_name, 30)), html.escape(clip_label(c.b_name, 30))],
        range=[-0.5, 1.5],
    )
    fig.update_yaxes(autorange="reversed", title="aligned row")
    return base_layout(
        fig, f"Step alignment (similarity {c.similarity:.0%})", height=min(700, 200 + 6 * len(c.steps))
    )


def _final_only(o: Outline) -> Outline:
    return Outline(o.question, o.answer, o.verdict, o.rounds[-1:])


def _divergence_label(tag: str, idx: int | None, other: int | None) -> str:
    if idx is None:
        return f"▼ first divergence: {tag} has no step here (the other's step {other})"
    return f"▼ first divergence: {tag} step {idx}"


def mark_divergence(
    fig: go.Figure, x: float, y: float | None, text: str, x_range: tuple[float, float]
) -> None:
    """The first divergence on a map: a dashed line down the plot at ``x``, a ring on the step at
    ``(x, y)`` (the ring is hollow), and the label in the margin above the plot, never on a node.
    The label moves right of the round header near the left edge and ends at ``x`` near the right."""
    lo, hi = x_range
    fig.add_shape(
        type="line", x0=x, x1=x, y0=0, y1=1, xref="x", yref="paper", layer="below",
        line={"color": "#111827", "width": 1.5, "dash": "dot"},
    )  # fmt: skip
    if y is not None:
        fig.add_trace(
            go.Scatter(
                x=[x],
                y=[y],
                mode="markers",
                hoverinfo="skip",
                name="first divergence",
                marker={"size": 24, "color": "rgba(0,0,0,0)", "line": {"width": 3, "color": "#111827"}},
            )  # fmt: skip
        )
    share = (x - lo) / (hi - lo) if hi > lo else 0.0
    fig.add_annotation(
        x=x, y=1.0, xref="x", yref="paper", showarrow=True, arrowhead=2, arrowsize=1, arrowwidth=1.5,
        axref="x", ax=max(x, lo + 0.3 * (hi - lo)), ayref="pixel", ay=-16,
        xanchor="right" if share > 0.6 else "left", yanchor="bottom",
        text=f"<b>{html.escape(text)}</b>", font={"size": 12, "color": "#111827"}, captureevents=False,
    )  # fmt: skip


def _shade_shared(fig: go.Figure, c: Comparison) -> None:
    """A branch against its parent: the shared prefix greyed over, the fork named at its edge."""
    shared = sum(s.tag == "shared" for s in c.steps)
    if not shared:
        return
    fig.add_vrect(
        x0=-0.5, x1=shared - 0.5, fillcolor="#e5e7eb", opacity=0.55, line_width=0, layer="above",
        annotation_text=f"shared prefix · fork at step {shared}", annotation_position="bottom left",
        annotation_font={"size": 11, "color": "#475569"},
    )  # fmt: skip


def compare_maps(
    c: Comparison,
    a: Outline,
    b: Outline,
    *,
    height: int = 300,
    answer_lanes: tuple[AnswerLane | None, AnswerLane | None] = (None, None),
) -> tuple[go.Figure, go.Figure]:
    """The final rounds of A and B on one scale, the first divergence marked in both (its label in
    the margin above the plot). Short rounds are two reasoning maps with the same lanes, the same x
    range, and aligned steps at the same x (one above the other); long ones (aligned by episode,
    ``c.alignment.method == "episodes"``) are two episode overviews over one step range.
    ``answer_lanes`` (A's and B's, ``o3viz.figures.answer_lane.lane_of``) add each side's running
    answer under its map, on its x axis and the same 0–1 probability axis; both maps grow by
    ``LANE_PX`` so that they stay one height."""
    a, b = _final_only(a), _final_only(b)
    if any(answer_lanes):
        height += LANE_PX
    if c.alignment is not None and c.alignment.method == "episodes":
        return _episode_maps(c, a, b, height=height, answer_lanes=answer_lanes)
    ra = a.rounds[0].index if a.rounds else 0
    rb = b.rounds[0].index if b.rounds else 0
    xa = {make_id("step", ra, s.a_index): float(i) for i, s in enumerate(c.steps) if s.a_index is not None}
    xb = {make_id("step", rb, s.b_index): float(i) for i, s in enumerate(c.steps) if s.b_index is not None}
    present = set(a.types()) | set(b.types())
    lanes = [t for t in (*TYPES, UNTYPED) if t in present] + [CHECKS, ANSWER]
    width = max(map_layout(a, lanes, xa).width, map_layout(b, lanes, xb).width)
    x_range = (-0.8, width + 0.8)
    d = c.first_divergence
    figs = []
    for tag, name, o, x_of, r, idx, other, lane in (
        ("A", c.a_name, a, xa, ra, d.a_index if d else None, d.b_index if d else None, answer_lanes[0]),
        ("B", c.b_name, b, xb, rb, d.b_index if d else None, d.a_index if d else None, answer_lanes[1]),
    ):
        n = len(o.steps)
        fig = reasoning_map_figure(
            o,
            lanes=lanes,
            x_of=x_of,
            x_range=x_range,
            height=height,
            title=f"{tag} · {clip_label(name, 40)}: final round, {n} step{'s' if n != 1 else ''}",
            answer_lane=lane,
        )
        _shade_shared(fig, c)
        if d is not None:
            node = make_id("step", r, idx) if idx is not None else None
            pos = map_layout(o, lanes, x_of).pos
            x = pos[node][0] if node in pos else float(c.steps.index(d))  # its row where it has no step
            mark_divergence(
                fig, x, pos[node][1] if node in pos else None, _divergence_label(tag, idx, other), x_range
            )
        figs.append(fig)
    return figs[0], figs[1]


def _episode_maps(
    c: Comparison, a: Outline, b: Outline, *, height: int, answer_lanes=(None, None)
) -> tuple[go.Figure, go.Figure]:
    """Both long final rounds as episode overviews over one step range, the divergence marked."""
    from o3viz.analysis.episodes import find_episodes
    from o3viz.figures.episode_map import EDGE_PX, episode_map_figure

    lays = [map_layout(o) for o in (a, b)]
    lo = min(lay.rounds[0][1] for lay in lays if lay.rounds) if any(lay.rounds for lay in lays) else -1.0
    hi = max(lay.rounds[-1][2] for lay in lays if lay.rounds) if any(lay.rounds for lay in lays) else 1.0
    pad = (hi - lo) * EDGE_PX / 900  # Compare draws it ~900 px wide at 1280: the star is never cut
    x_range = (lo - pad, hi + pad)
    d = c.first_divergence
    figs = []
    for tag, name, o, lay, idx, other, lane in (
        ("A", c.a_name, a, lays[0], d.a_index if d else None, d.b_index if d else None, answer_lanes[0]),
        ("B", c.b_name, b, lays[1], d.b_index if d else None, d.a_index if d else None, answer_lanes[1]),
    ):
        episodes = find_episodes(o, c.alignment.min_steps)
        fig = episode_map_figure(o, episodes, height=height, answer_lane=lane)
        n = len(o.steps)
        title = f"{tag} · {clip_label(name, 40)}: final round, {n} steps in {len(episodes)} episodes"
        legend = (
            "bar = one episode, in the lane of its main step type · ◀ backtrack · ◆ self-check · ✗ failed"
        )
        fig.update_layout(
            title_text=f"{html.escape(title)}<br><span style='font-size:11px;color:#64748b'>{legend}</span>",
            margin={"t": 84},
        )
        fig.update_xaxes(range=list(x_range))
        if d is not None:
            rid = o.rounds[0].index if o.rounds else 0
            node = make_id("step", rid, idx) if idx is not None else None
            prev = [
                s for s in c.steps[: c.steps.index(d)] if (s.a_index if tag == "A" else s.b_index) is not None
            ]
            x = lay.pos[node][0] if node in lay.pos else (len(prev) - 0.5)
            mark_divergence(fig, x, None, _divergence_label(tag, idx, other), x_range)
        figs.append(fig)
    return figs[0], figs[1]
