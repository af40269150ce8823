"""Step labels in the store: validation in one line, supersession without edits, the file as the
truth (``reindex`` rebuilds the table), and two processes labelling at once losing nothing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from o3viz.errors import UsageError
from o3viz.store.labels import (
    LABEL_FILE,
    Label,
    add_labels,
    all_labels,
    current_labels,
    parse_step,
    read_label_file,
)
from o3viz.store.repair import reindex
from o3viz.store.store import Store, StoreError
from o3viz.testing.synthetic import make_trace


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "home")


@pytest.fixture
def key(store) -> str:
    return store.add(make_trace(6, seed=1), source="upload")


def test_a_label_is_stored_in_the_table_and_the_file(store, key):
    add_labels(store, [Label(key, 0, 2, "ann", "wrong", first_error=True, note="4*3 is 12")])
    (lab,) = all_labels(store)
    assert (lab.key, lab.step_id, lab.labeller, lab.verdict, lab.first_error) == (
        key,
        "0:2",
        "ann",
        "wrong",
        True,
    )
    assert lab.note == "4*3 is 12"
    assert read_label_file(store)[0] == [lab]


def test_a_newer_label_supersedes_and_the_older_one_is_kept(store, key):
    add_labels(store, [Label(key, 0, 1, "ann", "wrong", time=1.0)])
    add_labels(store, [Label(key, 0, 1, "ann", "correct", time=2.0)])
    add_labels(store, [Label(key, 0, 1, "bob", "wrong", time=3.0)])
    assert [lab.verdict for lab in all_labels(store)] == ["wrong", "correct", "wrong"]
    now = {lab.labeller: lab.verdict for lab in current_labels(all_labels(store))}
    assert now == {"ann": "correct", "bob": "wrong"}


@pytest.mark.parametrize(
    ("label", "says"),
    [
        (dict(verdict="right"), "verdict 'right': one of correct, wrong, unsure"),
        (dict(labeller="x" * 101), "101 characters; at most 100"),
        (dict(labeller="  "), "needs a name"),
        (dict(type="musing"), "step type 'musing'"),
        (dict(step=99), "has no step 0:99"),
    ],
)
def test_bad_labels_are_refused_in_one_line(store, key, label, says):
    fields = {"key": key, "round": 0, "step": 1, "labeller": "ann", "verdict": "wrong", **label}
    with pytest.raises(UsageError, match=says.replace("(", r"\(").replace("*", r"\*")) as info:
        add_labels(store, [Label(**fields)])
    assert "\n" not in str(info.value)
    assert all_labels(store) == []


def test_an_unknown_key_is_refused_in_one_line(store):
    with pytest.raises(StoreError, match="no trace 'feedfeedfeedfeed'"):
        add_labels(store, [Label("feedfeedfeedfeed", 0, 0, "ann", "wrong")])


def test_a_step_id_is_r_colon_i():
    assert parse_step("1:4") == (1, 4) == parse_step("step:1:4")
    for bad in ("3", "a:b", "1:2:3", "-1:2", ""):
        with pytest.raises(UsageError, match="give it as R:I"):
            parse_step(bad)


def test_reindex_rebuilds_the_labels_from_the_file(store, key):
    add_labels(store, [Label(key, 0, i, "ann", "correct") for i in range(3)])
    store.close()
    store.db_path.unlink()
    for extra in ("-wal", "-shm"):
        store.db_path.with_name(store.db_path.name + extra).unlink(missing_ok=True)
    fresh = Store(store.root)
    report = reindex(fresh)
    assert report.added == 1 and report.labels == 3
    assert sorted(lab.step for lab in all_labels(fresh)) == [0, 1, 2]
    assert reindex(fresh).labels == 0  # each line enters once


def test_a_torn_line_in_the_file_is_reported_and_the_next_label_survives(store, key):
    add_labels(store, [Label(key, 0, 0, "ann", "correct")])
    with open(store.root / LABEL_FILE, "ab") as fh:
        fh.write(b'{"key": "tor')  # a crash in the middle of a write
    add_labels(store, [Label(key, 0, 1, "ann", "wrong")])
    labels, errors = read_label_file(store)
    assert [lab.step for lab in labels] == [0, 1]
    assert len(errors) == 1 and "line 2: not a label" in errors[0]


_WRITER = """
import sys
from o3viz.store.labels import Label, add_labels
from o3viz.store.store import Store
store, key, who = Store(sys.argv[1]), sys.argv[2], sys.argv[3]
for i in range(40):
    add_labels(store, [Label(key, 0, i % 6, who, "wrong" if i % 2 else "correct", note=str(i))])
"""


@pytest.mark.subprocess
def test_two_processes_labelling_at_once_lose_nothing(store, key):
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(store.root), key, who]) for who in ("ann", "bob")
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    in_table = all_labels(store)
    in_file, errors = read_label_file(store)
    assert errors == [] and len(in_table) == len(in_file) == 80
    for who in ("ann", "bob"):
        assert sorted(int(lab.note) for lab in in_table if lab.labeller == who) == list(range(40))


def test_the_queue_deals_traces_with_overlap_counts_progress_and_skips(store):
    keys = [store.add(make_trace(4, seed=s), source="upload", dataset="d") for s in range(6)]
    from o3viz.store.golden import label_queue

    crew = ["ann", "bob", "cy"]
    dealt = {who: label_queue(store, "d", who, labellers=crew, overlap=2) for who in crew}
    assert [dealt[w].traces for w in crew] == [4, 4, 4]  # 6 traces x 2 labellers / 3 people
    ann = dealt["ann"]
    steps = {k: sum(len(r.steps) for r in store.trace(k).rounds) for k in keys}
    assert ann.done == 0 and ann.total == sum(
        steps[k] for k in keys if k in {keys[0], keys[2], keys[3], keys[5]}
    )
    first = ann.next
    add_labels(store, [Label(first[0], first[1], first[2], "ann", "correct")])
    after = label_queue(store, "d", "ann", labellers=crew, overlap=2)
    assert after.done == 1 and after.progress == f"1 of {ann.total}" and after.next != first
    skipped = label_queue(store, "d", "ann", labellers=crew, overlap=2, skip={after.next})
    assert skipped.next not in (first, after.next)
