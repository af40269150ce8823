"""Both gradings in the index (the source's, o3viz's own check), the disagreement filter, and an
index written before they existed (schema 1) opening and gaining them."""

from __future__ import annotations

import sqlite3

import pytest

from o3viz.importers import import_trace
from o3viz.store.query import Query
from o3viz.store.repair import reindex
from o3viz.store.store import STORE_SCHEMA, Store

PILOT = "traces/topology_pilot_math500_r1.jsonl"


@pytest.fixture
def pilot(shared_data):
    return [import_trace(shared_data / PILOT, record=i) for i in range(10)]


def test_pilot_record_5_keeps_both_gradings_and_the_disagreement_filter_finds_it(tmp_path, pilot):
    store = Store(tmp_path / "home")
    keys = [store.add(t, source="import", dataset="pilot", record=i + 1) for i, t in enumerate(pilot)]
    row = store.row(keys[4])
    assert (row["source_correct"], row["check_correct"], row["correct"], row["correct_by"]) == (
        0,
        1,
        0,
        "file",
    )
    found = {r["record"] for r in store.rows(Query(disagree=True), ("record",))}
    assert 5 in found and all(
        store.row(k)["source_correct"] != store.row(k)["check_correct"]
        for k in keys
        if store.row(k)["record"] in found
    )
    by_check = store.count(Query(correct="wrong", graded_by="check"))
    by_source = store.count(Query(correct="wrong", graded_by="source"))
    assert by_source >= 1 and by_check != by_source


def test_a_schema_1_index_opens_gains_the_grading_columns_and_a_full_reindex_fills_them(tmp_path, pilot):
    store = Store(tmp_path / "home")
    key = store.add(pilot[4], source="import")
    store.close()
    db = sqlite3.connect(store.db_path)  # make it look like a schema-1 index: no grading columns
    db.execute("ALTER TABLE traces DROP COLUMN source_correct")
    db.execute("ALTER TABLE traces DROP COLUMN check_correct")
    db.execute("UPDATE meta SET value = '1' WHERE name = 'schema'")
    db.commit()
    db.close()
    again = Store(tmp_path / "home")
    row = again.row(key)
    assert row["source_correct"] == 0 and row["check_correct"] is None  # filled from correct_by = file
    version = again.conn.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()[0]
    assert int(version) == STORE_SCHEMA
    reindex(again, full=True)
    assert again.row(key)["check_correct"] == 1
