"""Every parse of JSON that o3viz did not write goes through ``o3viz.trace.safejson.loads``: ``NaN``,
``Infinity``, a 5,000-digit integer and deep nesting are refused in one line the same way on each
path in (a JSONL dataset, a JSON array, an Inspect log, a process-labels file, the app's upload, the
store's label files)."""

from __future__ import annotations

import json
import zipfile

import pytest

from o3viz.app.uploads import take_upload
from o3viz.errors import O3vizError, TraceError
from o3viz.importers import import_trace
from o3viz.importers.bulk import ImportOptions, read_records
from o3viz.importers.inspect_log import eval_samples, json_log_samples
from o3viz.importers.parallel import import_dataset
from o3viz.importers.preview import preview_import
from o3viz.importers.process_labels import labelled_records
from o3viz.store.golden_lines import MAX_PARSED_LINE, golden_labels
from o3viz.store.labels import LABEL_FILE, read_label_file
from o3viz.store.store import Store
from o3viz.trace.safejson import MAX_IMPORT_NESTING

# (JSON text of one value, what the one-line refusal says)
HOSTILE = {
    "nan": ("NaN", "NaN is not allowed"),
    "infinity": ("Infinity", "Infinity is not allowed"),
    "minus_infinity": ("-Infinity", "-Infinity is not allowed"),
    "long_integer": ("9" * 5000, "5000 digits, more than the limit"),
    "deep": (
        "[" * (MAX_IMPORT_NESTING + 1) + "]" * (MAX_IMPORT_NESTING + 1),
        "nesting deeper than the limit",
    ),
    "very_deep": ("[" * 100_000 + "]" * 100_000, "nesting deeper than the limit"),
}
CASES = pytest.mark.parametrize("value, says", list(HOSTILE.values()), ids=list(HOSTILE))
GOOD = {"full_response": "<think>2 + 2 = 4. So it is 4.</think>4", "question": "2+2?"}


def _record(value: str) -> str:
    """A record that would import but for one hostile value."""
    return json.dumps(GOOD)[:-1] + f', "score": {value}}}'


def _one_line(msg: str, says: str) -> None:
    assert says in msg and "\n" not in msg and len(msg) < 400, msg[:400]


@CASES
def test_a_jsonl_dataset_skips_the_record_in_one_line_and_imports_the_rest(tmp_path, value, says):
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join([json.dumps(GOOD), _record(value), json.dumps(GOOD | {"question": "3?"})]))
    rep = import_dataset(path, Store(tmp_path / "home"), ImportOptions("d"), workers=0)
    assert rep.traces == 2 and len(rep.errors) == 1 and rep.errors[0].startswith("line 2: record: ")
    _one_line(rep.errors[0], says)
    preview = preview_import(path, ImportOptions("d"))
    assert [bool(r.error) for r in preview.records] == [False, True, False]
    _one_line(preview.records[1].error, says)


@CASES
def test_a_json_document_or_array_is_refused_in_one_line(tmp_path, value, says):
    for name, text in (
        ("one.json", _record(value)),
        ("array.json", f"[{json.dumps(GOOD)}, {_record(value)}]"),
    ):
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(TraceError) as err:
            import_trace(path)
        _one_line(str(err.value), says)
    with pytest.raises(TraceError) as err:  # a dataset import reads the array whole
        list(read_records(path))
    _one_line(str(err.value), says)
    with pytest.raises(TraceError) as err:  # JSON lines read whole (the single-record import)
        import_trace(json.dumps(GOOD) + "\n" + _record(value))
    _one_line(str(err.value), says)
    assert "line 2" in str(err.value) or "nesting" in says  # the scan of the whole text refuses depth


@CASES
def test_an_inspect_log_refuses_the_file_or_skips_the_sample_in_one_line(tmp_path, value, says):
    log = tmp_path / "run.json"
    log.write_text('{"version": 2, "eval": {"task": "t", "model": "m"}, "samples": [' + _record(value) + "]}")
    with pytest.raises(TraceError) as err:
        list(json_log_samples(log))
    _one_line(str(err.value), says)
    ev = tmp_path / "run.eval"
    with zipfile.ZipFile(ev, "w") as z:
        z.writestr("header.json", json.dumps({"eval": {"task": "t", "model": "m"}}))
        z.writestr("samples/1_epoch_1.json", _record(value))
    [(n, rec, problem)] = list(eval_samples(ev))
    assert n == 1 and rec is None
    _one_line(problem, says)


@CASES
def test_a_process_labels_file_is_refused_in_one_line(tmp_path, value, says):
    path = tmp_path / "prm.json"
    row = {"instruction": "Q", "responses": ["a", "b"], "next_response": "c", "rating": 1}
    path.write_text("[" + json.dumps(row)[:-1] + f', "extra": {value}}}]')
    with pytest.raises(TraceError) as err:
        list(labelled_records(path))
    _one_line(str(err.value), says)


@CASES
def test_an_upload_is_refused_in_one_line(tmp_path, value, says):
    for name, data in (
        ("r.json", _record(value)),
        ("d.jsonl", _record(value) + "\n" + json.dumps(GOOD)),  # a bad first record: read as one document
    ):
        with pytest.raises(O3vizError) as err:
            take_upload(str(tmp_path / "store"), name, data.encode())
        _one_line(str(err.value), says)


@CASES
def test_the_store_label_files_refuse_the_line_in_one_line(tmp_path, value, says):
    store = Store(tmp_path / "home")
    (store.root / LABEL_FILE).parent.mkdir(parents=True, exist_ok=True)
    (store.root / LABEL_FILE).write_text('{"key": "k", "round": 0, "step": 1, "x": ' + value + "}\n")
    labels, errors = read_label_file(store)
    if len(value) <= 8192:  # a longer line is "too long" before it is parsed
        assert labels == [] and len(errors) == 1
        _one_line(errors[0], says[:20])
    step = '{"step": "0:1", "labels": [{"labeller": "a", "verdict": "wrong"}]}'
    line = '{"key": "k", "x": ' + value + ', "steps": [' + step + "]}"
    for text in (line, line + " " * MAX_PARSED_LINE):  # parsed whole, and walked a value at a time
        with pytest.raises(O3vizError) as err:
            list(golden_labels(text.encode(), 3, "g.jsonl"))
        msg = str(err.value)
        assert msg.startswith("g.jsonl line 3: not a golden-set record") and "\n" not in msg
        assert says[:20] in msg or ("nesting" in says and "nested deeper than 64" in msg), msg


def test_a_parquet_nan_is_a_missing_value_not_a_refused_row(tmp_path):
    """pandas writes a missing float as NaN: a row carries it to the importers as ``null``."""
    pa, pq = pytest.importorskip("pyarrow"), pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "d.parquet"
    rows = [
        GOOD | {"score": float("nan"), "scores": [1.0, float("inf")]},
        GOOD | {"question": "3?", "score": 0.5, "scores": []},
    ]
    pq.write_table(pa.Table.from_pylist(rows), path)
    rep = import_dataset(path, Store(tmp_path / "home"), ImportOptions("p"), workers=0)
    assert (rep.traces, rep.errors) == (2, [])
    assert [json.loads(r.text)["score"] for r in read_records(path)] == [None, 0.5]
