"""The statistics of a paired comparison (two systems on the same questions), without scipy: the
exact McNemar test, the Agresti–Min interval for a paired difference of proportions, and the
Student-t interval for a mean paired difference.

Why these: McNemar's exact test conditions on the discordant pairs, so it is valid at any n; the
Agresti–Min interval (add ½ to each cell of the 2×2 table, then Wald) keeps its 95% coverage down to
small n where the plain Wald interval does not (Agresti & Min 2005, Statistics in Medicine 24:729).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

Z975 = 1.959963984540054
SMALL_N = 1000  # trials up to which the binomial tail is summed upward from 2**-n (a normal float)
TAIL_RTOL = 1e-17  # the binomial tail's sum stops once a term adds less than this share of it
# Student t 0.975 quantiles for 1..30 degrees of freedom (any statistics table)
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
    2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
    2.045, 2.042,
)  # fmt: skip


@dataclass
class Table2x2:
    """The paired outcomes of n questions graded under both A and B."""

    both: int = 0  # A right and B right
    a_only: int = 0  # A right, B wrong
    b_only: int = 0  # A wrong, B right
    neither: int = 0  # both wrong

    @property
    def n(self) -> int:
        return self.both + self.a_only + self.b_only + self.neither

    @property
    def discordant(self) -> int:
        return self.a_only + self.b_only


def t975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (table to 30, then the
    Cornish–Fisher expansion, within 1e-3 of the exact value).

    >>> t975(10), round(t975(100), 3)
    (2.228, 1.984)
    """
    if df < 1:
        return math.nan
    if df <= len(_T975):
        return _T975[df - 1]
    z = Z975
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """McNemar's exact two-sided p: the discordant pairs as Binomial(a_only + b_only, ½), twice the
    smaller tail, at most 1 (1.0 when there are no discordant pairs). In floats (``binom_tail_half``),
    never big integers, so it stays cheap at any n a dataset can hold.

    >>> mcnemar_exact(1, 9)  # 2 * (1 + 10) / 2**10
    0.021484375
    """
    n, k = a_only + b_only, min(a_only, b_only)
    if n == 0 or 2 * k + 1 >= n:  # the smaller tail holds half the mass or more
        return 1.0
    return min(1.0, 2.0 * binom_tail_half(k, n))


def binom_tail_half(k: int, n: int) -> float:
    """P(X ≤ k) for X ~ Binomial(n, ½), with k < n / 2, in floats only.

    Up to ``SMALL_N`` trials 2⁻ⁿ and every C(n, i) are ordinary floats, so the terms are summed
    upward from 2⁻ⁿ (exact while C(n, i) < 2⁵³, as in a hand computation). Beyond, the last term
    C(n, k) / 2ⁿ comes from ``lgamma`` and the earlier ones by the ratio i / (n − i + 1), until they
    stop counting: relative error under 1e-10 (lgamma of a large n), and 0.0 once the tail underflows.

    >>> binom_tail_half(1, 10) == 11 / 1024
    True
    """
    if n <= SMALL_N:
        term = total = math.ldexp(1.0, -n)
        for i in range(k):
            term = term * (n - i) / (i + 1)  # C(n, i + 1) / 2ⁿ; multiplied first, so exact when it can be
            total += term
        return total
    log_last = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) - n * math.log(2)
    total = term = 1.0  # in units of the last term, so nothing underflows before the end
    for i in range(k, 0, -1):
        term *= i / (n - i + 1)
        total += term
        if term < total * TAIL_RTOL:  # the ratios only shrink from here (k < n / 2)
            break
    return math.exp(log_last) * total


def mcnemar_chi2(a_only: int, b_only: int) -> float:
    """McNemar's statistic without continuity correction, (b − c)² / (b + c) (nan with no discordant
    pairs): what textbooks print beside their tables."""
    n = a_only + b_only
    return (a_only - b_only) ** 2 / n if n else math.nan


def paired_difference(t: Table2x2, z: float = Z975) -> tuple[float, float, float] | None:
    """Accuracy of B minus accuracy of A over the paired questions and its Agresti–Min 95%
    interval, ``(difference, lo, hi)``; None for no pairs.

    >>> [round(v, 3) for v in paired_difference(Table2x2(both=5, a_only=1, b_only=4, neither=0))]
    [0.3, -0.124, 0.624]
    """
    n = t.n
    if n == 0:
        return None
    diff = (t.b_only - t.a_only) / n
    # add 1/2 to every cell (n grows by 2), then the Wald interval of the adjusted difference
    b, c, m = t.a_only + 0.5, t.b_only + 0.5, n + 2.0
    d = (c - b) / m
    se = math.sqrt(max(((b + c) - (c - b) ** 2 / m) / m**2, 0.0))
    return diff, max(-1.0, d - z * se), min(1.0, d + z * se)


def mean_difference(diffs: np.ndarray) -> tuple[float, float, float] | None:
    """The mean of paired differences ``diffs`` (B − A, one per question; NaNs dropped) and its
    Student-t 95% interval, ``(mean, lo, hi)``; None under 2 values.

    >>> [round(v, 3) for v in mean_difference(np.array([1.0, 2.0, 3.0]))]
    [2.0, -0.484, 4.484]
    """
    x = np.asarray(diffs, dtype=float)
    x = x[~np.isnan(x)]
    if len(x) < 2:
        return None
    mean = float(x.mean())
    half = t975(len(x) - 1) * float(x.std(ddof=1)) / math.sqrt(len(x))
    return mean, mean - half, mean + half


def table_of(ca: np.ndarray, cb: np.ndarray) -> Table2x2:
    """The 2×2 table of two 1/0/NaN arrays (pairs with a NaN on either side left out)."""
    ok = ~(np.isnan(ca) | np.isnan(cb))
    ca, cb = ca[ok] == 1, cb[ok] == 1
    return Table2x2(
        both=int((ca & cb).sum()),
        a_only=int((ca & ~cb).sum()),
        b_only=int((~ca & cb).sum()),
        neither=int((~ca & ~cb).sum()),
    )
