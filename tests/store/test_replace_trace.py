"""``o3viz.store.replace.replace_trace``: a changed copy of a stored trace takes its place under a
new key with everything the store keeps beside the bytes (metadata, the row's place, labels,
branches), the same content is a no-op, and a verified copy of an import is not mistaken for a
second import of the same record (the cause of "saved, but nothing changed")."""

from __future__ import annotations

import copy

import pytest

from o3viz.branch import add_branch, branches_of
from o3viz.cli.main import main
from o3viz.store.golden import labels_of
from o3viz.store.labels import Label, add_labels, all_labels
from o3viz.store.query import Query
from o3viz.store.repair import reindex
from o3viz.store.replace import branch_parents, replace_trace
from o3viz.store.store import Store, StoreError
from o3viz.testing.datasets import write_reasoning_jsonl
from o3viz.testing.synthetic import make_trace
from o3viz.trace.branching import BranchParent
from o3viz.trace.io import parse_trace_bytes
from o3viz.verify.verifiers import add_verdicts, make_verifier

META = {"source": "import", "dataset": "toy", "record": 7, "part": "p", "line_hash": "abc", "parts": 1}


def _scored(trace):
    """A new version of ``trace`` (the same steps, other bytes), as scoring makes one."""
    new = copy.deepcopy(trace)
    new.provenance.settings = {**(new.provenance.settings or {}), "scored": True}
    return new


def _verified(store: Store, key: str):
    """The stored trace with the claims verifier's verdicts added."""
    trace = store.editable_trace(key)
    assert add_verdicts(trace, make_verifier("claims"))
    return trace


def _keys(store: Store, **q) -> list[str]:
    return [r["key"] for r in store.rows(Query(limit=100, **q))]


def test_the_copy_takes_the_place_and_the_metadata_of_the_original(tmp_path):
    store = Store(tmp_path / "home")
    first = store.add(make_trace(5, seed=3), name="other")
    trace = make_trace(6, seed=1)
    old = store.add(trace, name="t", tags="a,b", **META)
    last = store.add(make_trace(4, seed=4), name="newest")
    store.trace(old)  # the process's parsed copy: it must not outlive the replacement
    new = replace_trace(store, old, _scored(trace))
    assert new != old and store.row(old) is None and not store.path(old).exists()
    assert _keys(store) == [last, new, first], "the row keeps its place (its id)"
    row = store.row(new)
    assert {k: row[k] for k in META} == META and (row["name"], row["tags"]) == ("t", "a,b")
    assert store.read_meta(new).items() >= {**META, "name": "t", "tags": "a,b"}.items()
    assert parse_trace_bytes(store.read_file(new)).provenance.settings["scored"] is True
    assert store.count(Query(search=trace.final.steps[0].text.split()[0], dataset=["toy"])) == 1


def test_the_same_content_is_a_no_op(tmp_path):
    store = Store(tmp_path / "home")
    trace = make_trace(6, seed=1)
    old = store.add(trace, **META)
    generation = store.generation()
    assert replace_trace(store, old, copy.deepcopy(trace)) == old
    assert store.generation() == generation and _keys(store) == [old]


def test_labels_follow_on_the_steps_the_copy_still_has(tmp_path):
    store = Store(tmp_path / "home")
    trace = make_trace(6, seed=1)
    old = store.add(trace, **META)
    n = len(trace.final.steps)
    add_labels(
        store,
        [
            Label(old, 0, 1, "ann", "wrong", time=1.0),
            Label(old, 0, 1, "ann", "correct", time=2.0),
            Label(old, 0, n - 1, "bob", "unsure", time=3.0),
        ],
    )
    assert len(trace.rounds) == 1
    shorter = _scored(trace)
    shorter.final.steps = shorter.final.steps[:-1]  # a copy without the last step
    new = replace_trace(store, old, shorter)
    assert [(x.step, x.verdict, x.time) for x in all_labels(store, [new])] == [
        (1, "wrong", 1.0),
        (1, "correct", 2.0),
    ], "the history comes too; a label on a step the copy lacks does not"
    assert [(x.step, x.verdict) for x in labels_of(store, "toy")] == [(1, "correct")]


def test_an_original_with_branches_stays_out_of_its_dataset_and_its_branches_follow(tmp_path):
    store = Store(tmp_path / "home")
    trace = make_trace(6, seed=1)
    old = store.add(trace, **META)
    branch = make_trace(4, seed=2)
    branch.parent = BranchParent(old, "0:1", "edit", edited="x", original="y")
    b = add_branch(store, branch)
    links = branch_parents(store)
    new = replace_trace(store, old, _scored(trace), branches=links)
    assert store.row(old) is not None and store.path(old).exists(), "the branch's file names it"
    assert store.row(old)["dataset"] == "" and "dataset" not in store.read_meta(old)
    assert _keys(store, dataset=["toy"]) == [new], "one trace per record"
    assert [x.key for x in branches_of(store, new)] == [b] and branches_of(store, old) == []
    assert links == {old: [], new: [b]}, "the caller's map is kept up to date"
    newer = replace_trace(store, new, _verified(store, new), branches=links)
    assert [x.key for x in branches_of(store, newer)] == [b]


def test_a_verified_import_replaces_its_original(tmp_path, monkeypatch, capsys):
    # before: the copy had the import's content identity, so the store took it for a second import
    # of the same record, dropped its files and kept the original: "saved", but nothing changed
    monkeypatch.setenv("O3VIZ_HOME", str(tmp_path / "home"))
    src = write_reasoning_jsonl(tmp_path / "toy.jsonl", 1)
    assert main(["import", str(src), "--all", "--dataset", "toy", "--workers", "0"]) == 0
    store = Store()
    (old,) = _keys(store)
    new = replace_trace(store, old, _verified(store, old))
    assert new != old and _keys(store) == [new]
    assert [v.verifier for v in parse_trace_bytes(store.read_file(new)).final.verdicts] == ["claims"]
    assert store.row(new)["record"] == 1 and store.row(new)["dataset"] == "toy"
    assert store.known_lines([store.row(new)["line_hash"]]), "the record still counts as imported"


def test_the_files_say_what_the_index_says(tmp_path):
    store = Store(tmp_path / "home")
    trace = make_trace(6, seed=1)
    old = store.add(trace, **META)
    branch = make_trace(4, seed=2)
    branch.parent = BranchParent(old, "0:1", "edit", edited="x", original="y")
    b = add_branch(store, branch)
    new = replace_trace(store, old, _scored(trace))
    before = {r["key"]: (r["dataset"], r["record"]) for r in store.rows(Query(limit=10))}
    reindex(store, full=True)
    assert {r["key"]: (r["dataset"], r["record"]) for r in store.rows(Query(limit=10))} == before
    assert before == {new: ("toy", 7), old: ("", None), b: ("", None)}
    assert [x.key for x in branches_of(store, new)] == [b]


def test_a_trace_that_left_the_index_meanwhile_is_not_replaced(tmp_path):
    store = Store(tmp_path / "home")
    trace = make_trace(6, seed=1)
    old = store.add(trace, **META)
    store.delete_rows([old])  # another process replaced it: its files are still being removed
    with pytest.raises(StoreError, match="left the index"):
        replace_trace(store, old, _scored(trace))
    assert store.stored_keys() == {old}, "the copy's files are not left for reindex to add"
