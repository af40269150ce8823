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
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from pathlib import Path

from o3viz.errors import O3vizError, one_line
from o3viz.paths import home_dir
from o3viz.store.index import COLUMNS, IndexRow, clean_row, column_sql, index_row, search_text
from o3viz.store.meta import MAX_META_BYTES, check_meta
from o3viz.store.query import (
    FTS_JOIN,
    Query,
    dataset_tag,
    match_expression,
    order_clause,
    page_clause,
    snippet_sql,
    where_clause,
)
from o3viz.trace import Trace
from o3viz.trace.files import read_bounded, write_atomic
from o3viz.trace.io import MAX_FILE_BYTES, parse_trace_bytes, trace_bytes
from o3viz.trace.safejson import loads

STORE_SCHEMA = 4  # the index's schema version; a store written by a newer o3viz is refused
# 2: source_correct and check_correct (both gradings); a schema-1 index gains them in place
# 3: the FTS table's dataset_tag column (``query.dataset_tag``); an older one is rebuilt in place
# 4: content_id (an import's content identity); older rows gain it empty (``reindex --full`` fills it)
FTS_SQL = "CREATE VIRTUAL TABLE IF NOT EXISTS steps_fts USING fts5(text, dataset_tag)"
SUFFIX = ".o3trace.json.gz"
META_SUFFIX = ".meta.json"
BUSY_TIMEOUT_S = 60.0
CACHE_TRACES = 8  # parsed traces kept per process (content-addressed, so never stale)
_FULL = (errno.ENOSPC, errno.EDQUOT)
INDEXES = [
    (f"traces_{c}", c)
    for c in ("dataset", "model", "source", "correct", "line_hash", "verdict", "content_id")
]
INDEXES += [(f"traces_by_{c}", f"{c}, id") for c in ("steps", "backtracks", "claim_errors", "name")]  # sorts


@contextlib.contextmanager
def _immediate(conn: sqlite3.Connection):
    """One write transaction on ``conn``, the one way the store opens one: committed at the end,
    rolled back on any error. SQLite may have rolled back already (a full disk does): the original
    error is the one to report, never "cannot rollback - no transaction is active"."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise


class StoreError(O3vizError):
    """The store cannot do what was asked (newer schema, full disk, unreadable folder)."""


def content_key(data: bytes) -> str:
    """The key (and file name) of a stored file: the sha256 of its bytes, 16 hex digits."""
    return hashlib.sha256(data).hexdigest()[:16]


def _disk_full(exc: BaseException) -> bool:
    if isinstance(exc, OSError | O3vizError) and getattr(exc, "errno", None) in _FULL:
        return True
    return isinstance(exc, sqlite3.DatabaseError) and "full" in str(exc).lower()


_cache: OrderedDict[tuple[str, str], Trace] = OrderedDict()
_cache_lock = threading.Lock()


class Store:
    """A trace store at ``root`` (default ``home_dir()``). Cheap to create and to pickle: the
    database opens on first use, one connection per thread."""

    def __init__(self, root: str | os.PathLike | None = None) -> None:
        self.root = Path(root) if root is not None else home_dir()
        self.files = self.root / "traces"
        self.db_path = self.root / "index.sqlite3"
        self._local = threading.local()

    def __getstate__(self) -> dict:
        return {"root": self.root}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["root"])

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r})"

    # ------------------------------------------------------------------ errors and connection

    @contextlib.contextmanager
    def guard(self, doing: str):
        """Turn disk and database failures into one-line ``StoreError``s."""
        try:
            yield
        except StoreError:
            raise
        except (OSError, sqlite3.Error, O3vizError) as exc:
            if _disk_full(exc):
                full = StoreError(
                    f"no space left on the disk of the trace store ({self.root}) while {doing}; "
                    "free some space or set O3VIZ_HOME to a folder on another disk"
                )
                full.fatal = True  # a dataset import stops at once instead of failing every record
                raise full from None
            detail = one_line(exc)
            raise StoreError(f"trace store {self.root}: {doing} failed ({detail})") from None

    @property
    def conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            with self.guard("opening the index"):
                self.root.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(self.db_path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
                conn.row_factory = sqlite3.Row
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                self._migrate(conn)
            self._local.conn = conn
        return conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT)")
        found = conn.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
        if found is not None and int(found[0]) > STORE_SCHEMA:
            conn.close()
            raise StoreError(
                f"the trace store at {self.root} was written by a newer o3viz (index schema "
                f"{found[0]}, this o3viz reads {STORE_SCHEMA}); upgrade o3viz or set O3VIZ_HOME elsewhere"
            )
        if found is not None:
            if int(found[0]) < STORE_SCHEMA:
                self._add_columns(conn)
            return
        with _immediate(conn):
            conn.execute(f"CREATE TABLE IF NOT EXISTS traces ({column_sql()})")
            conn.execute(FTS_SQL)
            self.create_indexes(conn)
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(STORE_SCHEMA),))

    @staticmethod
    def create_indexes(conn: sqlite3.Connection) -> None:
        for name, cols in INDEXES:
            conn.execute(f"CREATE INDEX IF NOT EXISTS {name} ON traces ({cols})")

    @staticmethod
    def bump_generation(conn: sqlite3.Connection) -> None:
        """Count one change of the rows (inside the writing transaction): what the columnar copy
        (``o3viz.store.columnar``) compares to know whether it is stale."""
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('generation', '0')")
        conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE name = 'generation'")

    def generation(self) -> int:
        with self.guard("reading the index"):
            found = self.conn.execute("SELECT value FROM meta WHERE name = 'generation'").fetchone()
        return int(found[0]) if found is not None else 0

    def _add_columns(self, conn: sqlite3.Connection) -> None:
        """Bring an older index up to ``STORE_SCHEMA`` in place: add the columns it lacks and fill
        the gradings from what it has (``correct_by`` says which grade ``correct`` is). The check
        grade of an import graded by its file is unknown until ``reindex(store, full=True)``."""
        with _immediate(conn):
            have = {r[1] for r in conn.execute("PRAGMA table_info(traces)")}
            for name, kind in (
                ("source_correct", "INTEGER"),
                ("check_correct", "INTEGER"),
                ("content_id", "TEXT"),
            ):
                if name not in have:
                    conn.execute(f"ALTER TABLE traces ADD COLUMN {name} {kind}")
            self.create_indexes(conn)
            conn.execute("UPDATE traces SET source_correct = correct WHERE correct_by = 'file'")
            conn.execute("UPDATE traces SET check_correct = correct WHERE correct_by = 'check'")
            if "dataset_tag" not in {r[1] for r in conn.execute("PRAGMA table_info(steps_fts)")}:
                self._rebuild_fts(conn)
            conn.execute("UPDATE meta SET value = ? WHERE name = 'schema'", (str(STORE_SCHEMA),))
            self.bump_generation(conn)

    @staticmethod
    def _rebuild_fts(conn: sqlite3.Connection) -> None:
        """A schema-2 FTS table (text only) becomes one with each row's dataset tag (inside the
        caller's transaction: a failure leaves the old table as it was)."""
        conn.create_function("o3viz_dataset_tag", 1, dataset_tag, deterministic=True)
        conn.execute("CREATE VIRTUAL TABLE steps_fts_v3 USING fts5(text, dataset_tag)")
        conn.execute(
            "INSERT INTO steps_fts_v3 (rowid, text, dataset_tag) SELECT f.rowid, f.text, "
            "o3viz_dataset_tag(t.dataset) FROM steps_fts f JOIN traces t ON t.id = f.rowid"
        )
        conn.execute("DROP TABLE steps_fts")
        conn.execute("ALTER TABLE steps_fts_v3 RENAME TO steps_fts")

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    @contextlib.contextmanager
    def transaction(self, doing: str):
        with self.guard(doing), _immediate(self.conn) as conn:
            yield conn

    # ------------------------------------------------------------------ files

    def path(self, key: str) -> Path:
        return self.files / key[:2] / f"{key}{SUFFIX}"

    def _meta_path(self, key: str) -> Path:
        return self.files / key[:2] / f"{key}{META_SUFFIX}"

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
        key = content_key(data)
        meta = check_meta({"added_at": time.time(), **meta}, "metadata")  # only typed fields reach the index
        with self.guard("writing a trace"):
            path = self.path(key)
            if not path.exists():
                self._write_meta(key, meta, durable=durable)
                # the trace last: a trace file always has its metadata; same key, same bytes, so a
                # concurrent writer of the same trace replaces it with an identical file
                write_atomic(path, data, overwrite=True, durable=durable)
            elif self._meta_path(key).exists():
                try:
                    meta = self.read_meta(key)
                except O3vizError:  # a damaged metadata file: this writer's metadata replaces it
                    self._write_meta(key, meta, durable=durable)
        return key, meta

    def write_meta(self, key: str, meta: dict) -> None:
        """Replace trace ``key``'s metadata file with ``meta`` (validated: only the store's typed
        fields are written). The index row is the caller's to update, in its transaction."""
        meta = check_meta(meta, "metadata")
        with self.guard("writing a trace's metadata"):
            self._write_meta(key, meta)

    def _write_meta(self, key: str, meta: dict, *, durable: bool = True) -> None:
        data = json.dumps(meta, sort_keys=True).encode()
        write_atomic(self._meta_path(key), data, overwrite=True, durable=durable)

    def read_meta(self, key: str) -> dict:
        """The trace's metadata, validated (``o3viz.store.meta``); ``{}`` when it has none. A file
        that is not a regular file, too big, not JSON, or holds a wrong type: one-line ``TraceError``."""
        path = self._meta_path(key)
        if not path.exists() and not path.is_symlink():
            return {}
        data = read_bounded(path, MAX_META_BYTES, follow_symlinks=False)
        return check_meta(loads(data, path.name), path.name)

    def read_file(self, key: str) -> bytes:
        """A stored trace file's bytes: a regular file (never a link) of at most ``MAX_FILE_BYTES``."""
        return read_bounded(self.path(key), MAX_FILE_BYTES, follow_symlinks=False)

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
                    self.path(key).unlink(missing_ok=True)
                    self._meta_path(key).unlink(missing_ok=True)

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
            self._write_meta(key, meta)
        with self.transaction("tagging") as conn:
            conn.execute("UPDATE traces SET tags = ? WHERE key = ?", (clean, key))
            self.bump_generation(conn)

    def delete(self, keys: list[str]) -> int:
        """Remove the files and then the rows of ``keys``; returns how many rows went."""
        for key in keys:
            self.forget(key)
            with self.guard("deleting a trace"):
                self.path(key).unlink(missing_ok=True)
                self._meta_path(key).unlink(missing_ok=True)
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
        """Traces matching ``q``; with ``cap``, counting stops there (a search over a huge store
        need not count every match to show its first page)."""
        q = q or Query()
        source = FTS_JOIN if cap is not None and match_expression(q.search) else "traces"
        where, params = where_clause(q, fts_driven=source != "traces")
        sql = f"SELECT count(*) FROM {source} {where}"
        if cap is not None:
            sql = f"SELECT count(*) FROM (SELECT 1 FROM {source} {where} LIMIT ?)"
            params = [*params, cap]
        with self.guard("counting"):
            return self.conn.execute(sql, params).fetchone()[0]

    def rows(self, q: Query, columns: tuple[str, ...] | None = None) -> list[dict]:
        """One page of rows matching ``q``, in its order."""
        page, pparams = page_clause(q)
        cols = ", ".join(f"traces.{c}" for c in columns or COLUMNS)
        if q.sort == "id" and match_expression(q.search):  # newest (or oldest) first: FTS5's own order
            where, params = where_clause(q, fts_driven=True)
            order = f"ORDER BY steps_fts.rowid {'DESC' if q.descending else 'ASC'}"
            sql = f"SELECT {cols} FROM {FTS_JOIN} {where} {order} {page}"
        else:
            where, params = where_clause(q)
            sql = f"SELECT {cols} FROM traces {where} {order_clause(q)} {page}"
        with self.guard("querying"):
            return [clean_row(dict(r)) for r in self.conn.execute(sql, params + pparams)]

    def select(self, q: Query, columns: tuple[str, ...], *, max_rows: int = 200_000) -> list[tuple]:
        """Every row matching ``q`` (up to ``max_rows``), for aggregates; plain tuples for speed."""
        where, params = where_clause(q)
        sql = f"SELECT {', '.join(columns)} FROM traces {where} {order_clause(q)} LIMIT ?"
        with self.guard("querying"):
            return self.conn.execute(sql, [*params, max_rows]).fetchall()

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
        if column not in ("dataset", "model", "source", "verdict", "task_kind"):
            raise ValueError(f"no filter on {column!r}")
        sql = f"SELECT {column}, count(*) FROM traces GROUP BY {column} ORDER BY count(*) DESC"
        with self.guard("querying"):
            return [(v, n) for v, n in self.conn.execute(sql) if v not in (None, "")]

    def known_lines(self, hashes: list[str]) -> set[str]:
        """The source-record hashes whose every trace is already in the store."""
        out: set[str] = set()
        for i in range(0, len(hashes), 500):
            chunk = hashes[i : i + 500]
            sql = (
                f"SELECT line_hash FROM traces WHERE line_hash IN ({', '.join('?' * len(chunk))}) "
                "GROUP BY line_hash HAVING count(*) >= max(parts)"
            )
            with self.guard("querying"):
                out.update(r[0] for r in self.conn.execute(sql, chunk))
        return out

    # ------------------------------------------------------------------ repair

    def stored_keys(self) -> set[str]:
        if not self.files.is_dir():
            return set()
        return {p.name[: -len(SUFFIX)] for p in self.files.glob(f"*/*{SUFFIX}") if not p.name.startswith(".")}

    def delete_rows(self, keys: list[str]) -> int:
        with self.transaction("repairing the index") as conn:
            for key in keys:
                found = conn.execute("SELECT id FROM traces WHERE key = ?", (key,)).fetchone()
                if found is not None:
                    conn.execute("DELETE FROM steps_fts WHERE rowid = ?", (found[0],))
                    conn.execute("DELETE FROM traces WHERE id = ?", (found[0],))
            self.bump_generation(conn)
        return len(keys)
