"""Parquet datasets of reasoning traces (OpenR1- and OpenThoughts-style columns): the JSONL field
options map their columns (dotted paths reach into lists), rows stream a batch at a time so Arrow
memory stays near one row group, and hostile files end in one line."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from o3viz.cli.main import main
from o3viz.importers import import_trace, parquet
from o3viz.store.query import Query
from o3viz.store.store import Store

R1_FIELDS = ["--text-field", "generations.0", "--question-field", "problem", "--reference-field", "answer"]
OT_FIELDS = ["--text-field", "conversations.1.value", "--question-field", "conversations.0.value"]


def _openr1(path, n=6, group=2):
    rows = [
        {
            "problem": f"What is {i}+{i}?",
            "solution": f"{i}+{i} = {2 * i}",
            "answer": str(2 * i),
            "generations": [
                f"<think>{i}+{i} = {2 * i}. So it is {2 * i}.</think>The answer is {2 * i}.",
                "x",
            ],
            "correctness_math_verify": [True, False],
        }
        for i in range(n)
    ]
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=group)
    return path


def _openthoughts(path):
    value = "<|begin_of_thought|>3*4 = 12. Check: 12/4 = 3.<|end_of_thought|><|begin_of_solution|>12<|end_of_solution|>"
    rows = [
        {
            "system": "think first",
            "conversations": [{"from": "user", "value": "3*4?"}, {"from": "assistant", "value": value}],
        }
    ]
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def test_openr1_rows_map_with_the_jsonl_field_options(tmp_path):
    src = _openr1(tmp_path / "r1.parquet")
    t = import_trace(
        src, record=3, text_field="generations.0", question_field="problem", reference_field="answer"
    )
    assert t.task.question == "What is 3+3?" and t.final.answer == "6" and t.task.reference == "6"
    assert t.final.checks[-1].verdict == "correct" and t.provenance.source["record"] == 4


def test_openthoughts_markers_split_thinking_from_the_solution(tmp_path):
    t = import_trace(
        _openthoughts(tmp_path / "ot.parquet"),
        text_field="conversations.1.value",
        question_field="conversations.0.value",
    )
    assert t.steps[0].text.startswith("3*4 = 12.") and t.final.answer == "12" and t.task.question == "3*4?"


def test_cli_imports_every_row_into_a_dataset(tmp_path, capsys):
    src = _openr1(tmp_path / "traces.parquet")
    assert main(["import", str(src), "--all", *R1_FIELDS, "--workers", "0"]) == 0
    assert "6 traces from 6 records into dataset 'traces'" in capsys.readouterr().out
    assert Store().count(Query(dataset=["traces"])) == 6
    ot = _openthoughts(tmp_path / "ot.parquet")
    assert main(["import", str(ot), "--all", *OT_FIELDS, "--dataset", "ot", "--workers", "0"]) == 0
    assert "1 traces from 1 records into dataset 'ot'" in capsys.readouterr().out


def test_rows_stream_so_arrow_memory_stays_near_one_row_group(tmp_path):
    rows = [{"text": f"{i}: " + "x" * 40_000} for i in range(400)]  # 16 MB in 40 row groups
    path = tmp_path / "big.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=10, compression="none")
    del rows
    base, peak, seen = pa.total_allocated_bytes(), 0, 0
    for _n, _text, _problem in parquet.parquet_rows(path):
        seen += 1
        peak = max(peak, pa.total_allocated_bytes() - base)
    assert seen == 400 and peak < 4_000_000  # the whole table is 16 MB


def _one_line_error(capsys, argv) -> str:
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("o3viz: error:"), lines
    return lines[0]


@pytest.mark.parametrize("content", [b"PAR1" + b"\x00" * 100, b"PAR1garbagePAR1"])
def test_a_broken_parquet_file_is_one_line(tmp_path, capsys, content):
    path = tmp_path / "bad.parquet"
    path.write_bytes(content)
    out = str(tmp_path / "o.o3trace.json")
    assert "not a readable Parquet file" in _one_line_error(capsys, ["import", str(path), "--out", out])
    assert "not a readable Parquet file" in _one_line_error(
        capsys, ["import", str(path), "--all", "--workers", "0"]
    )


def test_a_row_group_declared_too_big_is_refused_before_it_is_read(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(parquet, "MAX_ROW_GROUP_BYTES", 100)
    src = _openr1(tmp_path / "r1.parquet")
    assert "over the limit" in _one_line_error(capsys, ["import", str(src), "--all", "--workers", "0"])


def test_a_huge_row_and_a_row_without_the_field_skip_with_one_line_each(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(parquet, "MAX_ROW_BYTES", 2000)
    rows = [{"text": "2+2 = 4. So 4."}, {"text": "y" * 5000}, {"other": "no text here"}]
    path = tmp_path / "mixed.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    assert main(["import", str(path), "--all", "--workers", "0"]) == 0
    cap = capsys.readouterr()
    assert "1 traces from 3 records" in cap.out
    errors = cap.err.strip().splitlines()
    assert (
        len(errors) == 2 and "larger than the limit" in errors[0] and "not a known trace format" in errors[1]
    )


def test_a_record_out_of_range_is_one_line(tmp_path, capsys):
    src = _openr1(tmp_path / "r1.parquet")
    msg = _one_line_error(
        capsys, ["import", str(src), "--record", "99", "--out", str(tmp_path / "o.o3trace.json")]
    )
    assert "out of range" in msg
