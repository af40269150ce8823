"""Attention suppression: the masked passes (cached prefix, batched) against an independent full
forward with an explicit 4-D mask, and the dependency edges."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from o3viz.analysis.importance.dependencies import dependencies_from_matrix
from o3viz.analysis.importance.reading import ReadSequence
from o3viz.analysis.importance.suppression import suppression_importance, suppression_matrix
from o3viz.hooks.suppress import suppressing
from o3viz.testing.builders import make_tiny_llama
from o3viz.trace import Round, Step, Task, Trace

pytestmark = [pytest.mark.model]

IDS = list(range(200, 230))
STEPS = [(2, 8), (8, 13), (13, 19), (19, 24), (24, 30)]


def _kl(p_logits, q_logits):
    lp, lq = torch.log_softmax(p_logits.float(), -1), torch.log_softmax(q_logits.float(), -1)
    return (lp.exp() * (lp - lq)).sum(-1).clamp(min=0)


def _reference(model, ids, steps) -> np.ndarray:
    """M[j, i] from full uncached eager forwards with an explicit (1, 1, T, T) float mask."""
    model.set_attn_implementation("eager")
    t = len(ids)
    x = torch.tensor([ids])
    causal = torch.tril(torch.ones(t, t, dtype=torch.bool))
    with torch.inference_mode():
        base = model(input_ids=x).logits[0]
        out = np.zeros((len(steps), len(steps)), dtype=np.float32)
        for i, (a, b) in enumerate(steps[:-1]):
            allowed = causal.clone()
            allowed[:, a:b] = False
            mask = torch.where(allowed, 0.0, torch.finfo(torch.float32).min)[None, None]
            masked = model(input_ids=x, attention_mask=mask).logits[0]
            kl = _kl(base, masked)
            for j in range(i + 1, len(steps)):
                ja, jb = steps[j]
                out[j, i] = kl[ja:jb].mean()
    return out


def test_the_cached_batched_matrix_equals_full_masked_forwards():
    model, _ = make_tiny_llama()
    seq = ReadSequence(IDS, 2, STEPS, {})
    got = suppression_matrix(model, seq, batch=3)
    want = _reference(model, IDS, STEPS)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-6)
    assert np.triu(got).sum() == 0 and got[1:, 0].min() > 0


def test_batch_size_does_not_change_the_matrix():
    model, _ = make_tiny_llama()
    seq = ReadSequence(IDS, 2, STEPS, {})
    np.testing.assert_allclose(
        suppression_matrix(model, seq, batch=1), suppression_matrix(model, seq, batch=4), rtol=1e-4, atol=1e-7
    )


def test_suppressing_nothing_changes_nothing():
    model, _ = make_tiny_llama()
    x = torch.tensor([IDS])
    with torch.inference_mode():
        with suppressing(model, torch.zeros(1, len(IDS), dtype=torch.bool)):
            a = model(input_ids=x).logits
        with suppressing(
            model, torch.zeros(1, len(IDS), dtype=torch.bool).index_fill_(1, torch.tensor([5]), True)
        ):
            b = model(input_ids=x).logits
    plain = model(input_ids=x).logits
    torch.testing.assert_close(a, plain, rtol=1e-5, atol=1e-5)
    assert torch.allclose(a[0, :5], b[0, :5], atol=1e-6) and not torch.allclose(a[0, 6:], b[0, 6:], atol=1e-4)
    assert model.config._attn_implementation != "o3viz_suppress"  # restored on exit


def test_dependencies_keep_the_strongest_antecedents_above_the_threshold():
    m = np.zeros((4, 4))
    m[3, 0], m[3, 1], m[3, 2], m[2, 1] = 4.0, 0.4, 2.0, 1.0
    assert dependencies_from_matrix(m, min_weight=0.2, per_step=2) == [(2, 1, 0.25), (3, 0, 1.0), (3, 2, 0.5)]


def test_suppression_record_scores_every_step_but_the_last_and_draws_edges():
    model, tok = make_tiny_llama()
    text = "First, 2 + 3. Let me add. That is 5. Check: 5 - 3 = 2. So the answer is 5."
    spans = [(0, 13), (14, 25), (26, 36), (37, 54), (55, 74)]
    t = Trace(
        Task("What is 2 + 3?", kind="math"),
        [Round(text=text, steps=[Step(i, text[a:b], a, b) for i, (a, b) in enumerate(spans)])],
    )
    rec = suppression_importance(t, model, tok, batch=2, min_weight=0.0)
    assert [s is None for s in rec.scores] == [False] * 4 + [True]
    assert rec.matrix.shape == (5, 5) and rec.depends_on and all(a < s for s, a, _ in rec.depends_on)
    assert max(w for *_, w in rec.depends_on) == pytest.approx(1.0)
