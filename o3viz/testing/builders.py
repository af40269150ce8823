"""Small builders shared by the tests and benchmarks: a tiny random Llama with the embedded model's
tokenizer, and a small hand-written trace. Importing this module imports neither torch nor pytest."""

from __future__ import annotations

import numpy as np

from o3viz.trace import (
    Alt,
    AttentionRecord,
    Check,
    DAARecord,
    DecisionPoint,
    Provenance,
    Round,
    Step,
    Task,
    Token,
    Trace,
)


def make_tiny_llama_model(vocab_size: int, num_layers: int = 2, max_positions: int = 512, seed: int = 0):
    """A tiny random Llama (hidden 32, 4 heads sharing 2 KV heads, MLP 64) in eval mode: the one
    place a test's tiny model is configured. Seeds torch's global generator with ``seed`` first, so
    the weights, and whatever the caller draws next, are the same on every run.

    Used without a tokenizer (token ids drawn at random) or with one built in the test; see
    ``make_tiny_llama`` for one that shares the embedded model's tokenizer."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(
        hidden_size=32,
        num_hidden_layers=num_layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=64,
        vocab_size=vocab_size,
        max_position_embeddings=max_positions,
    )
    return LlamaForCausalLM(cfg).eval()


def make_tiny_llama(num_layers: int = 2, max_positions: int = 512):
    """A tiny random Llama (``make_tiny_llama_model``) with the embedded model's real tokenizer
    (shared vocabulary), so tests can use real prompts and the chat template without a real model's
    cost. Skips the calling test (``pytest.skip``) when the embedded model's tokenizer is not
    installed."""
    from transformers import AutoTokenizer

    from o3viz.errors import ModelLoadError
    from o3viz.model import resolve_model

    try:
        target, _, _ = resolve_model(None)
    except ModelLoadError as exc:
        import pytest

        pytest.skip(f"default model tokenizer unavailable: {exc}")
    tok = AutoTokenizer.from_pretrained(target)
    return make_tiny_llama_model(len(tok), num_layers, max_positions), tok


def save_tiny_llama(folder, **kwargs):
    """``make_tiny_llama(**kwargs)`` and its tokenizer saved in ``folder`` (a model path for the
    CLI); returns ``folder``."""
    model, tok = make_tiny_llama(**kwargs)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def prefill_then_decode(model, ids: list[int], recorder) -> None:
    """Prefill ``ids[:-1]``, then one decode step with ``ids[-1]``, instrumented and recorded by
    ``recorder`` (``end_step`` after each)."""
    import torch
    from transformers import DynamicCache

    from o3viz.hooks.instrument import instrument

    cache = DynamicCache(config=model.config)
    with instrument(model, recorder), torch.inference_mode():
        model(input_ids=torch.tensor([ids[:-1]]), past_key_values=cache, use_cache=True)
        recorder.end_step()
        model(input_ids=torch.tensor([ids[-1:]]), past_key_values=cache, use_cache=True)
        recorder.end_step()


def small_trace() -> Trace:
    """A hand-written two-step math trace with attention, DAA, a decision point and a check."""
    text = "17*23 = 391. So 391."
    tokens = [
        Token(i, text[i : i + 4], i, i + 4, -0.5, 1.2, [Alt(i, "x", 0.6), Alt(i + 1, "y", 0.2)])
        for i in range(0, 20, 4)
    ]
    att = AttentionRecord(
        num_layers=2,
        num_heads=3,
        prompt_len=4,
        mean=np.full((5, 9), 1 / 9, dtype=np.float16),
        layers=[1],
        per_head=np.zeros((5, 1, 3, 9), dtype=np.float16),
        daa=DAARecord(mode="observe", relevance=np.linspace(0, 1, 9).astype(np.float16)),
    )
    rnd = Round(
        index=0,
        prompt="What is 17*23?",
        rendered_prompt="What is 17*23?",
        text=text,
        tokens=tokens,
        steps=[Step(0, "17*23 = 391.", 0, 12, 0, 3), Step(1, "So 391.", 13, 20, 3, 5)],
        decision_points=[DecisionPoint(2, 2.1, 0.05, [Alt(1, "a", 0.4), Alt(2, "b", 0.35)])],
        checks=[Check("claim", "17*23 = 391", "correct", rule="arith_eq", step=0, span=[0, 11])],
        attention=att,
        answer="391",
        verdict="pass",
        confidence=0.8,
    )
    return Trace(
        Task("What is 17*23?", kind="math"),
        [rnd],
        Provenance(model_id="tiny", seed=0, settings={"max_new_tokens": 8}),
    )


def sample_paths() -> list:
    """Every sample trace file, sorted."""
    from o3viz.paths import samples_dir

    return sorted(samples_dir().glob("*.o3trace.json*"))
