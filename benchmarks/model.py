"""Model load time: ``load_model()`` from the safetensors cache against a bare ``from_pretrained``."""

from __future__ import annotations

import argparse
import statistics
import time


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repeats", type=int, default=3, help="loads per variant (default 3)")


def run(args: argparse.Namespace) -> int:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from o3viz.model import load_model, resolve_model

    target, _, _ = resolve_model(None)  # converts the GGUF once if needed (not timed)
    AutoTokenizer.from_pretrained(target)  # pay transformers' lazy imports outside the timings
    ours, bare = [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        load_model()
        ours.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        AutoTokenizer.from_pretrained(target)
        AutoModelForCausalLM.from_pretrained(target, dtype=torch.float32)
        bare.append(time.perf_counter() - t0)
    print(f"load_model_s: {statistics.median(ours):.3f}")
    print(f"from_pretrained_s: {statistics.median(bare):.3f}")
    print(f"load_model_vs_from_pretrained: {statistics.median(ours) / statistics.median(bare):.3f}")
    return 0
