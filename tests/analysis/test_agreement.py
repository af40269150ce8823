"""κ and α against published worked examples, their intervals, and precision/recall counts."""

from __future__ import annotations

import numpy as np
import pytest

from o3viz.analysis.agreement import (
    alpha,
    cohen_kappa,
    kappa,
    krippendorff_alpha,
    precision_recall,
)

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the nominal example: 4 coders,
# 12 units, missing values as None; alpha (nominal) = 0.743
_K = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def test_alpha_matches_krippendorffs_worked_example():
    units = [[c[u] for c in _K if c[u] is not None] for u in range(12)]
    assert krippendorff_alpha(units) == pytest.approx(0.743, abs=5e-4)


def test_kappa_matches_a_hand_computed_table():
    # 20 yes-yes, 5 yes-no, 10 no-yes, 15 no-no: po = 0.7, pe = 0.5, kappa = 0.4 (Wikipedia's example)
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_two_labellers_alpha_is_close_to_kappa_and_both_are_one_when_they_agree():
    a = ["w", "c", "c", "w", "c", "c"] * 5
    assert cohen_kappa(a, a) == 1.0 and krippendorff_alpha([[x, x] for x in a]) == 1.0
    b = a[:-3] + ["w", "w", "w"]
    assert abs(cohen_kappa(a, b) - krippendorff_alpha([[x, y] for x, y in zip(a, b, strict=True)])) < 0.05


def test_no_variation_is_undefined_not_one():
    assert cohen_kappa(["c", "c"], ["c", "c"]) is None
    assert kappa([], [], []).text() == "—"


def test_the_interval_holds_the_value_and_narrows_with_more_traces():
    rng = np.random.default_rng(1)
    truth = rng.integers(0, 2, 400)
    noisy = np.where(rng.random(400) < 0.8, truth, 1 - truth)
    small = kappa(list(truth[:40]), list(noisy[:40]), [i // 4 for i in range(40)])
    big = kappa(list(truth), list(noisy), [i // 4 for i in range(400)])
    for est in (small, big):
        assert est.low <= est.value <= est.high
    assert big.high - big.low < small.high - small.low
    units = [[x, y] for x, y in zip(truth, noisy, strict=True)]
    est = alpha(units, [i // 4 for i in range(400)])
    assert est.n == 400 and est.low <= est.value <= est.high


def test_precision_and_recall_count_the_positives():
    p, r = precision_recall([True, True, True, False], [True, False, False, True])
    assert (p.value, p.n) == (pytest.approx(1 / 3), 3) and (r.value, r.n) == (0.5, 2)
    assert p.low < p.value < p.high


def test_fewer_than_five_traces_get_no_interval_and_say_so():
    est = kappa(["w", "c", "c", "w"], ["w", "c", "w", "w"], ["k1", "k1", "k2", "k2"])
    assert est.value == 0.5 and est.low is None
    assert est.text() == "0.50 (no interval: too few traces)"
