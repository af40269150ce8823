"""The store's SQLite index as a database: opening it, its schema (version, tables, indexes), the
in-place upgrade of an older one, and the one way a write transaction opens (``immediate``).

Every function takes the connection; none knows about the trace files (``o3viz.store.files``)."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from o3viz.analysis.pairing import question_hash
from o3viz.store.errors import StoreError
from o3viz.store.index import ANSWER_COLUMNS, KEY_COLUMNS, QUESTION_CHARS, column_sql
from o3viz.store.query import dataset_tag

STORE_SCHEMA = 6  # the index's schema version; a store written by a newer o3viz is refused
# 2: source_correct and check_correct (both gradings); a schema-1 index gains them in place
# 3: the FTS table's dataset_tag column (``query.dataset_tag``); an older one is rebuilt in place
# 4: content_id (an import's content identity); older rows gain it empty (``reindex --full`` fills it)
# 5: the running-answer columns (``index.ANSWER_COLUMNS``); older rows gain them NULL (``reindex --full``)
# 6: question_key (the whole question's pairing key) and replaces (``index.KEY_COLUMNS``): a row whose
#    question column is whole gets its key in place; a clipped one stays NULL (``reindex --full``)
FTS_SQL = "CREATE VIRTUAL TABLE IF NOT EXISTS steps_fts USING fts5(text, dataset_tag)"
BUSY_TIMEOUT_S = 60.0
INDEXES = [
    (f"traces_{c}", c)
    for c in ("dataset", "model", "source", "correct", "line_hash", "verdict", "content_id")
]
INDEXES += [(f"traces_by_{c}", f"{c}, id") for c in ("steps", "backtracks", "claim_errors", "name")]  # sorts


@contextlib.contextmanager
def immediate(conn: sqlite3.Connection):
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


def open_index(db_path: Path, root: Path) -> sqlite3.Connection:
    """A connection to the index at ``db_path`` (of the store at ``root``), in WAL mode, with the
    schema created or brought up to ``STORE_SCHEMA``."""
    root.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db_path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    migrate(conn, root)
    return conn


def migrate(conn: sqlite3.Connection, root: Path) -> None:
    """Create the schema in an empty index, upgrade an older one; refuse (and close) a newer one."""
    conn.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT)")
    found = conn.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
    if found is not None and int(found[0]) > STORE_SCHEMA:
        conn.close()
        raise StoreError(
            f"the trace store at {root} was written by a newer o3viz (index schema "
            f"{found[0]}, this o3viz reads {STORE_SCHEMA}); upgrade o3viz or set O3VIZ_HOME elsewhere"
        )
    if found is not None:
        if int(found[0]) < STORE_SCHEMA:
            add_columns(conn)
        return
    with immediate(conn):
        conn.execute(f"CREATE TABLE IF NOT EXISTS traces ({column_sql()})")
        conn.execute(FTS_SQL)
        create_indexes(conn)
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(STORE_SCHEMA),))


def create_indexes(conn: sqlite3.Connection) -> None:
    for name, cols in INDEXES:
        conn.execute(f"CREATE INDEX IF NOT EXISTS {name} ON traces ({cols})")


def bump_generation(conn: sqlite3.Connection) -> None:
    """Count one change of the rows (inside the writing transaction): what the columnar copy
    (``o3viz.store.columnar``) compares to know whether it is stale."""
    conn.execute("INSERT OR IGNORE INTO meta VALUES ('generation', '0')")
    conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE name = 'generation'")


def generation(conn: sqlite3.Connection) -> int:
    found = conn.execute("SELECT value FROM meta WHERE name = 'generation'").fetchone()
    return int(found[0]) if found is not None else 0


def add_columns(conn: sqlite3.Connection) -> None:
    """Bring an older index up to ``STORE_SCHEMA`` in place: add the columns it lacks and fill
    the gradings from what it has (``correct_by`` says which grade ``correct`` is). The check
    grade of an import graded by its file is unknown until ``reindex(store, full=True)``."""
    with immediate(conn):
        have = {r[1] for r in conn.execute("PRAGMA table_info(traces)")}
        for name, kind in (
            ("source_correct", "INTEGER"),
            ("check_correct", "INTEGER"),
            ("content_id", "TEXT"),
            *ANSWER_COLUMNS,
            *KEY_COLUMNS,
        ):
            if name not in have:
                conn.execute(f"ALTER TABLE traces ADD COLUMN {name} {kind}")
        create_indexes(conn)
        conn.execute("UPDATE traces SET source_correct = correct WHERE correct_by = 'file'")
        conn.execute("UPDATE traces SET check_correct = correct WHERE correct_by = 'check'")
        fill_question_keys(conn)
        if "dataset_tag" not in {r[1] for r in conn.execute("PRAGMA table_info(steps_fts)")}:
            rebuild_fts(conn)
        conn.execute("UPDATE meta SET value = ? WHERE name = 'schema'", (str(STORE_SCHEMA),))
        bump_generation(conn)


def fill_question_keys(conn: sqlite3.Connection) -> None:
    """The question key of every row that lacks one and whose question column holds the whole
    question (shorter than ``QUESTION_CHARS``: the column keeps the question with its spacing
    folded, which the key folds too); a clipped one stays NULL."""
    conn.create_function("o3viz_question_hash", 1, question_hash, deterministic=True)
    conn.execute(
        "UPDATE traces SET question_key = o3viz_question_hash(question) "
        "WHERE question_key IS NULL AND length(coalesce(question, '')) < ?",
        (QUESTION_CHARS,),
    )


def rebuild_fts(conn: sqlite3.Connection) -> None:
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
