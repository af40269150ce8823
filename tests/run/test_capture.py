"""``capture`` on a tiny random llama with the default model's tokenizer: the trace it builds
(tokens, offsets, segments, steps, step allocation, decision points, branches, provenance),
storage options, streaming and stopping, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from o3viz.errors import UsageError
from o3viz.run.allocation import step_allocation
from o3viz.run.assemble import answer_confidence, build_steps, extract_answer
from o3viz.run.capture import CaptureConfig, DAAConfig, RunRequest, capture, resolve_layers
from o3viz.testing.builders import make_tiny_llama
from o3viz.trace.io import load_trace, trace_bytes
from o3viz.trace.parts import Segment, Step, Token

pytestmark = [pytest.mark.model]

PROMPT = "Tom has 3 apples. He buys 5 more apples at the shop.\nHow many apples does Tom have now?"


@pytest.fixture(scope="module")
def tiny():
    return make_tiny_llama(num_layers=3, max_positions=512)


@pytest.fixture(scope="module")
def trace(tiny):
    model, tok = tiny
    return capture(model, tok, RunRequest(prompt=PROMPT, max_new_tokens=16, explore=2))


def test_prompt_tokens_and_segments_cover_the_rendered_prompt(trace):
    r = trace.final
    assert "".join(t.text for t in r.prompt_tokens) == r.rendered_prompt
    assert r.rendered_prompt.index(PROMPT) > 0  # the chat template was applied
    bounds = [(s.token_start, s.token_end) for s in r.segments]
    assert bounds[0][0] == 0 and bounds[-1][1] == len(r.prompt_tokens)
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:], strict=False))  # a partition
    assert [s.label for s in r.segments] == [
        "template",
        "question 0",
        "question 1",
        "question 2",
        "template (end)",
    ]
    assert (
        r.rendered_prompt[r.segments[2].start : r.segments[2].end].strip()
        == "He buys 5 more apples at the shop."
    )


def test_generated_tokens_carry_offsets_logprobs_entropy_and_top5(trace):
    r = trace.final
    assert len(r.tokens) == 16 and "".join(t.text for t in r.tokens) == r.text
    for t in r.tokens:
        assert r.text[t.start : t.end] == t.text
        assert t.logprob <= 0 and t.entropy >= 0 and len(t.top) == 5
        assert t.top[0].prob >= t.top[-1].prob
    assert abs(np.exp(r.tokens[0].logprob) - r.tokens[0].top[0].prob) < 1e-5  # greedy picks the top token


def test_attention_shapes_and_step_allocation_rows_sum_to_one(trace):
    r, att = trace.final, trace.final.attention
    p, g = len(r.prompt_tokens), len(r.tokens)
    assert att.mean.shape == (g, p + g) and att.layers == [0, 1, 2]
    assert att.per_head.shape == (g, 3, 4, p + g) and att.layer_head.shape == (g, 3, 4)
    assert att.prefill.shape == (3, p, p)
    assert att.step_alloc.shape == (len(r.steps), len(r.segments) + len(r.steps))
    np.testing.assert_allclose(att.step_alloc.astype(np.float32).sum(1), 1.0, atol=1e-2)
    assert len(att.alloc_labels) == att.step_alloc.shape[1]
    assert att.token_matrix(layer=1, head=2).shape == (g, p + g)


def test_decision_points_and_explored_branches(trace):
    r = trace.final
    assert r.decision_points, "a random model hesitates everywhere"
    assert len(r.branches) == 2
    by_index = {d.token_index: d for d in r.decision_points}
    for b in r.branches:
        point = by_index[b.token_index]
        assert b.id in point.branch_ids and b.forced.id != r.tokens[b.token_index].id
        assert b.forced == point.alternatives[0] and b.text and b.mean_logprob < 0


def test_trace_round_trips_and_carries_provenance(trace):
    again = load_trace(trace_bytes(trace, gzipped=True))
    assert again.final.attention == trace.final.attention and again.final.text == trace.final.text
    prov = trace.provenance
    assert prov.attn_implementation.startswith("o3viz") and prov.dtype == "float32"
    assert set(prov.library_versions) == {"torch", "transformers", "o3viz"}
    assert prov.settings["capture"]["top_k"] == 64 and prov.settings["explore"] == 2
    assert prov.created_at and prov.finished_at and prov.seed == 0


def test_storage_options_top_k_heads_and_head_average(tiny):
    model, tok = tiny
    kw = {"prompt": PROMPT, "max_new_tokens": 4, "min_new_tokens": 4}
    topk = capture(model, tok, RunRequest(capture=CaptureConfig(layers=[1], top_k=3), **kw)).final.attention
    assert ((topk.per_head != 0).sum(-1) == 3).all() and topk.layers == [1]
    picked = capture(model, tok, RunRequest(capture=CaptureConfig(layers=[-1], heads=[2], top_k=None), **kw))
    att = picked.final.attention
    assert att.per_head.shape[1:3] == (1, 1) and att.heads == [2] and att.layers == [2]
    np.testing.assert_array_equal(att.token_matrix(layer=2, head=2), att.per_head[:, 0, 0].astype(np.float32))
    with pytest.raises(KeyError):
        att.token_matrix(layer=2, head=0)
    assert load_trace(trace_bytes(picked)).final.attention.heads == [2]
    avg = capture(
        model, tok, RunRequest(capture=CaptureConfig(head_average=True, top_k=None), **kw)
    ).final.attention
    assert avg.per_head.shape[2] == 1 and avg.heads == []
    np.testing.assert_allclose(avg.per_head.astype(np.float32).sum(-1), 1.0, atol=1e-3)


def test_streaming_pieces_rebuild_the_text_and_stop_ends_the_run(tiny):
    model, tok = tiny
    pieces: list[str] = []
    req = RunRequest(prompt=PROMPT, max_new_tokens=12)
    tr = capture(model, tok, req, on_token=lambda i, piece, total: pieces.append(piece))
    assert "".join(pieces) == tr.final.text and len(pieces) == 12
    stopped = capture(model, tok, req, should_stop=lambda: True)
    assert len(stopped.final.tokens) == 1 and stopped.final.info["stop_reason"] == "stopped"


def test_sampling_is_reproducible_with_a_seed_and_differs_across_seeds(tiny):
    model, tok = tiny
    runs = [
        capture(
            model,
            tok,
            RunRequest(
                prompt=PROMPT, max_new_tokens=8, do_sample=True, seed=s, capture=CaptureConfig(enabled=False)
            ),
        ).final.text
        for s in (1, 1, 2)
    ]
    assert runs[0] == runs[1] != runs[2]


def test_generation_only_mode_records_no_attention(tiny):
    model, tok = tiny
    tr = capture(
        model, tok, RunRequest(prompt=PROMPT, max_new_tokens=3, capture=CaptureConfig(enabled=False))
    )
    assert tr.final.attention is None and len(tr.final.tokens) == 3
    assert model.config._attn_implementation == "sdpa"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_new_tokens": 0},
        {"capture": CaptureConfig(layers=[7])},
        {"daa": DAAConfig(mode="loud")},
        {"task": "poetry"},
        {"temperature": 0},
        {"capture": CaptureConfig(top_k=0)},
    ],
)
def test_bad_arguments_raise_usage_error(tiny, kwargs):
    model, tok = tiny
    settings = {k: v for k, v in kwargs.items() if k != "task"}
    with pytest.raises(UsageError):
        capture(model, tok, RunRequest(prompt=PROMPT, **settings), task=kwargs.get("task"))
    with pytest.raises(UsageError):
        capture(model, tok, "   ")


def test_resolve_layers():
    assert resolve_layers("auto", 30) == [0, 15, 29] and resolve_layers([-1, 0, 0], 4) == [0, 3]
    assert resolve_layers("none", 4) == [] and resolve_layers("all", 2) == [0, 1]


def test_step_allocation_by_hand():
    # P = 2 prompt tokens in two segments, G = 3 generated tokens in steps [0, 1) and [1, 3)
    mean = np.array([[0.5, 0.2, 0.3, 0, 0], [0.1, 0.1, 0.4, 0.4, 0], [0, 0.2, 0.2, 0.2, 0.4]], np.float32)
    segs = [Segment(0, 0, 1, 0, 1), Segment(1, 1, 2, 1, 2)]
    steps = [Step(0, "a", 0, 1, 0, 1), Step(1, "b", 2, 3, 1, 3)]
    alloc, labels = step_allocation(mean, 2, segs, steps)
    np.testing.assert_allclose(alloc, [[0.5, 0.2, 0.3, 0], [0.05, 0.15, 0.3, 0.5]], atol=1e-6)
    assert labels == ["seg 0", "seg 1", "step 0", "step 1"]


def test_steps_partition_tokens_and_answers():
    text = "First, 2+2=4. Then 4*3=12.\nThe answer is 12."
    toks, pos = [], 0
    for piece in [
        "First",
        ",",
        " 2",
        "+",
        "2",
        "=",
        "4",
        ".",
        " Then",
        " 4",
        "*",
        "3",
        "=",
        "12",
        ".",
        "\n",
        "The",
        " answer",
        " is",
        " 12",
        ".",
    ]:
        toks.append(Token(0, piece, pos, pos + len(piece)))
        pos += len(piece)
    steps, _ = build_steps(text, toks, text.rfind("12"))
    assert [s.text for s in steps] == ["First, 2+2=4.", "Then 4*3=12.", "The answer is 12."]
    assert [(s.token_start, s.token_end) for s in steps] == [(0, 8), (8, 16), (16, 21)]
    assert steps[-1].kind == "final"
    assert (
        extract_answer(text, "math") == "12" and extract_answer("x\n\nlast line \n", "general") == "last line"
    )
    assert extract_answer("It costs $1,250.", "math") == "1,250"  # as written; answers_equivalent reads 1250


def test_step_allocation_leaves_out_keys_outside_segments_and_steps():
    from o3viz.trace import Segment, Step

    mean = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]], dtype=np.float16)  # P=1, G=2
    segs = [Segment(0, 0, 1, 0, 1, "question 0")]
    steps = [Step(0, "a", 0, 1, 0, 1), Step(1, "b", 1, 2, 1, 2)]
    alloc, labels = step_allocation(mean, 1, segs, steps)
    assert labels == ["seg 0", "step 0", "step 1"]
    np.testing.assert_allclose(alloc.astype(np.float32), [[0.5, 0.5, 0], [0.2, 0.3, 0.5]], atol=1e-3)


def _word_tokens(text: str) -> list[Token]:
    """One token per whitespace-separated piece (the whitespace before it included)."""
    import re

    return [
        Token(0, m.group(), m.start(), m.end(), logprob=-0.1 * i)
        for i, m in enumerate(re.finditer(r"\s*\S+", text))
    ]


def test_captured_steps_get_the_import_classifiers_types_kinds_and_parents():
    """One step classifier: a capture's steps carry the Thought Anchors type, and a backtrack is
    found (and linked to the step it reconsiders) exactly as in an imported trace."""
    from o3viz.text.classify import build_steps as classify_steps
    from o3viz.text.spans import split_spans

    text = (
        "We need to find the total cost. 3 pens cost 4 dollars each, so 3*4 = 14.\n"
        "Wait, 3*4 = 12, not 14.\nLet me check: 12/3 = 4. That is right.\nThe answer is 12."
    )
    pos = text.rfind("12")
    captured, rules = build_steps(text, _word_tokens(text), pos)
    imported, imported_rules = classify_steps(text, split_spans(text), pos)
    assert [(s.type, s.kind, s.parent) for s in captured] == [(s.type, s.kind, s.parent) for s in imported]
    assert rules == imported_rules and all(s.type for s in captured)
    kinds = {s.kind for s in captured}
    assert {"backtrack", "self_check", "final"} <= kinds
    back = next(s for s in captured if s.kind == "backtrack")
    assert back.text.startswith("Wait") and captured[back.parent].text.endswith("3*4 = 14.")
    assert captured[-1].kind == "final" and captured[-1].type == "final_answer_emission"


def test_hmm_mid_sentence_is_no_longer_a_backtrack():
    """The old capture rule called any step containing "hmm"/"actually" a backtrack; the one rule
    looks for a backtracking cue at the start of the step."""
    text = "The result is actually 12 apples.\nSo 12 apples in total."
    steps, _ = build_steps(text, _word_tokens(text), None)
    assert [s.kind for s in steps] == ["step", "step"]


def test_answer_confidence_is_the_mean_probability_of_the_answer_tokens():
    text = "So 3*4 = 12."
    toks = _word_tokens(text)  # logprobs 0, -0.1, -0.2, -0.3
    span = (text.rfind("12."), len(text))
    assert answer_confidence(toks, span) == pytest.approx(np.exp(-0.3))
    assert answer_confidence(toks, None) == pytest.approx(np.mean(np.exp([0, -0.1, -0.2, -0.3])))
    assert answer_confidence([], None) is None
