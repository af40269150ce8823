"""Tiny random process reward models of both shapes (``o3viz.verify.verifiers.prm``), saved by
the tests themselves: a causal LM read at step tags (Math-Shepherd) and a token-classification
model read at step separators (Qwen2.5-Math-PRM). Both use the embedded model's tokenizer."""

from __future__ import annotations

from pathlib import Path


def save_tiny_prm(folder: str | Path, shape: str = "tag") -> Path:
    """A tiny random PRM of ``shape`` (``tag`` or ``head``) saved in ``folder``; returns it."""
    import torch
    from transformers import LlamaForTokenClassification

    from o3viz.testing.builders import make_tiny_llama

    lm, tok = make_tiny_llama(num_layers=1)
    if shape == "head":
        torch.manual_seed(0)
        cfg = lm.config
        cfg.num_labels = 2
        cfg.architectures = ["LlamaForTokenClassification"]
        model = LlamaForTokenClassification(cfg).eval()
    else:
        model = lm
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return Path(folder)
