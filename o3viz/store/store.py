"""The persistent trace store: a folder of trace files and an SQLite index over them.

Layout under ``o3viz.paths.home_dir()``::

    traces/ab/ab12…ef.o3trace.json.gz   the trace, named by the sha256 of its bytes (16 hex)
    traces/ab/ab12…ef.meta.json         what the store knows that the trace does not: source,
                                        dataset, name, record, tags (written before the trace)
    index.sqlite3                       one row per trace (``o3viz.store.index.IndexRow``) and an
                                        FTS5 table over the step text, in WAL mode

The files are the truth: a row is inserted only after its files are written atomically, and
``reindex`` rebuilds every row from the files, so a lost or torn index loses nothing. Several
processes may write at once (the app's sessions, a CLI import): SQLite serialises the short write
transactions and readers never wait. Problems surface as one-line ``StoreError``s.

``Store`` is the one door: the folder is ``o3viz.store.files``, the database's schema, upgrades
and transactions ``o3viz.store.schema``, the errors ``o3viz.store.errors``; ``Store`` keeps the
rows in step with the files and answers the queries (``o3viz.store.query``).
"""

from __future__ import annotations

import contextlib
import gzip
import os
import sqlite3
import threading
from collections import OrderedDict
from pathlib import Path

from o3viz.errors import O3vizError
from o3viz.paths import home_dir
from o3viz.store import schema
from o3viz.store.errors import StoreError, guard
from o3viz.store.files import META_SUFFIX, SUFFIX, TraceFolder, content_key  # noqa: F401 (re-exported)
from o3viz.store.index import COLUMNS, IndexRow, clean_row, index_row, search_text
from o3viz.store.meta import check_meta
from o3viz.store.query import (
    Query,
    count_sql,
    dataset_tag,
    distinct_sql,
    known_lines_sql,
    match_expression,
    rows_sql,
    select_sql,
    snippet_sql,
)
from o3viz.store.schema import BUSY_TIMEOUT_S, FTS_SQL, INDEXES, STORE_SCHEMA  # noqa: F401 (re-exported)
from o3viz.trace import Trace
from o3viz.trace.files import read_bounded
from o3viz.trace.io import MAX_FILE_BYTES, parse_trace_bytes, trace_bytes

CACHE_TRACES = 8  # parsed traces kept per process (content-addressed, so never stale)
_cache: OrderedDict[tuple[str, str], Trace] = OrderedDict()
_cache_lock = threading.Lock()


class Store:
    """A trace store at ``root`` (default ``home_dir()``). Cheap to create and to pickle: the
    database opens on first use, one connection per thread."""

    def __init__(self, root: str | os.PathLike | None = None) -> None:
        self.root = Path(root) if root is not None else home_dir()
        self.folder = TraceFolder(self.root)
        self.files = self.folder.dir
        self.db_path = self.root / "index.sqlite3"
        self._local = threading.local()

    def __getstate__(self) -> dict:
        return {"root": self.root}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["root"])

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r})"

    # ------------------------------------------------------------------ errors and connection

    def guard(self, doing: str):
        """Turn disk and database failures into one-line ``StoreError``s (a context manager)."""
        return guard(self.root, doing)

    @property
    def conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            with self.guard("opening the index"):
                conn = schema.open_index(self.db_path, self.root)
            self._local.conn = conn
        return conn

    create_indexes = staticmethod(schema.create_indexes)
    bump_generation = staticmethod(schema.bump_generation)

    def generation(self) -> int:
        with self.guard("reading the index"):
            return schema.generation(self.conn)

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    @contextlib.contextmanager
    def transaction(self, doing: str):
        with self.guard(doing), schema.immediate(self.conn) as conn:
            yield conn

    # ------------------------------------------------------------------ files

    def path(self, key: str) -> Path:
        return self.folder.path(key)

    def write_files(
        self, trace: Trace, meta: dict, data: bytes | None = None, *, durable: bool = True
    ) -> tuple[IndexRow, str]:
        """Write the trace (gzip bytes ``data`` as given, else encoded) and its metadata; return the
        row and the search text, ready for ``insert``. Safe to call from worker processes."""
        if data is None or data[:2] != b"\x1f\x8b":
            data = trace_bytes(trace, gzipped=True) if data is None else gzip.compress(data, mtime=0)
        key, meta = self.write_encoded(data, meta, durable=durable)
        return index_row(trace, key, meta, file_bytes=len(data)), search_text(trace)

    def write_encoded(self, data: bytes, meta: dict, *, durable: bool = True) -> tuple[str, dict]:
        """Write a trace file's gzip bytes (already validated: a parsed trace's) and its metadata;
        return the key and the metadata now stored (an earlier copy's, when the trace was there)."""
        return self.folder.write_encoded(data, meta, durable=durable)

    def write_meta(self, key: str, meta: dict) -> None:
        """Replace trace ``key``'s metadata file with ``meta`` (validated: only the store's typed
        fields are written). The index row is the caller's to update, in its transaction."""
        meta = check_meta(meta, "metadata")
        with self.guard("writing a trace's metadata"):
            self.folder.write_meta(key, meta)

    def read_meta(self, key: str) -> dict:
        """The trace's metadata, validated (``o3viz.store.meta``); ``{}`` when it has none. A file
        that is not a regular file, too big, not JSON, or holds a wrong type: one-line ``TraceError``."""
        return self.folder.read_meta(key)

    def read_file(self, key: str) -> bytes:
        """A stored trace file's bytes: a regular file (never a link) of at most ``MAX_FILE_BYTES``."""
        return self.folder.read_file(key)

    # ------------------------------------------------------------------ writing rows

    def insert(self, rows: list[tuple[IndexRow, str]], *, drop_duplicates: bool = False) -> int:
        """Insert rows (with their search text) in one transaction; a key already present is kept
        as it is, and so is an import whose content is already there under another key: no row,
        and with ``drop_duplicates`` (a fresh import, not a reindex) its new files are removed.
        Returns how many rows were new."""
        added = 0
        names = ", ".join(COLUMNS)
        marks = ", ".join("?" * len(COLUMNS))
        same: list[str] = []
        with self.transaction("adding to the index") as conn:
            for row, text in rows:
                d = clean_row(row.to_dict())  # a wrong-typed value never enters the index
                if d["content_id"] and self._same_content(conn, d["key"], d["content_id"]):
                    same.append(d["key"])
                    continue
                cur = conn.execute(
                    f"INSERT OR IGNORE INTO traces ({names}) VALUES ({marks})", [d[c] for c in COLUMNS]
                )
                if cur.rowcount:
                    conn.execute(
                        "INSERT INTO steps_fts (rowid, text, dataset_tag) VALUES (?, ?, ?)",
                        (cur.lastrowid, text, dataset_tag(d["dataset"])),
                    )
                    added += 1
            if added:
                self.bump_generation(conn)
        if drop_duplicates:
            self._drop_unindexed(same)
        return added

    @staticmethod
    def _same_content(conn: sqlite3.Connection, key: str, content: str) -> bool:
        found = conn.execute("SELECT key FROM traces WHERE content_id = ? LIMIT 1", (content,)).fetchone()
        return found is not None and found[0] != key

    def _drop_unindexed(self, keys: list[str]) -> None:
        """Remove the files of keys that have no row (an import recognised by its content)."""
        for key in keys:
            if self.row(key) is None:
                with self.guard("removing a duplicate import"):
                    self.folder.remove(key)

    def stored_key(self, row: IndexRow) -> str | None:
        """The key under which the store holds ``row``'s trace: its own, or the key of the import
        with the same content; None when it holds neither."""
        if self.row(row.key) is not None:
            return row.key
        if not row.content_id:
            return None
        with self.guard("querying"):
            found = self.conn.execute(
                "SELECT key FROM traces WHERE content_id = ? ORDER BY id LIMIT 1", (row.content_id,)
            ).fetchone()
        return found[0] if found is not None else None

    def add(self, trace: Trace, *, data: bytes | None = None, **meta) -> str:
        """Store one trace (files, then row) and return its key. ``meta``: source, name, dataset, …"""
        row, text = self.write_files(trace, meta, data)
        self.insert([(row, text)], drop_duplicates=True)
        return self.stored_key(row) or row.key

    def add_file(self, path: str | os.PathLike, **meta) -> str:
        """Store a trace file as it is (gzipped if it is plain JSON); validates it first."""
        path = Path(path)
        data = read_bounded(path, MAX_FILE_BYTES)  # a regular file, bounded: never a device or FIFO
        if data[:2] == b"\x1f\x8b" and self.row(content_key(data)) is not None:
            return content_key(data)  # already stored: no need to parse it again
        trace = parse_trace_bytes(data)
        return self.add(trace, data=data, **{"name": path.name, **meta})

    def set_tags(self, key: str, tags: list[str]) -> None:
        clean = ",".join(sorted({t.strip().replace(",", " ") for t in tags if t.strip()}))
        try:
            meta = {**self.read_meta(key), "tags": clean}
        except O3vizError:  # a damaged metadata file: the tags start it afresh
            meta = {"tags": clean}
        with self.guard("tagging"):
            self.folder.write_meta(key, meta)
        with self.transaction("tagging") as conn:
            conn.execute("UPDATE traces SET tags = ? WHERE key = ?", (clean, key))
            self.bump_generation(conn)

    def delete(self, keys: list[str]) -> int:
        """Remove the files and then the rows of ``keys``; returns how many rows went."""
        for key in keys:
            self.forget(key)
            with self.guard("deleting a trace"):
                self.folder.remove(key)
        gone = 0
        with self.transaction("deleting from the index") as conn:
            for key in keys:
                found = conn.execute("SELECT id FROM traces WHERE key = ?", (key,)).fetchone()
                if found is not None:
                    conn.execute("DELETE FROM steps_fts WHERE rowid = ?", (found[0],))
                    conn.execute("DELETE FROM traces WHERE id = ?", (found[0],))
                    gone += 1
            self.bump_generation(conn)
        return gone

    # ------------------------------------------------------------------ reading

    def trace(self, key: str) -> Trace:
        """The stored trace (parsed once per process; raises ``TraceError``/``StoreError``)."""
        ck = (str(self.root), key)
        with _cache_lock:
            if ck in _cache:
                _cache.move_to_end(ck)
                return _cache[ck]
        trace = self.editable_trace(key)
        with _cache_lock:
            _cache[ck] = trace
            while len(_cache) > CACHE_TRACES:
                _cache.popitem(last=False)
        return trace

    def editable_trace(self, key: str) -> Trace:
        """A private copy of the stored trace, parsed anew, for a caller that changes it and stores
        it again (``o3viz.store.replace``): the one ``trace`` returns is shared by the process."""
        path = self.path(key)
        if len(key) != 16 or not all(c in "0123456789abcdef" for c in key) or not path.is_file():
            raise StoreError(f"no trace {key!r} in the store at {self.root}")
        return parse_trace_bytes(self.read_file(key))

    def forget(self, key: str) -> None:
        """Drop trace ``key`` from the process's parsed copies (it was deleted or replaced)."""
        with _cache_lock:
            _cache.pop((str(self.root), key), None)

    def trace_file_bytes(self, key: str) -> bytes:
        """The stored file's bytes (the download button), through the one bounded reader."""
        return self.read_file(key)

    def count(self, q: Query | None = None, *, cap: int | None = None) -> int:
        """Traces matching ``q``; with ``cap``, counting stops there (``query.count_sql``)."""
        sql, params = count_sql(q or Query(), cap)
        with self.guard("counting"):
            return self.conn.execute(sql, params).fetchone()[0]

    def rows(self, q: Query, columns: tuple[str, ...] | None = None) -> list[dict]:
        """One page of rows matching ``q``, in its order."""
        sql, params = rows_sql(q, columns or COLUMNS)
        with self.guard("querying"):
            return [clean_row(dict(r)) for r in self.conn.execute(sql, params)]

    def select(self, q: Query, columns: tuple[str, ...], *, max_rows: int = 200_000) -> list[tuple]:
        """Every row matching ``q`` (up to ``max_rows``), for aggregates; plain tuples for speed."""
        sql, params = select_sql(q, columns, max_rows)
        with self.guard("querying"):
            return self.conn.execute(sql, params).fetchall()

    def row(self, key: str) -> dict | None:
        found = self.rows(Query(keys=[key], limit=1))
        return found[0] if found else None

    def snippets(self, search: str, keys: list[str]) -> dict[str, str]:
        """The text around ``search``'s match in each of ``keys`` (one page of search results)."""
        expr = match_expression(search)
        if not expr or not keys:
            return {}
        with self.guard("searching"):
            marks = ", ".join("?" * len(keys))
            ids = dict(
                self.conn.execute(f"SELECT id, key FROM traces WHERE key IN ({marks})", keys).fetchall()
            )
            found = self.conn.execute(snippet_sql(len(ids)), [expr, *ids]).fetchall() if ids else []
        return {ids[rowid]: text for rowid, text in found}

    def row_by_line_hash(self, line_hash: str) -> dict | None:
        """The oldest row made from the source (a dataset record, an upload's bytes) ``line_hash``:
        what "already in the library" names."""
        with self.guard("querying"):
            found = self.conn.execute(
                "SELECT * FROM traces WHERE line_hash = ? ORDER BY id LIMIT 1", (line_hash,)
            ).fetchone()
        return dict(found) if found is not None else None

    def distinct(self, column: str) -> list[tuple[str, int]]:
        """Values of a text column with their counts, most common first (filter options)."""
        sql = distinct_sql(column)
        with self.guard("querying"):
            return [(v, n) for v, n in self.conn.execute(sql) if v not in (None, "")]

    def known_lines(self, hashes: list[str]) -> set[str]:
        """The source-record hashes whose every trace is already in the store."""
        out: set[str] = set()
        for i in range(0, len(hashes), 500):
            chunk = hashes[i : i + 500]
            with self.guard("querying"):
                out.update(r[0] for r in self.conn.execute(known_lines_sql(len(chunk)), chunk))
        return out

    # ------------------------------------------------------------------ repair

    def stored_keys(self) -> set[str]:
        return self.folder.keys()

    def delete_rows(self, keys: list[str]) -> int:
        with self.transaction("repairing the index") as conn:
            for key in keys:
                found = conn.execute("SELECT id FROM traces WHERE key = ?", (key,)).fetchone()
                if found is not None:
                    conn.execute("DELETE FROM steps_fts WHERE rowid = ?", (found[0],))
                    conn.execute("DELETE FROM traces WHERE id = ?", (found[0],))
            self.bump_generation(conn)
        return len(keys)
