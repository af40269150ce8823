"""Model load time: ``load_model()`` from the safetensors cache against a bare ``from_pretrained``
(tokenizer and model) of the same cache, measured in the same run.

Method: one untimed load of each first (transformers' lazy imports, the OS file cache); then
``--repeats`` pairs, the order alternating from pair to pair, ``gc.collect()`` before every timed
call, and every loaded model kept alive until the end, so neither variant pays for freeing the
other's tensors (back to back without that, the bare load paid the previous ``load_model``'s
deallocation and the ratio read 0.60). ``load_model`` does all ``from_pretrained`` does plus its
checks, so a ratio under 1 means noise, not speed.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repeats", type=int, default=6, help="interleaved pairs of loads (default 6)")


def _timed(fn, keep: list) -> float:
    gc.collect()
    t0 = time.perf_counter()
    keep.append(fn())
    return time.perf_counter() - t0


def run(args: argparse.Namespace) -> int:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from o3viz.model import load_model, resolve_model

    target, _, _ = resolve_model(None)  # converts the GGUF once if needed (not timed)

    def bare():
        return AutoTokenizer.from_pretrained(target), AutoModelForCausalLM.from_pretrained(
            target, dtype=torch.float32
        )

    keep: list = [load_model(), bare()]  # warm-up, untimed
    times: dict[str, list[float]] = {"load_model": [], "from_pretrained": []}
    variants = [("load_model", load_model), ("from_pretrained", bare)]
    for i in range(args.repeats):
        for name, fn in variants if i % 2 == 0 else variants[::-1]:
            times[name].append(_timed(fn, keep))
    ratios = [a / b for a, b in zip(times["load_model"], times["from_pretrained"], strict=True)]
    print(f"load_model_s: {statistics.median(times['load_model']):.3f}")
    print(f"from_pretrained_s: {statistics.median(times['from_pretrained']):.3f}")
    print(
        f"load_model_vs_from_pretrained: {statistics.median(ratios):.3f} "
        f"(pairs {len(ratios)}, min {min(ratios):.3f}, max {max(ratios):.3f})"
    )
    del keep
    return 0
