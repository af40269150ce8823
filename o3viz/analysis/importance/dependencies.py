"""Dependency edges from a step × step effect matrix: each step's strongest antecedents.

``matrix[j, i]`` (j > i) is how much step i affects step j (suppression KL, or a counterfactual
effect). Weights are the matrix divided by its largest below-diagonal value, so 1 is the
record's strongest edge and a map's threshold slider works on [0, 1] for every method.
"""

from __future__ import annotations

import numpy as np


def dependencies_from_matrix(
    matrix: np.ndarray, *, min_weight: float = 0.2, per_step: int = 3
) -> list[tuple[int, int, float]]:
    """Edges ``(step, antecedent, weight)``: for each step j, its ``per_step`` antecedents of
    largest effect whose weight is at least ``min_weight``.

    >>> m = np.array([[0, 0, 0], [2.0, 0, 0], [1.0, 0.1, 0]])
    >>> dependencies_from_matrix(m, min_weight=0.2)
    [(1, 0, 1.0), (2, 0, 0.5)]
    """
    m = np.nan_to_num(np.tril(np.asarray(matrix, dtype=np.float64), k=-1).clip(min=0))
    top = float(m.max()) if m.size else 0.0
    if top <= 0:
        return []
    w = m / top
    edges = []
    for j in range(1, w.shape[0]):
        order = np.argsort(-w[j, :j], kind="stable")[:per_step]
        edges += [(j, int(i), round(float(w[j, i]), 4)) for i in order if w[j, i] >= min_weight]
    return edges
