"""Whole-dataset import: one trace per record under a dataset name, in worker processes, bad
records reported by line and skipped, duplicates recognised, one record on request."""

from __future__ import annotations

import json

import pytest

from o3viz.importers.bulk import ImportOptions, count_records, fan_out
from o3viz.importers.parallel import import_dataset
from o3viz.store.query import Query
from o3viz.store.store import Store
from o3viz.testing.datasets import hostile_lines, write_reasoning_jsonl

pytestmark = [pytest.mark.subprocess]


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "home")


def test_every_record_becomes_a_trace_under_the_dataset_in_worker_processes(store, tmp_path):
    path = write_reasoning_jsonl(tmp_path / "d.jsonl", 40)
    seen = []
    rep = import_dataset(
        path, store, ImportOptions("toy"), workers=2, progress=lambda d, t, r: seen.append((d, t))
    )
    assert (rep.records, rep.traces, rep.errors, rep.stopped) == (40, 40, [], None)
    assert store.count(Query(dataset=["toy"])) == 40 and seen[-1] == (40, 40)
    rows = store.rows(Query(sort="record", descending=False, limit=100))
    assert [r["record"] for r in rows] == list(range(1, 41))
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["correct"] for r in rows] == [int(x["is_correct"]) for x in records]  # the file's grading
    assert {r["model"] for r in rows} == {"r1-small", "r1-large"}


def test_one_or_two_workers_give_the_same_traces(store, tmp_path):
    path = write_reasoning_jsonl(tmp_path / "d.jsonl", 12, seed=3)
    a = import_dataset(path, Store(tmp_path / "a"), ImportOptions("x"), workers=0)
    b = import_dataset(path, Store(tmp_path / "b"), ImportOptions("x"), workers=2)
    assert sorted(a.keys) == sorted(b.keys) and len(a.keys) == 12  # same bytes, same content hashes


def test_records_already_in_the_store_are_recognised(store, tmp_path):
    path = write_reasoning_jsonl(tmp_path / "d.jsonl", 10)
    import_dataset(path, store, ImportOptions("toy"), workers=0, only={1, 2, 3})
    rep = import_dataset(path, store, ImportOptions("toy"), workers=0)
    assert (rep.traces, rep.duplicates) == (7, 3)
    again = import_dataset(path, store, ImportOptions("toy again"), workers=0)
    assert (again.traces, again.duplicates) == (0, 10) and store.count() == 10


def test_hostile_records_are_rejected_with_their_line_number_and_the_rest_land(store, tmp_path):
    good = write_reasoning_jsonl(tmp_path / "good.jsonl", 6).read_bytes().splitlines()
    bad = hostile_lines()
    lines = [good[0], bad["huge"], good[1], bad["deep"], bad["binary"], good[2], bad["not_utf8"]]
    lines += [bad["broken"], good[3], bad["not_an_object"], bad["no_text"], bad["huge_number"], good[4]]
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    rep = import_dataset(path, store, ImportOptions("mixed"), workers=2)
    assert rep.traces == 5 and store.count() == 5
    by_line = {int(e.split()[1].rstrip(":")): e for e in rep.errors}
    assert sorted(by_line) == [2, 4, 5, 7, 8, 10, 11, 12]
    assert "larger than the limit" in by_line[2] and "nesting deeper than the limit" in by_line[4]
    assert "binary" in by_line[5] and "UTF-8" in by_line[7] and "not valid JSON" in by_line[8]
    assert all("\n" not in e and len(e) < 400 for e in rep.errors)


def test_a_single_line_can_be_picked(store, tmp_path):
    path = write_reasoning_jsonl(tmp_path / "d.jsonl", 20)
    rep = import_dataset(path, store, ImportOptions("toy"), workers=0, only={7})
    assert rep.traces == 1 and store.rows(Query())[0]["record"] == 7


def test_a_json_array_imports_every_record(store, tmp_path):
    records = [json.loads(x) for x in write_reasoning_jsonl(tmp_path / "d.jsonl", 5).read_text().splitlines()]
    path = tmp_path / "d.json"
    path.write_text(json.dumps(records))
    assert count_records(path) == 5
    rep = import_dataset(path, store, ImportOptions("arr"), workers=0)
    assert rep.traces == 5


def test_a_record_of_several_graded_solutions_fans_out_one_per_solution():
    rec = {
        "question": "q?",
        "ground_truth": "A: 4",
        "6b": {"is_correct": False, "solution": "2+2=5\nA: 5"},
        "175b": {"is_correct": True, "solution": "2+2=4\nA: 4"},
    }
    parts = fan_out(rec)
    assert [p for p, _ in parts] == ["6b", "175b"]
    assert parts[0][1] == {
        "question": "q?",
        "ground_truth": "A: 4",
        "is_correct": False,
        "solution": "2+2=5\nA: 5",
        "model": "6b",
    }
    assert fan_out({"full_response": "x"}) == [("", {"full_response": "x"})]


def test_the_gsm8k_solutions_import_as_one_trace_per_graded_solution(store, shared_data, tmp_path):
    lines = (shared_data / "gsm8k" / "gsm8k_example_model_solutions.jsonl").read_text().splitlines()[:6]
    path = tmp_path / "six.jsonl"
    path.write_text("\n".join(lines) + "\n")
    rep = import_dataset(path, store, ImportOptions("gsm8k"), workers=0)
    assert (rep.records, rep.traces, rep.errors) == (6, 24, [])
    graded = [
        int(json.loads(line)[k]["is_correct"])
        for line in lines
        for k in ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")
    ]
    rows = store.rows(Query(sort="record", descending=False, limit=100))
    by = {(r["record"], r["part"]): r["correct"] for r in rows}
    keys = [
        (i + 1, k)
        for i in range(6)
        for k in ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")
    ]
    assert [by[k] for k in keys] == graded
