"""The on-model importance fixture (``tests/app/data/onmodel_addition_importance.o3trace.json.gz``):
the embedded SmolLM2-135M's own greedy trace of the first generated one-step addition problem
(``benchmarks._importance_model.problems(0, 1)``, 96 tokens), with its receiver (gap 2),
suppression and counterfactual resampling (K = 4, 40 tokens per rollout) records.

Usage: ``python scripts/make_onmodel_importance_trace.py OUT [--cache DIR]``
"""

from __future__ import annotations

import argparse

import torch

from benchmarks._importance_model import _capture, problems
from o3viz.analysis.importance import (
    LocalBackend,
    RolloutCache,
    Sampling,
    add_importance,
    receiver_importance,
    resample_importance,
    suppression_importance,
)
from o3viz.model import load_model


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--cache", help="rollout cache (default: ~/.cache/o3viz/rollouts)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    model, tok = load_model(None)
    question, answer = problems(0, 1)[0]
    t = _capture(model, tok, question, answer, 96)
    backend, sampling = LocalBackend(model, tok), Sampling(max_tokens=40)
    for rec in (
        receiver_importance(t, model, tok, gap=2),
        suppression_importance(t, model, tok),
        resample_importance(t, backend, (model, tok), k=4, sampling=sampling, cache=RolloutCache(args.cache)),
    ):
        add_importance(t, rec)
    print(t.save(args.out, overwrite=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
