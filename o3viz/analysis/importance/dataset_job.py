"""Counterfactual resampling over a whole dataset: the rollouts of every prefix of every trace are
fetched from one OpenAI-compatible server with up to ``concurrency`` requests in flight, into the
rollout cache, and then each trace is scored from the cache alone (``resample_importance`` with no
new rollouts), so scoring is exactly the single-trace method's.

- Resumable: rollouts already in the cache are never asked for again; each one is appended as it
  arrives, so a killed job loses at most the requests in flight.
- Deterministic: sample ``j`` of a prefix has the seed the single-request loop gives it, and a
  prefix's samples are fetched in order by one worker at a time (the cache keeps seed order).
- Bounded: ``max_rollouts`` caps the requests of a run and the backend's ``budget_s`` its time on
  the endpoint (``should_stop``); what is left stays unscored and resumes on the next run.

A server that batches concurrent requests (vLLM, across GPUs and nodes) turns concurrency into
throughput; one that serialises them does not, and the benchmark says which this one does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from o3viz.clients import Backend, RolloutCache, RolloutError, Sampling

MAX_CONCURRENCY = 256
MAX_ERRORS = 20  # error lines kept (the rest are counted)


@dataclass
class PrefetchReport:
    """What a prefetch did: rollouts found in the cache, fetched, failed and left for later."""

    prefixes: int = 0
    cached: int = 0
    fetched: int = 0
    failed: int = 0
    left: int = 0  # not started: the cap or the budget
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)  # one line each, at most MAX_ERRORS

    @property
    def per_s(self) -> float:
        return self.fetched / self.seconds if self.seconds > 0 else 0.0

    def line(self) -> str:
        return (
            f"{self.prefixes} prefixes: {self.cached} rollouts cached, {self.fetched} fetched in "
            f"{self.seconds:.1f} s ({self.per_s:.2f}/s), {self.failed} failed, {self.left} left for a later run"
        )


@dataclass
class _Task:
    key: str
    text: str  # prompt + prefix
    have: int  # samples already cached


class _Prefetch:
    """The shared state of one prefetch: the cap and the report, under one lock."""

    def __init__(self, backend: Backend, k: int, sampling: Sampling, cache: RolloutCache) -> None:
        self.backend, self.k, self.sampling, self.cache = backend, k, sampling, cache
        self.report, self.lock = PrefetchReport(), threading.Lock()
        self.max_rollouts: int | None = None
        self.should_stop: Callable[[], bool] | None = None
        self.on_progress: Callable[[int, int], None] | None = None
        self.total = 0
        self._running = 0  # requests in flight (they count against the cap)

    def _may_start(self) -> bool:
        with self.lock:
            r = self.report
            if self.max_rollouts is not None and r.fetched + r.failed + self._running >= self.max_rollouts:
                return False
            if self.should_stop is not None and self.should_stop():
                return False
            self._running += 1
            return True

    def run(self, task: _Task) -> None:
        for j in range(task.have, self.k):
            if not self._may_start():
                with self.lock:
                    self.report.left += self.k - j
                return
            try:
                got = self.backend.complete(task.text, 1, self.sampling, first=j)
            except RolloutError as exc:
                with self.lock:
                    self._running -= 1
                    self.report.failed += 1
                    self.report.left += self.k - j - 1
                    if len(self.report.errors) < MAX_ERRORS:
                        self.report.errors.append(str(exc))
                return  # the later samples of this prefix keep their seeds for the next run
            self.cache.add(task.key, got)
            with self.lock:
                self._running -= 1
                self.report.fetched += 1
                done = self.report.fetched + self.report.failed
            if self.on_progress is not None:
                self.on_progress(done, self.total)


def plan(
    jobs: list[tuple[str, list[str]]], backend: Backend, k: int, sampling: Sampling, cache: RolloutCache
) -> tuple[list[_Task], int]:
    """The prefixes still short of ``k`` cached rollouts, and how many rollouts are cached."""
    tasks, cached = [], 0
    for prompt, pre in jobs:
        for p in pre:
            key = cache.key(backend.name, prompt + p, sampling)
            have = min(k, len(cache.get(key)))
            cached += have
            if have < k:
                tasks.append(_Task(key, prompt + p, have))
    return tasks, cached


def prefetch_rollouts(
    jobs: list[tuple[str, list[str]]],
    backend: Backend,
    k: int,
    sampling: Sampling,
    cache: RolloutCache,
    *,
    concurrency: int = 4,
    max_rollouts: int | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> PrefetchReport:
    """Fill ``cache`` with ``k`` rollouts of every prefix of ``jobs`` ((prompt, prefixes) per
    trace), ``concurrency`` requests at a time."""
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise ValueError(f"concurrency must be 1..{MAX_CONCURRENCY}, not {concurrency}")
    state = _Prefetch(backend, k, sampling, cache)
    state.max_rollouts, state.should_stop, state.on_progress = max_rollouts, should_stop, on_progress
    tasks, state.report.cached = plan(jobs, backend, k, sampling, cache)
    state.report.prefixes = sum(len(pre) for _, pre in jobs)
    state.total = sum(k - t.have for t in tasks)
    if max_rollouts is not None:
        state.total = min(state.total, max_rollouts)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="o3viz-rollouts") as pool:
        list(pool.map(state.run, tasks))  # threads: the work is waiting on the server
    state.report.seconds = time.perf_counter() - t0
    return state.report
