"""Enrichment decides what fits in a trace before its forward: a long text's rows are kept as
top-k (value, key) pairs (and said so in the trace), and a text whose rows would not fit even so is
refused in one line before any forward runs."""

from __future__ import annotations

import pytest
import torch

from o3viz.errors import UsageError
from o3viz.importers import import_trace
from o3viz.importers.enrich import enrich_trace
from o3viz.run.sizing import storage_note
from o3viz.testing.builders import make_tiny_llama

pytestmark = [pytest.mark.model]


@pytest.fixture(scope="module")
def tiny():
    return make_tiny_llama(num_layers=2, max_positions=16384)


def _text(tok, n: int) -> str:
    words = "Then 12 * 3 = 36, and 36 + 4 = 40; check it again. " * (n // 8)
    return tok.decode(tok(words, add_special_tokens=False)["input_ids"][:n])


def test_a_text_whose_mean_rows_cannot_fit_is_refused_before_the_forward(tiny):
    model, tok = tiny
    calls = []
    handle = model.model.layers[0].register_forward_hook(lambda *a: calls.append(1))
    try:
        # (7,400 tokens were refused before top-k rows; now only a text too long even for them is)
        with pytest.raises(
            UsageError, match=r"^a \d+-token prompt with up to 1[2-4]\d,\d{3} new tokens"
        ) as e:
            enrich_trace(import_trace(_text(tok, 130_000), question="Sum?"), model=model, tokenizer=tok)
    finally:
        handle.remove()
    assert calls == [] and "\n" not in str(e.value)


def test_a_long_texts_rows_are_kept_as_top_k_pairs_and_said(tiny):
    model, tok = tiny
    with torch.inference_mode():
        t = enrich_trace(
            import_trace(_text(tok, 3000), question="Sum?"), model=model, tokenizer=tok, layers="all"
        )
    att = t.final.attention
    assert att.per_head is None and att.layers == [0, 1] and att.rows_top_k == 64
    assert att.per_head_top[0].shape == (att.num_generated, 2, model.config.num_attention_heads, 64)
    assert int((att.mean != 0).sum(1).max()) <= 64 and att.step_alloc is not None
    assert storage_note(att.info).startswith("generated-token attention kept as top-64 keys per row above 2k")


@pytest.mark.parametrize("window", [None, 1200])
def test_top_k_per_head_pairs_point_at_each_rows_own_keys_across_windows(tiny, window):
    import numpy as np

    model, tok = tiny
    with torch.inference_mode():
        t = enrich_trace(
            import_trace(_text(tok, 2600), question="Sum?"),
            model=model,
            tokenizer=tok,
            layers=[1],
            window=window,
        )
    att = t.final.attention
    values, index = att.per_head_top
    g, p = att.num_generated, att.prompt_len
    assert index.shape == (g, 1, model.config.num_attention_heads, 64) and att.per_head is None
    live = values != 0  # (rows with fewer keys than 64 fill up with zeros anywhere)
    assert (index <= p + np.arange(g)[:, None, None, None])[live].all()  # causal, in global columns
    # rows with at most 64 keys in view keep all of them: their whole mass
    np.testing.assert_allclose(values[: 64 - p].astype(np.float32).sum(-1), 1.0, atol=0.01)
    if window:  # a later window's row never points into text outside its window
        spans = [w["text_tokens"] for w in att.info["windows"]]
        last = spans[-1]
        rows, kept = index[last[0] + 600 :], live[last[0] + 600 :]
        text = rows[(rows >= p) & kept] - p
        assert text.min() >= last[0]
