"""Progress while a local batch decodes counts the samples that have already ended (an end token
decoded), not only those of the batches before: a batch whose samples all end early reads "4/4"
from its first token on, not "0/4" until the batch is over. On a tiny random Llama with the
embedded model's tokenizer, where every token is made an end token."""

from __future__ import annotations

import pytest

from o3viz.samples import draw
from o3viz.samples.request import SampleRequest

pytestmark = [pytest.mark.model]


def test_samples_that_end_early_count_as_finished_while_the_batch_decodes(monkeypatch):
    from o3viz.testing.builders import make_tiny_llama

    model, tokenizer = make_tiny_llama()
    monkeypatch.setattr(draw, "eos_ids", lambda m, t: set(range(model.config.vocab_size)))
    seen: list[tuple[int, int]] = []
    req = SampleRequest(prompt="Count to three.", n=4, max_new_tokens=5, batch=4)
    drawn = draw.draw_local(model, tokenizer, req, on_progress=lambda d, t, n: seen.append((d, t)))
    assert len(drawn.traces) == 4 and all(len(t.final.tokens) == 1 for t in drawn.traces)
    assert seen[0] == (4, 1) and {d for d, _ in seen} == {4}  # every row ended at its first token
