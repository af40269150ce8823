"""The budget part of ``python -m benchmarks importance --part budget``: adaptive resampling on the
Thought Anchors traces' own accuracies, long traces (about 140 chunks each) that the embedded model
cannot resample in a session.

The file gives, per chunk, the accuracy of 100 rollouts from the prefix before it. A simulated
backend draws each rollout's correctness from that accuracy (a seeded Bernoulli stream per prefix,
so a fixed run and an adaptive run draw the same samples, as with a real backend and the rollout
cache). The plan and the stopping rule are the product's own (``adaptive.collect_adaptive``); only
the rollouts are simulated, which leaves out what a real reader adds (answers other than right or
wrong, the counterfactual filter). The score is resampling importance on accuracy,
``acc(i+1) - acc(i)``.

Printed per setting: rollouts saved against the fixed run of K per prefix, its recall of the fixed
run's top-5 steps, the uniform K' (a prefix of the same streams) that reaches the same recall and
what the adaptive run saves against it ("at equal recall"), and each run's recall of the top-5 by
the published 100-rollout scores, all with 90% bootstrap intervals over problems.
"""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

TOP = 5


@dataclass
class BernoulliBackend:
    """Rollouts whose answer is right with the published accuracy of their prefix (by index)."""

    accuracy: list[float]
    name: str = "simulated"
    batch: int = 64  # collect_rollouts asks for this many at a time

    def complete(self, prompt: str, k: int, sampling, first: int = 0) -> list[str]:
        i = int(prompt.rsplit("#", 1)[1])  # the prefix's index, the last thing in its text
        seed = int.from_bytes(hashlib.blake2b(f"{self.name}:{i}".encode(), digest_size=8).digest(), "big")
        u = np.random.default_rng(seed).random(first + k)[first:]
        return ["right" if x < self.accuracy[i] else "wrong" for x in u]


def _answer(prefix: str, rollout: str) -> str:
    return rollout


def _scores(rolls: list[list[str] | None]) -> list[float | None]:
    acc = [None if r is None else sum(x == "right" for x in r) / len(r) for r in rolls]
    return [
        None if a is None or b is None else b - a for a, b in zip(acc, acc[1:], strict=False)
    ]  # fmt: skip


def simulate(records: list[dict], k: int, plan) -> list[dict]:
    """One row per problem: rollouts used and recalls of the fixed and adaptive runs."""
    from benchmarks._importance_model import top_recall
    from o3viz.analysis.importance.adaptive import collect_adaptive
    from o3viz.analysis.importance.resample import collect_rollouts
    from o3viz.clients import RolloutCache, Sampling

    sampling = Sampling(max_tokens=1)
    out = []
    with tempfile.TemporaryDirectory(prefix="o3viz-budget-") as d:
        for n, rec in enumerate(records):
            acc = [float(c["accuracy"]) for c in rec["chunks_labeled"] if c.get("accuracy") is not None]
            if len(acc) < 2 * TOP:
                continue
            backend = BernoulliBackend(acc, name=f"sim{n}")
            pre = [f"#{i}" for i in range(len(acc))]
            cache = RolloutCache(Path(d) / f"p{n}")
            fixed = collect_rollouts(backend, "", pre, k, sampling, cache)
            run = collect_adaptive(backend, "", pre, sampling, cache, _answer, ref="right", plan=plan)
            mine, published = _scores(fixed), [b - a for a, b in zip(acc, acc[1:], strict=False)]
            row = {
                "problem": n,
                "prefixes": len(pre),
                "fixed": len(pre) * k,
                "used": run.used,
                "recall": top_recall(mine, _scores(run.rollouts), TOP),
                "fixed_recall_published": top_recall(published, mine, TOP),
                "adaptive_recall_published": top_recall(published, _scores(run.rollouts), TOP),
                "uniform_recall": {},  # K' per prefix (the first K' of each stream): recall of the fixed top
            }
            for kk in range(1, k):
                row["uniform_recall"][kk] = top_recall(mine, _scores([r[:kk] for r in fixed]), TOP)
            out.append(row)
    return out


def report(rows: list[dict], k: int, plan) -> dict:
    from o3viz.analysis.importance.stats import bootstrap_over_groups

    def saved(g):
        return 1 - sum(r["used"] for r in g) / sum(r["fixed"] for r in g)

    def mean(key):
        return lambda g: float(np.mean([r[key] for r in g]))

    rec = mean("recall")(rows)
    # the smallest uniform K' whose mean recall reaches the adaptive run's: "equal recall"
    equal = next(
        (kk for kk in range(1, k) if np.mean([r["uniform_recall"][kk] for r in rows]) >= rec), k
    )  # fmt: skip
    used = sum(r["used"] for r in rows)
    uniform = sum(r["prefixes"] * equal for r in rows)
    label = f"K={k}, k_min={plan.k_min}, stride={plan.stride}, tol={plan.tol}, fill_tv={plan.fill_tv}"
    print(
        f"budget ({label}; {len(rows)} Thought Anchors problems, {sum(r['prefixes'] for r in rows)} prefixes, "
        "simulated rollouts at the published accuracies):"
    )
    print(
        f"  budget_saved_vs_fixed_K{k}: {saved(rows):.2f} {_iv(bootstrap_over_groups(saved, rows))} "
        f"({used} of {sum(r['fixed'] for r in rows)} rollouts)"
    )
    print(f"  budget_recall_of_fixed_top{TOP}: {rec:.2f} {_iv(bootstrap_over_groups(mean('recall'), rows))}")
    print(
        f"  budget_equal_recall_uniform_K: {equal} per prefix ({uniform} rollouts); adaptive saves "
        f"{1 - used / uniform:.2f} against it"
    )
    for key in ("fixed_recall_published", "adaptive_recall_published"):
        ci = bootstrap_over_groups(mean(key), rows)
        print(f"  budget_{key}_top{TOP}: {mean(key)(rows):.2f} {_iv(ci)}")
    return {
        "saved": saved(rows),
        "recall": rec,
        "equal_recall_k": equal,
        "saved_at_equal_recall": 1 - used / uniform,
        "rows": rows,
    }


def _iv(ci) -> str:
    return "[—]" if ci is None or ci[0] is None else f"[{ci[0]:.2f}, {ci[1]:.2f}]"
