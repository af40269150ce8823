"""Intervals for proportions, in one place: the Wilson score interval of one proportion and
Newcombe's hybrid score interval of the difference of two. Pure Python, so any layer may read them
without pulling in what the analyses beside them need (the importance package loads torch).

>>> [round(v, 3) for v in wilson(0, 4, 0.95)]
[0.0, 0.49]
>>> [round(v, 3) for v in wilson_z(2, 2, 1.96)]
[0.342, 1.0]
"""

from __future__ import annotations

import math
from statistics import NormalDist

__all__ = ["wilson", "wilson_difference", "wilson_z", "z_of"]


def z_of(level: float) -> float:
    """The two-sided normal quantile of a coverage ``level`` (1.96 for 0.95)."""
    return NormalDist().inv_cdf((1 + level) / 2)


def wilson_z(x: int, n: int, z: float) -> tuple[float, float]:
    """The Wilson score interval of ``x / n`` (n > 0) at the normal quantile ``z``."""
    p, z2 = x / n, z * z / n
    centre, half = (p + z2 / 2) / (1 + z2), z / (1 + z2) * math.sqrt(p * (1 - p) / n + z2 / (4 * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def wilson(x: int, n: int, level: float) -> tuple[float, float]:
    """The Wilson score interval of ``x / n`` (n > 0) at coverage ``level``."""
    return wilson_z(x, n, z_of(level))


def wilson_difference(x1: int, n1: int, x2: int, n2: int, level: float) -> tuple[float | None, float | None]:
    """Newcombe's hybrid score interval of ``x1/n1 - x2/n2`` (his method 10): each side's Wilson
    interval, combined. It always holds the estimate, and is never of zero width; (None, None)
    where a side has no trials.

    >>> lo, hi = wilson_difference(4, 4, 4, 4, 0.95)
    >>> lo < 0.0 < hi
    True
    """
    if not n1 or not n2:
        return None, None
    (l1, u1), (l2, u2) = wilson(x1, n1, level), wilson(x2, n2, level)
    p1, p2 = x1 / n1, x2 / n2
    d = p1 - p2
    lo = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    hi = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return max(-1.0, lo), min(1.0, hi)
