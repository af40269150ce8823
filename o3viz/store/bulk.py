"""Loading many traces into the store at once (a benchmark's million, a large import): rows go in
big transactions with the secondary indexes dropped and rebuilt at the end, and the FTS5 table
merged once; files are written without an fsync each (``Store.write_files(durable=False)``).

The store keeps its guarantees: files are still written before their rows, so a killed load
leaves files that ``reindex`` turns into rows; only the load's own transactions are bigger. One
loading process at a time (it holds the write lock for a transaction of ``rows_per_commit``).

>>> from o3viz.store.store import Store                                   # doctest: +SKIP
>>> with BulkLoader(Store()) as load:                                     # doctest: +SKIP
...     load.add(row, text)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from o3viz.store.index import IndexRow
from o3viz.store.store import INDEXES, Store

ROWS_PER_COMMIT = 50_000


@dataclass
class BulkReport:
    added: int = 0
    duplicates: int = 0
    insert_s: float = 0.0  # rows and search text, in big transactions
    finish_s: float = 0.0  # rebuilding the indexes and merging the FTS segments


class BulkLoader:
    """A context that takes (row, search text) pairs and commits them ``rows_per_commit`` at a time."""

    def __init__(self, store: Store, rows_per_commit: int = ROWS_PER_COMMIT) -> None:
        self.store, self.rows_per_commit = store, rows_per_commit
        self.pending: list[tuple[IndexRow, str]] = []
        self.report = BulkReport()

    def __enter__(self) -> BulkLoader:
        conn = self.store.conn
        with self.store.guard("preparing a bulk load"):
            conn.execute("PRAGMA cache_size=-262144")  # 256 MiB of page cache for the load
            conn.execute("PRAGMA temp_store=MEMORY")
            for name, _ in INDEXES:  # one sort at the end beats a b-tree update per row
                conn.execute(f"DROP INDEX IF EXISTS {name}")
        return self

    def add(self, row: IndexRow, text: str) -> None:
        self.pending.append((row, text))
        if len(self.pending) >= self.rows_per_commit:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        t0 = time.perf_counter()
        added = self.store.insert(self.pending)  # one transaction for the whole batch
        self.report.added += added
        self.report.duplicates += len(self.pending) - added
        self.report.insert_s += time.perf_counter() - t0
        self.pending = []

    def __exit__(self, *exc) -> None:
        try:
            if exc[0] is None:
                self.flush()
        finally:
            t0 = time.perf_counter()
            with self.store.transaction("rebuilding the index after a bulk load") as conn:
                self.store.create_indexes(conn)
            if exc[0] is None:
                with self.store.guard("merging the search index"):
                    self.store.conn.execute("INSERT INTO steps_fts (steps_fts) VALUES ('optimize')")
                    self.store.conn.execute("ANALYZE")
            self.report.finish_s = time.perf_counter() - t0
