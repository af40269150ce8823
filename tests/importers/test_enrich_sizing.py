"""Enrichment decides what fits in a trace before its forward: per-head rows that would not fit
are dropped (and said so in the trace), and a text whose mean rows alone would not fit is refused
in one line before any forward runs."""

from __future__ import annotations

import pytest
import torch

from o3viz.errors import UsageError
from o3viz.importers import import_trace
from o3viz.importers.enrich import enrich_trace
from o3viz.run.sizing import storage_note
from o3viz.testing.builders import make_tiny_llama


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
        with pytest.raises(UsageError, match=r"^a \d+-token prompt with up to 7,[0-9]{3} new tokens") as e:
            enrich_trace(import_trace(_text(tok, 7400), question="Sum?"), model=model, tokenizer=tok)
    finally:
        handle.remove()
    assert calls == [] and "\n" not in str(e.value)


def test_per_head_rows_that_cannot_fit_are_dropped_and_said(tiny):
    model, tok = tiny
    with torch.inference_mode():
        t = enrich_trace(
            import_trace(_text(tok, 3000), question="Sum?"), model=model, tokenizer=tok, layers="all"
        )
    att = t.final.attention
    assert att.per_head is None and att.layers == []
    assert storage_note(att.info).startswith("no per-layer rows or prefill attention kept")
