"""Enrichment in linear memory (``o3viz.importers.enrich``): forwarding each window in chunks of
query rows with a KV cache gives the same trace as one whole-window forward (the path before
chunks), dense or cut to top-k, in one window or several; the step allocation streamed from the
full rows equals ``step_allocation`` on the dense rows; a window above the model's context reads
the whole text in one chunked pass; and the largest tensor of a 4k-token enrichment in small
chunks is O(chunk × keys), not O(tokens²)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from o3viz.importers import import_trace
from o3viz.importers.enrich import enrich_trace
from o3viz.importers.enrich_rows import StepAllocation, chunk_rows
from o3viz.run.allocation import step_allocation
from o3viz.testing.builders import make_tiny_llama
from o3viz.testing.largest_tensor import LargestTensor
from o3viz.trace.attention import scatter_pairs
from o3viz.trace.parts import Segment, Step

pytestmark = [pytest.mark.model]


@pytest.fixture(scope="module")
def tiny():
    return make_tiny_llama(num_layers=2, max_positions=16384)


def _text(tok, n: int) -> str:
    words = "Then 12 * 3 = 36, and 36 + 4 = 40; check it again.\n\n" * (n // 8 + 1)
    return tok.decode(tok(words, add_special_tokens=False)["input_ids"][:n])


def _enrich(model, tok, trace, **kw):
    return enrich_trace(copy.deepcopy(trace), model=model, tokenizer=tok, **kw).final


def _heads(att) -> np.ndarray | None:
    """(G, nL, H, C) float32 per-head rows, dense or scattered from their top-k pairs."""
    if att.per_head is not None:
        return att.per_head.astype(np.float32)
    if att.per_head_top is None:
        return None
    return scatter_pairs(*att.per_head_top, att.mean.shape[1]).astype(np.float32)


CASES = {
    "dense": (200, {"layers": [1]}),
    "top-k rows": (2300, {"layers": "all"}),
    "windows": (900, {"layers": [0], "window": 400, "overlap": 100}),
}


@pytest.mark.parametrize("case", CASES)
def test_chunked_enrichment_equals_one_whole_window_forward(tiny, case):
    model, tok = tiny
    n, kw = CASES[case]
    trace = import_trace(_text(tok, n), question="Sum?")
    whole = _enrich(model, tok, trace, chunk=100_000, **kw)  # one forward per window: the old path
    assert whole.attention.info["forward"] == "in chunks of 100000 query rows with a KV cache"
    for chunk in (7, 64):
        got = _enrich(model, tok, trace, chunk=chunk, **kw)
        a, b = whole.attention, got.attention
        assert b.rows_top_k == a.rows_top_k and b.info["windows"] == a.info["windows"]
        for name in ("mean", "layer_head", "step_alloc"):
            np.testing.assert_allclose(
                getattr(b, name).astype(np.float32), getattr(a, name).astype(np.float32), atol=2e-3
            )
        ha, hb = _heads(a), _heads(b)
        if a.per_head_top is not None:  # the same k largest per row (near-ties may swap places)
            va, vb = (np.sort(x.per_head_top[0].astype(np.float32), -1) for x in (a, b))
            np.testing.assert_allclose(vb, va, atol=2e-3)
        else:
            np.testing.assert_allclose(hb, ha, atol=2e-3)
        lp = [[t.logprob for t in r.tokens] for r in (whole, got)]
        np.testing.assert_allclose(lp[1], lp[0], atol=1e-4)
        assert [t.id for t in got.tokens] == [t.id for t in whole.tokens]


def test_top_k_rows_keep_each_rows_largest_keys_and_the_allocation_of_the_full_rows(tiny):
    """Cut chunk by chunk, the mean rows keep at most k keys each; the allocation was taken from
    the full rows (the cut rows would give another)."""
    model, tok = tiny
    rnd = _enrich(model, tok, import_trace(_text(tok, 2300), question="Sum?"), chunk=50)
    att = rnd.attention
    assert att.rows_top_k == 64 and int((att.mean != 0).sum(1).max()) <= 64
    from_cut, _ = step_allocation(att.mean, att.prompt_len, rnd.segments, rnd.steps)
    assert np.abs(from_cut - att.step_alloc.astype(np.float32)).max() > 1e-3
    np.testing.assert_allclose(att.step_alloc.astype(np.float32).sum(1), 1.0, atol=5e-3)


@pytest.mark.parametrize("splits", [[0, 300], [0, 1, 2, 97, 150, 151, 299, 300], list(range(301))])
def test_streamed_step_allocation_equals_step_allocation_on_the_dense_rows(splits):
    rng = np.random.default_rng(0)
    p, g = 20, 300
    mean = (rng.random((g, p + g)) / (p + g)).astype(np.float16)
    bounds = [0, 3, 40, 41, 120, 180, 260, 300]
    steps = [Step(i, "", 0, 0, a, b) for i, (a, b) in enumerate(zip(bounds, bounds[1:], strict=False))]
    steps.insert(3, Step(99, "", 0, 0, 50, 50))  # an empty step
    segments = [Segment(0, 0, 30, 0, 8, "system"), Segment(1, 30, 60, 8, 20, "question")]
    want, labels = step_allocation(mean, p, segments, steps)
    alloc = StepAllocation(p, segments, steps)
    for a, b in zip(splits, splits[1:], strict=False):
        alloc.add(a, mean[a:b])
    np.testing.assert_array_equal(alloc.alloc, want)
    assert alloc.labels == labels


def test_a_window_above_the_context_reads_the_whole_text_in_one_chunked_pass():
    model, tok = make_tiny_llama(num_layers=2, max_positions=128)
    text = _text(tok, 300)
    trace = import_trace(text, question="Sum?")
    rnd = _enrich(model, tok, trace, window=1000, chunk=40, layers=[1])
    att = rnd.attention
    assert len(att.info["windows"]) == 1 and "exceeds the model's context (128)" in att.info["positions"]
    ids = [t.id for t in rnd.prompt_tokens] + [t.id for t in rnd.tokens]
    model.set_attn_implementation("eager")
    try:
        with torch.inference_mode():
            out = model(torch.tensor([ids]), output_attentions=True)
    finally:
        model.set_attn_implementation("sdpa")
    eager = torch.stack(out.attentions)[:, 0].float().numpy()  # (L, H, T, T)
    p = att.prompt_len
    np.testing.assert_allclose(att.mean.astype(np.float32), eager.mean((0, 1))[p:], atol=2e-3)
    np.testing.assert_allclose(
        att.per_head[:, 0].astype(np.float32), eager[1, :, p:].transpose(1, 0, 2), atol=2e-3
    )
    logp = torch.log_softmax(out.logits[0].float(), -1).numpy()
    want = logp[p - 1 : -1][np.arange(len(rnd.tokens)), ids[p:]]
    np.testing.assert_allclose([t.logprob for t in rnd.tokens], want, atol=1e-4)


def test_largest_tensor_of_a_4k_enrichment_grows_with_chunk_times_keys_not_tokens_squared(tiny):
    """Torch side only (the forward, the blocked kernel, the chunk's sums); the record's numpy
    mean rows are not counted here."""
    model, tok = tiny
    chunk, h, vocab = 16, model.config.num_attention_heads, model.config.vocab_size
    trace = import_trace(_text(tok, 4096), question="Sum?")
    mode = LargestTensor()
    with mode:
        rnd = _enrich(model, tok, trace, chunk=chunk, layers=[1])
    t = rnd.attention.mean.shape[1]  # prompt + text tokens
    assert rnd.attention.per_head_top is not None and len(rnd.tokens) >= 4000
    # one block of probabilities (H, chunk, T) or a chunk's logits (chunk, V): T² is 8x more
    assert mode.numel <= max(h * chunk * t, chunk * vocab), (mode.numel, mode.op)
    assert mode.numel * 8 <= t * t


def test_chunk_rows_bound_a_chunks_sums():
    assert chunk_rows(8192) * 8192 * 4 <= 64 * 2**20 and chunk_rows(10**9) == 16


def test_a_chunks_blocks_compute_only_the_keys_they_can_see(tiny, monkeypatch):
    """Counted, not timed: with blocks of 16 rows inside chunks of 64, every block's scores stop at
    its last row's horizon (bottom-right in a KV-cache chunk), not at the chunk's last key."""
    from o3viz.hooks import blocks

    model, tok = tiny
    sizes: list[tuple[int, ...]] = []
    real = torch.matmul

    def counting(a, b):
        out = real(a, b)
        sizes.append(tuple(out.shape))
        return out

    monkeypatch.setattr(blocks, "block_rows", lambda *a: 16)
    monkeypatch.setattr(blocks.torch, "matmul", counting)
    rnd = _enrich(model, tok, import_trace(_text(tok, 200), question="Sum?"), chunk=64)
    t, h, n_layers = rnd.attention.mean.shape[1], model.config.num_attention_heads, 2
    want, full = [], 0
    for a in range(0, t, 64):  # chunk by chunk, layer by layer, block by block
        b = min(t, a + 64)
        for _ in range(n_layers):
            for s in range(a, b, 16):
                e = min(b, s + 16)
                want.append((1, h, e - s, e))  # keys [0, e): the block's last row's horizon
                full += h * (e - s) * b  # the chunk's every key
    scores = [x for x in sizes if len(x) == 4 and x[1] == h and x[-1] != model.config.head_dim]
    assert scores == want
    assert sum(np.prod(x) for x in scores) < 0.9 * full
