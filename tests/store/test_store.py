"""The persistent trace store: content-addressed files, the SQLite index, search, filters, delete,
reindex, samples, schema and disk-full refusals, and the session's view of it."""

from __future__ import annotations

import gzip
import shutil
import sqlite3
import subprocess
import sys

import pytest

from o3viz.app.jobs import RunJob
from o3viz.app.library import LibraryEntry, StoreLibrary, store_entry
from o3viz.paths import home_dir
from o3viz.store.index import importance_by_type, index_row
from o3viz.store.query import Query, dataset_tag, fts_expression
from o3viz.store.repair import ensure_samples, reindex
from o3viz.store.store import STORE_SCHEMA, Store, StoreError, content_key
from o3viz.testing.synthetic import make_trace
from o3viz.trace import Check, trace_bytes


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "home")


def test_the_store_lives_in_o3viz_home(monkeypatch, tmp_path):
    monkeypatch.setenv("O3VIZ_HOME", str(tmp_path / "h"))
    assert Store().root == tmp_path / "h" == home_dir()
    monkeypatch.delenv("O3VIZ_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert home_dir() == tmp_path / "xdg" / "o3viz"


def test_a_trace_is_stored_gzipped_under_its_content_hash_and_reads_back_equal(store):
    trace = make_trace(8, seed=1)
    key = store.add(trace, source="upload", name="my upload.o3trace.json")
    data = trace_bytes(trace, gzipped=True)
    assert key == content_key(data)
    path = store.path(key)
    assert path.name == f"{key}.o3trace.json.gz" and path.read_bytes() == data
    assert store.trace(key) == trace
    row = store.row(key)
    assert row["name"] == "my upload.o3trace.json" and row["source"] == "upload" and row["steps"] == 8


def test_the_same_trace_twice_is_one_row(store):
    trace = make_trace(6, seed=2)
    assert store.add(trace, source="upload") == store.add(trace, source="run")
    assert store.count() == 1


def test_delete_removes_the_file_and_the_row(store):
    key = store.add(make_trace(5, seed=3))
    assert store.delete([key]) == 1
    assert store.count() == 0 and not store.path(key).exists()
    assert not list(store.files.rglob("*.json"))


def test_reindex_rebuilds_a_lost_index_from_the_files(store):
    keys = [
        store.add(make_trace(4 + i, seed=i), source="import", dataset="d", name=f"t{i}") for i in range(4)
    ]
    before = {k: store.row(k) for k in keys}
    store.close()
    store.db_path.unlink()
    for suffix in ("-wal", "-shm"):
        store.db_path.with_name(store.db_path.name + suffix).unlink(missing_ok=True)
    fresh = Store(store.root)
    rep = reindex(fresh)
    assert (rep.added, rep.removed, rep.errors) == (4, 0, [])
    for k in keys:  # the store's own fields come back from the metadata files
        after = fresh.row(k)
        assert {c: after[c] for c in ("name", "dataset", "source", "steps")} == {
            c: before[k][c] for c in ("name", "dataset", "source", "steps")
        }


def test_reindex_drops_rows_without_files_and_adds_files_without_rows(store):
    gone = store.add(make_trace(5, seed=1))
    kept = store.add(make_trace(6, seed=2))
    store.path(gone).unlink()
    orphan = make_trace(7, seed=3)
    row, _ = store.write_files(orphan, {"source": "import"})  # files written, row never inserted
    (store.files / "ab").mkdir(exist_ok=True)
    (store.files / "ab" / ".half.o3trace.json.gz.123.tmp").write_bytes(b"partial")
    rep = reindex(store)
    assert (rep.added, rep.removed) == (1, 1)
    assert {r["key"] for r in store.rows(Query())} == {kept, row.key}
    assert not list(store.files.glob("*/.*.tmp"))


def test_full_text_search_finds_words_of_the_steps_and_treats_query_syntax_as_text(store):
    t = make_trace(6, seed=4)
    t.final.steps[2].text = "Hmm, the zanzibar constant looks off"
    key = store.add(t)
    store.add(make_trace(6, seed=5))
    assert [r["key"] for r in store.rows(Query(search="zanzibar"))] == [key]
    assert [r["key"] for r in store.rows(Query(search="zanzi*"))] == [key]
    assert store.count(Query(search="zanzibar nothere")) == 0
    for hostile in ('"', "NEAR(a b", "a OR", "*", "-x", "(", "col:val", "'; DROP TABLE traces; --"):
        store.count(Query(search=hostile))  # never an FTS syntax error
    assert fts_expression('say "hi"') == '"say" """hi"""'


def _graded(n_steps: int, seed: int, correct: bool, dataset: str):
    t = make_trace(n_steps, seed=seed)
    t.info["file_is_correct"] = correct
    t.final.steps[0].type = "self_checking" if correct else "plan_generation"
    return t, dataset


def test_filters_sorting_and_paging(store):
    for i in range(12):
        t, ds = _graded(3 + i, i, correct=i % 3 == 0, dataset="a" if i < 8 else "b")
        store.add(t, dataset=ds, source="import")
    assert store.count(Query(dataset=["a"])) == 8
    assert store.count(Query(correct="correct")) == 4 and store.count(Query(correct="wrong")) == 8
    assert store.count(Query(step_types=["self_checking"])) == 4
    newest = store.rows(Query(limit=3))
    assert [r["steps"] for r in newest] == [14, 13, 12]  # new rows on top
    by_steps = store.rows(Query(sort="steps", descending=False, limit=5, offset=5))
    assert [r["steps"] for r in by_steps] == [8, 9, 10, 11, 12]
    with pytest.raises(ValueError):
        store.rows(Query(sort="steps; DROP TABLE traces"))
    assert [v for v, _ in store.distinct("dataset")] == ["a", "b"]


def test_a_store_from_a_newer_schema_is_refused_with_one_line(store):
    store.count()
    store.close()
    with sqlite3.connect(store.db_path) as db:
        db.execute("UPDATE meta SET value = ? WHERE name = 'schema'", (str(STORE_SCHEMA + 1),))
    with pytest.raises(StoreError) as err:
        Store(store.root).count()
    msg = str(err.value)
    assert "newer o3viz" in msg and "\n" not in msg and str(STORE_SCHEMA + 1) in msg


@pytest.mark.subprocess
def test_a_full_disk_gives_one_line(tmp_path):
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is absent: cannot mount a small tmpfs")
    home = tmp_path / "full"
    home.mkdir()
    script = (
        "from o3viz.store.store import Store\n"
        "from o3viz.testing.synthetic import make_trace\n"
        f"s = Store({str(home)!r})\n"
        "for i in range(400):\n"
        "    s.add(make_trace(40, seed=i))\n"
    )
    cmd = f'mount -t tmpfs -o size=384k tmpfs {home} && exec {sys.executable} -c "$0"'
    proc = subprocess.run(
        ["unshare", "--mount", "--map-root-user", "sh", "-c", cmd, script], capture_output=True, text=True
    )
    if "mount" in proc.stderr and "StoreError" not in proc.stderr:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()[:200]}")
    last = proc.stderr.strip().splitlines()[-1]
    assert proc.returncode != 0 and "StoreError: no space left on the disk of the trace store" in last


def test_samples_enter_the_store_once_in_name_order(store, tmp_path):
    folder = tmp_path / "samples"
    folder.mkdir()
    make_trace(5, seed=1).save(folder / "b.o3trace.json.gz")
    make_trace(6, seed=2).save(folder / "a.o3trace.json")
    (folder / "bad.o3trace.json").write_text("{")
    keys, errors = ensure_samples(store, folder)
    assert len(keys) == 2 and [e.split(":")[0] for e in errors] == ["bad.o3trace.json"]
    assert keys[1] == content_key((folder / "b.o3trace.json.gz").read_bytes())  # a gz sample is kept as is
    assert [store.row(k)["name"] for k in keys] == ["a.o3trace.json", "b.o3trace.json.gz"]
    assert ensure_samples(store, folder) == (keys, [])  # unchanged folder: nothing is read again
    assert store.count() == 2


def test_the_session_library_lists_its_pins_first_and_resolves_any_stored_key(store):
    keys = [store.add(make_trace(4, seed=i), name=f"t{i}") for i in range(5)]
    lib = StoreLibrary(store, [keys[1], keys[0]])
    assert list(lib)[:2] == [keys[1], keys[0]] and set(lib) == set(keys)
    assert lib[keys[3]].name == "t3" and lib[keys[3]].trace == store.trace(keys[3])
    assert "0000000000000000" not in lib
    with pytest.raises(KeyError):
        lib["0000000000000000"]


def test_an_uploaded_gz_trace_keeps_its_key_and_a_plain_one_gets_a_gz_key(store):
    trace = make_trace(5, seed=7)
    gz = gzip.compress(trace_bytes(trace), mtime=0)
    e = LibraryEntry(content_key(gz), "x.o3trace.json.gz", "upload", trace, len(gz), gz)
    assert store_entry(store, e) == content_key(gz)
    plain = trace_bytes(trace)
    e2 = LibraryEntry(content_key(plain), "x.o3trace.json", "upload", trace, len(plain), plain)
    assert store_entry(store, e2) == content_key(trace_bytes(trace, gzipped=True))


def test_a_finished_run_enters_the_store_from_its_job(store):
    trace = make_trace(7, seed=8)
    job = RunJob(lambda **kw: trace, 10, store=store)
    job.wait(30)
    assert job.error is None and job.key is not None
    assert Store(store.root).row(job.key)["source"] == "run"  # another process would see it too


def test_the_index_row_reads_grading_claims_and_importance(tmp_path):
    t = make_trace(10, seed=9)
    t.info["file_is_correct"] = False
    t.final.checks = [
        Check(kind="claim", name="c1", verdict="correct", step=2),
        Check(kind="claim", name="c2", verdict="wrong", step=6),
        Check(kind="claim", name="c3", verdict="wrong", step=8),
    ]
    for s in t.final.steps:
        s.type = "active_computation" if s.index % 2 else "plan_generation"
    row = index_row(t, "k" * 16)
    assert (row.correct, row.correct_by, row.claims, row.claim_errors) == (0, "file", 3, 2)
    assert row.first_wrong_step == 6 and row.first_wrong_pos == pytest.approx(6 / 9)
    assert importance_by_type(t) is None
    t.final.info["importance"] = {"per_step": [float(i) for i in range(10)]}
    assert importance_by_type(t) == {"plan_generation": 4.0, "active_computation": 5.0}
    t.final.info["importance"] = [1.0, 2.0]  # not one value per step: not importance
    assert importance_by_type(t) is None


def test_importance_by_type_reads_the_rounds_importance_records():
    from o3viz.trace.importance import ImportanceRecord

    t = make_trace(4, seed=3)
    for s in t.final.steps:
        s.type = "plan_generation" if s.index < 2 else "active_computation"
    # what `o3viz importance` writes: a record per method, scores in the method's own units
    t.final.importance = [ImportanceRecord("receiver", "receiver", [0.1, 0.4, 0.2, 0.9], [])]
    # rank-scaled as the map shows them: 0.1 -> 0, 0.2 -> 1/3, 0.4 -> 2/3, 0.9 -> 1
    assert importance_by_type(t) == pytest.approx({"plan_generation": 1 / 3, "active_computation": 2 / 3})
    assert index_row(t, "k" * 16).importance is not None


def test_a_search_inside_datasets_is_one_fts_intersection_with_the_dataset_tag(store):
    for i in range(6):
        t = make_trace(4, seed=20 + i)
        t.final.steps[1].text = "the total is right" if i != 4 else "nothing common here"
        store.add(t, dataset="gsm8k-a" if i < 3 else "math b")
    rows = store.conn.execute(
        "SELECT count(*) FROM steps_fts WHERE steps_fts MATCH ?",
        [f'{{dataset_tag}} : "{dataset_tag("math b")}"'],
    ).fetchone()[0]
    assert rows == 3  # FTS5 itself knows each row's dataset: no row-by-row filter is needed
    assert store.count(Query(search="total", dataset=["gsm8k-a"])) == 3
    assert store.count(Query(search="total", dataset=["math b"])) == 2
    assert store.count(Query(search="total", dataset=["gsm8k-a", "math b"])) == 5
    assert store.count(Query(search="total", dataset=["nowhere"])) == 0
    assert store.count(Query(search="ds*")) == 0  # the tags are never matched as step text
    key = store.rows(Query(search="total", dataset=["math b"], limit=1))[0]["key"]
    assert "«total»" in store.snippets("total", [key])[key]


def test_a_schema_2_index_gains_the_dataset_tag_in_place_and_keeps_every_search(store):
    t = make_trace(4, seed=31)
    t.final.steps[1].text = "a zanzibar step"
    key = store.add(t, dataset="d1")
    store.add(make_trace(4, seed=32), dataset="d2")
    store.close()
    with sqlite3.connect(store.db_path) as db:  # make it look like schema 2: FTS over the text only
        db.execute("CREATE VIRTUAL TABLE old_fts USING fts5(text)")
        db.execute("INSERT INTO old_fts (rowid, text) SELECT rowid, text FROM steps_fts")
        db.execute("DROP TABLE steps_fts")
        db.execute("ALTER TABLE old_fts RENAME TO steps_fts")
        db.execute("UPDATE meta SET value = '2' WHERE name = 'schema'")
    again = Store(store.root)
    assert [r["key"] for r in again.rows(Query(search="zanzibar", dataset=["d1"]))] == [key]
    assert again.count(Query(search="zanzibar", dataset=["d2"])) == 0
    cols = {r[1] for r in again.conn.execute("PRAGMA table_info(steps_fts)")}
    assert cols == {"text", "dataset_tag"}
    assert again.conn.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()[0] == str(
        STORE_SCHEMA
    )


def _vm_steps(conn, fn) -> int:
    """SQLite virtual-machine steps (in tens) ``fn`` costs: work done, not time taken."""
    n = [0]

    def tick():
        n[0] += 1
        return 0

    conn.set_progress_handler(tick, 10)
    try:
        fn()
    finally:
        conn.set_progress_handler(None, 10)
    return n[0]


def test_a_common_words_first_page_count_and_snippets_cost_what_a_rare_words_do(store):
    rows = []
    for i in range(1000):  # every trace says "total"; 3 of them also say "zanzibar"
        row = index_row(make_trace(3, seed=i), f"{i:016x}", {"dataset": "big"})
        rows.append((row, f"the total is {i}" + (" zanzibar" if i % 400 == 0 else "")))
    store.insert(rows)
    cost = {}
    for word in ("total", "zanzibar"):
        q = Query(search=word, limit=3)

        def page(q=q, word=word):
            assert store.count(q, cap=3) == 3
            keys = [r["key"] for r in store.rows(q)]
            assert len(store.snippets(word, keys)) == 3

        cost[word] = _vm_steps(store.conn, page)
    # the common word's matches are streamed and stopped at the page, never all gathered first
    assert cost["total"] <= 2 * cost["zanzibar"] + 10, cost
