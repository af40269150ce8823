"""``replace_trace`` killed at every point a kill can land: a forked child runs the replace and
SIGKILLs itself just before its N-th effect on disk (a rename, link, unlink or ``os.write``, or an
index commit), for every N until the replace runs through. After each, ``reindex`` (the documented
repair) must leave the trace once in its dataset, its label once, the index matching the files, and
the old key opening whichever copy survived.

Before the fix, a kill after the copy's file and carried label were written but before the rows
swapped left, after ``reindex``, two traces in the dataset and the label twice in ``labels export``.
"""

from __future__ import annotations

import contextlib
import copy
import os
import shutil
import signal

import pytest

from o3viz.branch import add_branch
from o3viz.store import schema
from o3viz.store.golden import labels_of
from o3viz.store.intents import FOLDER
from o3viz.store.labels import LABEL_FILE, Label, add_labels, all_labels
from o3viz.store.query import Query
from o3viz.store.repair import reindex
from o3viz.store.replace import replace_trace
from o3viz.store.store import Store
from o3viz.store.successors import resolve_key
from o3viz.testing.synthetic import make_trace
from o3viz.trace.branching import BranchParent

pytestmark = [
    pytest.mark.subprocess,
    pytest.mark.skipif(not hasattr(os, "fork"), reason="kills a forked child"),
]

META = {"source": "import", "dataset": "toy", "record": 7, "part": "p", "line_hash": "abc", "parts": 1}
EFFECTS = ("replace", "rename", "link", "unlink", "write")  # the os calls that change the folder
MAX_POINTS = 200


def _scored(trace):
    new = copy.deepcopy(trace)
    new.provenance.settings = {**(new.provenance.settings or {}), "scored": True}
    return new


def _arm(n: int) -> None:
    """In the child: SIGKILL this process just before its ``n``-th effect (1-based)."""
    seen = [0]

    def tick() -> None:
        seen[0] += 1
        if seen[0] == n:
            os.kill(os.getpid(), signal.SIGKILL)

    for name in EFFECTS:
        real = getattr(os, name)

        def wrapped(*args, _real=real, **kwargs):
            tick()
            return _real(*args, **kwargs)

        setattr(os, name, wrapped)
    real_immediate = schema.immediate

    @contextlib.contextmanager
    def immediate(conn):
        with real_immediate(conn) as c:
            yield c
            tick()  # the transaction's work is done; its COMMIT is next

    schema.immediate = immediate


def _killed_at(root, old: str, trace, n: int) -> bool:
    """Run the replace in a child killed before its ``n``-th effect; True when the kill landed,
    False when the replace ran through first."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 3
        try:
            _arm(n)
            replace_trace(Store(root), old, _scored(trace))
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        return True
    assert os.WEXITSTATUS(status) == 0, "the replace failed in the child"
    return False


def _prepared(tmp_path, *, branch: bool):
    """A store holding one labelled trace of dataset toy (and a branch of it), closed."""
    root = tmp_path / "origin"
    store = Store(root)
    trace = make_trace(6, seed=1)
    old = store.add(trace, name="t", **META)
    add_labels(store, [Label(old, 0, 1, "ann", "wrong", time=1.0)])
    b = None
    if branch:
        child = make_trace(4, seed=2)
        child.parent = BranchParent(old, "0:1", "edit", edited="x", original="y")
        b = add_branch(store, child)
    store.close()
    return root, old, trace, b


def _check(root, old: str, branch: str | None) -> str:
    """The store after ``reindex``: one trace in the dataset with one label, the index matching
    the files, no intent left; returns the surviving key."""
    store = Store(root)
    report = reindex(store)
    assert not report.errors
    (row,) = store.rows(Query(dataset=["toy"], limit=10))
    key = row["key"]
    assert (row["record"], row["name"]) == (7, "t")
    assert [(x.key, x.step, x.verdict) for x in labels_of(store, "toy")] == [(key, 1, "wrong")]
    assert len(all_labels(store, [key])) == 1, "the label once in the table"
    lines = (root / LABEL_FILE).read_text().splitlines()
    assert sum(f'"key": "{key}"' in line for line in lines) == 1, "and once in the label file"
    keys = {r["key"] for r in store.rows(Query(limit=100))}
    assert keys == store.stored_keys(), "every file has its row and every row its file"
    # the old key opens the surviving copy; an original kept for its branch still opens itself
    assert resolve_key(store, old).key == (old if branch else key)
    if branch is not None:
        assert store.read_meta(branch)["parent"] in (key, old) and old in keys, "the branch's parent stays"
        assert len(keys) == 3 if key != old else len(keys) == 2
    else:
        assert keys == {key}
    assert not any((root / FOLDER).glob("*.json")), "no intent left"
    full = reindex(store, full=True)
    assert not full.errors and [r["key"] for r in store.rows(Query(dataset=["toy"], limit=10))] == [key]
    store.close()
    return key


@pytest.mark.parametrize("branch", [False, True], ids=["plain", "with-branch"])
def test_a_replace_killed_at_any_point_leaves_each_trace_and_label_once(tmp_path, branch):
    origin, old, trace, b = _prepared(tmp_path, branch=branch)
    survivors = []
    for n in range(1, MAX_POINTS):
        root = tmp_path / f"kill{n}"
        shutil.copytree(origin, root)
        landed = _killed_at(root, old, trace, n)
        survivors.append(_check(root, old, b))
        if not landed:
            break
    else:
        pytest.fail(f"the replace still had effects left after {MAX_POINTS} kill points")
    assert len(survivors) > 10, "the kill points cover the whole replace"
    assert survivors[0] == old and survivors[-1] != old, "early kills undo it, late ones finish it"
    assert survivors == sorted(survivors, key=lambda k: k != old), "once finished, it stays finished"


def test_a_replace_after_a_cut_short_one_asks_for_reindex(tmp_path):
    origin, old, trace, _ = _prepared(tmp_path, branch=False)
    # a kill just before the rows swap: the copy's files and label are written, the intent stays
    for n in range(1, MAX_POINTS):
        root = tmp_path / f"kill{n}"
        shutil.copytree(origin, root)
        assert _killed_at(root, old, trace, n)
        store = Store(root)
        if store.count(Query(dataset=["toy"])) == 1 and len(store.stored_keys()) == 2:
            break
    with pytest.raises(Exception, match="library reindex"):
        replace_trace(store, old, _scored(_scored(trace)))
    reindex(store)
    assert store.count(Query(dataset=["toy"])) == 1
