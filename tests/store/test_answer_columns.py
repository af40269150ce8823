"""Issue 53: the store's index carries the running-answer figures (first correct point,
convergence, flips, tokens after the first correct point, overthinking), computed at index time,
so the Library filters and sorts by them; an older index gains the columns in place."""

from __future__ import annotations

import sqlite3

import pytest

from o3viz.importers import import_trace
from o3viz.store.query import Query
from o3viz.store.repair import reindex
from o3viz.store.store import STORE_SCHEMA, Store

pytestmark = [pytest.mark.light]

R1 = "topology_math500_deepseek_r1.jsonl"


def _store(tmp_path, shared_data, records=(14, 18, 2)) -> tuple[Store, list[str]]:
    store = Store(tmp_path / "home")
    keys = [
        store.add(
            import_trace(shared_data / "traces" / R1, record=i, claims=False), source="import", dataset="r1"
        )
        for i in records
    ]
    return store, keys


def test_index_rows_carry_the_running_answer_and_sort_and_filter_by_it(tmp_path, shared_data):
    store, keys = _store(tmp_path, shared_data)
    rows = {r["key"]: r for r in store.rows(Query(limit=10))}
    flipped, wrong, plain = (rows[k] for k in keys)
    assert 0 < flipped["first_correct_frac"] < flipped["convergence_frac"] <= 1
    # by hand record 14 never changes its answer: the old rule's flips were intermediate values (issue 63)
    assert flipped["answer_flips"] == 0 and flipped["tokens_after_correct"] > 0
    assert flipped["overthinking"] == "harmless" and wrong["first_correct_frac"] is None
    by_first = store.rows(Query(sort="first_correct_frac", descending=False, limit=10))
    fracs = [r["first_correct_frac"] for r in by_first if r["first_correct_frac"] is not None]
    assert fracs == sorted(fracs) and len(fracs) == 2
    assert store.count(Query(overthinking=["harmless"])) == 2
    assert store.count(Query(overthinking=["harmful"])) == 0
    assert {v for v, _ in store.distinct("overthinking")} >= {"harmless"}
    assert plain["answer_flips"] is not None


def test_an_older_index_gains_the_answer_columns_in_place(tmp_path, shared_data):
    store, keys = _store(tmp_path, shared_data, records=(14,))
    store.close()
    db = sqlite3.connect(store.db_path)  # as an index written before the columns existed
    for name in (
        "first_correct_frac",
        "convergence_frac",
        "answer_flips",
        "tokens_after_correct",
        "overthinking",
    ):
        db.execute(f"ALTER TABLE traces DROP COLUMN {name}")
    db.execute("UPDATE meta SET value = '4' WHERE name = 'schema'")
    db.commit()
    db.close()
    again = Store(tmp_path / "home")
    assert again.row(keys[0])["first_correct_frac"] is None  # present, unknown until reindexed
    version = again.conn.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()[0]
    assert int(version) == STORE_SCHEMA  # 5 added these columns; 6 the key columns
    reindex(again, full=True)
    assert again.row(keys[0])["first_correct_frac"] > 0
