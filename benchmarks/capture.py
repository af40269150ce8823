"""Capture speed and memory: full attention capture against plain sdpa ``generate``, DAA allocate
against capture, capture against eager ``output_attentions``, and peak RSS of a long capture.

Runs are interleaved (plain, capture, allocate, output_attentions, then the next pair) on the
default model with the same prompt and EOS suppressed, so every run generates exactly
``--new-tokens`` tokens; each figure is the median of the per-pair ratios, printed with its
spread (interquartile range, min–max). ``daa_allocate_vs_capture`` is a small difference (the
bias costs one multiply per layer), so it gets its own ``--daa-pairs`` capture/allocate pairs,
alternating which runs first, on top of the main pairs: with 3–5 pairs one audit read 1.12 and
another 1.03.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

PROMPT = (
    "A farmer has 17 sheep and buys 3 times as many goats as sheep. He then sells 12 goats. "
    "How many animals does he have now? Explain step by step."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pairs", type=int, default=5, help="interleaved rounds of runs (default 5)")
    p.add_argument(
        "--daa-pairs",
        type=int,
        default=16,
        help="extra interleaved capture/allocate pairs for daa_allocate_vs_capture (default 16)",
    )
    p.add_argument("--new-tokens", type=int, default=256, help="tokens per run (default 256)")
    p.add_argument(
        "--rss-tokens",
        type=int,
        default=2048,
        help="tokens of the peak-RSS capture (default 2048; 0 skips it)",
    )
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (default 0: torch's default)")
    p.add_argument("--rss-child", type=int, default=0, help=argparse.SUPPRESS)


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _runners(model, tok, n: int) -> dict:
    import torch

    from o3viz.run.capture import DAAConfig, RunRequest, capture
    from o3viz.run.prompt import layout_prompt

    ids = torch.tensor([layout_prompt(tok, PROMPT).ids], device=model.device)
    kw = {
        "max_new_tokens": n,
        "min_new_tokens": n,
        "do_sample": False,
        "attention_mask": torch.ones_like(ids),
        "pad_token_id": tok.pad_token_id,
    }

    def generate(impl: str, **extra):
        model.set_attn_implementation(impl)
        try:
            with torch.inference_mode():
                model.generate(ids, **kw, **extra)
        finally:
            model.set_attn_implementation("sdpa")

    return {
        "plain": lambda: generate("sdpa"),
        "capture": lambda: capture(model, tok, RunRequest(prompt=PROMPT, max_new_tokens=n, min_new_tokens=n)),
        "allocate": lambda: capture(
            model,
            tok,
            RunRequest(prompt=PROMPT, max_new_tokens=n, min_new_tokens=n, daa=DAAConfig(mode="allocate")),
        ),
        "output_attentions": lambda: generate("eager", output_attentions=True, return_dict_in_generate=True),
    }


def _peak_rss_child(n: int) -> int:
    """In a fresh process: RSS peak during an n-token capture above RSS after load and warm-up."""
    import psutil

    from o3viz.model import load_model
    from o3viz.run.capture import RunRequest, capture

    model, tok = load_model()
    capture(model, tok, RunRequest(prompt=PROMPT, max_new_tokens=4))
    gc.collect()
    proc = psutil.Process()
    base, peak, done = proc.memory_info().rss, [0], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], proc.memory_info().rss)
            time.sleep(0.05)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    trace = capture(model, tok, RunRequest(prompt=PROMPT, max_new_tokens=n, min_new_tokens=n))
    done.set()
    th.join()
    peak[0] = max(peak[0], proc.memory_info().rss)
    print(json.dumps({"peak_above_model_mb": (peak[0] - base) / 2**20, "tokens": len(trace.tokens)}))
    return 0


def _peak_rss_mb(n: int) -> float:
    root = Path(__file__).resolve().parents[1]  # the checkout: benchmarks/ is not installed
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks", "capture", "--rss-child", str(n)],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
    )
    return float(json.loads(out.stdout.strip().splitlines()[-1])["peak_above_model_mb"])


def _spread(ratios: list[float]) -> str:
    """``median (pairs n, IQR q1–q3, min–max)`` of per-pair ratios."""
    q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    return (
        f"{statistics.median(ratios):.3f} (pairs {len(ratios)}, IQR {q[0]:.3f}-{q[2]:.3f}, "
        f"min {min(ratios):.3f}, max {max(ratios):.3f})"
    )


def _daa_ratios(runners: dict, pairs: int) -> list[float]:
    """allocate / capture per pair, the order alternating so neither always runs second."""
    out = []
    for i in range(pairs):
        order = ("capture", "allocate") if i % 2 == 0 else ("allocate", "capture")
        t = {}
        for name in order:
            gc.collect()
            t[name] = _timed(runners[name])
        out.append(t["allocate"] / t["capture"])
    return out


def run(args: argparse.Namespace) -> int:
    if args.rss_child:
        return _peak_rss_child(args.rss_child)
    import torch

    from o3viz.model import load_model

    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"threads: {torch.get_num_threads()}")
    model, tok = load_model()
    runners = _runners(model, tok, args.new_tokens)
    for fn in _runners(model, tok, 4).values():  # warm-up: lazy imports, allocator, kernels
        fn()
    times: dict[str, list[float]] = {k: [] for k in runners}
    for _ in range(args.pairs):
        for name, fn in runners.items():
            gc.collect()
            times[name].append(_timed(fn))
    ratios = {  # capture / baseline, per pair
        ref: [a / b for a, b in zip(times["capture"], times[ref], strict=True)]
        for ref in ("plain", "output_attentions")
    }
    daa = [a / b for a, b in zip(times["allocate"], times["capture"], strict=True)]
    daa += _daa_ratios(runners, args.daa_pairs)
    print(f"plain_generate_s: {statistics.median(times['plain']):.3f}")
    print(f"capture_s: {statistics.median(times['capture']):.3f}")
    print(f"capture_vs_plain: {_spread(ratios['plain'])}")
    print(f"daa_allocate_vs_capture: {_spread(daa)}")
    print(f"capture_vs_output_attentions: {_spread(ratios['output_attentions'])}")
    if args.rss_tokens:
        print(f"peak_rss_mb_{args.rss_tokens}: {_peak_rss_mb(args.rss_tokens):.1f}")
    return 0
