"""A compressed run goes through the one generation loop: on a tiny random llama it combines with
DAA, explore, the logit lens and the verify loop, streams its tokens and stops midway; its
attention rows are read by position, with released entries at 0."""

from __future__ import annotations

import numpy as np
import pytest

from o3viz.compress.context import CompressionConfig
from o3viz.run.capture import CaptureConfig, DAAConfig, RunRequest, capture
from o3viz.run.dispatch import execute
from o3viz.testing.builders import make_tiny_llama

pytestmark = [pytest.mark.model]

LINE = "Alice bought 3 apples and 4 pears at the market on Monday morning."
PROMPT = (
    "\n".join([LINE] * 5 + ["The vault code of Bob is 4417."] + [LINE] * 5) + "\n\nWhat is Bob's vault code?"
)
# a floor above any demand: releases are certain, so the tests do not hinge on a random model
RELEASE = CompressionConfig(release_floor=1.01, release_window=2)


@pytest.fixture(scope="module")
def tiny():
    return make_tiny_llama(num_layers=2, max_positions=512)


def test_compressed_capture_keeps_attention_daa_lens_and_branches(tiny):
    model, tok = tiny
    req = RunRequest(
        prompt=PROMPT,
        max_new_tokens=12,
        min_new_tokens=12,
        compression=RELEASE,
        daa=DAAConfig(mode="allocate"),
        explore=1,
        capture=CaptureConfig(logit_lens=[0, 1], top_k=None, dtype="float32"),
    )
    tr = capture(model, tok, req)
    r, comp, att = tr.final, tr.compression, tr.final.attention
    assert r.prompt == PROMPT and "⟦" in r.rendered_prompt and r.info["compressed_prompt"]
    assert comp.mode == "pointer+eviction" and comp.compressed_tokens < comp.original_tokens
    released = [e for e in comp.events if e.kind == "release"]
    assert released and len(comp.memory_tokens) == len(r.tokens) == 12
    assert att.daa is not None and att.daa.mode == "allocate" and att.daa.before is not None
    np.testing.assert_allclose(att.mean.sum(1), 1.0, atol=1e-4)
    seg = r.segments[released[0].segment]  # the round's segments are the context's, by index
    assert seg.index == released[0].segment and seg.token_end > seg.token_start
    assert not att.mean[-1, seg.token_start : seg.token_end].any()  # released: no attention
    assert r.internals.lens.token_ids.shape[0] == 12 and len(r.branches) == 1
    assert model.config._attn_implementation == "sdpa"


def test_compressed_run_streams_and_stops_midway(tiny):
    model, tok = tiny
    pieces: list[str] = []
    req = RunRequest(prompt=PROMPT, max_new_tokens=12, min_new_tokens=12, compression=RELEASE)
    tr = capture(model, tok, req, on_token=lambda i, piece, total: pieces.append(piece))
    assert "".join(pieces) == tr.final.text and len(pieces) == 12
    more: list[str] = []
    stopped = capture(
        model, tok, req, on_token=lambda i, p, t: more.append(p), should_stop=lambda: len(more) >= 3
    )
    assert len(stopped.final.tokens) == 3 and stopped.final.info["stop_reason"] == "stopped"
    assert len(stopped.compression.memory_tokens) == 3


def test_compressed_verify_loop_keeps_the_first_rounds_compression(tiny):
    model, tok = tiny
    rounds = []
    req = RunRequest(prompt=PROMPT, max_new_tokens=6, rounds=2, compression=RELEASE, confidence_threshold=1.0)
    tr = execute(model, tok, req, on_round=rounds.append)
    assert len(tr.rounds) == len(rounds) >= 1 and tr.compression is not None
    assert all(r.info["compression"]["ratio"] < 1 for r in tr.rounds)
    assert tr.provenance.settings["compression"]["release_floor"] == 1.01
    assert tr.provenance.settings["max_rounds"] == 2
