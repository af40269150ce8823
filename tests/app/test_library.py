"""The trace library: the sample folder, uploads with one-line errors, imports, table rows."""

from __future__ import annotations

import gzip

from o3viz.app.library import STORE_COLUMNS, load_files, store_rows
from o3viz.paths import samples_dir
from o3viz.store.query import Query
from o3viz.store.store import Store
from o3viz.testing.synthetic import make_trace
from o3viz.trace import trace_bytes


def test_samples_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))
    assert samples_dir() == tmp_path
    monkeypatch.delenv("O3VIZ_SAMPLES")
    assert samples_dir().name == "sample_traces"


def test_a_bad_upload_gives_one_line_naming_the_file_and_the_others_still_load():
    good = trace_bytes(make_trace(5, seed=1))
    files = [
        ("good.o3trace.json", good),
        ("truncated.o3trace.json", good[:100]),
        ("wrong.o3trace.json.gz", gzip.compress(b'{"schema_version": 99}')),
        ("x.exe", b"MZ"),
        ("also_good.o3trace.json.gz", gzip.compress(good)),
    ]
    res = load_files(files)
    assert [e.name for e in res.entries] == ["good.o3trace.json", "also_good.o3trace.json.gz"]
    assert [e.split(":")[0] for e in res.errors] == [
        "truncated.o3trace.json",
        "wrong.o3trace.json.gz",
        "x.exe",
    ]
    assert all("\n" not in e and "Traceback" not in e for e in res.errors)
    assert "schema_version" in res.errors[1]
    assert all(len(e.key) == 16 for e in res.entries)


def test_importable_text_becomes_an_import_entry():
    text = b"<think>First, 2 + 2 = 4. Then 4 * 3 = 12.</think>The answer is 12."
    res = load_files([("r1.txt", text)])
    assert not res.errors, res.errors
    (entry,) = res.entries
    assert entry.source == "import" and entry.trace.steps


def test_store_rows_have_the_library_table_columns(tmp_path):
    """The Library table's rows (``store_rows`` over the index; it replaced ``library_rows``)."""
    trace = make_trace(9, seed=3, rounds=2)
    store = Store(tmp_path / "store")
    key = store.add(trace, name="t.o3trace.json", source="upload")
    (row,) = store_rows(store.rows(Query(), STORE_COLUMNS))
    assert list(row) == [
        "name",
        "dataset",
        "model",
        "correct",
        "steps",
        "backtracks",
        "claim errors",
        "verdict",
        "source",
        "added",
        "self-checks",
        "tokens",
        "first right",
        "converged",
        "flips",
        "tokens after right",
        "overthinking",
    ]
    assert row["name"] == "t" and row["source"] == "upload" and row["dataset"] == "—"
    assert row["steps"] == sum(len(r.steps) for r in trace.rounds) == 9 + len(trace.rounds[0].steps)
    assert row["verdict"] == "pass" and row["correct"] in {"✓", "✗", "—"}
    assert store.row(key)["name"] == "t.o3trace.json"


def test_flips_read_as_a_count_or_a_dash_never_none_or_a_float(tmp_path):
    # A column of counts with a missing one was floats: the table showed "None" and "1.000000",
    # cut to "000000" in its narrow column.
    store = Store(tmp_path / "store")
    store.add(make_trace(9, seed=3), name="t.o3trace.json", source="upload")
    (row,) = store.rows(Query(), STORE_COLUMNS)
    shown = [store_rows([{**row, "answer_flips": v}])[0]["flips"] for v in (None, 2, 3.0, 1200)]
    assert shown == ["—", "2", "3", "1,200"]
