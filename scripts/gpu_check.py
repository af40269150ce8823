"""The GPU check (``make gpu-check``): on a CUDA machine, in under 5 minutes,

- capture the embedded model at about 1,024 and 8,192 tokens on ``cuda``;
- compare the recorded attention rows with a CPU capture of the same 1,024-token prompt (the mean
  rows over all layers and heads; greedy decoding, so the same tokens are generated);
- print peak GPU memory for each capture.

On a machine without CUDA it prints one line and exits 0. ``--model`` checks another model (a hub
id or folder already in the local cache; HF_HUB_OFFLINE is honoured).
"""

from __future__ import annotations

import argparse
import sys
import time

PROMPT_UNIT = "Step {i}: add 17 to the running total and check the arithmetic once more. "
TOLERANCE = 2e-2  # fp16 rows; TF32 / SDPA kernels differ from the CPU's in the last bits


def long_prompt(tok, tokens: int) -> str:
    """A prompt of about ``tokens`` tokens (rendered with the chat template)."""
    text, i = "", 0
    while len(tok(text)["input_ids"]) < tokens - 40:
        text += PROMPT_UNIT.format(i=i)
        i += 1
    return text + "\nWhat is the total after the last step?"


def capture_on(model, tok, prompt: str, new_tokens: int):
    import torch

    import o3viz

    if torch.cuda.is_available():
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    trace = o3viz.capture(model, tok, prompt, max_new_tokens=new_tokens, min_new_tokens=new_tokens)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return trace, time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None, help="model to check (default: the embedded SmolLM2-135M)")
    ap.add_argument("--lengths", default="1024,8192", help="prompt lengths in tokens (default 1024,8192)")
    ap.add_argument("--new-tokens", type=int, default=16, help="tokens generated per capture (default 16)")
    args = ap.parse_args()
    import torch

    if not torch.cuda.is_available():
        print(f"gpu-check: skipped, no CUDA device (torch {torch.__version__}); run it on a CUDA machine")
        return 0
    import numpy as np

    import o3viz

    name = torch.cuda.get_device_name(0)
    print(f"gpu-check: {name}, torch {torch.__version__}, CUDA {torch.version.cuda}")
    gpu_model, tok = o3viz.load_model(args.model, device="cuda")
    base = torch.cuda.memory_allocated()
    lengths = [int(x) for x in args.lengths.split(",")]
    failures = 0
    for n in lengths:
        prompt = long_prompt(tok, n)
        trace, secs = capture_on(gpu_model, tok, prompt, args.new_tokens)
        peak = (torch.cuda.max_memory_allocated() - base) / 2**20
        att = trace.final.attention
        print(
            f"  {att.prompt_len + att.num_generated:>6} tokens: {secs:6.1f} s on cuda, "
            f"peak {peak:8.1f} MiB above the model ({torch.cuda.max_memory_allocated() / 2**20:.0f} MiB in all)"
        )
        if n == lengths[0]:
            cpu_model, _ = o3viz.load_model(args.model, device="cpu")
            cpu_trace, cpu_secs = capture_on(cpu_model, tok, prompt, args.new_tokens)
            same = [t.id for t in cpu_trace.final.tokens] == [t.id for t in trace.final.tokens]
            a, b = att.mean.astype(np.float32), cpu_trace.final.attention.mean.astype(np.float32)
            diff = float(np.abs(a - b).max()) if a.shape == b.shape else float("inf")
            ok = same and diff <= TOLERANCE
            failures += not ok
            print(
                f"  cuda vs cpu at {n} tokens: same tokens {same}, attention rows max |diff| {diff:.2e} "
                f"(tolerance {TOLERANCE:g}; cpu {cpu_secs:.1f} s): {'ok' if ok else 'MISMATCH'}"
            )
            del cpu_model
    print("gpu-check: " + ("passed" if not failures else f"{failures} check(s) failed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
