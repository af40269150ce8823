"""Budgeted adaptive resampling: sequential stopping, sparse-then-fill, the budget, and that it
draws a subset of the same rollouts a fixed-K run draws."""

from __future__ import annotations

import pytest

from o3viz.analysis.importance.adaptive import Adaptive, Budget, collect_adaptive, wilson_width
from o3viz.analysis.importance.resample import collect_rollouts, rollout_answer
from o3viz.clients import RolloutCache, Sampling
from o3viz.errors import UsageError

PRE = [f"p{i} " for i in range(10)]  # 10 prefixes; the answer flips from 1 to 2 after prefix 5


class Flip:
    """A backend whose answer is decided by the prefix: 'answer is 1' before p6, else 'answer is 2';
    prefix p5 is undecided (alternates)."""

    name = "flip"

    def __init__(self):
        self.calls = 0

    def complete(self, prompt, k, sampling, first=0):
        self.calls += k
        i = int(prompt.split("p")[-1].strip())
        if i == 5:
            return [f"The answer is {1 + (first + j) % 2}." for j in range(k)]
        return [f"The answer is {1 if i < 6 else 2}." for _ in range(k)]


def test_a_decided_prefix_stops_early_and_an_undecided_one_samples_to_k_max(tmp_path):
    assert wilson_width(4, 4) < 0.5 < wilson_width(2, 4)
    run = collect_adaptive(
        Flip(), "", PRE, Sampling(max_tokens=4), RolloutCache(tmp_path), rollout_answer,
        ref="1", plan=Adaptive(k_min=2, k_max=8, stride=3, tol=0.5),
    )  # fmt: skip
    n = [0 if r is None else len(r) for r in run.rollouts]
    assert n[0] == 4 and n[5] == 8  # decided: two rounds of k_min; undecided: k_max
    assert n[1] == n[2] == 0  # block 0..3 did not move: not filled in
    assert n[4] > 0 and n[5] > 0  # block 3..6 moved (1 -> 2): filled in
    assert run.used == sum(n) < 8 * len(PRE)


def test_the_budget_stops_the_run_and_says_so(tmp_path):
    backend = Flip()
    run = collect_adaptive(
        backend, "", PRE, Sampling(max_tokens=4), RolloutCache(tmp_path), rollout_answer,
        ref="1", budget=Budget(rollouts=7),
    )  # fmt: skip
    assert run.used == 7 == backend.calls and run.stopped == "budget"


def test_adaptive_rollouts_are_the_first_of_the_fixed_runs_rollouts(tmp_path):
    cache, sampling = RolloutCache(tmp_path), Sampling(max_tokens=4)
    fixed = collect_rollouts(Flip(), "", PRE, 8, sampling, cache)
    again = Flip()
    run = collect_adaptive(again, "", PRE, sampling, cache, rollout_answer, ref="1")
    assert again.calls == 0  # everything came from the fixed run's cache
    assert all(r is None or r == f[: len(r)] for r, f in zip(run.rollouts, fixed, strict=True))


def test_a_budget_that_is_neither_rollouts_nor_tokens_is_one_line():
    assert Budget.parse("2k tokens").tokens == 2000 and Budget.parse("40 rollouts").rollouts == 40
    with pytest.raises(UsageError, match="give rollouts"):
        Budget.parse("lots")
