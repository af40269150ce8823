"""How far each resampled step's score can be trusted, and why a step has none.

For step i the score compares two answer samples: ``kept`` (the rollouts from ``P_{i+1}``, which
kept step i) and ``other`` (the rollouts from ``P_i`` whose new first sentence differs from step i,
or all of them for the resampling measure). Beside each score:

- its interval: an accuracy change gets Newcombe's hybrid score interval (Wilson intervals of the
  two accuracies, combined); a KL gets a symmetric bootstrap interval around the estimate. Both
  always hold the estimate (``INTERVALS`` says which, in words);
- its noise floor: a permutation floor from that step's own two samples (``stats.noise_floor``);
- ``step_notes``: for a step without a score, or with a zero-width interval, the reason, in words
  true for that step.

>>> _kl(["5", "5"], ["5", "5"])
0.0
"""

from __future__ import annotations

import math
from collections import Counter

from o3viz.analysis.importance.stats import LEVEL, clears, entropy, interval, noise_floor, wilson_difference
from o3viz.text.answers import answers_equivalent

INTERVALS = {
    "accuracy": "Newcombe's hybrid score interval (Wilson intervals of the two accuracies, combined)",
    "kl": "a symmetric bootstrap interval: the estimate ± the level quantile of how far the "
    "bootstrap replicates fall from it",
}
FLOOR = (
    "permutation floor: the mean |score| after the step's two rollout samples are pooled and split "
    "again at random into groups of the same sizes"
)


def _kl(p: list[str | None], q: list[str | None]) -> float | None:
    """KL(p ‖ q) of two answer samples, add-one smoothed over the answers either contains."""
    if not p or not q:
        return None
    support = set(p) | set(q)
    cp, cq = Counter(p), Counter(q)
    n_p, n_q = len(p) + len(support), len(q) + len(support)
    return float(
        sum((cp[a] + 1) / n_p * math.log(((cp[a] + 1) / n_p) / ((cq[a] + 1) / n_q)) for a in support)
    )


def _correct(answers: list[str | None], reference: str) -> int:
    return sum(a is not None and answers_equivalent(a, reference) for a in answers)


def _acc(answers: list[str | None], reference: str | None) -> float | None:
    if reference is None or not answers:
        return None
    return _correct(answers, reference) / len(answers)


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def trust_series(answers, different, ref, level: float = LEVEL, seed: int = 0) -> dict[str, list]:
    """Per step, beside the score: its interval (``ci_low``, ``ci_high``), its noise floor, whether
    it clears it (1.0 / 0.0), and the headroom (answer entropy before the step)."""
    n = len(answers) - 1

    def measure(kept, other):
        return _kl(kept, other) if ref is None else _diff(_acc(kept, ref), _acc(other, ref))

    out: dict[str, list] = {
        k: [None] * n for k in ("ci_low", "ci_high", "noise_floor", "clears_floor", "headroom")
    }
    for i in range(n):
        here, kept = answers[i], answers[i + 1]
        out["headroom"][i] = None if here is None else entropy(here)
        if here is None or kept is None or different[i] is None:
            continue
        other = [a for a, d in zip(here, different[i], strict=True) if d]
        if not other:
            continue
        if ref is None:
            lo, hi = interval(_kl, kept, other, level, seed + i, lowest=0.0)
        else:
            lo, hi = wilson_difference(
                _correct(kept, ref), len(kept), _correct(other, ref), len(other), level
            )
        out["ci_low"][i], out["ci_high"][i] = lo, hi
        out["noise_floor"][i] = noise_floor(measure, kept, other, seed + i)
        out["clears_floor"][i] = clears(measure(kept, other), out["noise_floor"][i])
    return out


def _shown(a: str | None) -> str:
    return "no answer" if a is None else repr(a)


def step_notes(
    answers, different, scores, series, *, counterfactual: bool, threshold: float
) -> dict[str, str]:
    """``{step: reason}`` for each step without a score, or with a zero-width interval."""
    notes: dict[str, str] = {}
    for i, score in enumerate(scores):
        here, kept = answers[i], answers[i + 1]
        if score is None:
            if here is None or kept is None:
                which = f"before step {i}" if here is None else f"after step {i}"
                notes[str(i)] = (
                    f"not resampled: the run stopped, or reached its rollout cap, before the "
                    f"rollouts from {which}"
                )
            elif counterfactual and not any(different[i] or []):
                notes[str(i)] = (
                    f"none of the {len(here)} resampled first sentences differed in meaning from "
                    f"this step (cosine similarity ≥ {threshold:g} to it), so there is nothing to compare"
                )
            else:
                notes[str(i)] = "no score: the two rollout samples of this step gave no comparable answers"
            continue
        lo, hi = series["ci_low"][i], series["ci_high"][i]
        if lo is not None and hi is not None and hi - lo <= 1e-12:
            other = [a for a, d in zip(here, different[i] or [], strict=False) if d]
            kept_set, other_set = set(kept), set(other)
            if len(kept_set) == 1 and len(other_set) == 1:
                why = (
                    f"every rollout that kept the step answered {_shown(next(iter(kept_set)))} and "
                    f"every one that changed it answered {_shown(next(iter(other_set)))}"
                )
            else:
                why = f"no resample of these {len(kept)} + {len(other)} rollouts gives another score"
            notes[str(i)] = f"zero-width interval: {why}, so resampling the rollouts cannot move it"
    return notes
