"""Where the reasoning map puts each node: lanes (step types, then checks and answer) on the y axis,
steps in order on the x axis, rounds left to right with a gap. Pure layout, no plotly."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from o3viz.analysis.outline import Outline

CHECKS, ANSWER = "checks", "answer"
ROUND_GAP = 1.6


@dataclass
class MapLayout:
    """Where each node sits: ``x`` in step units (rounds left to right), ``y`` a lane index."""

    lanes: list[str]
    pos: dict[str, tuple[float, float]] = field(default_factory=dict)
    rounds: list[tuple[str, float, float]] = field(default_factory=list)  # (round id, x0, x1)
    width: float = 1.0


def map_layout(
    outline: Outline, lanes: list[str] | None = None, x_of: dict[str, float] | None = None
) -> MapLayout:
    """Lanes (the trace's step types, then checks and answer) and a position for every node.
    ``x_of`` pins steps to given x positions (Compare lines up aligned steps of two traces)."""
    lanes = lanes or [*outline.types(), CHECKS, ANSWER]
    row = {lane: i for i, lane in enumerate(lanes)}
    lay, x = MapLayout(lanes), 0.0
    for r in outline.rounds:
        x0 = x
        for s in r.steps:
            x = max(x, x_of.get(s.id, x)) if x_of else x
            lay.pos[s.id] = (x, float(row.get(s.type, row.get("untyped", 0))))
            spread = np.linspace(-0.3, 0.3, len(s.checks)) if len(s.checks) > 1 else [0.0]
            for c, dx in zip(s.checks, spread, strict=False):
                lay.pos[c.id] = (x + float(dx), float(row[CHECKS]))
            x += 1.0
        for k, c in enumerate(r.checks):  # checks of the whole round (tests, the answer) follow its
            lay.pos[c.id] = (
                x + 0.5 * (k // 2),
                float(row[CHECKS]) + (0.2 if k % 2 else -0.2),
            )  # steps, two rows
        x += 0.5 * max((len(r.checks) - 1) // 2, 0) + (0.8 if r.steps else 0.0)
        lay.pos[r.answer_id] = (x, float(row[ANSWER]))
        lay.pos[r.id] = (x0, -0.5)
        lay.rounds.append((r.id, x0 - 0.5, x + 0.5))
        x += ROUND_GAP
    lay.width = max(x - ROUND_GAP, 1.0)
    return lay


@dataclass(frozen=True)
class Fork:
    """A branch leaving step ``step`` (a node id, ``step:R:I``): its label, answer and verdict."""

    step: str
    kind: str  # edit | resample
    label: str = ""
    answer: str | None = None
    verdict: str | None = None


FORK_DX, FORK_DY = 0.9, 0.42  # a fork lane's run and rise, in step units and lanes


def fork_ends(lay: MapLayout, forks: list[Fork]) -> list[tuple[Fork, float, float, float, float]]:
    """(fork, x0, y0, x1, y1) of each fork lane: from its step, down to the right; forks of one
    step fan out one below the other. Forks of steps the map does not show are left out."""
    out, seen = [], {}
    for f in forks:
        if f.step not in lay.pos:
            continue
        x0, y0 = lay.pos[f.step]
        k = seen[f.step] = seen.get(f.step, -1) + 1
        out.append((f, x0, y0, x0 + FORK_DX, y0 + FORK_DY * (k + 1)))
    return out
