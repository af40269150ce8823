"""branch: what a branch costs against doing it by hand, ratios measured in the same run.

- One edit-and-continue of ``--tokens`` tokens (``o3viz.branch.edit_and_continue``: the fork, the
  parent's settings rebuilt, one run through ``execute``) against a plain capture of the same
  length from the same prefix with the same settings (goal ≤ 1.1×).
- K = ``--k`` resampled continuations from one step (``resample_from``: the local backend's shared
  prefix cache, one batch) against K separate one-rollout branches (goal ≤ 0.5×). Each pass has
  a fresh rollout cache, so nothing is reused.

Both on the sample ``gsm8k_word_problem`` at step 0:2 with the embedded model. The machine is
shared: run with ``--threads 1`` and read the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import tempfile
import time

from o3viz.paths import REPO_ROOT

SAMPLE = REPO_ROOT / "sample_traces" / "gsm8k_word_problem.o3trace.json.gz"
EDIT = "This is 24 + 18 = 42 muffins in all."


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tokens", type=int, default=128, help="new tokens per continuation (128)")
    p.add_argument("--k", type=int, default=8, help="resampled continuations (8)")
    p.add_argument("--repeat", type=int, default=1, help="interleaved repetitions of each pair")
    p.add_argument("--part", choices=("edit", "resample", "all"), default="all")
    p.add_argument("--step", default="0:2")
    p.add_argument("--threads", type=int, default=1, help="torch threads (1 on a shared machine)")


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run(args: argparse.Namespace) -> int:
    import torch

    from o3viz.branch import Continuer, edit_and_continue, find_fork, request_from_trace, resample_from
    from o3viz.clients import RolloutCache, Sampling
    from o3viz.model import load_model
    from o3viz.run.capture import capture
    from o3viz.trace import load_trace

    torch.set_num_threads(args.threads)
    model, tok = load_model(None)
    parent, local = load_trace(SAMPLE), Continuer(model=model, tokenizer=tok)
    fork = find_fork(parent, args.step)
    req = dataclasses.replace(
        request_from_trace(fork, fork.before + EDIT, args.tokens), min_new_tokens=args.tokens
    )
    sampling = Sampling(max_tokens=args.tokens, seed=0)

    def edit():
        edit_and_continue(
            parent, args.step, EDIT, local, max_new_tokens=args.tokens, min_new_tokens=args.tokens
        )

    def plain():
        capture(model, tok, req)

    def batched():
        with tempfile.TemporaryDirectory() as d:
            resample_from(parent, args.step, args.k, local, sampling, RolloutCache(d))

    def separate():
        with tempfile.TemporaryDirectory() as d:
            for i in range(args.k):
                resample_from(
                    parent, args.step, 1, local, dataclasses.replace(sampling, seed=i), RolloutCache(d)
                )

    plain()  # warm-up: first-call costs stay out of both sides
    pairs = {
        "edit": (("plain", plain), ("edit", edit)),
        "resample": (("separate", separate), ("batched", batched)),
    }
    parts = ("edit", "resample") if args.part == "all" else (args.part,)
    times: dict[str, list[float]] = {}
    for r in range(args.repeat):
        for part in parts:
            order = pairs[part] if r % 2 == 0 else pairs[part][::-1]  # alternate which side runs first
            for name, fn in order:
                times.setdefault(name, []).append(_timed(fn))
    t = {k: statistics.median(v) for k, v in times.items()}
    if "edit" in parts:
        print(f"edit_and_continue_{args.tokens}_s: {t['edit']:.2f}")
        print(f"plain_capture_{args.tokens}_s: {t['plain']:.2f}")
        print(f"edit_vs_plain_ratio: {t['edit'] / t['plain']:.2f} (goal <= 1.1; median of {args.repeat})")
    if "resample" in parts:
        print(f"resample_k{args.k}_s: {t['batched']:.2f}")
        print(f"separate_runs_k{args.k}_s: {t['separate']:.2f}")
        print(
            f"resample_vs_separate_ratio: {t['batched'] / t['separate']:.2f} (goal <= 0.5; median of {args.repeat})"
        )
    return 0
