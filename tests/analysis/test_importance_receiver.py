"""Receiver heads: the step × step reduction against full eager attention, the score math on
planted matrices, and one-line errors for bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from o3viz.analysis.importance.reading import ReadSequence, read_sequence
from o3viz.analysis.importance.receiver import (
    kurtosis,
    receiver_from_matrices,
    receiver_importance,
    step_attention,
    vertical_scores,
)
from o3viz.errors import UsageError
from o3viz.testing.builders import make_tiny_llama
from o3viz.trace import Round, Step, Task, Trace

pytestmark = [pytest.mark.model]

STEPS = [(3, 7), (7, 12), (12, 13), (13, 20), (20, 26)]


def _reference(model, ids, steps) -> np.ndarray:
    """(L, H, S, S) pair-averaged attention from transformers' own eager attention weights."""
    model.set_attn_implementation("eager")
    with torch.inference_mode():
        att = model(input_ids=torch.tensor([ids]), output_attentions=True).attentions
    out = np.zeros((len(att), att[0].shape[1], len(steps), len(steps)), dtype=np.float32)
    for layer, a in enumerate(att):
        for j, (ja, jb) in enumerate(steps):
            for i, (ia, ib) in enumerate(steps):
                out[layer, :, j, i] = a[0, :, ja:jb, ia:ib].float().mean((-1, -2)).numpy()
    return out


def test_step_attention_equals_eager_attention_averaged_over_step_pairs():
    model, _ = make_tiny_llama()
    ids = list(range(100, 126))
    got = step_attention(model, ReadSequence(ids, 3, STEPS, {}))
    want = _reference(model, ids, STEPS)
    np.testing.assert_allclose(got, want, atol=2e-6)
    shifted = ReadSequence(ids, 3, [(a + 1, b + 1) for a, b in STEPS[:-1]] + [(21, 26)], {})
    assert not np.allclose(step_attention(model, shifted), want, atol=1e-3)  # an off-by-one shows


def test_vertical_scores_skip_the_nearest_steps():
    m = np.zeros((6, 6))
    m[1, 0] = 100.0  # a neighbour: ignored with gap 2
    m[4, 0] = 1.0
    v = vertical_scores(m, gap=2)
    assert v[0] == pytest.approx(1.0 / 4) and np.isnan(v[5])


def test_the_planted_receiver_head_is_found_and_its_focus_step_scores_highest():
    rng = np.random.default_rng(0)
    mats = rng.uniform(0, 0.01, size=(3, 4, 12, 12))
    mats[2, 1, :, 5] = 0.9  # layer 2 head 1 keeps attending to step 5
    scores, kurt, heads = receiver_from_matrices(np.tril(mats), gap=2, top_k=1)
    assert heads == [(2, 1)] and kurt.shape == (3, 4)
    assert int(np.nanargmax(scores)) == 5


def test_kurtosis_is_zero_for_a_constant_row_and_large_for_a_spike():
    assert kurtosis(np.ones(10)) == 0
    assert kurtosis(np.r_[np.zeros(20), 1.0]) > 10


def _trace(text: str, spans: list[tuple[int, int]]) -> Trace:
    steps = [Step(i, text[s:e], s, e) for i, (s, e) in enumerate(spans)]
    return Trace(Task("What is 2 + 3?", kind="math"), [Round(text=text, steps=steps)])


def test_a_trace_too_short_to_chunk_gets_one_line():
    model, tok = make_tiny_llama()
    with pytest.raises(UsageError, match="too short to chunk: 1 step"):
        receiver_importance(_trace("2 + 3 = 5.", [(0, 10)]), model, tok)


def test_a_reader_with_a_different_tokenizer_gets_one_line():
    model, tok = make_tiny_llama()
    text = "First, 2 + 3. That is 5. So the answer is 5."
    t = _trace(text, [(0, 13), (14, 24), (25, 44)])
    from o3viz.trace import Token

    # token ids of another vocabulary: they decode to other text under this reader
    t.final.tokens = [Token(40000 + i, text[i], i, i + 1) for i in range(len(text))]
    with pytest.raises(UsageError, match="different tokenizer.*--retokenize"):
        read_sequence(t, model, tok)
    assert read_sequence(t, model, tok, retokenize=True).num_steps == 3


def test_receiver_record_on_an_imported_trace_says_the_reader_is_a_proxy():
    model, tok = make_tiny_llama()
    text = "First, 2 + 3. Let me add. That is 5. Check: 5 - 3 = 2. So the answer is 5. Done."
    spans = [(0, 13), (14, 25), (26, 36), (37, 54), (55, 74), (75, 80)]
    t = _trace(text, spans)
    t.provenance.source = {"source_model": "deepseek-r1"}
    rec = receiver_importance(t, model, tok, gap=1, top_k=2)
    assert len(rec.scores) == 6 and rec.scores[-1] is None and all(s is not None for s in rec.scores[:5])
    assert rec.model["proxy"] is True and rec.model["writer"] == "deepseek-r1"
    assert rec.head_kurtosis.shape == (2, 4) and len(rec.receiver_heads) == 2 and rec.matrix.shape == (6, 6)


def test_a_recency_head_has_high_locality_and_is_left_out_of_the_nonlocal_score():
    import numpy as np

    from o3viz.analysis.importance.receiver import head_locality, kurtosis, nonlocal_scores, vertical_scores

    s = 8
    recency = np.zeros((s, s))
    for j in range(s):
        recency[j, max(0, j - 1) : j + 1] = 0.5
    anchor = np.zeros((s, s))
    anchor[:, 0] = 1.0  # every step looks back at step 0
    mats = np.stack([recency, anchor])[None]  # (1, 2, S, S)
    local = head_locality(mats, np.ones(s))
    assert local[0, 0] > 0.9 and local[0, 1] < 0.3
    vert = vertical_scores(mats, 2)
    scores, heads = nonlocal_scores(vert, kurtosis(vert), local, top_k=1)
    assert heads == [(0, 1)] and scores[0] == 1.0


def test_the_reader_reads_past_its_context_when_max_tokens_asks():
    """By default a read stops at the reader's context (``max_position_embeddings``); a larger
    ``max_tokens`` reads on (a 16k read of an 8k-context model), in the same blocked forward."""
    model, tok = make_tiny_llama(max_positions=96)
    sentences = [f"Step {i}: {i} + 1 = {i + 1}." for i in range(24)]
    text = " ".join(sentences)
    spans, at = [], 0
    for s in sentences:
        spans.append((at, at + len(s)))
        at += len(s) + 1
    t = _trace(text, spans)
    short = read_sequence(t, model, tok, retokenize=True)
    assert len(short.ids) <= 96 and short.truncated_steps > 0
    whole = read_sequence(t, model, tok, retokenize=True, max_tokens=10_000)
    assert whole.truncated_steps == 0 and len(whole.ids) > 192
    rec = receiver_importance(t, model, tok, retokenize=True, max_tokens=10_000, gap=1, top_k=2)
    assert rec.params["tokens"] == len(whole.ids) and rec.params["steps_read"] == 24
