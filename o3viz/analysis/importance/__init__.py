"""Which steps mattered: the Thought Anchors step-importance measures (arXiv 2506.19143) as
library functions that write ``ImportanceRecord``s into a trace's round.

- ``receiver``: receiver heads from one blockwise forward of a reader model (white-box, cheap);
- ``suppression``: one masked forward per step, the step × step KL matrix and ``depends_on``;
- ``resample``: counterfactual resampling through a rollout backend (local, or any
  OpenAI-compatible endpoint), cached on disk;
- ``published``: labels that come with a dataset (the Thought Anchors file).

>>> from o3viz.analysis.importance import METHODS
>>> METHODS
('receiver', 'suppression', 'resample')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from o3viz.analysis.importance.agreement import Agreement, agreement
from o3viz.analysis.importance.baselines import BASELINES, step_baselines
from o3viz.analysis.importance.dependencies import dependencies_from_matrix
from o3viz.analysis.importance.published import published_importance, steps_from_chunks
from o3viz.analysis.importance.reading import MIN_STEPS, read_sequence
from o3viz.analysis.importance.receiver import receiver_from_matrices, receiver_importance
from o3viz.analysis.importance.resample import ResampleCost, estimate, resample_importance
from o3viz.analysis.importance.suppression import suppression_importance
from o3viz.clients import LocalBackend, OpenAIBackend, RolloutCache, RolloutError, Sampling
from o3viz.run.speed import SpeedLog
from o3viz.trace import Trace
from o3viz.trace.importance import ImportanceRecord, set_importance

METHODS = ("receiver", "suppression", "resample")


@dataclass
class LocalResample:
    """Counterfactual resampling settings for ``analyse_locally`` (the app's local backend)."""

    k: int = 4  # rollouts per prefix
    max_new_tokens: int = 128
    seed: int = 0
    max_rollouts: int | None = None
    cache_dir: str | None = None  # default: ~/.cache/o3viz/rollouts

    def cost(self, trace: Trace, round_index: int = -1) -> ResampleCost:
        """The upper bound before it starts: (S + 1) prefixes × K rollouts × max tokens (rollouts
        already in the cache are reused, so a resumed run costs less)."""
        n = len(trace.rounds[round_index].steps) + 1
        new = n * self.k if self.max_rollouts is None else min(n * self.k, self.max_rollouts)
        return ResampleCost(n, n * self.k, 0, new, new * self.max_new_tokens)

    def minutes(self, trace: Trace, tokens_per_s: float | None) -> float | None:
        """The upper bound's wall-clock time at ``tokens_per_s`` (this machine's measured speed,
        ``o3viz.run.speed``); None while nothing has been measured here, never a guess."""
        return None if not tokens_per_s else self.cost(trace).max_new_tokens / tokens_per_s / 60


__all__ = [
    "BASELINES",
    "METHODS",
    "Agreement",
    "agreement",
    "step_baselines",
    "MIN_STEPS",
    "ImportanceRecord",
    "LocalBackend",
    "LocalResample",
    "OpenAIBackend",
    "ResampleCost",
    "RolloutCache",
    "RolloutError",
    "Sampling",
    "add_importance",
    "analyse_locally",
    "dependencies_from_matrix",
    "estimate",
    "published_importance",
    "read_sequence",
    "receiver_from_matrices",
    "receiver_importance",
    "resample_importance",
    "steps_from_chunks",
    "suppression_importance",
]


def add_importance(
    trace: Trace, rec: ImportanceRecord, round_index: int = -1, elapsed_s: float | None = None
) -> Trace:
    """Store ``rec`` on the round (replacing a record of the same source), give every record of the
    round the baselines (``step_baselines``) as series, and stamp ``rec`` with when and
    with which library versions it was made (``SOURCE_DATE_EPOCH`` pins the time and drops the
    elapsed seconds, so ``make samples`` reproduces its files byte for byte)."""
    import torch
    import transformers

    import o3viz
    from o3viz.trace.core import reproducible, timestamp

    rec.info = {
        **rec.info,
        "created_at": timestamp(),
        "versions": {
            "o3viz": getattr(o3viz, "__version__", "dev"),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
        },
        **({"elapsed_s": round(elapsed_s, 2)} if elapsed_s is not None and not reproducible() else {}),
    }
    rnd = trace.rounds[round_index]
    set_importance(rnd.importance, rec)
    base = step_baselines(rnd, rnd.importance)  # every record carries them; headroom may be new
    for r in rnd.importance:
        r.series.update(base)
    return trace


def analyse_locally(
    trace: Trace,
    model: Any,
    tokenizer: Any,
    *,
    methods: tuple[str, ...] = ("receiver", "suppression"),
    retokenize: bool = False,
    max_tokens: int | None = None,
    resample: LocalResample | None = None,
    on_progress: Callable[[str, int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Trace:
    """The app's "Analyse with the local model": the white-box measures with ``model`` as reader,
    and counterfactual resampling with ``model`` as the rollout backend and the embedder (settings
    in ``resample``), written into ``trace`` (a copy is the caller's business). Progress:
    (method, done, total)."""
    import time

    for method in methods:
        if should_stop is not None and should_stop():
            break
        t0 = time.perf_counter()
        if on_progress is not None:
            on_progress(method, 0, 1)
        if method == "receiver":
            rec = receiver_importance(trace, model, tokenizer, retokenize=retokenize, max_tokens=max_tokens)
        elif method == "suppression":
            rec = suppression_importance(
                trace,
                model,
                tokenizer,
                retokenize=retokenize,
                max_tokens=max_tokens,
                on_progress=None if on_progress is None else lambda d, n: on_progress("suppression", d, n),
                should_stop=should_stop,
            )
        elif method == "resample":
            opts, backend = resample or LocalResample(), LocalBackend(model, tokenizer)
            rec = resample_importance(
                trace,
                backend,
                (model, tokenizer),
                k=opts.k,
                sampling=Sampling(max_tokens=opts.max_new_tokens, seed=opts.seed),
                cache=RolloutCache(opts.cache_dir) if opts.cache_dir else RolloutCache(),
                max_rollouts=opts.max_rollouts,
                on_progress=None if on_progress is None else lambda d, n: on_progress("resample", d, n),
                should_stop=should_stop,
            )
            SpeedLog().record(backend.name, "resample", backend.budget_tokens, backend.seconds)
        else:
            raise ValueError(f"analyse_locally runs {', '.join(METHODS)}, not {method!r}")
        add_importance(trace, rec, elapsed_s=time.perf_counter() - t0)
        if on_progress is not None:
            on_progress(method, 1, 1)
    return trace
