"""Issue 38, finding 10: ``o3viz importance --dataset ... --method resample`` stores each scored trace
under a new content key in place of its original; the original's labels follow it (before, they
pointed at nothing), and an original that branches hang from is kept."""

from __future__ import annotations

import copy

from o3viz.branch import add_branch, branches_of
from o3viz.cli._importance_dataset import _replace
from o3viz.store.golden import labels_of
from o3viz.store.labels import Label, add_labels, all_labels
from o3viz.store.query import Query
from o3viz.store.store import Store
from o3viz.testing.synthetic import make_trace
from o3viz.trace.branching import BranchParent


def _scored(trace):
    """A new version of ``trace`` (the same steps, other bytes), as scoring makes one."""
    new = copy.deepcopy(trace)
    new.provenance.settings = {**(new.provenance.settings or {}), "scored": True}
    return new


def test_a_replaced_trace_keeps_its_labels_and_the_original_goes(tmp_path):
    store = Store(tmp_path / "home")
    trace = make_trace(6, seed=1)
    old = store.add(trace, source="import", dataset="toy")
    add_labels(
        store, [Label(old, 0, 1, "ann", "wrong", time=1.0), Label(old, 0, 1, "ann", "correct", time=2.0)]
    )
    assert _replace(store, old, _scored(trace)) == 0
    (new,) = [r["key"] for r in store.rows(Query())]
    assert new != old
    assert [(x.step, x.verdict) for x in labels_of(store, "toy")] == [(1, "correct")]  # before: []
    assert [x.time for x in all_labels(store, [new])] == [1.0, 2.0]  # the history comes too


def test_an_original_with_branches_stays(tmp_path):
    store = Store(tmp_path / "home")
    trace = make_trace(6, seed=1)
    old = store.add(trace, source="import", dataset="toy")
    branch = make_trace(4, seed=2)
    branch.parent = BranchParent(old, "0:1", "edit", edited="x", original="y")
    add_branch(store, branch)
    assert _replace(store, old, _scored(trace)) == 1
    assert store.row(old) is not None and branches_of(store, old)
