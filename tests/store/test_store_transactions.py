"""Every write transaction of the store, the schema's creation and upgrade included, goes through
one guard: when SQLite has already rolled back (a full disk does), the original error is the one
reported, never "cannot rollback - no transaction is active"."""

from __future__ import annotations

import sqlite3

import pytest

from o3viz.store import schema
from o3viz.store.store import Store


def _fails_after_sqlite_rolled_back(conn: sqlite3.Connection) -> None:
    conn.execute("ROLLBACK")  # what SQLite does by itself on SQLITE_FULL
    raise sqlite3.OperationalError("database or disk is full")


def test_creating_the_index_reports_the_original_error(tmp_path, monkeypatch):
    monkeypatch.setattr(schema, "create_indexes", _fails_after_sqlite_rolled_back)
    with pytest.raises(Exception, match="no space left on the disk") as err:
        Store(tmp_path / "home").count()
    assert "cannot rollback" not in str(err.value)


def test_a_transaction_reports_the_original_error(tmp_path):
    store = Store(tmp_path / "home")
    store.count()
    with (
        pytest.raises(Exception, match="no space left on the disk") as err,
        store.transaction("writing") as conn,
    ):
        _fails_after_sqlite_rolled_back(conn)
    assert "cannot rollback" not in str(err.value)
    assert store.count() == 0  # the store still works
