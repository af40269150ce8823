"""The library benchmark's trace variants are real traces: ``reindex`` computes from their files
the very rows and search text the benchmark loaded without parsing them."""

from __future__ import annotations

import pytest

from benchmarks._trace_variants import load_seeds, write_variants
from o3viz.importers.bulk import ImportOptions
from o3viz.importers.parallel import import_dataset
from o3viz.store.bulk import BulkLoader
from o3viz.store.index import index_row, search_text
from o3viz.store.query import Query
from o3viz.store.store import Store
from o3viz.testing.datasets import write_reasoning_jsonl
from o3viz.trace.io import parse_trace_bytes


@pytest.fixture
def seeds(tmp_path):
    seed_store = Store(tmp_path / "seed")
    import_dataset(
        write_reasoning_jsonl(tmp_path / "toy.jsonl", 6), seed_store, ImportOptions("toy"), workers=0
    )
    return load_seeds(seed_store, seed_store.rows(Query(limit=100)))


def test_variant_rows_are_what_reindex_computes_from_their_files(tmp_path, seeds):
    store = Store(tmp_path / "big")
    rows = write_variants(store, seeds, 0, 40, 40)
    assert len({r.key for r, _ in rows}) == 40, "every variant is its own file"
    for row, text in rows:
        data = store.read_file(row.key)
        trace = parse_trace_bytes(data)
        assert index_row(trace, row.key, store.read_meta(row.key), file_bytes=len(data)) == row
        assert search_text(trace) == text
    with BulkLoader(store) as load:
        for row, text in rows:
            load.add(row, text)
    assert store.count() == 40
