"""An import whose source says the reply was cut at its token limit is not graded, with the reason,
as a run or a branch that hit its limit is (issue 35, finding 5: one rule on every path)."""

from __future__ import annotations

import json

from o3viz.importers import import_trace


def _completion(finish: str) -> dict:
    return {
        "model": "m",
        "messages": [{"role": "user", "content": "Janet has 3 eggs and buys 4. How many eggs?"}],
        "choices": [
            {
                "finish_reason": finish,
                "message": {
                    "role": "assistant",
                    "reasoning_content": "3 + 4 = 7.",
                    "content": "The answer is 7",
                },
            }
        ],
    }


def test_a_completion_cut_at_its_limit_is_not_graded_and_says_why(tmp_path):
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(_completion("length")))
    rnd = import_trace(path, reference="7").final
    assert rnd.verdict == "unverifiable"
    answer = next(c for c in rnd.checks if c.kind == "answer")
    assert answer.verdict == "unverifiable" and "stopped at the limit" in answer.message


def test_a_completion_that_ended_on_its_own_is_graded(tmp_path):
    path = tmp_path / "done.json"
    path.write_text(json.dumps(_completion("stop")))
    rnd = import_trace(path, reference="7").final
    assert rnd.verdict == "pass"
