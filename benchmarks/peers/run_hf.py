"""Runner: transformers ``generate(output_attentions=True, return_dict_in_generate=True)`` with
eager attention (sdpa returns no weights): every step's attention of every head of every layer,
fp32. Greedy; ``min_new_tokens`` forces the length. Saving: ``torch.save`` of the attentions
tuple (transformers has no file format for them)."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _child  # noqa: E402


def _save(out, folder: str) -> str:
    import torch

    path = os.path.join(folder, "hf_attentions.pt")
    torch.save(out.attentions, path)
    return path


def _load(path: str):
    import torch

    return torch.load(path, weights_only=True)


def build(job: _child.Job) -> _child.Workload:
    if job.variant != "output_attentions":
        raise ValueError(f"unknown hf variant {job.variant!r}")
    model, tok = _child.load_hf(job, "eager")
    extra = {"output_attentions": True, "return_dict_in_generate": True}
    p = len(job.ids)
    return _child.Workload(
        run=lambda n: _child.generate(model, tok, job.ids, n, **extra),
        count=lambda out: (p, out.sequences.shape[1] - p),
        save=_save,
        load=_load,
        versions=_child.base_versions(),
    )


if __name__ == "__main__":
    sys.exit(_child.main(build))
