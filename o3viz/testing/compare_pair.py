"""Pairs of traces with a known first divergence, for Compare's tests and benchmark:
``planted_pair(n)`` is a long R1-style import (``o3viz.testing.long_r1``) and a copy of it whose one
episode, in the middle, says something else."""

from __future__ import annotations

import copy

from o3viz.analysis.align import least_steps
from o3viz.analysis.episodes import find_episodes
from o3viz.analysis.outline import build_outline
from o3viz.trace import Trace


def replace_episode(trace: Trace, k: int | None = None, least: int | None = None) -> tuple[Trace, int]:
    """A copy of ``trace`` whose final round's episode ``k`` (the middle one by default; cut with
    ``least`` steps, Compare's cut for two traces this long by default) has other steps; and the
    index of its first step, where the two traces first diverge."""
    n = len(trace.final.steps)
    outline = build_outline(Trace(trace.task, [trace.final]))
    episodes = find_episodes(outline, least or least_steps(n, n))
    ep = episodes[len(episodes) // 2 if k is None else k]
    out = copy.deepcopy(trace)
    for pos in range(ep.lo, ep.hi):  # other text, same length: only this episode differs
        out.final.steps[pos].text = f"Alternatively, try a different route, step {pos}: let x = {pos} + 1."
    return out, out.final.steps[ep.lo].index


def planted_pair(n: int) -> tuple[Trace, Trace, int]:
    """Two ``n``-step R1-style traces that first differ at the returned step index."""
    from o3viz.testing.long_r1 import long_r1_trace

    a = long_r1_trace(n)
    b, at = replace_episode(a)
    return a, b, at
