"""The store's columnar copy and Parquet layout: DuckDB reads the same rows SQLite holds, a stale
copy is never read, ``o3viz library export --parquet DIR --partition dataset`` reads back in
DuckDB and pandas, and the bulk loader leaves a store the normal paths serve."""

from __future__ import annotations

import sqlite3

import pandas as pd
import pytest

from o3viz.analysis.dataset import COLUMNS, dataset_summary, frame
from o3viz.cli.main import main
from o3viz.store import columnar
from o3viz.store.bulk import BulkLoader
from o3viz.store.query import Query
from o3viz.store.store import INDEXES, Store, StoreError
from o3viz.testing.synthetic import make_trace

HOSTILE = "a/../b 'x' %2F"  # a dataset name that must stay a partition value, never a path


@pytest.fixture
def store(tmp_path) -> Store:
    s = Store(tmp_path / "home")
    for i in range(12):
        dataset = ("gsm8k", HOSTILE, "")[i % 3]
        s.add(make_trace(4 + i, seed=i), source="import", dataset=dataset, name=f"t{i}")
    return s


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    a, b = a.reset_index(drop=True), b.reset_index(drop=True)
    assert list(a.columns) == list(b.columns) and len(a) == len(b)
    assert (
        a.astype(object).where(a.notna(), None).values.tolist()
        == b.astype(object).where(b.notna(), None).values.tolist()
    )


@pytest.mark.parametrize(
    "q",
    [
        Query(),
        Query(dataset=["gsm8k", HOSTILE]),
        Query(dataset=[""]),
        Query(correct="wrong", step_types=["active_computation"]),
        Query(sort="steps", descending=False),
        Query(sort="first_wrong_pos", descending=False),  # NULLs first, as SQLite orders them
        Query(sort="first_wrong_pos", descending=True),
    ],
)
def test_duckdb_over_the_columnar_copy_returns_the_rows_sqlite_holds(store, q):
    pytest.importorskip("duckdb")
    columnar.refresh(store)
    fast = columnar._columnar_frame(store, q, COLUMNS, 1000)
    assert fast is not None, "a fresh copy is read through DuckDB"
    slow = pd.DataFrame.from_records(store.select(q, COLUMNS), columns=list(COLUMNS))
    _same(fast, slow)
    _same(frame(fast).drop(columns="group"), frame(slow).drop(columns="group"))
    assert dataset_summary(frame(fast)).length.equals(dataset_summary(frame(slow)).length)


def test_a_stale_copy_is_never_read(store):
    columnar.refresh(store)
    assert columnar.fresh(store)
    key = store.add(make_trace(30, seed=99), dataset="gsm8k")
    assert not columnar.fresh(store)
    assert columnar._columnar_frame(store, Query(), COLUMNS, 1000) is None
    df = columnar.select_frame(store, Query(dataset=["gsm8k"]), COLUMNS)
    assert key in set(df["key"])
    store.set_tags(key, ["x"])  # every write moves the generation on
    columnar.refresh(store)
    store.delete([key])
    assert key not in set(columnar.select_frame(store, Query(), COLUMNS)["key"])


def test_the_parquet_layout_reads_back_in_duckdb_and_pandas(store, tmp_path, monkeypatch, capsys):
    duckdb = pytest.importorskip("duckdb")
    monkeypatch.setenv("O3VIZ_HOME", str(store.root))
    out = tmp_path / "layout"
    assert main(["library", "export", "--parquet", str(out), "--partition", "dataset"]) == 0
    assert "steps of 12 traces" in capsys.readouterr().out
    assert {p.name for p in (out / "traces").iterdir()} == {p.name for p in (out / "steps").iterdir()}
    assert all(p.name.startswith("dataset=") and "/" not in p.name[8:] for p in (out / "traces").iterdir())
    con = duckdb.connect()
    glob = f"read_parquet('{out}/traces/*/*.parquet', hive_partitioning = true, hive_types = {{'dataset': VARCHAR}})"
    counts = dict(con.execute(f"SELECT dataset, count(*) FROM {glob} GROUP BY dataset").fetchall())
    assert counts == {"gsm8k": 4, HOSTILE: 4, columnar.NO_DATASET: 4}
    steps = con.execute(
        f"SELECT count(*), count(DISTINCT key) FROM read_parquet('{out}/steps/*/*.parquet', hive_partitioning = true)"
    ).fetchone()
    keys = [r[0] for r in store.select(Query(), ("key",))]
    assert steps == (sum(len(r.steps) for k in keys for r in store.trace(k).rounds), 12)
    joined = con.execute(
        f"SELECT t.steps, count(*) FROM {glob} t JOIN read_parquet('{out}/steps/*/*.parquet') s USING (key) "
        "WHERE s.round = t.rounds - 1 GROUP BY t.key, t.steps"
    ).fetchall()
    assert all(a == b for a, b in joined), "the final round's steps are the trace's step count"
    df = pd.read_parquet(out / "traces")  # pandas (pyarrow) reads the partitioned folder as it is
    assert len(df) == 12 and set(df["dataset"].astype(str)) == set(counts)


def test_the_layout_export_refuses_a_folder_that_holds_files(store, tmp_path, monkeypatch, capsys):
    from o3viz.store.export import export_layout

    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    with pytest.raises(StoreError, match="not an empty folder"):
        export_layout(store, Query(), tmp_path / "full")
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine"


def test_a_bulk_load_leaves_every_index_and_the_search(tmp_path):
    src = Store(tmp_path / "src")
    rows = [src.write_files(make_trace(5, seed=i), {"dataset": "bulk"}, durable=False) for i in range(30)]
    dst = Store(tmp_path / "src")  # the same folder: the files are there, the rows are not yet
    with BulkLoader(dst, rows_per_commit=7) as load:
        for row, text in rows:
            load.add(row, text)
        load.add(*rows[0])  # a key already present is kept once
    assert load.report.added == 30 and load.report.duplicates == 1
    names = {r[0] for r in dst.conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {n for n, _ in INDEXES} <= names
    word = rows[3][1].split()[2]
    assert dst.count(Query(search=word)) >= 1
    assert dst.count(Query(dataset=["bulk"])) == 30
    with pytest.raises(sqlite3.IntegrityError):
        dst.conn.execute("INSERT INTO traces (key) VALUES (?)", (rows[0][0].key,))
