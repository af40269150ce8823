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

import os
from collections.abc import Callable
from typing import Any

from o3viz.analysis.importance.dependencies import dependencies_from_matrix
from o3viz.analysis.importance.published import published_importance, steps_from_chunks
from o3viz.analysis.importance.reading import MIN_STEPS, read_sequence
from o3viz.analysis.importance.receiver import receiver_from_matrices, receiver_importance
from o3viz.analysis.importance.resample import ResampleCost, estimate, resample_importance
from o3viz.analysis.importance.rollouts import (
    LocalBackend,
    OpenAIBackend,
    RolloutCache,
    RolloutError,
    Sampling,
)
from o3viz.analysis.importance.suppression import suppression_importance
from o3viz.trace import Trace
from o3viz.trace.importance import ImportanceRecord, set_importance

METHODS = ("receiver", "suppression", "resample")

__all__ = [
    "METHODS",
    "MIN_STEPS",
    "ImportanceRecord",
    "LocalBackend",
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
    """Store ``rec`` on the round (replacing a record of the same source), stamped with when and
    with which library versions it was made (``SOURCE_DATE_EPOCH`` pins the time and drops the
    elapsed seconds, so ``make samples`` reproduces its files byte for byte)."""
    import torch
    import transformers

    import o3viz
    from o3viz.trace.core import timestamp

    reproducible = bool(os.environ.get("SOURCE_DATE_EPOCH"))  # sample files: no wall-clock fields
    rec.info = {
        **rec.info,
        "created_at": timestamp(),
        "versions": {
            "o3viz": getattr(o3viz, "__version__", "dev"),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
        },
        **({"elapsed_s": round(elapsed_s, 2)} if elapsed_s is not None and not reproducible else {}),
    }
    set_importance(trace.rounds[round_index].importance, rec)
    return trace


def analyse_locally(
    trace: Trace,
    model: Any,
    tokenizer: Any,
    *,
    methods: tuple[str, ...] = ("receiver", "suppression"),
    retokenize: bool = False,
    max_tokens: int | None = None,
    on_progress: Callable[[str, int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Trace:
    """The app's "Analyse with the local model": the white-box measures with ``model`` as reader,
    written into ``trace`` (a copy is the caller's business). Progress: (method, done, total)."""
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
        else:
            raise ValueError(f"analyse_locally runs receiver and suppression, not {method!r}")
        add_importance(trace, rec, elapsed_s=time.perf_counter() - t0)
        if on_progress is not None:
            on_progress(method, 1, 1)
    return trace
