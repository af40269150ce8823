"""Shared test fixtures: paths to the project, its samples and ../shared/data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
SAMPLES = ROOT / "sample_traces"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent (it sits beside the project in CI and dev sessions)")
    return SHARED_DATA


def sample_paths() -> list[Path]:
    return sorted(p for p in SAMPLES.glob("*.o3trace.json*"))


def make_tiny_llama(num_layers: int = 2, max_positions: int = 512):
    """A tiny random Llama with the embedded model's real tokenizer (shared vocabulary), so tests
    can use real prompts and the chat template without a real model's cost."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from o3viz.errors import ModelLoadError
    from o3viz.model import resolve_model

    try:
        target, _, _ = resolve_model(None)
    except ModelLoadError as exc:
        pytest.skip(f"default model tokenizer unavailable: {exc}")
    tok = AutoTokenizer.from_pretrained(target)
    torch.manual_seed(0)
    cfg = LlamaConfig(
        hidden_size=32,
        num_hidden_layers=num_layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=64,
        vocab_size=len(tok),
        max_position_embeddings=max_positions,
    )
    return LlamaForCausalLM(cfg).eval(), tok
