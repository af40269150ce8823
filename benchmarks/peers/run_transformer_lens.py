"""Runner: TransformerLens ``run_with_cache`` (runs in .venv-peers/transformer_lens). It caches
activations of one forward pass over a given sequence, so the workload is what its users do:
plain sdpa ``generate`` for the tokens, then ``TransformerBridge.run_with_cache`` over the whole
generated sequence, keeping only the attention patterns (``names_filter`` on ``hook_pattern``:
TransformerLens's lightest way to get every head of every layer). A forced memory job skips
generation and runs ``run_with_cache`` over prompt + N forced tokens: the same single forward
pass, so the same peak. Saving: ``torch.save`` of the pattern dict (TransformerLens has no file
format for a cache)."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _child  # noqa: E402


def _is_pattern(name: str) -> bool:
    return name.endswith("hook_pattern")


def _save(out, folder: str) -> str:
    import torch

    path = os.path.join(folder, "tl_patterns.pt")
    torch.save(dict(out[1].items()), path)
    return path


def _load(path: str):
    import torch

    return torch.load(path, weights_only=True)


def build(job: _child.Job) -> _child.Workload:
    import torch
    from transformer_lens.model_bridge import TransformerBridge

    if job.variant != "run_with_cache":
        raise ValueError(f"unknown transformer_lens variant {job.variant!r}")
    model, tok = _child.load_hf(job, "sdpa")
    bridge = TransformerBridge.boot_transformers(job.model, tokenizer=tok, dtype=torch.float32, device="cpu")
    p = len(job.ids)

    def run(n: int):
        if job.forced and n != _child.WARMUP_TOKENS:
            seq = torch.tensor([_child.forced_ids(job.ids, n)])
        else:
            seq = _child.generate(model, tok, job.ids, n)
        with torch.inference_mode():
            _, cache = bridge.run_with_cache(seq, names_filter=_is_pattern)
        return seq.shape[1], cache

    def count(out) -> tuple[int, int]:
        return p, out[0] - p

    return _child.Workload(
        run=run,
        count=count,
        save=_save,
        load=_load,
        versions=_child.base_versions("transformer-lens"),
        note="forced: run_with_cache over prompt + N forced tokens, no generation" if job.forced else "",
    )


if __name__ == "__main__":
    sys.exit(_child.main(build))
