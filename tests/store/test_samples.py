"""The sample folder enters the store (``ensure_samples``, which replaced the app's
``load_samples``): plain and gzipped trace files are read, a bad file or a FIFO named like a trace
is one error line naming it (never a hang), and a missing folder is no samples."""

from __future__ import annotations

import os

from o3viz.store.repair import ensure_samples
from o3viz.store.store import Store
from o3viz.testing.synthetic import make_trace


def test_samples_read_plain_and_gzipped_traces_and_report_bad_ones_in_one_line(tmp_path):
    folder = tmp_path / "samples"
    folder.mkdir()
    make_trace(6, seed=1).save(folder / "a.o3trace.json")
    make_trace(7, seed=2).save(folder / "b.o3trace.json.gz")
    (folder / "bad.o3trace.json").write_text('{"schema_version": 1, "task": ')
    (folder / "notes.txt").write_text("ignored")
    store = Store(tmp_path / "store")
    keys, errors = ensure_samples(store, folder)
    assert [store.row(k)["name"] for k in keys] == ["a.o3trace.json", "b.o3trace.json.gz"]
    assert {store.row(k)["source"] for k in keys} == {"sample"}
    assert len(errors) == 1 and errors[0].startswith("bad.o3trace.json: ") and "\n" not in errors[0]
    assert ensure_samples(store, tmp_path / "missing") == ([], [])


def test_a_fifo_among_the_samples_is_one_error_not_a_hang(tmp_path):
    folder = tmp_path / "samples"
    folder.mkdir()
    make_trace(5, seed=1).save(folder / "good.o3trace.json")
    os.mkfifo(folder / "pipe.o3trace.json")
    store = Store(tmp_path / "store")
    keys, errors = ensure_samples(store, folder)
    assert [store.row(k)["name"] for k in keys] == ["good.o3trace.json"]
    assert len(errors) == 1 and errors[0].startswith("pipe.o3trace.json: ") and "FIFO" in errors[0]
