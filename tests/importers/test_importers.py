"""Importers: format detection and parsing of every supported shape, answers, step types, the tree,
checks and the error contract. Inputs are small but real-shaped API payloads built in code."""

from __future__ import annotations

import gzip
import json

import pytest

from o3viz.errors import TraceError, UsageError
from o3viz.importers import FORMATS, detect_format, import_trace
from o3viz.importers.formats import MAX_IMPORT_BYTES
from o3viz.text.answers import answers_equivalent, extract_answer, normalize_answer
from o3viz.text.classify import LOOKBACK, build_steps, classify_step
from o3viz.trace import load_trace, trace_bytes
from o3viz.verify.policy import answer_check, claims_to_checks

THINK = (
    "First, 12 * 3 = 36. Then 36 + 4 = 40.\n\nWait, let me check 12 * 3 again: it is 36. So the total is 40."
)
ANSWER = "The total is \\boxed{40}."

DEEPSEEK = {
    "id": "x",
    "object": "chat.completion",
    "model": "deepseek-reasoner",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "reasoning_content": THINK, "content": ANSWER},
            "finish_reason": "stop",
        }
    ],
}
OPENAI_CHAT = {
    "object": "chat.completion",
    "model": "gpt-4o",
    "choices": [{"message": {"role": "assistant", "content": f"<think>{THINK}</think>{ANSWER}"}}],
}
RESPONSES = {
    "object": "response",
    "model": "o3-mini",
    "input": "What is 12*3+4?",
    "output": [
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": THINK}]},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": ANSWER, "annotations": []}],
        },
    ],
}
ANTHROPIC = {
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4",
    "content": [
        {"type": "thinking", "thinking": THINK, "signature": "abc"},
        {"type": "text", "text": ANSWER},
    ],
}
TEMPLATE = f"<｜begin▁of▁sentence｜><｜User｜>What is 12*3+4?<｜Assistant｜><think>\n{THINK}\n</think>\n\n{ANSWER}<｜end▁of▁sentence｜>"


@pytest.mark.parametrize(
    "src, fmt",
    [
        (DEEPSEEK, "deepseek_chat"),
        (OPENAI_CHAT, "openai_chat"),
        (RESPONSES, "openai_responses"),
        (ANTHROPIC, "anthropic_messages"),
        (TEMPLATE, "think_tags"),
        (f"<think>{THINK}</think>{ANSWER}", "think_tags"),
        (THINK, "plain_text"),
        (
            {
                "messages": [
                    {"role": "user", "content": "Q?"},
                    {"role": "assistant", "reasoning_content": THINK, "content": ANSWER},
                ]
            },
            "chat_messages",
        ),
        (
            [{"problem": "Q?", "full_response": f"<think>{THINK}</think>{ANSWER}", "ground_truth": "40"}],
            "json_dataset",
        ),
    ],
)
def test_every_format_is_detected_and_splits_thinking_from_answer(src, fmt):
    assert detect_format(src) == fmt
    trace = import_trace(src, reference="40")
    rnd = trace.final
    assert trace.provenance.source["format"] == fmt
    assert THINK.split(".")[0] in rnd.text and rnd.answer == "40"
    assert rnd.checks[-1].kind == "answer" and rnd.checks[-1].verdict == "correct"
    if fmt != "plain_text":
        a, b = rnd.info["regions"]["answer"]
        assert rnd.text[a:b] == ANSWER


def test_api_json_keeps_source_model_and_question():
    assert import_trace(DEEPSEEK).provenance.source["source_model"] == "deepseek-reasoner"
    assert import_trace(RESPONSES).task.question == "What is 12*3+4?"
    assert import_trace(TEMPLATE).task.question == "What is 12*3+4?"
    assert "<｜" not in import_trace(TEMPLATE).final.text


def test_bytes_gzip_and_path_inputs_give_the_same_trace(tmp_path):
    raw = json.dumps(ANTHROPIC).encode()
    path = tmp_path / "msg.json.gz"
    path.write_bytes(gzip.compress(raw))
    a, b = import_trace(raw, claims=False), import_trace(path, claims=False)
    assert a.final.text == b.final.text and b.provenance.source["file"] == "msg.json.gz"


def test_jsonl_record_option_and_fields(tmp_path):
    rows = [{"q": f"Q{i}", "out": f"Thinking {i}. So it is {i}.", "gold": str(i)} for i in range(3)]
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    t = import_trace(path, record=2, text_field="out", question_field="q", reference_field="gold")
    assert (t.task.question, t.task.reference, t.provenance.source["record"]) == ("Q2", "2", 3)
    assert t.final.checks[-1].verdict == "correct"
    with pytest.raises(TraceError, match="out of range"):
        import_trace(path, record=3, text_field="out")
    with pytest.raises(TraceError, match="no such field"):
        import_trace(path, text_field="missing")


@pytest.mark.parametrize(
    "bad, words",
    [
        ("", "empty"),
        (b"\x00\x01\x02binary", "binary"),
        ('{"choices": [1, 2', "not valid JSON"),
        ({"foo": 1}, "not a known trace format"),
        ([1, 2, 3], "not a known trace format"),
    ],
)
def test_unknown_or_broken_input_raises_one_line_trace_error_naming_formats(bad, words):
    with pytest.raises(TraceError) as err:
        import_trace(bad)
    msg = str(err.value)
    assert words in msg and "\n" not in msg and "tried" in msg


def test_format_override_and_unknown_format():
    t = import_trace(f"<think>{THINK}</think>{ANSWER}", format="plain_text")
    assert t.provenance.source["format"] == "plain_text" and "<think>" in t.final.text
    with pytest.raises(UsageError, match="no format named"):
        import_trace(THINK, format="yaml")
    with pytest.raises(TraceError, match="as anthropic_messages"):
        import_trace(DEEPSEEK, format="anthropic_messages")
    assert len(FORMATS) == len(set(FORMATS))


def test_oversized_input_is_refused_before_reading(tmp_path):
    path = tmp_path / "huge.txt"
    with path.open("wb") as f:
        f.truncate(MAX_IMPORT_BYTES + 1)  # sparse: no disk used
    with pytest.raises(TraceError, match="exceeds the import limit"):
        import_trace(path)


def test_nested_json_bomb_is_a_trace_error():
    with pytest.raises(TraceError):
        import_trace("[" * 100_000 + "]" * 100_000)


@pytest.mark.parametrize(
    "text, answer, method",
    [
        ("so \\boxed{\\frac{1}{2}} and more", "\\frac{1}{2}", "boxed"),
        ("a\n#### 1,234\n", "1,234", "hashes"),
        ("Final Answer: 42 apples.", "42 apples", "answer_label"),
        ("Thus the point is \\((3, \\frac{\\pi}{2})\\).", "(3, \\frac{\\pi}{2})", "final_math"),
        ("we got 3 then 7", "7", "last_number"),
    ],
)
def test_answer_extraction_rules(text, answer, method):
    found = extract_answer(text)
    assert (found.text, found.method) == (answer, method)
    assert text[found.start : found.end] == answer


def test_musing_about_the_answer_is_not_an_answer():
    assert extract_answer("Maybe the answer is different? Let me think.") is None


@pytest.mark.parametrize(
    "a, b, same",
    [
        ("\\dfrac{3}{56}", "\\frac{3}{56}", True),
        ("90", "90^\\circ", True),
        ("0.5", "\\frac{1}{2}", True),
        ("3\\sqrt{13}", "\\sqrt{117}", True),
        ("(3, \\dfrac{\\pi}{2})", "\\left( 3, \\frac{\\pi}{2} \\right)", True),
        ("\\text{Evelyn}", "Evelyn", True),
        ("x = 5", "5", True),
        ("1,000", "1000", True),
        ("6.18", "6.17", False),
        ("-\\dfrac{1}{4027}", "-\\frac{1} { 4027}", True),
        ("\\dfrac{1}{4027}", "-\\frac{1}{4027}", False),
        ("(1, 2)", "(1, 2, 3)", False),
        ("p - q", "p-q", True),
        ("2^{10}", "1024", True),
        ("10%", "10", True),
    ],
)
def test_answer_equivalence(a, b, same):
    assert answers_equivalent(a, b) is same


def test_evaluator_never_runs_python():
    assert normalize_answer("__import__('os')") == "__import__('os')"
    assert not answers_equivalent("__import__('os').getcwd()", "1")
    assert not answers_equivalent("9^9^9^9", "1")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Okay, so the problem asks for the number of divisors of 196.", "problem_setup"),
        ("Let me try to factor it first.", "plan_generation"),
        ("I remember the formula for the area of a circle.", "fact_retrieval"),
        ("196 = 2^2 * 7^2.", "active_computation"),
        ("Hmm, that doesn't seem right.", "uncertainty_management"),
        ("So the number of divisors is 9.", "result_consolidation"),
        ("Let me verify: 3 * 3 = 9.", "self_checking"),
        ("The answer is \\boxed{9}.", "final_answer_emission"),
    ],
)
def test_step_type_rules(text, expected):
    index = 0 if expected == "problem_setup" else 10
    assert classify_step(text, index, 50) == expected


def test_tree_backtrack_branches_from_the_step_sharing_its_number():
    text = "We need x. 12 * 3 = 36. Then add 4 to get 40. Wait, 12 * 3 is 36, fine. Let me verify it. \\boxed{40}"
    spans, pos = [], 0
    for part in text.split(". "):
        s = text.index(part, pos)
        spans.append((s, s + len(part)))
        pos = s + len(part)
    steps, rules = build_steps(text, spans, text.index("40}"))
    kinds = [s.kind for s in steps]
    assert kinds == ["step", "step", "step", "backtrack", "self_check", "final"]
    assert steps[3].parent == 1 and rules["3"] == "a"  # "Wait, 12 * 3" reconsiders "12 * 3 = 36"
    assert all(s.parent is None for s in steps if s.kind != "backtrack")


def test_tree_alternatively_branches_from_the_last_plan_and_stays_in_lookback():
    body = (
        ["Let me use algebra."]
        + [f"Step value is {i}" for i in range(3)]
        + ["Alternatively, draw a picture."]
    )
    text = ". ".join(body)
    spans, pos = [], 0
    for part in body:
        s = text.index(part, pos)
        spans.append((s, s + len(part)))
        pos = s + len(part)
    steps, rules = build_steps(text, spans, None)
    assert steps[-1].kind == "backtrack" and steps[-1].parent == 0 and rules[str(len(body) - 1)] == "b"
    assert LOOKBACK >= len(body)


def test_claims_conversion_and_wrong_arithmetic_shows_in_the_tree():
    pytest.importorskip("o3viz.verify.claims.check")
    t = import_trace("<think>First, 7 * 8 = 54. So the product is 54.</think>\\boxed{54}", reference="56")
    claims = [c for c in t.final.checks if c.kind == "claim"]
    assert any(c.verdict == "wrong" and c.expression and c.step == 0 for c in claims)
    assert t.final.info["claim_checker"] == "ok"
    assert t.final.checks[-1].verdict == "wrong"
    d = {
        "start": 3,
        "end": 9,
        "step": -1,
        "expression": "2+2",
        "stated": "5",
        "value": "4",
        "verdict": "wrong",
        "rule": "arith_eq",
    }
    (c,) = claims_to_checks([d])
    assert (c.kind, c.span, c.step, c.computed, c.stated) == ("claim", [3, 9], None, "4", "5")


def test_answer_check_without_reference_is_unverifiable():
    assert answer_check(None, "5", None).verdict == "unverifiable"
    assert answer_check(extract_answer("\\boxed{5}"), None, 0).verdict == "unverifiable"


def test_imported_trace_has_no_tokens_and_roundtrips():
    t = import_trace(DEEPSEEK, reference="40")
    assert t.final.tokens == [] and all((s.token_start, s.token_end) == (0, 0) for s in t.steps)
    assert t.task.source == "import" and t.task.kind == "math"
    assert all(t.final.text[s.start : s.end] == s.text for s in t.steps)
    assert load_trace(trace_bytes(t)) == t


def test_a_long_one_line_text_is_content_not_a_path():
    line = " ".join(f"Step {i}: {i} + 1 = {i + 1}." for i in range(60))
    assert import_trace(line).provenance.source["format"] == "plain_text"
