"""The trivial predictors every importance method is compared with, per step of a round: its
position, its length (characters) and its headroom (how undecided the answer is before it).

Headroom comes from the rollouts where a resampling record has them (the entropy of the answers
sampled from the prefix before the step, its ``headroom`` series); else from a published
``accuracy`` series (the accuracy of the rollouts from the prefix before the step), as the binary
entropy of that accuracy; else it is left empty.

>>> from o3viz.trace import Round, Step
>>> rnd = Round(text="ab cd", steps=[Step(0, "ab", 0, 2), Step(1, "cd", 3, 5)])
>>> step_baselines(rnd, [])["baseline_position"]
[0.0, 1.0]
"""

from __future__ import annotations

from o3viz.analysis.importance.stats import binary_entropy
from o3viz.trace import Round
from o3viz.trace.importance import ImportanceRecord

BASELINES = ("baseline_position", "baseline_length", "baseline_headroom")


def headroom(records: list[ImportanceRecord], n: int) -> list[float | None]:
    """Per step: the answer entropy (nats) before it, from the best source the round has."""
    for rec in records:
        h = rec.series.get("headroom")
        if rec.method == "resample" and h and any(v is not None for v in h):
            return list(h[:n]) + [None] * (n - len(h))
    for rec in records:
        acc = rec.series.get("accuracy")
        if rec.method == "published" and acc and any(v is not None for v in acc):
            return [binary_entropy(v) for v in acc[:n]] + [None] * (n - len(acc))
    return [None] * n


def step_baselines(rnd: Round, records: list[ImportanceRecord]) -> dict[str, list[float | None]]:
    """``baseline_position`` (0..1 along the round), ``baseline_length`` and
    ``baseline_headroom``, one value per step."""
    n = len(rnd.steps)
    return {
        "baseline_position": [i / max(n - 1, 1) for i in range(n)],
        "baseline_length": [float(len(s.text)) for s in rnd.steps],
        "baseline_headroom": headroom(records, n),
    }
