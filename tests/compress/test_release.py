"""Progressive release: real KV-cache eviction and restore on a tiny random Llama and on the
default model, against plain generation; release runs as a hook of the one generation loop."""

from __future__ import annotations

import pytest
import torch

from o3viz.compress.context import CompressionConfig, compress_context
from o3viz.compress.kv import KVState, evict_entries, prefill, supports_surgery
from o3viz.compress.release import _apply_rules, _Tracker
from o3viz.run.compressed import generate_with_release
from o3viz.run.request import RunRequest
from o3viz.testing.builders import make_tiny_llama_model
from o3viz.trace.compression import CompressionRecord

pytestmark = [pytest.mark.model]

SEGMENTS = [(0, 4), (4, 14), (14, 24), (24, 34), (34, 40)]


@pytest.fixture(scope="module")
def tiny():
    model = make_tiny_llama_model(vocab_size=100, max_positions=256)
    model.generation_config.eos_token_id = None
    return model, torch.randint(0, 100, (40,))


def _kv(model, ids):
    with torch.no_grad():
        _, cache = prefill(model, ids, torch.arange(len(ids)))
    seg_of = torch.full((len(ids),), -1)
    for s, (a, b) in enumerate(SEGMENTS):
        seg_of[a:b] = s
    return KVState(model, cache, ids.clone(), torch.arange(len(ids)), seg_of, "eviction")


def test_releasing_nothing_matches_plain_generation(tiny):
    model, ids = tiny
    res = generate_with_release(
        model, None, ids, SEGMENTS, RunRequest(max_new_tokens=10), config=CompressionConfig(release_floor=0.0)
    )
    ref = model.generate(
        ids[None], max_new_tokens=10, do_sample=False, output_scores=True, return_dict_in_generate=True
    )
    assert res.tokens == ref.sequences[0, 40:].tolist()
    ref_lp = [
        float(torch.log_softmax(s[0].float(), -1)[t]) for s, t in zip(ref.scores, res.tokens, strict=True)
    ]
    assert res.logprobs == pytest.approx(ref_lp, abs=1e-5)
    assert res.events == [] and res.memory_tokens == list(range(41, 51)) and res.mode == "eviction"
    assert len(res.entropies) == len(res.top) == 10 and all(
        t[0][0] == tok for t, tok in zip(res.top, res.tokens, strict=True)
    )


def test_evicting_a_segment_removes_exactly_its_entries_in_every_layer(tiny):
    model, ids = tiny
    kv = _kv(model, ids)
    assert supports_surgery(kv.cache)
    before = [(layer.keys.clone(), layer.values.clone()) for layer in kv.cache.layers]
    assert kv.release(2) == 10
    keep = torch.cat([torch.arange(14), torch.arange(24, 40)])
    for layer, (k, v) in zip(kv.cache.layers, before, strict=True):
        assert torch.equal(layer.keys, k[:, :, keep]) and torch.equal(layer.values, v[:, :, keep])
    assert torch.equal(kv.positions, keep) and 2 not in kv.seg_of.tolist()


def test_restore_recomputes_entries_at_original_positions(tiny):
    model, ids = tiny
    kv = _kv(model, ids)
    before = [layer.keys.clone() for layer in kv.cache.layers]
    kv.release(2)
    with torch.no_grad():
        missing = kv.restore(2, ids[14:24], torch.arange(14, 24))
    assert missing == 0 and torch.equal(kv.positions, torch.arange(40))
    for layer, k in zip(kv.cache.layers, before, strict=True):
        assert torch.allclose(layer.keys, k, atol=1e-5)


def test_evict_entries_keeps_given_indices(tiny):
    model, ids = tiny
    kv = _kv(model, ids)
    k0 = kv.cache.layers[0].keys.clone()
    evict_entries(kv.cache, torch.tensor([0, 5, 39]))
    assert torch.equal(kv.cache.layers[0].keys, k0[:, :, [0, 5, 39]])
    assert all(layer.keys.shape[-2] == layer.values.shape[-2] == 3 for layer in kv.cache.layers)


@pytest.mark.parametrize("surgery", ["evict", "reprefill"])
def test_unused_segments_are_released_in_order_and_memory_shrinks(tiny, surgery):
    model, ids = tiny
    cfg = CompressionConfig(
        release_floor=1.01, release_window=2, surgery=surgery
    )  # every segment is "unused"
    res = generate_with_release(model, None, ids, SEGMENTS, RunRequest(max_new_tokens=8), config=cfg)
    released = [e.segment for e in res.events if e.kind == "release"]
    assert released == [1, 2, 3]  # oldest first; never the sink segment 0 nor the last (question) segment
    assert res.memory_tokens[:4] == [41, 32, 23, 14]
    assert res.mode == ("eviction" if surgery == "evict" else "reprefill")
    assert all(e.reason and 0 <= e.score <= 1 for e in res.events)
    assert len(res.step_scores) == len(res.tokens) and len(res.step_scores[0]) == len(SEGMENTS)
    rec = res.to_record(original_tokens=40)
    assert CompressionRecord.from_dict(rec.to_dict(), "c") == rec and rec.memory_tokens == res.memory_tokens


def test_released_segment_is_restored_when_the_output_uses_its_tokens(tiny):
    model, ids = tiny
    ids = ids.clone()
    ids[14:24] = torch.arange(90, 100)  # tokens found only in segment 2
    ids[:14] %= 90
    ids[24:] %= 90
    kv = _kv(model, ids)
    cfg = CompressionConfig(restore_min_hits=2)
    tr = _Tracker(SEGMENTS, [0.0] * 5, [False] * 5, [0] * 5, [False] * 5, [0] * 5)
    kv.release(2)
    tr.released[2] = True
    events = []
    with torch.no_grad():
        _apply_rules(7, tr, torch.ones(5), kv, ids, [91, 5, 95], cfg, events)
    assert [(e.step, e.segment, e.kind) for e in events] == [(7, 2, "restore")]
    assert "exact" in events[0].reason and len(kv) == 40 and not tr.released[2]


def test_default_model_evicts_unused_repeats_during_generation():
    from o3viz.errors import ModelLoadError
    from o3viz.model import load_model
    from o3viz.text.spans import token_ranges

    try:
        model, tok = load_model()
    except ModelLoadError as exc:
        pytest.skip(f"default model unavailable: {exc}")
    line = "Alice bought 3 apples and 4 pears at the market on Monday morning."
    text = (
        "\n".join([line] * 5 + ["The vault code of Bob is 4417."] + [line] * 5)
        + "\nWhat is Bob's vault code?"
    )
    ctx = compress_context(text, tokenizer=tok, question="What is Bob's vault code?")
    prompt = tok.apply_chat_template(
        [{"role": "user", "content": ctx.text}], tokenize=False, add_generation_prompt=True
    )
    enc = tok(prompt, add_special_tokens=False, return_offsets_mapping=True)
    off = prompt.index(ctx.text)
    ranges = token_ranges([(off + s.cstart, off + s.cend) for s in ctx.segments], enc["offset_mapping"])
    # floor above any demand: releases are certain, so the test does not hinge on this model's attention
    cfg = CompressionConfig(release_floor=1.01, release_window=2)
    res = generate_with_release(
        model,
        tok,
        enc["input_ids"],
        ranges,
        RunRequest(max_new_tokens=12),
        config=cfg,
        redundancy=[s.redundancy for s in ctx.segments],
    )
    assert res.mode == "eviction" and len(res.tokens) == 12
    released = [e.segment for e in res.events if e.kind == "release"]
    assert released and released == sorted(released)
    n_prompt = len(enc["input_ids"])
    dropped = sum(ranges[s][1] - ranges[s][0] for s in released)
    assert res.memory_tokens[-1] == n_prompt + 12 - dropped
    assert all(0 <= x <= 1 for row in res.step_scores for x in row)
    rec = res.to_record(ctx)
    assert rec.mode == "pointer+eviction" and rec.events[0].step == -1


def test_release_reads_the_same_attention_as_eager_output_attentions_after_an_eviction(tiny):
    """Release reads attention from the run's recorder (o3viz's attention function, the one
    mechanism capture uses); after an eviction leaves gaps in the positions, the recorder's row
    read at the cache entries equals eager ``output_attentions`` on the same cache."""
    import copy

    from o3viz.compress.release import cache_attention
    from o3viz.hooks.instrument import instrument
    from o3viz.hooks.recorder import Recorder, RecorderSpec

    model, ids = tiny
    kv = _kv(model, ids)
    kv.release(1)
    cache = copy.deepcopy(kv.cache)
    before = model.config._attn_implementation
    model.set_attn_implementation("eager")
    try:
        with torch.no_grad():
            ref = model(
                input_ids=torch.tensor([[7]]),
                position_ids=torch.tensor([[40]]),
                past_key_values=cache,
                use_cache=True,
                output_attentions=True,
            )
    finally:
        model.set_attn_implementation(before)
    expected = torch.stack([a[0, :, -1].mean(0) for a in ref.attentions]).mean(0)
    c = model.config
    rec = Recorder(
        RecorderSpec(c.num_hidden_layers, c.num_attention_heads, 40, prefill=False, keep_steps=False)
    )
    kv.append(7, 40)
    rec.set_key_positions(kv.positions)
    with instrument(model, rec), torch.no_grad():
        out = model(
            input_ids=torch.tensor([[7]]),
            position_ids=torch.tensor([[40]]),
            past_key_values=kv.cache,
            use_cache=True,
        )
    rec.end_step()
    att = cache_attention(rec, kv, model)
    assert att.shape == (len(kv),) == (31,)
    torch.testing.assert_close(att, expected, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(out.logits[0, -1].float(), ref.logits[0, -1], atol=1e-5, rtol=1e-5)
    # nothing is kept per step (keep_steps=False), and the released columns read 0
    assert model.config._attn_implementation == before and rec.steps_mean == []
    assert float(rec.last_mean[4:14].abs().sum()) == 0.0


class _BanTokens(torch.nn.Module):
    """Sets the logits of the first ``n`` token ids to -inf (as a banned-words filter does)."""

    def __init__(self, n: int):
        super().__init__()
        self.n = n

    def forward(self, logits: torch.Tensor) -> torch.Tensor:
        return logits.index_fill(-1, torch.arange(self.n), float("-inf"))


def test_release_entropies_stay_finite_when_some_logits_are_minus_inf():
    """-(p·log p) is NaN where a logit is -inf (0 · -inf); the release loop uses the capture
    loop's token statistics, which count those tokens as 0."""
    model = make_tiny_llama_model(vocab_size=100, max_positions=256, seed=1)
    model.generation_config.eos_token_id = None
    model.lm_head = torch.nn.Sequential(model.lm_head, _BanTokens(10))
    ids = torch.randint(10, 100, (40,))
    res = generate_with_release(model, None, ids, SEGMENTS, RunRequest(max_new_tokens=6))
    assert len(res.entropies) == 6
    assert all(e == e and 0 < e < 5 for e in res.entropies), res.entropies  # no NaN
    assert all(t >= 10 for t in res.tokens)


def test_after_an_eviction_the_bias_is_read_at_the_entries_original_positions(tiny):
    """With gaps in the cache, a -inf bias on position 2 must zero the entry that holds position 2
    (segment 1 = positions 4..13 is gone): reading the bias as a window ending at the last
    position, as without gaps, would shift it by the 10 released entries and miss it."""
    from o3viz.hooks.instrument import instrument
    from o3viz.hooks.recorder import Recorder, RecorderSpec

    model, ids = tiny
    kv = _kv(model, ids)
    kv.release(1)
    kv.append(7, 40)
    c = model.config
    rec = Recorder(RecorderSpec(c.num_hidden_layers, c.num_attention_heads, 40, prefill=False))
    bias = torch.zeros(41)
    bias[2] = float("-inf")
    rec.set_bias(bias, torch.ones(c.num_hidden_layers, c.num_attention_heads), record_before=False)
    rec.set_key_positions(kv.positions)
    with instrument(model, rec), torch.no_grad():
        model(input_ids=torch.tensor([[7]]), position_ids=torch.tensor([[40]]), past_key_values=kv.cache)
    rec.end_step()
    row = rec.last_mean
    assert row.shape == (41,) and float(row[2]) == 0.0 and float(row[1]) > 0 and float(row[30]) > 0
    assert float(row[4:14].sum()) == 0.0 and abs(float(row.sum()) - 1) < 1e-5
