"""Issue 53: the running answer stored on a round (``rounds[].answers[]``, schema version 5): the
file's contract (save → load → ==), the migration of a version-4 file, and hostile input refused
in one line."""

from __future__ import annotations

import json

import pytest

from o3viz.errors import TraceError
from o3viz.trace import Round, Step, Task, Trace, load_trace
from o3viz.trace.answers import MAX_ANSWER_CHARS, MAX_ANSWER_RECORDS, AnswerRecord

pytestmark = [pytest.mark.light]

TEXTS = ["So x = 4.", "Wait.", "So the answer is 5."]


def _trace() -> Trace:
    steps, at = [], 0
    for i, t in enumerate(TEXTS):
        steps.append(Step(index=i, start=at, end=at + len(t), text=t))
        at += len(t) + 1
    rnd = Round(text=" ".join(TEXTS), steps=steps)
    rnd.answers = [
        AnswerRecord("stated", "stated", ["4", None, "5"], [7, None, 31], [True, None, False]),
        AnswerRecord(
            "forced:local:SmolLM2-135M-Instruct",
            "forced",
            ["4", "4", "5"],
            [9, 15, 35],
            [True, True, False],
            [0.9, 0.8, None],
            {"model": "SmolLM2-135M-Instruct", "suffix": "\nFinal answer:", "other_model": True, "every": 1},
        ),
    ]
    return Trace(task=Task(question="q", reference="4"), rounds=[rnd])


def _dict(**change) -> dict:
    d = _trace().to_dict()
    d["rounds"][0]["answers"][1].update(change)
    return d


def test_answer_records_round_trip_through_the_file(tmp_path):
    t = _trace()
    back = load_trace(t.save(tmp_path / "a.o3trace.json"))
    assert back == t and back.final.answers[1].p_reference == [0.9, 0.8, None]
    assert back.final.answers[1].info["other_model"] is True
    d = json.loads((tmp_path / "a.o3trace.json").read_text())
    assert d["schema_version"] == 5 and "p_reference" not in d["rounds"][0]["answers"][0]


def test_a_version_4_file_loads_with_no_answers():
    d = _trace().to_dict()
    del d["rounds"][0]["answers"]
    d["schema_version"] = 4
    t = Trace.from_dict(d)
    assert t.schema_version == 5 and t.final.answers == []


def test_a_long_answer_is_clipped_on_read():
    t = Trace.from_dict(_dict(answers=["9" * 100_000, None, "5"]))
    assert len(t.final.answers[1].answers[0]) == MAX_ANSWER_CHARS


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"answers": ["4"]}, "has 1 items; the round has 3 steps"),
        ({"kind": "guessed"}, "must be one of stated, forced"),
        ({"positions": [0, 1, 10_000]}, "lies outside the round's text"),
        ({"positions": [0, True, 1]}, "must be int or null"),
        ({"correct": [1, 0, None]}, "must be bool or null"),
        ({"p_reference": [0.5, 1.5, None]}, "must lie in [0, 1]"),
        ({"p_reference": [0.5]}, "has 1 items"),
        ({"probe": "stated"}, "names a probe twice"),
        ({"info": {"x": float("nan")}}, "must be finite"),
    ],
)
def test_bad_records_are_refused_in_one_line(change, says):
    with pytest.raises(TraceError) as err:
        Trace.from_dict(_dict(**change))
    assert says in str(err.value) and "\n" not in str(err.value)


def test_too_many_records_are_refused():
    d = _trace().to_dict()
    rec = d["rounds"][0]["answers"][1]
    d["rounds"][0]["answers"] = [{**rec, "probe": f"p{i}"} for i in range(MAX_ANSWER_RECORDS + 1)]
    with pytest.raises(TraceError, match="more than the limit"):
        Trace.from_dict(d)
