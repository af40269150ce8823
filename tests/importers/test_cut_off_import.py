"""An imported reply that was cut off has no final answer: a stated stop reason, a token count at a
generation cap, or text that stops mid-sentence without a marked answer each make it "not graded:
the reply was cut off", never graded on its last number."""

from __future__ import annotations

import json

import pytest

from o3viz.importers import import_trace
from o3viz.verify.cut_short import cut_short


def _answer_check(trace):
    return next(c for c in trace.final.checks if c.kind == "answer")


def test_the_distill_trace_cut_at_32768_tokens_is_not_graded(shared_data):
    src = shared_data / "traces" / "topology_pilot_math500_qwen7b.jsonl"
    t = import_trace(src, record=9, claims=False)
    assert t.info["source_info"]["generated_tokens"] == 32768  # the file's own count: the cap
    check = _answer_check(t)
    assert t.final.answer is None and t.final.verdict == "unverifiable"
    assert check.verdict == "unverifiable" and check.message.startswith("not graded: the reply was cut off")
    assert "32768 tokens" in cut_short(t.final)


@pytest.mark.parametrize(
    ("text", "cut"),
    [
        ("Janet has 16 eggs. She eats 3, so 16 - 3 = 13 are left, and she sells them for", True),
        ("So we group 2 * ((3 * 4) * 5", True),
        ("She sells 9 eggs at $2 each, so she makes 9 * 2 = 18 dollars.", False),
        ("16 - 3 - 4 = 9\n#### 18", False),
        ("The answer is 18", False),
    ],
)
def test_a_text_that_stops_mid_sentence_without_a_marked_answer_is_not_graded(tmp_path, text, cut):
    src = tmp_path / "d.jsonl"
    src.write_text(json.dumps({"question": "How many dollars?", "output": text, "answer": "18"}) + "\n")
    t = import_trace(src, text_field="output", reference_field="answer", claims=False)
    assert (t.final.info.get("stop_reason") == "cut_off") is cut
    if cut:
        assert t.final.answer is None and _answer_check(t).message.startswith(
            "not graded: the reply was cut off"
        )
    else:
        assert _answer_check(t).verdict in ("correct", "wrong")
