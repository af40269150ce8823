"""Enrichment: teacher-forced attention equals eager ``output_attentions`` (one window and each of
several windows), logprobs equal the model's own, memory-bounded windows cover every token once,
and the model's attention implementation is restored. Tiny random Llama and a tokenizer trained
in code; one test runs the real embedded model on a short trace."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from o3viz.errors import UsageError
from o3viz.importers import import_trace
from o3viz.importers.enrich import enrich_trace, plan_windows
from o3viz.testing.builders import make_tiny_llama_model
from o3viz.trace import load_trace, trace_bytes

pytestmark = [pytest.mark.model]

TEXT = (
    "<think>First, 12 * 3 = 36. Then 36 + 4 = 40.\n\nWait, let me check 12 * 3 again: it is 36. "
    "So the total is 40.</think>The total is \\boxed{40}."
)


@pytest.fixture(scope="module")
def tiny():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE(unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    corpus = [TEXT, "What is 12 * 3 + 4? Count the steps. Step 1: 1 + 1 = 2."] * 20
    tk.train_from_iterator(
        corpus,
        trainers.BpeTrainer(
            vocab_size=300, special_tokens=["<unk>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        ),
    )
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>", pad_token="<unk>")
    model = make_tiny_llama_model(vocab_size=len(tok), max_positions=128)
    model.set_attn_implementation("sdpa")
    return model, tok


def _eager(model, ids):
    prev = model.config._attn_implementation
    model.set_attn_implementation("eager")
    try:
        with torch.no_grad():
            out = model(torch.tensor([ids]), output_attentions=True)
    finally:
        model.set_attn_implementation(prev)
    return torch.stack(out.attentions)[:, 0].numpy(), torch.log_softmax(out.logits[0].float(), -1).numpy()


def test_single_window_matches_eager_attention_and_logprobs(tiny):
    model, tok = tiny
    t = enrich_trace(
        import_trace(TEXT, question="What is 12 * 3 + 4?"), model=model, tokenizer=tok, layers=[1]
    )
    att, rnd = t.attention, t.final
    p = att.prompt_len
    ids = [x.id for x in rnd.prompt_tokens] + [x.id for x in rnd.tokens]
    eager, logp = _eager(model, ids)  # (L, H, T, T), (T, V)
    assert att.mean.shape == (len(rnd.tokens), len(ids)) and len(att.info["windows"]) == 1
    np.testing.assert_allclose(att.mean.astype(np.float32), eager.mean((0, 1))[p:], atol=2e-3)
    np.testing.assert_allclose(
        att.per_head[:, 0].astype(np.float32), eager[1, :, p:].transpose(1, 0, 2), atol=2e-3
    )
    np.testing.assert_allclose(
        att.layer_head.astype(np.float32), eager[:, :, p:, :p].sum(-1).transpose(2, 0, 1), atol=2e-3
    )
    expected = logp[p - 1 : -1][np.arange(len(rnd.tokens)), ids[p:]]
    np.testing.assert_allclose([x.logprob for x in rnd.tokens], expected, atol=1e-4)
    assert model.config._attn_implementation == "sdpa"  # restored


def test_tokens_steps_and_allocation_are_consistent(tiny):
    model, tok = tiny
    t = enrich_trace(import_trace(TEXT, question="What is 12 * 3 + 4?"), model=model, tokenizer=tok)
    rnd = t.final
    assert "".join(x.text for x in rnd.tokens) == rnd.text
    assert all(rnd.text[s.start : s.end] == s.text for s in rnd.steps)
    assert all(
        rnd.tokens[s.token_start].start <= s.start < rnd.tokens[s.token_end - 1].end for s in rnd.steps
    )
    assert rnd.prompt_tokens and rnd.segments and "What is" in rnd.rendered_prompt
    alloc = t.attention.step_alloc.astype(np.float32)
    assert alloc.shape == (len(rnd.steps), len(rnd.segments) + len(rnd.steps))
    np.testing.assert_allclose(alloc.sum(1), 1.0, atol=5e-3)
    assert np.all(np.triu(alloc[:, len(rnd.segments) :], 1) == 0)  # no attention to later steps
    assert load_trace(trace_bytes(t)) == t


def test_windows_cover_each_row_once_and_match_eager_on_their_window(tiny):
    model, tok = tiny
    body = " ".join(f"Step {i}: {i} + 1 = {i + 1}." for i in range(30))
    t = enrich_trace(import_trace(body, question="Count."), model=model, tokenizer=tok, window=96, overlap=24)
    att, rnd = t.attention, t.final
    p, prompt_ids = att.prompt_len, [x.id for x in rnd.prompt_tokens]
    ids = [x.id for x in rnd.tokens]
    windows = att.info["windows"]
    assert len(windows) > 2
    rows = [r for w in windows for r in range(*w["rows"])]
    assert rows == list(range(len(ids)))
    for w in windows:
        s, e = w["text_tokens"]
        assert e - s + p <= 96
        eager, _ = _eager(model, prompt_ids + ids[s:e])
        mean = eager.mean((0, 1))  # (T_w, T_w)
        r0, r1 = w["rows"]
        got = att.mean[r0:r1].astype(np.float32)
        np.testing.assert_allclose(got[:, :p], mean[p + r0 - s : p + r1 - s, :p], atol=2e-3)
        np.testing.assert_allclose(got[:, p + s : p + e], mean[p + r0 - s : p + r1 - s, p:], atol=2e-3)
        assert not got[:, p : p + s].any()  # text before the window was not seen


def test_plan_windows_and_limits(tiny):
    assert [w.to_dict() for w in plan_windows(5, 8, 2)] == [{"text_tokens": [0, 5], "rows": [0, 5]}]
    with pytest.raises(UsageError):
        plan_windows(10, 4, 4)
    model, tok = tiny
    with pytest.raises(UsageError, match="question"):
        enrich_trace(import_trace("x = 1.", question="word " * 200), model=model, tokenizer=tok)


def test_real_default_model_enriches_a_short_r1_trace():
    from o3viz.errors import ModelLoadError
    from o3viz.model import load_model

    try:
        model, tok = load_model()
    except ModelLoadError as exc:
        pytest.skip(f"default model unavailable: {exc}")
    t = import_trace(
        TEXT, question="What is 12 * 3 + 4?", enrich=True, model=model, tokenizer=tok, layers=[0]
    )
    att = t.attention
    assert att.num_layers == 30 and att.num_heads == 9 and att.layers == [0]
    assert np.allclose(att.mean.astype(np.float32).sum(1), 1.0, atol=1e-2)
    assert all(x.logprob is not None and x.logprob <= 0 for x in t.tokens)
    assert t.info["enrichment"]["model_id"].startswith("SmolLM2")
    assert model.config._attn_implementation != "o3viz_enrich"
