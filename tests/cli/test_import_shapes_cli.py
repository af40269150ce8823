"""``o3viz import`` on the common question/answer shapes: GSM8K's own test file imports every
record, an import that adds nothing exits 2 with one line, ``--preview`` says how the first
records parse, the id and model fields can be named, and ``--out`` also adds to the store."""

from __future__ import annotations

import json

import pytest

from o3viz.cli.main import main
from o3viz.importers import import_trace
from o3viz.importers.bulk import ImportOptions
from o3viz.importers.preview import preview_import
from o3viz.store.query import Query
from o3viz.store.store import Store
from o3viz.trace import load_trace

SOLUTION = "She sells 16 - 3 - 4 = 9 eggs.\nShe makes 9 * 2 = 18 dollars.\n#### 18"


@pytest.mark.parametrize(
    ("record", "question", "text_start"),
    [
        ({"question": "Q?", "answer": SOLUTION}, "Q?", "She sells"),
        ({"problem": "Q?", "solution": "So \\boxed{18}.", "answer": "18"}, "Q?", "So"),
        ({"prompt": "Q?", "response": "It is 18."}, "Q?", "It is"),
        ({"prompt": "Q?", "completion": "It is 18."}, "Q?", "It is"),
        ({"input": "Q?", "output": "It is 18."}, "Q?", "It is"),
        ({"instruction": "Q?", "output": "It is 18."}, "Q?", "It is"),
        ({"query": "Q?", "response": "It is 18."}, "Q?", "It is"),
    ],
)
def test_common_question_answer_shapes_read_without_options(record, question, text_start):
    trace = import_trace(record)
    assert trace.task.question == question
    assert trace.final.text.startswith(text_start)


def test_a_benchmark_answer_is_the_text_and_its_reduced_reference():
    trace = import_trace({"question": "Q?", "answer": SOLUTION})
    assert trace.task.reference == "18" and trace.final.answer == "18" and trace.final.verdict == "pass"
    math = import_trace({"problem": "Q?", "solution": "So \\boxed{\\frac{1}{2}}.", "answer": "\\frac{1}{2}"})
    assert math.task.reference == "\\frac{1}{2}" and math.final.verdict == "pass"


@pytest.mark.subprocess
def test_gsm8k_test_file_imports_every_record(shared_data, capsys):
    src = shared_data / "gsm8k" / "gsm8k_test.jsonl"
    n = sum(1 for line in src.read_text(encoding="utf-8").splitlines() if line.strip())
    assert main(["import", str(src), "--all", "--workers", "2", "--no-claims"]) == 0
    assert f"imported {n} traces from {n} records" in capsys.readouterr().out
    rows = Store().rows(Query(dataset=["gsm8k_test"], limit=5))
    assert rows and all(r["verdict"] == "pass" for r in rows)  # the gold solution reaches its own answer


def test_an_import_that_adds_nothing_exits_2_with_one_line(tmp_path, capsys):
    src = tmp_path / "nothing.jsonl"
    src.write_text('{"a": 1}\n{"b": 2}\n')
    assert main(["import", str(src), "--all", "--workers", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("o3viz: error: imported nothing from nothing.jsonl")
    assert "2 records read, 2 skipped" in err[0]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["import", str(empty), "--all", "--workers", "0"]) == 2
    # a second import of records already there adds nothing, but is no error
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"question": "Q?", "answer": SOLUTION}) + "\n")
    assert main(["import", str(good), "--all", "--workers", "0"]) == 0
    assert main(["import", str(good), "--all", "--workers", "0"]) == 0


def test_preview_says_which_field_is_what_and_stores_nothing(tmp_path, capsys):
    src = tmp_path / "qa.jsonl"
    src.write_text(
        "".join(json.dumps({"id": f"q{i}", "question": "Q?", "answer": SOLUTION}) + "\n" for i in range(8))
    )
    pv = preview_import(src, ImportOptions("qa"))
    assert len(pv.records) == 5 and pv.fields == ["id", "question", "answer"]
    first = pv.records[0]
    assert first.used == {"text": "answer", "question": "question", "reference": "answer", "id": "id"}
    assert (first.reference_answer, first.answer, first.grade) == ("18", "18", "pass")
    bad = preview_import(src, ImportOptions("qa", text_field="nope"))
    assert bad.readable == 0 and "text_field='nope'" in bad.records[0].error
    assert main(["import", str(src), "--preview"]) == 0
    assert "text=answer, question=question, reference=answer" in capsys.readouterr().out
    assert main(["import", str(src), "--preview", "--text-field", "nope"]) == 2
    assert Store().count() == 0


def test_id_and_model_fields_can_be_named(tmp_path):
    rec = {"uid": "item-7", "who": "my-model", "question": "Q?", "answer": SOLUTION}
    trace = import_trace(rec, id_field="uid", model_field="who")
    assert trace.task.id == "item-7" and trace.provenance.model_id == "my-model"


def test_import_out_also_adds_to_the_store_unless_no_store(tmp_path, capsys):
    src = tmp_path / "one.json"
    src.write_text(json.dumps({"question": "Q?", "answer": SOLUTION}))
    out = tmp_path / "one.o3trace.json"
    assert main(["import", str(src), "--out", str(out)]) == 0
    assert load_trace(out).task.reference == "18"
    assert Store().count() == 1 and "the store as" in capsys.readouterr().out
    other = tmp_path / "two.o3trace.json"
    assert main(["import", str(src), "--out", str(other), "--no-store"]) == 0
    assert other.is_file() and Store().count() == 1
    assert main(["import", str(src), "--no-store"]) == 2  # nowhere to put it
