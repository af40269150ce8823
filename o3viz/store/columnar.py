"""The store's Parquet layout: the index's trace rows as a columnar table, partitioned by dataset
(Hive style, ``dataset=<name>/``), which DuckDB, Spark and pandas read as they are.

The store keeps one copy beside its index (``<store>/columnar/traces/``) for the Dataset page's
aggregates: DuckDB reads the columns a page needs straight into a frame, where SQLite hands
Python one tuple per row. The copy is stamped with the index's generation (a counter every write
transaction bumps, ``Store.bump_generation``); a stale or missing copy is never read, the page
falls back to SQLite, so the copy can only make reads faster, never wrong. SQLite/FTS5 stays the
engine for search and the Library's pages.

Layout (also what ``o3viz library export --parquet DIR --partition dataset`` writes)::

    traces/dataset=<name>/part-0.parquet   one row per trace: ``id`` and every ``IndexRow`` column
    steps/dataset=<name>/part-0.parquet    one row per step (export only; ``o3viz.store.export``)
    _o3viz.json                            layout version, index generation, row counts
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path

import pandas as pd

from o3viz.store.index import COLUMNS, IndexRow
from o3viz.store.query import Query, order_clause, where_clause
from o3viz.store.store import Store

LAYOUT_VERSION = 2  # 2: a dataset name starting with "(" is escaped (partition_value)
STAMP = "_o3viz.json"
FOLDER = "columnar"
CHUNK_ROWS = 100_000
NO_DATASET = "(none)"  # the partition of traces without a dataset (Hive has no empty value)


def partition_value(dataset: str | None) -> str:
    """The partition a dataset's traces go in: ``NO_DATASET`` for none, and a name that starts with
    "(" gets one more, so a dataset really named "(none)" never shares the no-dataset partition.

    >>> [partition_value(d) for d in ("", "gsm8k", "(none)")]
    ['(none)', 'gsm8k', '((none)']
    >>> [dataset_of(partition_value(d)) for d in ("", "gsm8k", "(none)", "((x")]
    ['', 'gsm8k', '(none)', '((x']
    """
    if not dataset:
        return NO_DATASET
    return "(" + dataset if dataset.startswith("(") else dataset


def dataset_of(value: str | None) -> str:
    """``partition_value``'s inverse."""
    if value is None or value == NO_DATASET:
        return ""
    return value[1:] if value.startswith("((") else value


def trace_schema():
    """The Parquet schema of the trace table: ``id`` then ``IndexRow``'s columns by their types."""
    import pyarrow as pa

    kinds = {"int": pa.int64(), "int | None": pa.int64(), "float": pa.float64(), "float | None": pa.float64()}
    return pa.schema(
        [("id", pa.int64())] + [(f.name, kinds.get(f.type, pa.string())) for f in fields(IndexRow)]
    )


def trace_batches(store: Store, q: Query | None = None) -> Iterator:
    """The index's rows matching ``q`` as Arrow record batches of ``CHUNK_ROWS``, in id order."""
    import pyarrow as pa

    schema = trace_schema()
    where, params = where_clause(q or Query())
    sql = f"SELECT id, {', '.join(COLUMNS)} FROM traces {where} ORDER BY id"
    with store.guard("reading the index"):
        cur = store.conn.cursor()
        cur.row_factory = None  # plain tuples: the fastest way out of SQLite
        cur.execute(sql, params)
        while rows := cur.fetchmany(CHUNK_ROWS):
            cols = list(zip(*rows, strict=True))
            ds = [partition_value(v) for v in cols[schema.names.index("dataset")]]
            cols[schema.names.index("dataset")] = ds
            yield pa.record_batch(
                [pa.array(c, type=f.type) for c, f in zip(cols, schema, strict=True)], schema=schema
            )


def write_table(batches, out: Path, schema, partition: bool) -> int:
    """Write ``batches`` under ``out`` (a new folder), partitioned by dataset when asked."""
    import pyarrow.dataset as pads

    n = [0]

    def counted():
        for b in batches:
            n[0] += b.num_rows
            yield b

    pads.write_dataset(
        counted(),
        out,
        schema=schema,
        format="parquet",
        partitioning=["dataset"] if partition else None,
        partitioning_flavor="hive" if partition else None,
        basename_template="part-{i}.parquet",
        max_rows_per_group=CHUNK_ROWS,
        existing_data_behavior="error",
    )
    return n[0]


def refresh(store: Store) -> int:
    """Rewrite the store's columnar copy from its index (a new folder swapped in, so a reader sees
    the old copy or the new one); returns the rows written."""
    target = store.root / FOLDER
    gen = store.generation()
    with store.guard("writing the columnar copy"):
        tmp = Path(tempfile.mkdtemp(prefix=f".{FOLDER}.", dir=store.root))
        try:
            n = write_table(trace_batches(store), tmp / "traces", trace_schema(), partition=True)
            stamp = {"layout": LAYOUT_VERSION, "generation": gen, "traces": n}
            (tmp / STAMP).write_text(json.dumps(stamp), encoding="utf-8")
            old = store.root / f".{FOLDER}.old"
            shutil.rmtree(old, ignore_errors=True)
            if target.exists():
                os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return n


def fresh(store: Store) -> bool:
    """Whether the columnar copy matches the index (same generation, same layout)."""
    try:
        stamp = json.loads((store.root / FOLDER / STAMP).read_text(encoding="utf-8"))
        return stamp.get("layout") == LAYOUT_VERSION and stamp.get("generation") == store.generation()
    except (OSError, ValueError, AttributeError):
        return False


def _duckdb():
    try:
        import duckdb
    except ImportError:  # an optional engine: without it every read goes to SQLite
        return None
    return duckdb


def _columnar_frame(store: Store, q: Query, columns: tuple[str, ...], max_rows: int) -> pd.DataFrame | None:
    duckdb = _duckdb()
    if duckdb is None or q.search or not fresh(store):
        return None  # full-text search is SQLite's (FTS5); a stale copy is never read
    where, params = where_clause(q)
    glob = (store.root / FOLDER / "traces" / "*" / "*.parquet").as_posix().replace("'", "''")
    src = f"read_parquet('{glob}', hive_partitioning = true, hive_types = {{'dataset': VARCHAR}})"
    cols = ", ".join(f'"{c}"' for c in columns)
    order = order_clause(q).replace(" ASC", " ASC NULLS FIRST").replace(" DESC", " DESC NULLS LAST")
    params[: len(q.dataset)] = [partition_value(v) for v in q.dataset]  # where_clause puts them first
    sql = f"SELECT {cols} FROM {src} {where} {order} LIMIT ?"
    try:
        with duckdb.connect() as con:
            df = con.execute(sql, [*params, max_rows]).df()
    except duckdb.Error:
        return None  # a copy being swapped in, or damaged: SQLite answers instead
    if "dataset" in df.columns:
        df["dataset"] = df["dataset"].map(dataset_of)
    return df


def select_frame(
    store: Store, q: Query, columns: tuple[str, ...], *, max_rows: int = 200_000
) -> pd.DataFrame:
    """Every row matching ``q`` (up to ``max_rows``) as a frame of ``columns``, for aggregates: from
    the columnar copy through DuckDB when it is fresh, else from SQLite (same rows, same order)."""
    df = _columnar_frame(store, q, columns, max_rows)
    if df is not None:
        return df
    rows = store.select(q, columns, max_rows=max_rows)
    return (
        pd.DataFrame.from_records(rows, columns=list(columns))
        if rows
        else pd.DataFrame(columns=list(columns))
    )
