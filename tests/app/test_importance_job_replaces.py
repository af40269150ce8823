"""The app's importance save (``TraceJob(..., replaces=KEY)``, what the Importance view starts): the
analysed copy takes the stored trace's place, so a dataset's trace keeps its dataset, record, name
and labels, and shows its scores (before, a new copy with no dataset or record was added beside it).
A sample stays as shipped: its copy goes beside it."""

from __future__ import annotations

import copy

from o3viz.app.jobs import TraceJob
from o3viz.store.labels import Label, add_labels, all_labels
from o3viz.store.query import Query
from o3viz.store.store import Store
from o3viz.testing.synthetic import make_trace
from o3viz.trace.importance import ImportanceRecord
from o3viz.trace.io import parse_trace_bytes


def _analyse(store: Store, trace, key: str, source: str) -> TraceJob:
    def work(report, should_stop):
        out = copy.deepcopy(trace)
        out.final.importance = [ImportanceRecord("receiver", "receiver", scores=[0.1] * len(out.final.steps))]
        return out

    job = TraceJob(
        work,
        name=lambda t, stopped: "a question + importance",
        source=source,
        store=store,
        keep=lambda t: bool(t.final.importance),
        replaces=key,
    )
    assert job.wait(60) and job.error is None
    return job


def test_the_analysed_copy_keeps_the_dataset_record_and_labels(tmp_path):
    store = Store(tmp_path / "home")
    trace = make_trace(6, seed=1)
    old = store.add(trace, source="import", dataset="toy", record=4, name="#4 · a question")
    add_labels(store, [Label(old, 0, 2, "ann", "wrong", time=1.0)])
    job = _analyse(store, trace, old, "import")
    (row,) = store.rows(Query(limit=10))
    assert row["key"] == job.key != old
    assert (row["dataset"], row["record"], row["name"]) == ("toy", 4, "#4 · a question")
    assert job.name == "#4 · a question", "the page names what the library shows"
    assert parse_trace_bytes(store.read_file(job.key)).final.importance
    assert [(x.step, x.verdict) for x in all_labels(store, [job.key])] == [(2, "wrong")]


def test_a_sample_stays_and_its_copy_goes_beside_it(tmp_path):
    store = Store(tmp_path / "home")
    trace = make_trace(6, seed=1)
    old = store.add(trace, source="sample", name="a question")
    job = _analyse(store, trace, old, "sample")
    assert {r["key"]: r["name"] for r in store.rows(Query(limit=10))} == {
        old: "a question",
        job.key: "a question + importance",
    }
