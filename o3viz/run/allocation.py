"""Step-level allocation of attention, the one implementation for captured, enriched (imported)
and synthetic traces.

``step_alloc`` (S, K), K = segments + S: for step s, the attention rows of its tokens (the
all-layer all-head ``mean``) are summed over each prompt segment's keys and over each step's
keys, averaged over the step's tokens and normalised to 1; keys in no segment and no step are
left out. For a capture, steps partition the generated tokens (whitespace between steps belongs to
the step before), so columns t < s are earlier steps, column s is the step attending to itself,
and columns t > s are zero. Pure numpy (no torch), so synthetic traces use it too.
"""

from __future__ import annotations

import numpy as np

from o3viz.trace.parts import Segment, Step


def step_allocation(
    mean: np.ndarray, prompt_len: int, segments: list[Segment], steps: list[Step]
) -> tuple[np.ndarray, list[str]]:
    """(S, K) float32 allocation matrix and its K labels (see the module docstring). ``mean`` is
    (G, C); each step's rows are averaged first (linear, so equal to averaging the sums), one step
    at a time, so a long trace never needs a (G, C) float64 copy."""
    cols, labels = allocation_columns(prompt_len, segments, steps)
    alloc = np.zeros((len(steps), len(cols)), dtype=np.float32)
    for i, st in enumerate(steps):
        if st.token_end <= st.token_start:
            continue
        alloc[i] = allocation_row(mean[st.token_start : st.token_end].astype(np.float32).mean(0), cols)
    return alloc, labels


def allocation_columns(
    prompt_len: int, segments: list[Segment], steps: list[Step]
) -> tuple[list[tuple[int, int]], list[str]]:
    """The K key spans of the allocation (each prompt segment's, then each step's) and their labels."""
    cols = [(s.token_start, s.token_end) for s in segments]
    cols += [(prompt_len + st.token_start, prompt_len + st.token_end) for st in steps]
    return cols, [f"seg {s.index}" for s in segments] + [f"step {st.index}" for st in steps]


def allocation_row(row: np.ndarray, cols: list[tuple[int, int]]) -> np.ndarray:
    """One step's averaged attention row (C,) summed over each key span of ``cols`` and normalised
    to 1 (all zeros stay zeros).

    >>> allocation_row(np.array([1.0, 1.0, 2.0], np.float32), [(0, 1), (1, 3)]).tolist()
    [0.25, 0.75]
    """
    cum = np.concatenate([[0.0], np.cumsum(row, dtype=np.float64)])
    vec = np.array([cum[min(b, len(row))] - cum[min(a, len(row))] for a, b in cols])
    total = vec.sum()
    return vec / total if total > 0 else vec
