"""The reasoning map's checks lane: the trace's checks, or one verifier's verdicts on its steps
(``o3viz.analysis.verdicts.LaneVerdicts``), as ■ / ✗ / ○ marks in the lane's row. Colours are the
verdict colours of every page: green ok/passed, red wrong/failed, grey unsure/unverifiable."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from o3viz.analysis.outline import BAD, GOOD, Outline
from o3viz.analysis.verdicts import LaneVerdicts
from o3viz.figures._style import VERDICT_COLORS, clip_label, esc, readable
from o3viz.figures.map_layout import CHECKS, MapLayout

_LANE_MARKS = (  # (verdicts, symbol, colour key, what the mark says)
    (("ok",), "square", "pass", "ok"),
    (("wrong",), "x", "fail", "wrong"),
    (("unsure",), "circle-open", "unverifiable", "unsure"),
)


def check_traces(outline: Outline, lay: MapLayout, size: float) -> list[go.Scatter]:
    """The checks that judged steps (under their step) and whole rounds (after its steps): ■ passed,
    ✗ failed, ○ unverifiable; ``customdata`` is the check's id."""
    checks = [c for r in outline.rounds for c in [*(c for s in r.steps for c in s.checks), *r.checks]]
    traces = []
    for verdicts, symbol, name in (
        (GOOD, "square", "check passed"),
        (BAD, "x", "check failed"),
        (("unverifiable",), "circle-open", "check unverifiable"),
    ):
        members = [c for c in checks if c.verdict in verdicts]
        if not members:
            continue
        traces.append(
            go.Scatter(
                x=np.array([lay.pos[c.id][0] for c in members]),
                y=np.array([lay.pos[c.id][1] for c in members]),
                mode="markers",
                marker={
                    "color": [VERDICT_COLORS.get(c.verdict, "#9ca3af") for c in members],
                    "size": max(size * 0.8, 7),
                    "symbol": symbol,
                    "line": {"width": 1.5, "color": VERDICT_COLORS.get(members[0].verdict, "#9ca3af")},
                },
                customdata=np.array([c.id for c in members], dtype=object),
                hovertext=np.array(
                    [esc(clip_label(f"{c.kind} {c.name}: {c.verdict}. {c.message}", 160)) for c in members],
                    dtype=object,
                ),
                hovertemplate="%{hovertext}<extra></extra>",
                name=name,
            )
        )
    return traces


def verdict_traces(outline: Outline, lay: MapLayout, size: float, lane: LaneVerdicts) -> list[go.Scatter]:
    """``lane.verifier``'s verdicts in the checks lane, one mark under each step it judged (■ ok,
    ✗ wrong, ○ unsure); ``customdata`` is the step's id, so a click opens the step and the details
    list every verifier's verdict on it. Three traces whatever the length (2,000 steps stay fast)."""
    y = float(lay.lanes.index(CHECKS))
    who = esc(lane.verifier) + (f" ({esc(lane.kind)})" if lane.kind else "")
    steps = [s for s in outline.steps if s.id in lane.steps and s.id in lay.pos]
    traces = []
    for verdicts, symbol, color, word in _LANE_MARKS:
        members = [s for s in steps if lane.steps[s.id][0] in verdicts]
        if not members:
            continue
        hover = []
        for s in members:
            score = lane.steps[s.id][1]
            hover.append(
                f"<b>{who}</b>: {word}" + (f" · score {score:.2f}" if score is not None else "")
                + f"<br>step {s.index} of round {s.round}: {esc(clip_label(readable(s.text), 100))}"
            )  # fmt: skip
        traces.append(
            go.Scatter(
                x=np.array([lay.pos[s.id][0] for s in members]),
                y=np.full(len(members), y),
                mode="markers",
                marker={
                    "color": VERDICT_COLORS[color],
                    "size": max(size * 0.8, 7),
                    "symbol": symbol,
                    "line": {"width": 1.5, "color": VERDICT_COLORS[color]},
                },
                customdata=np.array([s.id for s in members], dtype=object),
                hovertext=np.array(hover, dtype=object),
                hovertemplate="%{hovertext}<extra></extra>",
                name=f"{lane.verifier}: {word}",
                meta=f"verdicts:{lane.verifier}",
            )
        )
    return traces
