"""DAA's steer mode in a run on a tiny random model with the embedded model's tokenizer: spans
found by text, occurrence and segment (one line when missing or ambiguous), α = 1 bit-identical to
``off``, α → 0 zeroing exactly the unmarked prompt keys in the steered heads, the trace's record
(save → load), ``auto`` head profiling, and steering composed with the verify loop and explore."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from o3viz.errors import UsageError
from o3viz.run.capture import CaptureConfig, DAAConfig, RunRequest, capture
from o3viz.run.config import SteerSpan
from o3viz.run.daa.steer_profile import profile_heads
from o3viz.run.daa.steer_spans import prompt_sentences, resolve_spans
from o3viz.run.prompt import layout_prompt
from o3viz.run.solve import solve
from o3viz.testing.builders import make_tiny_llama
from o3viz.trace import Trace

pytestmark = [pytest.mark.model]

PROMPT = "Answer with one word. What is the capital city of France? Tell me about it."
FULL = CaptureConfig(layers="all", top_k=None, dtype="float32")


@pytest.fixture(scope="module")
def tiny():
    return make_tiny_llama()


def _steer(span="Answer with one word.", **kw) -> DAAConfig:
    return DAAConfig(mode="steer", spans=[SteerSpan(span)], **kw)


def test_spans_by_text_occurrence_and_segment_cover_exactly_their_tokens(tiny):
    _, tok = tiny
    lay = layout_prompt(tok, "Use a dot. Say yes. Say yes. Is it red?")
    second = resolve_spans(lay, [SteerSpan("Say yes.", occurrence=2)])[0]
    first = resolve_spans(lay, [SteerSpan("Say yes.", occurrence=1)])[0]
    assert lay.rendered[second.start : second.end] == "Say yes." and second.start > first.end
    pieces = lay.pieces
    assert "".join(pieces[second.token_start : second.token_end]).strip() == "Say yes."
    assert "".join(pieces[second.token_start + 1 : second.token_end]).strip() != "Say yes."
    assert "".join(pieces[second.token_start : second.token_end - 1]).strip() != "Say yes."
    (q,) = resolve_spans(lay, [SteerSpan(segment="question")])
    (ins,) = resolve_spans(lay, [SteerSpan(segment="instruction")])
    (s1,) = resolve_spans(lay, [SteerSpan(segment="sentence 1")])
    texts = [lay.rendered[s.start : s.end] for s in (q, ins, s1)]
    assert texts == ["Is it red?", "Use a dot.", "Say yes."]
    assert prompt_sentences("Use a dot. Say yes. Say yes. Is it red?")[1] == "Say yes."


@pytest.mark.parametrize(
    ("span", "message"),
    [
        (SteerSpan("purple"), "does not occur in the prompt"),
        (SteerSpan("Say yes."), "occurs 2 times in the prompt; pick one with --steer-occurrence N"),
        (SteerSpan("Say yes.", occurrence=3), "occurs 2 times, not 3"),
        (SteerSpan(segment="sentence 9"), "sentences 0..3"),
        (SteerSpan(segment="title"), "instruction, question or sentence N"),
    ],
)
def test_a_bad_span_is_one_line(tiny, span, message):
    _, tok = tiny
    lay = layout_prompt(tok, "Use a dot. Say yes. Say yes. Is it red?")
    with pytest.raises(UsageError, match=message) as err:
        resolve_spans(lay, [span])
    assert "\n" not in str(err.value)


def test_settings_that_cannot_steer_are_refused():
    for cfg, msg in [
        (DAAConfig(mode="steer"), "at least one marked span"),
        (_steer(steer_alpha=0), r"alpha must be in \(0, 1\]"),
        (_steer(steer_heads="most"), "steer heads"),
        (DAAConfig(mode="steer", spans=[SteerSpan("a", segment="question")]), "not both"),
    ]:
        with pytest.raises(UsageError, match=msg):
            RunRequest(prompt=PROMPT, daa=cfg).validate()


def test_alpha_one_is_bit_identical_to_off(tiny):
    model, tok = tiny
    off = capture(model, tok, RunRequest(prompt=PROMPT, max_new_tokens=8, capture=FULL))
    one = capture(
        model, tok, RunRequest(prompt=PROMPT, max_new_tokens=8, capture=FULL, daa=_steer(steer_alpha=1.0))
    )
    a, b = off.final, one.final
    assert [t.id for t in a.tokens] == [t.id for t in b.tokens]
    assert [t.logprob for t in a.tokens] == [t.logprob for t in b.tokens]
    for name in ("mean", "per_head", "layer_head", "prefill"):
        assert np.array_equal(getattr(a.attention, name), getattr(b.attention, name)), name
    assert b.attention.steer.alpha == 1.0 and a.attention.steer is None


def test_alpha_to_zero_zeroes_unmarked_prompt_keys_in_the_steered_heads_only(tiny, tmp_path):
    model, tok = tiny
    heads = [(0, 1), (1, 2)]
    req = RunRequest(
        prompt=PROMPT, max_new_tokens=6, capture=FULL, daa=_steer(steer_alpha=1e-12, steer_heads=heads)
    )
    tr = capture(model, tok, req)
    att = tr.final.attention
    st = att.steer
    (span,) = st.spans
    assert tr.final.rendered_prompt[span.start : span.end] == "Answer with one word."
    assert st.heads == heads and st.head_choice == "list" and st.before.shape == att.mean.shape
    p = att.prompt_len
    marked = np.zeros(p, bool)
    marked[span.token_start : span.token_end] = True
    for layer in range(att.num_layers):
        for head in range(att.num_heads):
            rows = att.per_head[:, layer, head, :p]
            if (layer, head) in heads:
                assert rows[:, ~marked].max() < 1e-9 and rows[:, marked].min() > 0
            else:
                assert rows[:, ~marked].min() > 0  # nowhere else
    loaded = Trace.load(tr.save(tmp_path / "s.o3trace.json.gz"))
    assert loaded == tr and loaded.final.attention.steer.spans == st.spans
    assert np.array_equal(loaded.final.attention.steer.before, st.before)
    assert tr.provenance.settings["daa"]["spans"][0]["text"] == "Answer with one word."


def test_auto_profiles_layers_and_records_why(tiny):
    model, tok = tiny
    heads, info = profile_heads(model, tok, 0.01)
    assert heads and {h for _, h in heads} == set(range(4))
    assert len(info["layer_gain_nats"]) == 2 and info["chosen_layers"] == sorted(
        {layer for layer, _ in heads}
    )
    assert info["profile_tasks"] and info["why"]
    tr = capture(model, tok, RunRequest(prompt=PROMPT, max_new_tokens=3, daa=_steer(steer_heads="auto")))
    st = tr.final.attention.steer
    assert (
        st.head_choice == "auto" and st.heads == heads and st.info["chosen_layers"] == info["chosen_layers"]
    )


def test_steering_composes_with_the_verify_loop_and_explore(tiny):
    model, tok = tiny
    req = RunRequest(
        prompt=PROMPT, max_new_tokens=6, rounds=2, confidence_threshold=1.0, explore=1, daa=_steer()
    )
    tr = solve(model, tok, req)
    assert len(tr.rounds) == 2
    for rnd in tr.rounds:  # round 2's prompt repeats the task's: the span is pinned to its place
        (span,) = rnd.attention.steer.spans
        assert rnd.rendered_prompt[span.start : span.end] == "Answer with one word."
        assert span.start < rnd.rendered_prompt.index("What is the capital")
    assert tr.rounds[0].branches


def test_without_attention_capture_the_steering_goes_in_the_round_info(tiny):
    model, tok = tiny
    req = RunRequest(prompt=PROMPT, max_new_tokens=3, capture=CaptureConfig(enabled=False), daa=_steer())
    tr = capture(model, tok, req)
    assert tr.final.attention is None and tr.final.info["steer"]["spans"][0]["label"].startswith("text:")
    assert dataclasses.asdict(req.daa)["steer_alpha"] == 0.01
