"""The upload takes every format the CLI imports (.eval, .parquet besides JSON, JSONL, text and
trace files) and says in words why it refuses a file; a finished import that added nothing is an
error, never a success."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from o3viz.app.uploads import import_outcome, take_upload
from o3viz.errors import TraceError
from o3viz.store.store import Store


def _parquet(rows: list[dict]) -> bytes:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buf)
    return buf.getvalue()


def _eval(samples: int) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("header.json", json.dumps({"eval": {"task": "t", "model": "m"}}))
        for i in range(1, samples + 1):
            sample = {"id": i, "epoch": 1, "input": "Q?", "target": "18",
                      "output": {"model": "m", "choices": [{"message": {"role": "assistant", "content": "It is 18."}}]},
                      "messages": [{"role": "user", "content": "Q?"}, {"role": "assistant", "content": "It is 18."}]}  # fmt: skip
            z.writestr(f"samples/{i}_epoch_1.json", json.dumps(sample))
    return buf.getvalue()


def test_a_parquet_upload_is_staged_as_a_dataset(tmp_path):
    rows = [{"question": f"Q{i}?", "answer": f"So.\n#### {i}"} for i in range(3)]
    got = take_upload(str(tmp_path), "qa.parquet", _parquet(rows))
    assert got["records"] == 3 and got["dataset"].endswith(".parquet")


def test_an_eval_upload_is_staged_as_a_dataset(tmp_path):
    got = take_upload(str(tmp_path), "run.eval", _eval(2))
    assert got["records"] == 2 and got["dataset"].endswith(".eval")
    from o3viz.importers.bulk import ImportOptions
    from o3viz.importers.parallel import import_dataset

    rep = import_dataset(got["dataset"], Store(tmp_path), ImportOptions("run"), workers=0)
    assert rep.traces == 2, rep.errors


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        ("table.csv", b"a,b\n1,2\n", "unknown file type .csv: o3viz reads"),
        ("run.eval", b"not a zip at all", "not an Inspect AI .eval log"),
        ("t.parquet", b"PAR1 but not really", ""),
    ],
)
def test_a_refusal_is_one_line_in_words(tmp_path, name, data, says):
    with pytest.raises(TraceError) as exc:
        take_upload(str(tmp_path), name, data)
    assert says in str(exc.value) and "\n" not in str(exc.value)


def test_an_import_that_added_nothing_is_an_error():
    nothing = {
        "traces": 0,
        "duplicates": 0,
        "records": 30,
        "errors": ["line 1: no text field"],
        "summary": "…",
    }
    out = import_outcome(nothing)
    assert out.kind == "error" and "Imported nothing: 30 records read, 1 skipped" in out.line
    assert import_outcome({**nothing, "duplicates": 30}).kind == "success"  # all already there
    assert import_outcome({**nothing, "traces": 3, "stopped": "stopped by the user"}).kind == "warning"
