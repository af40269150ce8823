"""The labelled solutions and the field's metrics for ``python -m benchmarks verifiers``.

- MR-GSM8K (``mr_gsm8k_claude_eval_results.json``): 326 model solutions, every one incorrect, each
  with the human first-error step (counted from 1). Metric: first-error-step accuracy on incorrect
  solutions (the predicted first wrong step equals the label exactly).
- PRM800K phase-1 test (``prm800k_phase1_test_stepwise_critic.jsonl.gz``): one row per rated
  candidate step and its prefix. A row rated -1 whose prefix steps are all right (rated 0 or 1, or
  written by a labeller: unrated human steps) is a wrong solution whose first error is its last
  step; a final-answer row (``is_solution``) rated 1 with such a prefix is a correct one. Metric, as ProcessBench: the harmonic mean (F1) of
  the exact first-error accuracy on wrong solutions and the accuracy (no error found) on correct
  ones.

- ProcessBench (``processbench_gsm8k.json``, ``processbench_math.json``): one record per model
  solution, its ``steps`` and ``label`` (the first wrong step counted from 0, -1 for none), as
  ``o3viz import --labels`` stores them. Metric: its own F1, as on PRM800K.

Solutions of one problem share prefixes, so intervals come from a bootstrap that resamples whole
problems (a cluster bootstrap), 95% percentile.
"""

from __future__ import annotations

import gzip
import json
import random
from dataclasses import dataclass
from pathlib import Path

# Quoted in issue 42 from the papers; theirs, on their sets (ProcessBench: the average over its four
# subsets, not PRM800K phase 1), not measured here.
PUBLISHED_PROCESSBENCH_F1 = {
    "GenPRM-7B": 75.2,
    "Qwen2.5-Math-PRM-7B": 73.5,
    "GPT-4o": 61.9,
    "Math-7B-PRM800K": 56.5,
}
PUBLISHED_MR_GSM8K_FIRST_ERROR = {"GPT-4-Turbo (0-shot)": 48.8, "GPT-3.5": 30.6, "Claude-3-Sonnet": 25.2}


@dataclass
class Item:
    """One labelled solution: ``first`` is the 0-based first wrong step, -1 when there is none."""

    question: str
    steps: list[str]
    first: int
    kind: str = ""  # a label the source gives (MR-GSM8K's question type), else ""


def mr_gsm8k(path: Path) -> list[Item]:
    out = []
    for x in json.loads(path.read_text(encoding="utf-8")):
        steps, first = x["model_output_steps"], x["model_output_solution_first_error_step"]
        if isinstance(first, int) and 1 <= first <= len(steps):
            out.append(
                Item(x["question"], [str(s) for s in steps], first - 1, str(x.get("question_type", "")))
            )
    return out


def prm800k(path: Path) -> list[Item]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    rating = {}
    for r in rows:
        # a step a labeller wrote (human, unrated) replaced a wrong one: right by construction
        ok = r["rating"] in (0, 1) or (r["rating"] is None and r["is_human_response"])
        rating.setdefault((r["instruction"], *r["responses"], r["next_response"]), ok)
    out, seen = [], set()
    for r in rows:
        path_ = (r["instruction"], *r["responses"], r["next_response"])
        wrong, right = r["rating"] == -1, r["rating"] == 1 and r["is_solution"]
        if path_ in seen or not (wrong or right):
            continue
        if all(rating.get(path_[: j + 1]) for j in range(1, len(path_) - 1)):
            seen.add(path_)
            steps = list(path_[1:])
            out.append(Item(path_[0], steps, len(steps) - 1 if wrong else -1))
    return out


def processbench(path: Path) -> list[Item]:
    out = []
    for x in json.loads(path.read_text(encoding="utf-8")):
        steps, first = x["steps"], x["label"]
        if isinstance(first, int) and -1 <= first < len(steps):
            out.append(Item(x["problem"], [str(s) for s in steps], first))
    return out


def sample(items: list[Item], n: int | None, seed: int = 0) -> list[Item]:
    """``n`` items drawn without replacement (all when ``n`` is None or larger), in file order:
    half wrong and half correct solutions where there are both (PRM800K has 19 wrong to 1 correct,
    and F1 weighs the two classes alike), the rest from the other class when one runs short."""
    if n is None or n >= len(items):
        return items
    rng = random.Random(seed)
    wrong = [k for k, it in enumerate(items) if it.first >= 0]
    right = [k for k, it in enumerate(items) if it.first < 0]
    n_right = min(len(right), n // 2) if wrong else min(len(right), n)
    n_wrong = min(len(wrong), n - n_right)
    keep = sorted(rng.sample(wrong, n_wrong) + rng.sample(right, n_right))
    return [items[i] for i in keep]


def accuracy(items: list[Item], preds: list[int], *, errors: bool) -> tuple[float, int]:
    """Exact first-error accuracy over the wrong solutions (``errors``) or the correct ones."""
    pairs = [(i.first, p) for i, p in zip(items, preds, strict=True) if (i.first >= 0) == errors]
    return (sum(a == b for a, b in pairs) / len(pairs) if pairs else float("nan")), len(pairs)


def f1(items: list[Item], preds: list[int]) -> float:
    a, _ = accuracy(items, preds, errors=True)
    b, _ = accuracy(items, preds, errors=False)
    return 2 * a * b / (a + b) if a + b > 0 else 0.0


def interval(
    items: list[Item], preds: list[int], stat, reps: int = 1000, seed: int = 0
) -> tuple[float, float]:
    """95% percentile interval of ``stat(items, preds)`` over a bootstrap of whole problems."""
    groups: dict[str, list[int]] = {}
    for k, it in enumerate(items):
        groups.setdefault(it.question, []).append(k)
    keys, rng, vals = list(groups), random.Random(seed), []
    for _ in range(reps):
        idx = [k for g in rng.choices(keys, k=len(keys)) for k in groups[g]]
        v = stat([items[k] for k in idx], [preds[k] for k in idx])
        if v == v:  # a draw without any item of the class measured gives nan: left out
            vals.append(v)
    if not vals:
        return float("nan"), float("nan")
    vals.sort()
    return vals[int(0.025 * (len(vals) - 1))], vals[int(0.975 * (len(vals) - 1))]
