"""Progressive release in o3viz runs: the time of a compressed run (pointers before the model, then
KV-cache release in the one generation loop, attention read from the run's recorder) against a
plain run of the full input, on the needle inputs of ``benchmarks compress``.

Both are ``o3viz.capture`` with attention capture off (``CaptureConfig(enabled=False)``), greedy,
``--new-tokens`` tokens, best of ``--timing-repeats`` interleaved runs after an untimed warm-up;
the compressed run's time includes compressing. Each compressed run must have really released:
the benchmark stops with an error if its trace has no release record, a memory series of another
length than its tokens, or no fewer prompt tokens than the full run.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import random
import time
from pathlib import Path

from benchmarks.compress import DATA, build_needle_input, load_sources


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", type=Path, default=DATA, help="shared data folder")
    parser.add_argument("--inputs", type=int, default=2, help="needle inputs")
    parser.add_argument("--tokens", type=int, default=3000, help="target length of a needle input in tokens")
    parser.add_argument("--redundancy", type=float, default=0.8, help="share of repeated tokens")
    parser.add_argument(
        "--new-tokens", type=int, default=32, help="tokens generated per run (releases start after 16)"
    )
    parser.add_argument(
        "--timing-repeats", type=int, default=2, help="timed runs per input and method (best)"
    )
    parser.add_argument("--seed", type=int, default=0)


def _runs(model, tok, prompt: str, new_tokens: int):
    from o3viz import CaptureConfig, CompressionConfig, RunRequest, capture

    req = RunRequest(prompt=prompt, max_new_tokens=new_tokens, capture=CaptureConfig(enabled=False))
    packed = dataclasses.replace(req, compression=CompressionConfig())
    return {"full": lambda: capture(model, tok, req), "compressed": lambda: capture(model, tok, packed)}


def _check(full, comp) -> None:
    """The compressed run released for real, over a shorter prompt than the full run's."""
    rec = comp.compression
    if rec is None or not rec.mode.startswith("pointer+") or full.compression is not None:
        raise SystemExit("release benchmark: the compressed run recorded no release")
    if len(rec.memory_tokens or []) != len(comp.tokens):
        raise SystemExit("release benchmark: the memory series does not follow the generated tokens")
    if len(comp.final.prompt_tokens) >= len(full.final.prompt_tokens):
        raise SystemExit("release benchmark: the compressed prompt is not shorter")


def run(args: argparse.Namespace) -> int:
    from o3viz.model import load_model

    model, tok = load_model()
    sources, rng = load_sources(args.data), random.Random(args.seed)
    count = lambda t: len(tok(t)["input_ids"])  # noqa: E731
    inputs = [
        build_needle_input(sources["gsm8k"], rng, args.tokens, args.redundancy, count)
        for _ in range(args.inputs)
    ]
    times, tokens, events = {"full": [], "compressed": []}, [], 0
    for k, inp in enumerate(inputs):
        runs = _runs(model, tok, f"{inp.text}\n\n{inp.question}", args.new_tokens)
        if k == 0:
            runs["full"](), runs["compressed"]()  # warm-up at the measured size
        best, out = {"full": float("inf"), "compressed": float("inf")}, {}
        for i in range(args.timing_repeats):
            for name in ("full", "compressed") if i % 2 == 0 else ("compressed", "full"):
                gc.collect()
                t0 = time.perf_counter()
                out[name] = runs[name]()
                best[name] = min(best[name], time.perf_counter() - t0)
        _check(out["full"], out["compressed"])
        for name in best:
            times[name].append(best[name])
        tokens.append((len(out["full"].final.prompt_tokens), len(out["compressed"].final.prompt_tokens)))
        events += sum(e.step >= 0 for e in out["compressed"].compression.events)
    n, tf, tc = len(inputs), sum(times["full"]), sum(times["compressed"])
    print(f"release_inputs: {n}")
    print(f"release_prompt_tokens_full_mean: {sum(a for a, _ in tokens) / n:.0f}")
    print(f"release_prompt_tokens_compressed_mean: {sum(b for _, b in tokens) / n:.0f}")
    print(f"release_generation_events_mean: {events / n:.1f}")
    print(f"release_time_full_s_mean: {tf / n:.2f}")
    print(f"release_time_compressed_s_mean: {tc / n:.2f}")
    print(f"release_faster_by_percent: {100 * (1 - tc / tf):.1f}")
    return 0
