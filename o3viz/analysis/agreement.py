"""Agreement statistics for step labels: Cohen's κ (two labellers), Krippendorff's α (nominal, any
number of labellers, missing values allowed), precision and recall, each with its n and a 95%
interval. κ and α get a cluster bootstrap over traces (steps of one trace are not independent), a
proportion the Wilson interval (``o3viz.analysis.dataset.wilson``).

>>> round(cohen_kappa(["w", "c", "c", "w"], ["w", "c", "w", "w"]), 3)
0.5
>>> round(krippendorff_alpha([["w", "w"], ["c", "c"], ["c", "w"], ["w", "w", "w"]]), 3)
0.556
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from o3viz.analysis.dataset import wilson

BOOTSTRAP = 1000  # resamples; the interval's ends move by about 0.01 between seeds at n = 300
SEED = 0  # a table printed twice shows the same intervals
MIN_CLUSTERS = 5  # fewer traces than this: no bootstrap interval (it would look sure when it is not)


@dataclass
class Estimate:
    """A statistic with its n (items it is over) and 95% interval (None where it is undefined)."""

    value: float | None
    n: int
    low: float | None = None
    high: float | None = None

    def text(self, digits: int = 2) -> str:
        """For people: ``0.41 [0.30, 0.52]``; an undefined value is ``—``."""
        if self.value is None:
            return "—"
        if self.low is None or self.high is None:
            return f"{self.value:.{digits}f} (no interval: too few traces)"
        return f"{self.value:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


def _codes(*columns: Sequence) -> tuple[list[np.ndarray], int]:
    cats = sorted({v for col in columns for v in col if v is not None}, key=str)
    index = {c: i for i, c in enumerate(cats)}
    return [np.array([index.get(v, -1) for v in col]) for col in columns], len(cats)


def _kappa_weighted(a: np.ndarray, b: np.ndarray, k: int, w: np.ndarray) -> np.ndarray:
    """κ for each row of item weights ``w`` (shape (B, n)); NaN where chance agreement is 1."""
    total = w.sum(axis=1)
    po = (w * (a == b)).sum(axis=1) / total
    pe = np.zeros_like(po)
    for c in range(k):
        pe += ((w * (a == c)).sum(axis=1) / total) * ((w * (b == c)).sum(axis=1) / total)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pe < 1, (po - pe) / (1 - pe), np.nan)


def _cluster_weights(clusters: Sequence, boots: int, seed: int) -> np.ndarray:
    """(boots, n) item weights: how often each item's cluster was drawn in each resample."""
    ids, inverse = np.unique(np.asarray(clusters, dtype=object).astype(str), return_inverse=True)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(ids), size=(boots, len(ids)))
    counts = np.zeros((boots, len(ids)))
    np.add.at(counts, (np.arange(boots)[:, None], draws), 1)
    return counts[:, inverse]


def _interval(samples: np.ndarray) -> tuple[float | None, float | None]:
    ok = samples[np.isfinite(samples)]
    if len(ok) < 0.5 * len(samples) or not len(ok):
        return None, None
    return float(np.quantile(ok, 0.025)), float(np.quantile(ok, 0.975))


def cohen_kappa(a: Sequence, b: Sequence) -> float | None:
    """Cohen's κ of two labellers' labels of the same items (None: no items, or no variation)."""
    if not len(a):
        return None
    (ca, cb), k = _codes(a, b)
    value = _kappa_weighted(ca, cb, k, np.ones((1, len(ca))))[0]
    return None if np.isnan(value) else float(value)


def kappa(a: Sequence, b: Sequence, clusters: Sequence, boots: int = BOOTSTRAP, seed: int = SEED) -> Estimate:
    """Cohen's κ with a cluster-bootstrap interval (``clusters``: each item's trace key)."""
    value = cohen_kappa(a, b)
    if value is None or len(set(map(str, clusters))) < MIN_CLUSTERS:
        return Estimate(value, len(a))
    (ca, cb), k = _codes(a, b)
    low, high = _interval(_kappa_weighted(ca, cb, k, _cluster_weights(clusters, boots, seed)))
    return Estimate(value, len(a), low, high)


def _unit_coincidences(units: Sequence[Sequence]) -> tuple[np.ndarray, int]:
    """Per unit its row of the coincidence matrix (shape (units, k*k)); units with < 2 values: 0."""
    (flat,), k = _codes([v for u in units for v in u])
    out = np.zeros((len(units), max(k, 1) ** 2))
    pos = 0
    for i, u in enumerate(units):
        vals = flat[pos : pos + len(u)]
        pos += len(u)
        vals = vals[vals >= 0]
        m = len(vals)
        if m < 2:
            continue
        counts = np.bincount(vals, minlength=k).astype(float)
        o = (np.outer(counts, counts) - np.diag(counts)) / (m - 1)
        out[i] = o.ravel()
    return out, k


def _alpha_from(o: np.ndarray, k: int) -> np.ndarray:
    """α for each row of summed coincidences ``o`` (shape (B, k*k)); NaN without variation."""
    o = o.reshape(len(o), k, k)
    n_c = o.sum(axis=2)
    n = n_c.sum(axis=1)
    observed = o.sum(axis=(1, 2)) - np.trace(o, axis1=1, axis2=2)
    expected = (n**2 - (n_c**2).sum(axis=1)) / np.maximum(n - 1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, 1 - observed / expected, np.nan)


def krippendorff_alpha(units: Sequence[Sequence]) -> float | None:
    """Krippendorff's α (nominal) over ``units``: per item, the labels it got (any number)."""
    o, k = _unit_coincidences(units)
    if not len(units) or k < 1:
        return None
    value = _alpha_from(o.sum(axis=0, keepdims=True), k)[0]
    return None if np.isnan(value) else float(value)


def alpha(
    units: Sequence[Sequence], clusters: Sequence, boots: int = BOOTSTRAP, seed: int = SEED
) -> Estimate:
    """Krippendorff's α (nominal) with a cluster-bootstrap interval; n counts units with ≥ 2 labels."""
    n = sum(len(u) >= 2 for u in units)
    value = krippendorff_alpha(units)
    if value is None or len(set(map(str, clusters))) < MIN_CLUSTERS:
        return Estimate(value, n)
    o, k = _unit_coincidences(units)
    low, high = _interval(_alpha_from(_cluster_weights(clusters, boots, seed) @ o, k))
    return Estimate(value, n, low, high)


def proportion(k: int, n: int) -> Estimate:
    """k of n with its Wilson interval."""
    if n <= 0:
        return Estimate(None, 0)
    lo, hi = wilson(k, n)
    return Estimate(k / n, n, lo, hi)


def precision_recall(predicted: Sequence[bool], truth: Sequence[bool]) -> tuple[Estimate, Estimate]:
    """Precision and recall of ``predicted`` positives against ``truth``, with Wilson intervals.

    >>> p, r = precision_recall([True, True, False, False], [True, False, True, False])
    >>> (p.value, p.n, r.value, r.n)
    (0.5, 2, 0.5, 2)
    """
    tp = sum(p and t for p, t in zip(predicted, truth, strict=True))
    return proportion(tp, sum(map(bool, predicted))), proportion(tp, sum(map(bool, truth)))
