"""A record whose steps are a list of strings imports with one step per item (``steps`` is a text
field, and any named text field may be such a list); a list of anything else is one line.
ProcessBench's steps (``tests/importers/test_processbench.py``) keep their count and order."""

from __future__ import annotations

import json

import pytest

from o3viz.errors import TraceError
from o3viz.importers import import_trace

RECORD = {
    "question": "What is 2+3*4?",
    "steps": ["3*4 = 12.", "2 + 12 =\n 14.", "The answer is 14."],
    "answer": "14",
}


@pytest.mark.parametrize("named", [{}, {"text_field": "steps"}])
def test_a_list_of_steps_imports_one_step_per_item(tmp_path, named):
    src = tmp_path / "s.jsonl"
    src.write_text(json.dumps(RECORD) + "\n")
    t = import_trace(src, **named)
    # each item is one step, its text the source's (only the space around it stripped)
    assert [s.text for s in t.final.steps] == ["3*4 = 12.", "2 + 12 =\n 14.", "The answer is 14."]
    assert t.task.reference == "14" and t.final.verdict == "pass"


def test_a_list_of_non_strings_is_one_line(tmp_path):
    src = tmp_path / "s.jsonl"
    src.write_text(json.dumps({**RECORD, "steps": [1, {"x": 2}]}) + "\n")
    with pytest.raises(TraceError, match="the field is a list of non-strings, not text or a list of steps"):
        import_trace(src, text_field="steps")
