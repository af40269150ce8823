"""The label export carries the reference as an answer ("18"), not the worked solution the source
gave ("… She makes 9 * 2 = $18 every day.\\nA: 18"); a reference that is only prose stays text and
grades ``unverifiable``, never ``fail``."""

from __future__ import annotations

import json

from o3viz.cli.main import main
from o3viz.importers import import_trace
from o3viz.store.labels import Label, add_labels
from o3viz.store.query import Query
from o3viz.store.store import Store

RECORD = {
    "question": "Janet's ducks lay 16 eggs per day. How much does she make?",
    "ground_truth": "Janet sells 16 - 3 - 4 = 9 duck eggs a day.\nShe makes 9 * 2 = $18 every day.\nA: 18",
    "6b_verification": {"is_correct": True, "solution": "16 - 7 = 9 eggs.\n9 * 2 = 18 dollars.\nA: 18"},
}


def test_the_label_export_reference_is_the_reduced_answer(tmp_path, capsys):
    src = tmp_path / "solutions.jsonl"
    src.write_text(json.dumps(RECORD) + "\n")
    assert main(["import", str(src), "--all", "--workers", "0", "--dataset", "gsm"]) == 0
    store = Store()
    (row,) = store.rows(Query(dataset=["gsm"]))
    assert row["verdict"] == "pass" and row["source_correct"] == row["check_correct"] == 1
    add_labels(store, [Label(row["key"], 0, 0, "ann", "correct")])
    out = tmp_path / "labels.jsonl"
    assert main(["labels", "export", "--dataset", "gsm", "--out", str(out)]) == 0
    (rec,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert rec["reference"] == "18"


def test_a_prose_reference_is_unverifiable_not_fail():
    trace = import_trace(
        {
            "question": "Which is larger?",
            "ground_truth": "The first one is larger, because its base grows faster than the other one does.",
            "response": "The answer is 7.",
        }
    )
    check = trace.final.checks[-1]
    assert trace.task.reference is None and trace.final.verdict == "unverifiable"
    assert check.verdict == "unverifiable" and "reference is text" in check.message
    assert (
        trace.info["reference_text"].startswith("The first one") and trace.info["reference_method"] == "text"
    )
