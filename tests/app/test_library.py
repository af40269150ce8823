"""The trace library: samples, uploads with one-line errors, imports, table rows, background runs."""

from __future__ import annotations

import gzip
import time

from o3viz.app.jobs import RunJob
from o3viz.app.library import library_rows, load_files, load_samples, samples_dir
from o3viz.testing.synthetic import make_trace
from o3viz.trace import trace_bytes


def test_samples_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))
    assert samples_dir() == tmp_path
    monkeypatch.delenv("O3VIZ_SAMPLES")
    assert samples_dir().name == "sample_traces"


def test_load_samples_reads_plain_and_gzipped_traces_and_reports_bad_ones(tmp_path):
    make_trace(6, seed=1).save(tmp_path / "a.o3trace.json")
    make_trace(7, seed=2).save(tmp_path / "b.o3trace.json.gz")
    (tmp_path / "bad.o3trace.json").write_text('{"schema_version": 1, "task": ')
    (tmp_path / "notes.txt").write_text("ignored")
    res = load_samples(tmp_path)
    assert sorted(e.name for e in res.entries) == ["a.o3trace.json", "b.o3trace.json.gz"]
    assert (
        len(res.errors) == 1 and res.errors[0].startswith("bad.o3trace.json: ") and "\n" not in res.errors[0]
    )
    assert load_samples(tmp_path / "missing").entries == []


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


def test_library_rows_have_the_table_columns():
    res = load_files([("t.o3trace.json", trace_bytes(make_trace(9, seed=3, rounds=2)))])
    (row,) = library_rows(res.entries)
    assert list(row) == [
        "name",
        "source",
        "model",
        "task",
        "tokens",
        "steps",
        "rounds",
        "final verdict",
        "DAA",
        "compression",
        "date",
    ]
    assert row["steps"] == 9 + len(res.entries[0].trace.rounds[0].steps) and row["rounds"] == 2
    assert row["DAA"] == "allocate" and row["final verdict"] == "pass"


def test_run_job_streams_tokens_and_stops_between_them():
    def fake_run(*, on_token, should_stop):
        n = 0
        while not should_stop() and n < 10_000:
            on_token(n, f" t{n}", 10_000)
            n += 1
            time.sleep(0.001)
        return make_trace(3, seed=n % 7)

    job = RunJob(fake_run, 10_000)
    while len(job.pieces) < 5:
        time.sleep(0.01)
    job.stop()
    job.wait(10)
    assert not job.running and job.trace is not None and 5 <= len(job.pieces) < 10_000


def test_run_job_reports_errors_as_one_line():
    def failing(**_):
        raise ValueError("bad\nsettings")

    job = RunJob(failing, 1)
    job.wait(10)
    assert job.trace is None and job.error == "ValueError: bad settings"
