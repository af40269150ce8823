"""The store against hostile or damaged files: a bad ``.meta.json`` is reported and skipped while
the rest are indexed, no wrong-typed value reaches a row, stored files are read only as bounded
regular files, and a full index reports "no space left"."""

from __future__ import annotations

import json

import pytest

from o3viz.errors import O3vizError
from o3viz.store.repair import reindex
from o3viz.store.store import Store, StoreError
from o3viz.testing.synthetic import make_trace


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "home")


def _fill(store: Store, n: int) -> list[str]:
    return [store.add(make_trace(4, seed=i), source="import", name=f"t{i}") for i in range(n)]


def _lose_index(store: Store) -> None:
    store.close()
    store.db_path.unlink()
    for extra in ("-wal", "-shm"):
        store.db_path.with_name(store.db_path.name + extra).unlink(missing_ok=True)


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"name": ["a", "list"]}, "name: must be a string"),
        ({"added_at": "yesterday"}, "added_at: must be a number"),
        ({"added_at": 1e300}, "added_at"),
        ({"record": {"x": 1}}, "record: must be an integer"),
        ([1, 2], "must be a JSON object"),
        ("not json", "not valid JSON"),
    ],
    ids=["list-name", "string-time", "huge-time", "object-record", "a-list", "garbage"],
)
def test_reindex_skips_and_reports_one_hostile_meta_file_and_indexes_the_rest(store, bad, field):
    keys = _fill(store, 6)
    meta = store.folder.meta_path(keys[2])
    if isinstance(bad, dict):
        bad = {**json.loads(meta.read_text()), **bad}
    meta.write_text(bad if isinstance(bad, str) else json.dumps(bad))
    _lose_index(store)
    rep = reindex(store)
    assert rep.added == 5 and len(rep.errors) == 1, rep
    assert rep.errors[0].startswith(keys[2]) and field in rep.errors[0] and "\n" not in rep.errors[0]
    assert store.count() == 5 and store.row(keys[2]) is None


def test_a_wrong_typed_value_in_an_old_row_never_reaches_the_library_page(store):
    from o3viz.app.library import store_rows, stored_entries
    from o3viz.store.query import Query

    keys = _fill(store, 2)
    with store.transaction("planting") as conn:  # what an older o3viz or a hand edit could leave
        conn.execute(
            "UPDATE traces SET added_at = 'yesterday', steps = 'many', name = x'41' WHERE key = ?", (keys[0],)
        )
        conn.execute("UPDATE traces SET added_at = 1e300 WHERE key = ?", (keys[1],))
    rows = store.rows(Query())
    assert {r["key"]: (r["added_at"], r["steps"], r["name"]) for r in rows}[keys[0]] == (0.0, 0, "")
    assert len(store_rows(rows)) == 2  # used to raise on the string and on the year past 9999
    assert [e.key for e in stored_entries(store, keys)] == keys


def test_writing_a_trace_whose_meta_file_is_damaged_rewrites_it_with_clean_metadata(store):
    trace = make_trace(4, seed=1)
    key = store.add(trace, name="first")
    store.folder.meta_path(key).write_text('{"name": ["hostile"]}')
    store.close()
    row, _ = store.write_files(trace, {"name": "again", "source": "upload"})
    assert row.name == "again" and store.read_meta(key)["name"] == "again"
    store.set_tags(key, ["x"])  # a damaged file never stops tagging either
    assert store.read_meta(key)["tags"] == "x"


def test_metadata_of_a_wrong_type_from_a_caller_is_refused_before_anything_is_written(store):
    with pytest.raises(O3vizError, match="name: must be a string"):
        store.add(make_trace(4, seed=2), name=["not", "a", "string"])
    assert store.count() == 0 and not list(store.files.glob("*/*.o3trace.json.gz"))


def _sparse(path, size: int) -> None:
    with open(path, "wb") as f:
        f.truncate(size)


def test_a_symlinked_trace_file_in_the_store_is_not_read(store, tmp_path):
    (key,) = _fill(store, 1)
    big = tmp_path / "big"
    _sparse(big, 200 << 20)
    path = store.path(key)
    path.unlink()
    path.symlink_to(big)
    with pytest.raises(O3vizError, match="symbolic link") as err:
        store.trace_file_bytes(key)  # the download button; it read all 200 MB (1.9 GB -> MemoryError)
    assert "\n" not in str(err.value)
    with pytest.raises(O3vizError, match="symbolic link"):
        store.trace(key)


def test_a_re_pointed_trace_file_over_the_size_limit_is_refused_without_reading_it(store):
    (key,) = _fill(store, 1)
    path = store.path(key)
    path.unlink()
    _sparse(path, 1 << 30)
    with pytest.raises(O3vizError, match="exceeds"):
        store.trace_file_bytes(key)
    _lose_index(store)
    rep = reindex(store)
    assert rep.added == 0 and len(rep.errors) == 1 and "exceeds" in rep.errors[0]


def test_a_symlinked_meta_file_is_not_followed(store, tmp_path):
    (key,) = _fill(store, 1)
    secret = tmp_path / "secret.json"
    secret.write_text('{"name": "not the store\'s"}')
    meta = store.folder.meta_path(key)
    meta.unlink()
    meta.symlink_to(secret)
    with pytest.raises(O3vizError, match="symbolic link"):
        store.read_meta(key)


def test_a_full_index_reports_no_space_left_not_a_rollback_error(store):
    _fill(store, 1)
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    store.conn.execute(f"PRAGMA max_page_count = {pages + 2}")  # SQLITE_FULL after two more pages
    with pytest.raises(StoreError) as err:
        for i in range(1, 60):
            store.add(make_trace(40, seed=i))
    msg = str(err.value)
    assert msg.startswith("no space left on the disk of the trace store") and "rollback" not in msg
    assert err.value.fatal and not store.conn.in_transaction
    store.conn.execute(f"PRAGMA max_page_count = {1 << 30}")
    store.add(make_trace(40, seed=99))  # the connection is usable again once there is room
