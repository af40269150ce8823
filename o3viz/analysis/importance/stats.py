"""How far a step-importance score can be trusted: bootstrap intervals and finite-sample noise
floors for resampling scores, the trivial baselines every method is compared with (position,
length, headroom), and rank statistics (Spearman, partial Spearman, Kendall's W).

- ``wilson_difference``: for an accuracy change, Newcombe's hybrid score interval (Wilson intervals
  of the two accuracies, combined); it always holds the estimate and has positive width whenever
  both samples have a rollout;
- ``interval``: for any other measure (the KL), a symmetric bootstrap interval, the estimate ± the
  ``level`` quantile of how far the bootstrap replicates fall from it: it always holds the
  estimate (a percentile interval need not: add-one smoothing biases resampled KLs), and has zero
  width only when no resample of the rollouts moves the score;
- ``noise_floor``: a permutation floor for one step: the mean |measure| after the two samples the
  step's score compares are pooled and split again at random into groups of the same sizes (what
  the score reads when the step made no difference); it depends on that step's rollouts, so it
  varies along a trace; a score clears its floor when it is above it;
- ``headroom``: the entropy (nats) of the answers sampled from the prefix before a step; with only
  an accuracy, the binary entropy of that accuracy.

>>> round(binary_entropy(0.5), 3)
0.693
>>> entropy(["4", "4", "5", "5"]) == binary_entropy(0.5)
True
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from o3viz.analysis import proportions

Answers = Sequence[str | None]
Measure = Callable[[Answers, Answers], float | None]  # (kept, other) -> score
LEVEL = 0.9  # bootstrap interval coverage
BOOTSTRAPS = 200  # resamples per interval
SPLITS = 32  # random relabellings averaged for a noise floor


def entropy(answers: Answers) -> float | None:
    """Entropy (nats) of the answers' empirical distribution (None counts as one answer)."""
    if not answers:
        return None
    n = len(answers)
    return 0.0 - float(sum(c / n * math.log(c / n) for c in Counter(answers).values()))


def binary_entropy(p: float | None) -> float | None:
    """Entropy (nats) of a coin with P(heads) = ``p``."""
    if p is None or not math.isfinite(p):
        return None
    p = min(max(p, 0.0), 1.0)
    return 0.0 - float(sum(q * math.log(q) for q in (p, 1 - p) if q > 0))


def wilson(x: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Wilson score interval of a proportion ``x / n`` (n > 0): ``o3viz.analysis.proportions``'s,
    at this module's coverage.

    >>> [round(v, 3) for v in wilson(0, 4)]
    [0.0, 0.403]
    """
    return proportions.wilson(x, n, level)


def wilson_difference(
    x1: int, n1: int, x2: int, n2: int, level: float = LEVEL
) -> tuple[float | None, float | None]:
    """Newcombe's hybrid score interval of ``x1/n1 - x2/n2`` (``o3viz.analysis.proportions``), at
    this module's coverage.

    >>> lo, hi = wilson_difference(4, 4, 4, 4)
    >>> lo < 0.0 < hi
    True
    """
    return proportions.wilson_difference(x1, n1, x2, n2, level)


def interval(
    measure: Measure,
    kept: Answers,
    other: Answers,
    level: float = LEVEL,
    seed: int = 0,
    lowest: float | None = None,
) -> tuple[float | None, float | None]:
    """A symmetric bootstrap interval of ``measure(kept, other)``, both samples resampled: the
    estimate ± the ``level`` quantile of |replicate − estimate| (clipped at ``lowest``, e.g. 0 for
    a KL). It always holds the estimate."""
    est = measure(kept, other) if kept and other else None
    if est is None:
        return None, None
    rng = np.random.default_rng(seed)
    dev = []
    for _ in range(BOOTSTRAPS):
        a = [kept[i] for i in rng.integers(0, len(kept), len(kept))]
        b = [other[i] for i in rng.integers(0, len(other), len(other))]
        v = measure(a, b)
        if v is not None:
            dev.append(abs(v - est))
    half = float(np.quantile(dev, level)) if dev else 0.0
    lo = est - half if lowest is None else max(lowest, est - half)
    return float(lo), float(est + half)


def noise_floor(measure: Measure, kept: Answers, other: Answers, seed: int = 0) -> float | None:
    """A permutation floor: the mean |measure| after ``kept`` and ``other`` are pooled and split at
    random into groups of their sizes, what the score reads when the step made no difference
    (None where either sample is empty).

    >>> noise_floor(lambda a, b: float(set(a) != set(b)), ["5"] * 4, ["5"] * 3)
    0.0
    """
    if not kept or not other:
        return None
    rng = np.random.default_rng(seed)
    pool, n = list(kept) + list(other), len(kept)
    vals = []
    for _ in range(SPLITS):
        order = rng.permutation(len(pool))
        v = measure([pool[i] for i in order[:n]], [pool[i] for i in order[n:]])
        if v is not None:
            vals.append(abs(v))
    return float(np.mean(vals)) if vals else None


def clears(score: float | None, floor: float | None) -> float | None:
    """1.0 where ``score`` is above ``floor``, 0.0 where not, None where either is missing."""
    if score is None or floor is None:
        return None
    return 1.0 if score > floor else 0.0


def ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks (1-based, ties share their mean rank).

    >>> ranks(np.array([3.0, 1.0, 3.0])).tolist()
    [2.5, 1.0, 2.5]
    """
    x = np.asarray(x, float)
    _, inv, counts = np.unique(x, return_inverse=True, return_counts=True)
    last = np.cumsum(counts)  # 1-based rank of each distinct value's last copy
    return (last - (counts - 1) / 2.0)[inv]


def spearman(a, b) -> float | None:
    """Spearman's ρ over the pairs where both are finite (None under 3 pairs or a constant side).

    >>> spearman([1, 2, 3, 4], [10, 20, 30, 45])
    1.0
    """
    a, b = np.asarray(a, float), np.asarray(b, float)
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 3 or np.std(a[ok]) == 0 or np.std(b[ok]) == 0:
        return None
    return float(np.corrcoef(ranks(a[ok]), ranks(b[ok]))[0, 1])


def partial_spearman(a, b, controls: Sequence) -> float | None:
    """Spearman's ρ of ``a`` and ``b`` given ``controls``: the correlation of the residuals of
    their ranks after a least-squares fit on the controls' ranks (rows with any non-finite value
    are left out)."""
    cols = [np.asarray(c, float) for c in (a, b, *controls)]
    ok = np.logical_and.reduce([np.isfinite(c) for c in cols])
    if ok.sum() < len(controls) + 3:
        return None
    r = [ranks(c[ok]) for c in cols]
    x = np.column_stack([np.ones(ok.sum()), *r[2:]])
    res = [v - x @ np.linalg.lstsq(x, v, rcond=None)[0] for v in r[:2]]
    if np.std(res[0]) < 1e-12 or np.std(res[1]) < 1e-12:
        return None
    return float(np.corrcoef(res[0], res[1])[0, 1])


def kendall_w(columns: Sequence) -> float | None:
    """Kendall's coefficient of concordance of m raters over the n items all of them scored
    (1 = every rater ranks the items alike, 0 = no agreement), corrected for ties.

    >>> kendall_w([[1, 2, 3], [1, 2, 3]])
    1.0
    """
    cols = [np.asarray(c, float) for c in columns]
    if len(cols) < 2:
        return None
    ok = np.logical_and.reduce([np.isfinite(c) for c in cols])
    n, m = int(ok.sum()), len(cols)
    if n < 3:
        return None
    total = np.sum([ranks(c[ok]) for c in cols], axis=0)
    s = float(((total - total.mean()) ** 2).sum())
    ties = sum(float((t**3 - t).sum()) for c in cols for t in [np.unique(c[ok], return_counts=True)[1]])
    denom = m**2 * (n**3 - n) - m * ties
    return 12 * s / denom if denom > 0 else None


def bootstrap_over_groups(
    stat: Callable[[list], float | None], groups: list, level: float = LEVEL, seed: int = 0, n: int = 500
) -> tuple[float | None, float | None]:
    """A percentile interval of ``stat(groups)`` with the groups (e.g. problems) resampled."""
    if len(groups) < 2:
        return None, None
    rng = np.random.default_rng(seed)
    vals = [stat([groups[i] for i in rng.integers(0, len(groups), len(groups))]) for _ in range(n)]
    vals = [v for v in vals if v is not None and math.isfinite(v)]
    if not vals:
        return None, None
    lo, hi = np.quantile(vals, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)
