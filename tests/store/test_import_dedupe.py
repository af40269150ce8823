"""A record imported twice is one trace, recognised by its content: the CLI twice, the CLI then a
whole-dataset import of the same file, and the CLI then the app's upload all give the same key.
A reindex keeps every file (the files are the truth)."""

from __future__ import annotations

import json

from o3viz.app.uploads import store_upload
from o3viz.cli.main import main
from o3viz.importers import import_trace
from o3viz.importers.bulk import ImportOptions
from o3viz.importers.parallel import import_dataset
from o3viz.store.index import import_content_id
from o3viz.store.repair import reindex
from o3viz.store.store import Store

R1 = {
    "item_id": "math500_0019",
    "problem": "What is 6 * 7?",
    "ground_truth": "42",
    "full_response": "<think>6 * 7 = 42. So it is 42.</think>The answer is \\boxed{42}.",
    "model_name": "deepseek-reasoner",
}


def _key(out: str) -> str:
    return out.split("the store as ")[1].split()[0]


def test_the_cli_twice_gives_one_trace(tmp_path, capsys):
    src = tmp_path / "r1.json"
    src.write_text(json.dumps(R1))
    assert main(["import", str(src)]) == 0
    first = _key(capsys.readouterr().out)
    assert main(["import", str(src)]) == 0  # a second later: another created_at, the same record
    assert _key(capsys.readouterr().out) == first
    assert Store().count() == 1


def test_the_cli_then_a_dataset_import_of_the_same_file_gives_one_trace(tmp_path, capsys):
    src = tmp_path / "r1.jsonl"
    src.write_text(json.dumps(R1) + "\n" + json.dumps({**R1, "item_id": "other", "problem": "6 * 8?"}) + "\n")
    assert main(["import", str(src), "--record", "1"]) == 0
    key = _key(capsys.readouterr().out)
    store = Store()
    report = import_dataset(src, store, ImportOptions("r1"), workers=0)
    assert (report.traces, report.duplicates) == (1, 1)
    assert report.keys[0] == key  # the key the store holds it under, for the page to open
    assert store.count() == 2 and store.row(key) is not None
    assert len(store.stored_keys()) == 2  # the duplicate's files were removed


def test_the_cli_then_an_upload_gives_the_same_key(tmp_path, capsys):
    src = tmp_path / "r1.json"
    data = json.dumps(R1).encode()
    src.write_bytes(data)
    assert main(["import", str(src)]) == 0
    key = _key(capsys.readouterr().out)
    store = Store()
    up = store_upload(store, "r1.json", data)
    assert up["key"] == key and up["added"] is False
    assert store.count() == 1 and len(store.stored_keys()) == 1


def test_reindex_keeps_the_files_of_a_recognised_import(tmp_path):
    trace = import_trace(R1)
    assert import_content_id(trace) == trace.info["content_id"] != ""
    store = Store()
    store.add(trace, source="import")
    again = import_trace(R1)
    again.provenance.created_at = "2001-01-01T00:00:00"  # another import's bytes, same content
    row, text = store.write_files(again, {"source": "import"})
    assert store.insert([(row, text)]) == 0  # recognised; a reindex-like insert keeps the file
    assert len(store.stored_keys()) == 2
    reindex(store)
    assert store.count() == 1 and len(store.stored_keys()) == 2
