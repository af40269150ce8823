"""The overview of a long trace: its episodes (``o3viz.analysis.episodes``) on the reasoning map's
lanes, so that 2,000 steps read as about fifty marks of the same colours. Each episode is a bar over
its steps in the lane of its dominant step type (a thinner bar in the lane of its second type, where
that holds a quarter of its steps); above it, why it began (◀ backtrack, ◆ self-check, ? doubt); in
the checks lane, ✗ where a check failed and ■ where checks passed; in the answer lane, the answers
episodes reached and the final answer's star. Backtracks that jump between episodes are bundled
into one arc per pair of episodes, the strongest few only. The first wrong step and the selected
step are ringed, and the view is padded so that no mark is cut at the edges.

``strip=True`` draws the same episodes on one row: the minimap above a zoomed-in episode.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import plotly.graph_objects as go

from o3viz.analysis.episodes import Episode
from o3viz.analysis.outline import Outline
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
from o3viz.figures.map_frame import add_round_bands, answer_label, lane_ticks
from o3viz.figures.map_layout import ANSWER, CHECKS, MapLayout, map_layout

ARCS_SHOWN = 12  # bundled backtrack arcs drawn at most (the strongest)
EDGE_PX = 22  # room kept free at each edge of the plot, so a star or a ring is never cut
_TURN = {"backtrack": ("triangle-left", "◀ backtrack"), "self_check": ("diamond", "◆ self-check")}
_TURN |= {"doubt": ("circle-open", "? doubt"), "start": ("circle-open", "start")}
TURN_COLOR = STEP_TYPE_COLORS["uncertainty_management"]


def episode_span(lay: MapLayout, outline: Outline, ep: Episode) -> tuple[float, float]:
    """Where episode ``ep`` lies on the map's x axis (``lay``): from half a step before its first
    step to half a step after its last."""
    steps = next(r for r in outline.rounds if r.index == ep.round).steps
    return lay.pos[steps[ep.lo].id][0] - 0.5, lay.pos[steps[ep.hi - 1].id][0] + 0.5


def _hover(ep: Episode, first_text: str) -> str:
    mix = ", ".join(f"{STEP_TYPE_LABELS.get(t, t)} {n}" for t, n in ep.types[:4])
    flags = [
        f"{ep.backtracks} backtrack{'s' if ep.backtracks != 1 else ''}" if ep.backtracks else "",
        f"{ep.self_checks} self-check{'s' if ep.self_checks != 1 else ''}" if ep.self_checks else "",
        f"{ep.wrong} failed check{'s' if ep.wrong != 1 else ''}" if ep.wrong else "",
        f"reached {clip_label(ep.answer, 40)}" if ep.answer else "",
    ]
    return "<br>".join(
        [
            f"<b>Episode {ep.index}</b> · steps {ep.start}–{ep.end} ({ep.length}) · opens with "
            f"{_TURN[ep.opens_with][1]}",
            esc(clip_label(readable(first_text), 120)),
            esc(mix),
            esc(" · ".join(f for f in flags if f) or "no backtrack, self-check or failed check"),
            "<i>click to open its steps</i>",
        ]
    )


def _bars(outline, episodes, lay, row, spans, strip: bool, open_index) -> list[go.Bar]:
    first = {
        ep.index: next(r for r in outline.rounds if r.index == ep.round).steps[ep.lo].text for ep in episodes
    }
    out = []
    for level, width in ((0, 0.62), (1, 0.3)):
        eps = [e for e in episodes if len(e.types) > level and (level == 0 or e.types[1][1] * 4 >= e.length)]
        if not eps or (strip and level):
            continue
        out.append(
            go.Bar(
                orientation="h",
                base=[spans[e.index][0] for e in eps],
                x=[spans[e.index][1] - spans[e.index][0] for e in eps],
                y=[0.0 if strip else float(row.get(e.types[level][0], 0)) for e in eps],
                width=0.7 if strip else width,
                marker={
                    "color": [STEP_TYPE_COLORS.get(e.types[level][0], "#BBBBBB") for e in eps],
                    "line": {
                        "color": ["#111827" if e.index == open_index else "white" for e in eps],
                        "width": [3 if e.index == open_index else 1 for e in eps],
                    },
                    "opacity": 1.0 if level == 0 else 0.55,
                },
                customdata=[e.id for e in eps],
                hovertext=[_hover(e, first[e.index]) for e in eps],
                hovertemplate="%{hovertext}<extra></extra>",
                name="episode" if level == 0 else "episode: second type",
            )
        )
    return out


def _lane_counts(outline: Outline, episodes, lane: LaneVerdicts | None) -> dict[int, tuple[int, int]]:
    """(wrong, ok) of each episode: its failed and passed checks, or ``lane``'s wrong and ok verdicts
    on its steps when a verifier is chosen."""
    if lane is None:
        return {e.index: (e.wrong, e.passed) for e in episodes}
    steps = {r.index: r.steps for r in outline.rounds}
    out = {}
    for e in episodes:
        said = [lane.steps.get(s.id, ("", None))[0] for s in steps[e.round][e.lo : e.hi]]
        out[e.index] = (said.count("wrong"), said.count("ok"))
    return out


def _marks(outline, episodes, spans, row, strip: bool, lane: LaneVerdicts | None = None) -> list[go.Scatter]:
    """Why each episode began (above the lanes) and its checks (in the checks lane): the checks, or
    the chosen verifier's verdicts (``lane``)."""
    mid = {e.index: sum(spans[e.index]) / 2 for e in episodes}
    turns = [e for e in episodes if e.opens_with in ("backtrack", "self_check")]  # doubt shows in its lane
    out = [
        go.Scatter(
            x=[spans[e.index][0] + 0.5 for e in turns],
            y=[-0.5 if strip else -0.55] * len(turns),
            mode="markers",
            marker={"symbol": [_TURN[e.opens_with][0] for e in turns], "size": 8, "color": TURN_COLOR},
            hovertext=[f"episode {e.index} opens with {_TURN[e.opens_with][1]}" for e in turns],
            hovertemplate="%{hovertext}<extra></extra>",
            customdata=[e.id for e in turns],
            name="turns",
        )
    ]
    counts = _lane_counts(outline, episodes, lane)
    who = f"{lane.verifier}: " if lane else ""
    bad, good = ("wrong", "ok") if lane else ("failed", "passed")
    for test, symbol, verdict, name in (
        (lambda w, p: w > 0, "x", "fail", f"episode: {who}a step {bad}" if lane else "episode: a check failed"),
        (lambda w, p: w == 0 and p > 0, "square", "pass", f"episode: {who}{good}" if lane else "episode: checks passed"),
    ):  # fmt: skip
        eps = [e for e in episodes if test(*counts[e.index])]
        if eps and not strip:
            out.append(
                go.Scatter(
                    x=[mid[e.index] for e in eps],
                    y=[float(row[CHECKS])] * len(eps),
                    mode="markers",
                    marker={"symbol": symbol, "size": 10, "color": VERDICT_COLORS[verdict]},
                    hovertext=[
                        esc(
                            f"episode {e.index}: {who}{counts[e.index][0]} {bad}, {counts[e.index][1]} {good}"
                        )
                        + ("" if lane else " checks")
                        for e in eps
                    ],
                    hovertemplate="%{hovertext}<extra></extra>",
                    customdata=[e.id for e in eps],
                    name=name,
                    meta=f"verdicts:{lane.verifier}" if lane else None,
                )
            )
    return out


def _bundled_arcs(outline: Outline, episodes, spans, row, strip: bool) -> list[go.Scatter]:
    """One arc per (episode, the earlier episode it backtracks into), the strongest ``ARCS_SHOWN``."""
    where = {}
    for e in episodes:
        steps = next(r for r in outline.rounds if r.index == e.round).steps[e.lo : e.hi]
        where.update({(s.round, s.index): e.index for s in steps})
    pairs = Counter()
    for s in outline.steps:
        a, b = where.get((s.round, s.parent)), where.get((s.round, s.index))
        if s.kind == "backtrack" and a is not None and b is not None and a != b:
            pairs[(a, b)] += 1
    xs, ys = [], []
    y0 = -0.5 if strip else -0.55
    for (a, b), _n in pairs.most_common(ARCS_SHOWN):
        x0, x1 = sum(spans[a]) / 2, spans[b][0] + 0.5
        t = np.linspace(0.0, 1.0, 9)
        lift = 0.35 if strip else 0.5
        xs += [*((1 - t) ** 2 * x0 + 2 * (1 - t) * t * (x0 + x1) / 2 + t**2 * x1), np.nan]
        ys += [*((1 - t) ** 2 * y0 + 2 * (1 - t) * t * (y0 - lift) + t**2 * y0), np.nan]
    if not xs:
        return []
    return [
        go.Scatter(
            x=xs, y=ys, mode="lines", line={"color": TURN_COLOR, "width": 1.5}, hoverinfo="skip", name="arcs"
        )
    ]


def _always_visible(outline, lay, row, strip, selected, first_wrong) -> list[go.Scatter]:
    """The final answer (star and label), the first wrong step and the selection, ringed."""
    out = []
    final = outline.rounds[-1] if outline.rounds else None
    right = lay.rounds[0][1] + 0.6 * (lay.rounds[-1][2] - lay.rounds[0][1]) if lay.rounds else 0.0
    if final is not None and final.answer_id in lay.pos:
        x = lay.pos[final.answer_id][0]
        y = 0.0 if strip else float(row[ANSWER])
        color = VERDICT_COLORS.get(outline.verdict or "", "#64748b")
        out += (
            []
            if strip
            else [  # the strip is too small for a label: the page header has it
                go.Scatter(
                    x=[x],
                    y=[y + 0.42],
                    mode="text",
                    text=[esc(answer_label(outline)) + " "],
                    textposition="middle left",
                    textfont={"size": 13, "color": color},
                    hoverinfo="skip",
                    name="final answer",
                    meta="answer-label",
                )
            ]
        )
        out.append(
            go.Scatter(
                x=[x],
                y=[y],
                mode="markers",
                marker={
                    "size": 18,
                    "symbol": "star",
                    "color": color,
                    "line": {"width": 1, "color": "#1f2937"},
                },
                customdata=[final.answer_id],
                hovertext=[esc(f"final answer: {clip_label(outline.answer or '(none)', 120)}")],
                hovertemplate="%{hovertext}<extra></extra>",
                name="answer",
            )
        )
    for node, color, name in (
        (first_wrong, VERDICT_COLORS["fail"], "first wrong step"),
        (selected, "#111827", "selected"),
    ):
        step = outline.find(node) if node else None
        if node not in lay.pos or getattr(step, "type", None) is None:
            continue
        x = lay.pos[node][0]
        out.append(
            go.Scatter(
                x=[x],
                y=[0.0 if strip else float(row.get(step.type, 0))],
                mode="markers" if strip else "markers+text",
                marker={
                    "size": 16 if strip else 20,
                    "color": "rgba(0,0,0,0)",
                    "line": {"width": 3, "color": color},
                },
                text=[f"{'first wrong: ' if name != 'selected' else ''}step {step.index}"],
                textposition="top left" if x > right else "top right",  # never past the edge
                textfont={"size": 11, "color": color},
                customdata=[node],
                hovertext=[esc(f"{name}: step {step.index} · {clip_label(readable(step.text), 100)}")],
                hovertemplate="%{hovertext}<extra></extra>",
                name=name,
            )
        )
    return out


def episode_map_figure(
    outline: Outline,
    episodes: list[Episode],
    *,
    selected: str | None = None,
    first_wrong: str | None = None,
    open_episode: int | None = None,
    strip: bool = False,
    height: int | None = None,
    plot_px: int = 400,  # about the map's plot width at 1280 px
    verdicts: LaneVerdicts | None = None,
    answer_lane: AnswerLane | None = None,
) -> go.Figure:
    """The episodes of ``outline`` (see the module docstring). ``customdata`` of every bar is
    ``episode:N``, of the rings and the star their node id (for clicks). ``verdicts`` (one
    verifier's) mark the checks lane instead of the checks, and name the lane. ``answer_lane``
    (``o3viz.figures.answer_lane``) adds the running answer as a row under the lanes, on the same
    x axis (not on the strip; the figure grows by ``LANE_PX`` unless ``height`` is given)."""
    lay = map_layout(outline)
    row = {lane: i for i, lane in enumerate(lay.lanes)}
    spans = {e.index: episode_span(lay, outline, e) for e in episodes}
    fig = go.Figure(_bundled_arcs(outline, episodes, spans, row, strip))
    fig.add_traces(_bars(outline, episodes, lay, row, spans, strip, open_episode))
    fig.add_traces(_marks(outline, episodes, spans, row, strip, verdicts))
    fig.add_traces(_always_visible(outline, lay, row, strip, selected, first_wrong))
    if not strip:
        add_round_bands(fig, outline, lay)
    n = len(outline.steps)
    x0, x1 = lay.rounds[0][1] if lay.rounds else -1.0, lay.rounds[-1][2] if lay.rounds else 1.0
    pad = (x1 - x0) * EDGE_PX / plot_px  # in step units: so many pixels at each edge
    title = (
        f"Where did the reasoning turn? {len(episodes)} episodes over {n} steps"
        if not strip
        else "Whole trace (click an episode to open it)"
    )
    sub = (  # two short lines: a longer one is cut at 1280 px
        "bar = one episode, in the lane of its main step type · ◀ backtrack · ◆ self-check"
        "<br>✗ a check failed · ■ checks passed · arcs = backtracks to an earlier episode · click a bar"
    )
    if verdicts is not None:
        sub = sub.replace(
            "✗ a check failed · ■ checks passed",
            f"✗ / ■ {esc(clip_label(verdicts.verifier, 20))}: wrong / ok",
        )
    base_layout(
        fig,
        esc(title) if strip else f"{esc(title)}<br><span style='font-size:11px;color:#64748b'>{sub}</span>",
        height=height
        or (
            96
            if strip
            else int(np.clip(70 + 34 * len(lay.lanes), 300, 520)) + (LANE_PX if answer_lane else 0)
        ),
        margin={"l": 10, "r": 10, "t": 26 if strip else 100, "b": 6 if strip else 28},
        showlegend=False,
        dragmode=False if strip else "pan",
        clickmode="event+select",
        hovermode="closest",
        barmode="overlay",
    )
    fig.update_layout(title={"yref": "container", "y": 1, "yanchor": "top", "pad": {"t": 6 if strip else 10}})
    fig.update_xaxes(
        range=[x0 - pad, x1 + pad],
        showticklabels=not strip,
        showgrid=False,
        zeroline=False,
        tickfont={"size": 11, "color": "#64748b"},
        title=None if strip else {"text": "steps in order →", "font": {"size": 11, "color": "#64748b"}},
    )
    fig.update_yaxes(
        range=[0.75, -1.0] if strip else [len(lay.lanes) - 0.2, -0.95],
        tickvals=[] if strip else list(range(len(lay.lanes))),
        ticktext=[] if strip else lane_ticks(lay.lanes, verdicts.label if verdicts else "checks"),
        showticklabels=not strip,
        tickfont={"size": 12},
        showgrid=not strip,
        gridcolor="#e5e7eb",
        zeroline=False,
        automargin=True,
    )
    if answer_lane is not None and not strip:
        add_answer_lane(fig, answer_lane, {k: v[0] for k, v in lay.pos.items()}, size=6.0, changes_only=True)
    return fig


def count_marks(fig: go.Figure) -> int:
    """How many marks ``fig`` draws: a point per marker or bar, a line per line trace."""
    total = 0
    for tr in fig.data:
        mode = getattr(tr, "mode", None) or ""
        n = len(tr.x) if tr.x is not None else 0
        total += 1 if mode == "lines" else n
    return total
