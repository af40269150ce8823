"""Cost of recording what happens inside the layers: MoE routing capture on a tiny random MoE, the
logit lens on the embedded model (4 layers, and the cost per layer), and the trace size per 1,000
generated tokens with routing (full distributions against top-n).

Speed figures are medians of per-round ratios against a capture without the feature, measured in
the same process with runs interleaved (without, with, without, with, ...) and EOS suppressed so
every run generates exactly ``--new-tokens`` tokens.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import time

PROMPT = (
    "A farmer has 17 sheep and buys 3 times as many goats as sheep. He then sells 12 goats. "
    "How many animals does he have now? Explain step by step."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds per comparison (default 5)")
    p.add_argument("--new-tokens", type=int, default=64, help="tokens per run (default 64)")
    p.add_argument("--lens-layers", default="0,10,20,29", help="logit-lens layers (default 0,10,20,29)")
    p.add_argument("--size-tokens", type=int, default=128, help="tokens of the trace-size runs (default 128)")
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (default 0: torch's default)")
    p.add_argument("--only", choices=("routing", "lens", "size"), nargs="*", help="run only these parts")


def _interleaved(runs: dict, rounds: int) -> dict[str, list[float]]:
    """Seconds per run, alternating the configurations every round (after one warm-up each)."""
    for fn in runs.values():
        fn()
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(rounds):
        for name, fn in runs.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return times


def _ratio(times: dict[str, list[float]], name: str, base: str) -> float:
    return statistics.median(a / b for a, b in zip(times[name], times[base], strict=True))


def _tiny_moe(tok):
    """A small random Qwen3-MoE with the embedded model's vocabulary (4 layers, 16 experts, top-2)."""
    import torch
    from transformers import Qwen3MoeConfig, Qwen3MoeForCausalLM

    from o3viz.testing.moe import sharpen_routers

    cfg = Qwen3MoeConfig(
        hidden_size=128, intermediate_size=256, moe_intermediate_size=64, num_hidden_layers=4,
        num_attention_heads=4, num_key_value_heads=2, head_dim=32, num_experts=16, num_experts_per_tok=2,
        vocab_size=len(tok), max_position_embeddings=1024,
    )  # fmt: skip
    torch.manual_seed(0)
    model = Qwen3MoeForCausalLM(cfg).eval()
    sharpen_routers(model, 4.0)
    return model


def _routing_speed(tok, args) -> list[str]:
    from o3viz.run.capture import CaptureConfig, RunRequest, capture

    model, n = _tiny_moe(tok), args.new_tokens
    times = _interleaved(
        {
            "without": lambda: capture(
                model, tok, RunRequest(prompt=PROMPT, max_new_tokens=n, min_new_tokens=n)
            ),
            "routing": lambda: capture(
                model,
                tok,
                RunRequest(
                    prompt=PROMPT, max_new_tokens=n, min_new_tokens=n, capture=CaptureConfig(routing=True)
                ),
            ),
        },
        args.rounds,
    )
    ms = statistics.median(times["without"]) / n * 1e3
    return [
        f"routing_vs_capture_tiny_moe: {_ratio(times, 'routing', 'without'):.3f}x "
        f"(goal <= 1.05x; capture without routing {ms:.1f} ms/token, 4 MoE layers x 16 experts)"
    ]


def _lens_speed(model, tok, args) -> list[str]:
    from o3viz.run.capture import CaptureConfig, RunRequest, capture
    from o3viz.run.config import parse_indices, resolve_layers

    layers = resolve_layers(
        parse_indices(args.lens_layers, allow_empty=False), model.config.num_hidden_layers
    )
    n = args.new_tokens

    def run(lens):
        req = RunRequest(
            prompt=PROMPT, max_new_tokens=n, min_new_tokens=n, capture=CaptureConfig(logit_lens=lens)
        )
        return lambda: capture(model, tok, req)

    times = _interleaved({"without": run(()), "one": run(layers[-1:]), "lens": run(layers)}, args.rounds)
    r_all, r_one = _ratio(times, "lens", "without"), _ratio(times, "one", "without")
    return [
        f"lens_{len(layers)}_layers_vs_capture: {r_all:.3f}x (goal <= 1.5x; layers {layers})",
        f"lens_1_layer_vs_capture: {r_one:.3f}x",
        f"lens_cost_per_extra_layer: {(r_all - r_one) / max(len(layers) - 1, 1) * 100:.1f}% of a capture "
        f"(one batched unembedding per step serves all layers)",
    ]


def _size_lines(model, tok, args) -> list[str]:
    from o3viz.run.capture import CaptureConfig, RunRequest, capture

    n, lines = args.size_tokens, []
    for label, extra in (("full", {}), ("top4", {"routing_top_n": 4})):
        cfg = CaptureConfig(enabled=False, moefy=(16, 4), routing=True, **extra)
        trace = capture(
            model, tok, RunRequest(prompt=PROMPT, max_new_tokens=n, min_new_tokens=n, capture=cfg)
        )
        rec = trace.final.internals.routing
        raw = json.dumps(rec.to_dict()).encode()
        per_k = len(gzip.compress(raw)) / rec.num_generated * 1000 / 1e6
        lines.append(
            f"routing_size_per_1k_tokens_{label}: {per_k:.2f} MB gzipped ({len(raw) / rec.num_generated * 1000 / 1e6:.2f} MB raw; "
            f"MoEfied embedded model, {len(rec.layers)} layers x {rec.num_experts} experts, top-{rec.top_k})"
        )
    return lines


def run(args: argparse.Namespace) -> int:
    import torch

    from o3viz.model import load_model

    if args.threads:
        torch.set_num_threads(args.threads)
    model, tok = load_model()
    parts = {"routing": lambda: _routing_speed(tok, args), "lens": lambda: _lens_speed(model, tok, args),
             "size": lambda: _size_lines(model, tok, args)}  # fmt: skip
    for name in args.only or parts:
        for line in parts[name]():
            print(line, flush=True)
    return 0
