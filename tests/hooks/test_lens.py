"""Logit lens parity: the last layer's lens equals the model's output distribution at every
generated token (top-5, entropy, rank 0 for greedy); a lens one token off or one that skips the
final norm fails the same comparison."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import o3viz.hooks.lens as lens
from o3viz.errors import UsageError
from o3viz.hooks.lens import record_lens
from o3viz.run.config import parse_indices, resolve_layers
from o3viz.run.loop import run_loop
from o3viz.run.request import RunRequest
from o3viz.testing.builders import make_tiny_llama

pytestmark = [pytest.mark.model]

PROMPT = [1, 504, 3458, 314, 216, 28, 33, 34]


def _run(model, layers, n=8):
    with record_lens(model, layers) as rec:
        gen = run_loop(model, PROMPT, RunRequest(max_new_tokens=n), stop_ids=set())
    return rec.to_record(len(gen.ids), model.config.num_hidden_layers, str), gen


def _parity_errors(record, gen, shift: int = 0) -> list[str]:
    """Where the last lens layer disagrees with the output distribution of token g + shift."""
    bad = []
    last = record.layers.index(record.num_layers - 1)
    for g in range(max(0, -shift), min(len(gen.ids), len(gen.ids) - shift)):
        top_ids = [i for i, _ in gen.tops[g + shift]]
        top_p = np.array([p for _, p in gen.tops[g + shift]])
        if record.token_ids[g, last].tolist() != top_ids:
            bad.append(f"token {g}: top-5 ids differ")
        elif not np.allclose(record.probs[g, last].astype(np.float32), top_p, atol=2e-3):
            bad.append(f"token {g}: top-5 probabilities differ")
        if abs(float(record.entropy[g, last]) - gen.entropies[g + shift]) > 1e-2:
            bad.append(f"token {g}: entropy differs")
    return bad


def test_last_layer_lens_equals_the_output_distribution():
    model, _ = make_tiny_llama(num_layers=3)
    with torch.no_grad():  # a random tiny model is flat; scale the unembedding so top-5 is clear
        model.lm_head.weight.mul_(30)
    record, gen = _run(model, [0, 2])
    assert record.token_ids.shape == (len(gen.ids), 2, 5)
    assert _parity_errors(record, gen) == []
    assert (record.rank[:, 1] == 0).all()  # greedy: the generated token is the output's top-1
    assert _parity_errors(record, gen, shift=1) and _parity_errors(record, gen, shift=-1)
    assert not np.array_equal(record.token_ids[:, 0], record.token_ids[:, 1])  # layer 0 is not the output


def test_lens_without_the_final_norm_fails_parity(monkeypatch):
    model, _ = make_tiny_llama(num_layers=3)
    with torch.no_grad():
        model.lm_head.weight.mul_(30)
    monkeypatch.setattr(lens, "final_norm", lambda m: torch.nn.Identity())
    record, gen = _run(model, [2])
    assert _parity_errors(record, gen)


def test_rank_counts_tokens_the_lens_preferred_over_the_generated_one():
    model, _ = make_tiny_llama(num_layers=2)
    record, gen = _run(model, [0, 1], n=6)
    for g in range(len(gen.ids)):
        # the generated token appears in the lens's top-5 exactly when its rank is below 5
        in_top = gen.ids[g] in record.token_ids[g, 0].tolist()
        assert in_top == (record.rank[g, 0] < 5)


def test_layer_list_parsing_and_bad_layers():
    def parse_layers(text, depth):  # the CLI's --logit-lens path: the one layer parser, then the depth
        return resolve_layers(parse_indices(text, "--logit-lens", allow_empty=False), depth)

    assert parse_layers("0, 10,20,29", 30) == [0, 10, 20, 29]
    assert parse_layers("-1", 30) == [29]
    for bad in ("0,x", "", "30"):
        with pytest.raises(UsageError):
            parse_layers(bad, 30)
    model, _ = make_tiny_llama(num_layers=2)
    with pytest.raises(UsageError, match="must lie in"):
        with record_lens(model, [5]):
            pass
