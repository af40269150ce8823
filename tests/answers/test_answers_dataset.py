"""A stored dataset's running answers (``o3viz.answers.dataset.run_dataset``, issue 63.8: saves
overlap on threads): progress comes in the dataset's order, every trace is saved once, and a stop
(Ctrl-C, raised here from the progress callback) keeps what was saved, holds each trace once, and
a rerun finishes the rest."""

from __future__ import annotations

from o3viz.analysis.running_answer import STATED
from o3viz.answers.dataset import WINDOW, run_dataset
from o3viz.answers.run import AnswersRequest
from o3viz.importers.build import build_trace
from o3viz.importers.formats import Imported
from o3viz.store.labels import Label, add_labels, all_labels
from o3viz.store.query import Query
from o3viz.store.store import Store

N = WINDOW + 8  # more than the window: some saves are waited for before the loop ends


def _dataset() -> tuple[Store, list[str]]:
    store = Store()
    keys = []
    for i in range(N):
        text = f"We add {i} and 1.\n\n{i} + 1 = {i + 1}.\n\nSo the answer is {i + 1}."
        t = build_trace(Imported("test", text, question=f"What is {i} + 1?"), reference=str(i + 1))
        keys.append(store.add(t, source="import", dataset="d"))
    return store, keys


def _stored(store: Store) -> list[str]:
    return [r[0] for r in store.select(Query(dataset=["d"]), ("key",))]


def test_every_trace_is_saved_once_and_reported_in_order():
    store, keys = _dataset()
    add_labels(store, [Label(keys[5], 0, 0, "ann", "correct")])
    order = _stored(store)  # the order the run takes them in
    seen = []
    report = run_dataset(
        store, "d", AnswersRequest(), lambda done, total, key, what: seen.append((done, what))
    )
    assert [d for d, _ in seen] == list(range(1, N + 1)) and {w for _, w in seen} == {"done"}
    assert report.changed == N and not report.failed and len(report.keys) == N
    stored = _stored(Store())
    assert sorted(stored) == sorted(report.keys) and not set(stored) & set(keys)  # each replaced, once
    assert all(any(x.probe == STATED for x in Store().trace(k).final.answers) for k in stored)
    # report.keys[i] is the copy of the i-th trace: the label followed its trace there
    assert [x.key for x in all_labels(store, stored)] == [report.keys[order.index(keys[5])]]


def test_a_stop_keeps_what_was_saved_and_a_rerun_finishes():
    store, keys = _dataset()

    def stop_at_three(done, total, key, what):
        if done == 3:
            raise KeyboardInterrupt

    report = run_dataset(store, "d", AnswersRequest(), stop_at_three)
    assert report.stopped and 3 <= report.changed < N
    stored = _stored(Store())
    assert len(stored) == N == len(set(stored))  # each trace once, replaced or not
    again = run_dataset(Store(), "d", AnswersRequest())
    assert again.skipped == report.changed and again.changed == N - report.changed
    assert len(_stored(Store())) == N
