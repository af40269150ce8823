"""Budgeted, adaptive counterfactual resampling: fewer rollouts where the answer is already
decided, and none between prefixes whose answers do not move.

1. Sparse: every ``stride``-th prefix (and the last) gets ``k_min`` rollouts.
2. Sequential stopping: a prefix gets ``k_min`` more at a time until the 90% Wilson interval of
   its answer's share (the accuracy where the reference is known, else the modal answer's share)
   is at most ``tol`` wide, or it has ``k_max``.
3. Fill in: between two sampled prefixes whose answer distributions differ by total variation
   ≥ ``fill_tv`` (largest first), every prefix in between is sampled the same way; the steps of a
   block whose ends agree stay unscored (nothing in it moved the answer).

A ``Budget`` of rollouts or new tokens stops all of it; rollouts are drawn from the same seeded
stream and cache as a fixed-K run (``collect_rollouts``), so an adaptive run is a subset of a
fixed run with ``k_max`` and the two can be compared on the same rollouts.

>>> Budget.parse("500r"), Budget.parse("20000 tokens").tokens
(Budget(rollouts=500, tokens=None), 20000)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from o3viz.analysis.dataset import wilson
from o3viz.clients import Backend, RolloutCache, Sampling
from o3viz.errors import UsageError
from o3viz.text.answers import answers_equivalent

Z90 = 1.6449  # the normal quantile of a two-sided 90% interval


@dataclass
class Budget:
    """What an adaptive run may consume: rollouts, new tokens, or both (None: no cap)."""

    rollouts: int | None = None
    tokens: int | None = None

    @classmethod
    def parse(cls, text: str) -> Budget:
        """``500r`` / ``500 rollouts`` or ``20000t`` / ``20k tokens``; one line if it is neither."""
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(k?)\s*(r|rollouts?|t|tok|tokens?)\s*", text.lower())
        if not m:
            raise UsageError(f"--budget {text!r}: give rollouts (500r) or tokens (20000t), or seconds (3600)")
        n = int(float(m.group(1)) * (1000 if m.group(2) else 1))
        return cls(rollouts=n) if m.group(3).startswith("r") else cls(tokens=n)


@dataclass
class Adaptive:
    """The adaptive plan's settings."""

    k_min: int = 2  # rollouts per prefix in one go
    k_max: int = 8  # at most, per prefix
    stride: int = 2  # the sparse pass samples every stride-th prefix
    tol: float = 0.3  # stop a prefix when its answer share's 90% interval is this narrow
    fill_tv: float = 0.1  # fill in between two prefixes whose answers differ this much
    # (0.5, 0.25, 3) saved 70% of a K = 8 run on the Thought Anchors traces but kept only 36% of
    # its top-5 steps; these keep 80% and save 28% (``python -m benchmarks importance --part budget``)


@dataclass
class AdaptiveRun:
    """What an adaptive run drew: per prefix its rollouts (None: not sampled)."""

    rollouts: list[list[str] | None]
    used: int  # rollouts drawn (cached or new)
    tokens: int  # new tokens of those rollouts (the reader's tokenizer; else characters / 4)
    stopped: str | None = None  # "budget" when the budget ended it


def wilson_width(k: int, n: int, z: float = Z90) -> float:
    """The width of the Wilson interval of k successes in n trials (1.0 for n = 0)."""
    iv = wilson(k, n, z)
    return 1.0 if iv is None else iv[1] - iv[0]


def _share(answers: list[str | None], ref: str | None) -> int:
    if ref is not None:
        return sum(a is not None and answers_equivalent(a, ref) for a in answers)
    return Counter(answers).most_common(1)[0][1] if answers else 0


def _tv(a: list[str | None], b: list[str | None]) -> float:
    ca, cb = Counter(a), Counter(b)
    return 0.5 * sum(abs(ca[x] / len(a) - cb[x] / len(b)) for x in set(a) | set(b))


class _Drawer:
    """Rollouts of each prefix from the cache or the backend, counted against the budget."""

    def __init__(self, backend, prompt, pre, sampling, cache, budget, answer, ref, should_stop):
        self.backend, self.prompt, self.pre, self.sampling, self.cache = backend, prompt, pre, sampling, cache
        self.budget, self.answer, self.ref, self.should_stop = budget or Budget(), answer, ref, should_stop
        self.rolls: list[list[str] | None] = [None] * len(pre)
        self.used = self.tokens = 0
        self.stopped: str | None = None
        tok = getattr(backend, "tokenizer", None)
        self.count = (
            (lambda t: len(tok(t, add_special_tokens=False)["input_ids"])) if tok else (lambda t: len(t) // 4)
        )

    def spent(self) -> bool:
        b = self.budget
        over = (b.rollouts is not None and self.used >= b.rollouts) or (
            b.tokens is not None and self.tokens >= b.tokens
        )
        self.stopped = self.stopped or ("budget" if over else None)
        return over or (self.should_stop is not None and self.should_stop())

    def draw(self, i: int, n: int) -> None:
        """Prefix ``i`` up to ``n`` rollouts (fewer if the budget ends first)."""
        have = self.rolls[i] or []
        if self.budget.rollouts is not None:
            n = min(n, len(have) + self.budget.rollouts - self.used)
        if n <= len(have) or self.spent():
            return
        key = self.cache.key(self.backend.name, self.prompt + self.pre[i], self.sampling)
        got = self.cache.get(key)
        if len(got) < n:
            new = self.backend.complete(
                self.prompt + self.pre[i], n - len(got), self.sampling, first=len(got)
            )
            self.cache.add(key, new)
            got = got + new
        fresh = got[len(have) : n]
        self.used += len(fresh)
        self.tokens += sum(self.count(t) for t in fresh)
        self.rolls[i] = got[:n]

    def answers(self, i: int) -> list[str | None]:
        return [self.answer(self.pre[i], x) for x in self.rolls[i] or []]

    def settle(self, i: int, plan: Adaptive) -> None:
        """Sample prefix ``i`` until its interval is narrow enough, ``k_max``, or the budget."""
        self.draw(i, plan.k_min)
        while self.rolls[i] and len(self.rolls[i]) < plan.k_max and not self.spent():
            a = self.answers(i)
            if wilson_width(_share(a, self.ref), len(a)) <= plan.tol:
                return
            self.draw(i, min(plan.k_max, len(a) + plan.k_min))


def collect_adaptive(
    backend: Backend,
    prompt: str,
    pre: list[str],
    sampling: Sampling,
    cache: RolloutCache,
    answer: Callable[[str, str], str | None],
    *,
    ref: str | None = None,
    plan: Adaptive | None = None,
    budget: Budget | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> AdaptiveRun:
    """Rollouts for ``pre`` (the S + 1 prefixes) by the adaptive plan (module docstring);
    ``answer(prefix, rollout)`` reads a rollout's final answer."""
    plan = plan or Adaptive()
    d = _Drawer(backend, prompt, pre, sampling, cache, budget, answer, ref, should_stop)
    coarse = sorted({*range(0, len(pre), max(1, plan.stride)), len(pre) - 1})
    for i in coarse:
        d.settle(i, plan)
    blocks = [
        (a, b) for a, b in zip(coarse, coarse[1:], strict=False) if b - a > 1 and d.rolls[a] and d.rolls[b]
    ]
    moved = sorted(((_tv(d.answers(a), d.answers(b)), a, b) for a, b in blocks), reverse=True)
    for tv, a, b in moved:
        if tv < plan.fill_tv:
            break
        for i in range(a + 1, b):
            d.settle(i, plan)
    return AdaptiveRun(d.rolls, d.used, d.tokens, d.stopped)
