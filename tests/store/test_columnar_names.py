"""Issue 38, finding 15: a dataset named like the no-dataset partition, "(none)", keeps its own
partition in the columnar copy, so DuckDB gives the rows SQLite gives for it and for no dataset."""

from __future__ import annotations

import pytest

from o3viz.analysis.dataset import COLUMNS
from o3viz.store import columnar
from o3viz.store.query import Query
from o3viz.store.store import Store
from o3viz.testing.synthetic import make_trace


@pytest.mark.parametrize("name", ["(none)", "((none)", "(x"])
def test_a_dataset_named_like_the_placeholder_keeps_its_own_rows(tmp_path, name):
    pytest.importorskip("duckdb")
    store = Store(tmp_path / "home")
    store.add(make_trace(4, seed=1), source="import", dataset=name, name="named")
    store.add(make_trace(5, seed=2), source="import", dataset="", name="none")
    columnar.refresh(store)
    assert columnar.fresh(store)
    for q in (Query(dataset=[name]), Query(dataset=[""]), Query()):
        sqlite = sorted(r[0] for r in store.select(q, ("key",)))
        duck = columnar._columnar_frame(store, q, COLUMNS, 1000)
        assert duck is not None and sorted(duck["key"]) == sqlite, q  # before: 2 rows for "(none)"
    df = columnar._columnar_frame(store, Query(), COLUMNS, 1000)
    assert sorted(df["dataset"]) == sorted(["", name])
