"""Replacing a stored trace by a changed copy of itself (verdicts or importance added): the one
owner of that operation, used by ``o3viz verify``, ``o3viz importance --dataset`` and the app.

A trace's key is the hash of its bytes, so the changed copy has a new key. ``replace_trace`` moves
onto it everything the store keeps beside the bytes:

- the metadata (dataset, record, part, name, tags, line_hash, source, added_at) and the index row's
  place (its ``id``: the Library's order), in one transaction of the store;
- people's step labels on the steps the copy still has (``o3viz.store.labels.carry_labels``);
- the branches whose metadata names the old key as their parent, when the copy still has their
  fork step. The old trace itself stays, out of its dataset, while a branch's own file names it
  (its ``parent`` record; a file is never rewritten), and goes otherwise.

The copy's metadata lists the keys it replaced (``o3viz.store.successors``), so an old key opens it.
Nothing is written when the copy's content equals the stored trace's.

A replace is crash-safe: before it changes anything it writes its intent (``o3viz.store.intents``),
and removes it when done. A process killed in between leaves the intent, and ``reindex`` (which
calls ``recover`` first) finishes the replace from the files when the copy's file is whole, or
drops the copy's leftovers when it is not: either way each trace is in its dataset once and each
label once.
"""

from __future__ import annotations

import dataclasses
import time
import uuid

from o3viz.errors import O3vizError
from o3viz.store.index import COLUMNS, clean_row, index_row, search_text
from o3viz.store.intents import Intent, begin, pending
from o3viz.store.labels import add_labels, all_labels, carry_labels, parse_step, rebuild_labels
from o3viz.store.query import Query, dataset_tag
from o3viz.store.store import Store, StoreError, content_key
from o3viz.store.successors import successor_meta
from o3viz.trace import Trace
from o3viz.trace.io import trace_bytes

__all__ = ["RECORD_FIELDS", "branch_parents", "recover", "replace_trace"]

# what places a trace in its dataset: one key holds them, so a kept original gives them up (and
# its successor record, which the copy carries on)
RECORD_FIELDS = ("dataset", "record", "part", "line_hash", "parts", "replaces")
MAX_BRANCHES = 1_000_000  # branch rows read to find a trace's branches

BranchParents = dict[str, list[str]]  # parent key -> the keys of the branches whose metadata names it


def branch_parents(store: Store) -> BranchParents:
    """Every stored branch by the parent its metadata names (one read of each branch's metadata):
    pass it to ``replace_trace`` when replacing many traces, so the store is read once."""
    out: BranchParents = {}
    for (key,) in store.select(Query(source=["branch"]), ("key",), max_rows=MAX_BRANCHES):
        parent = store.read_meta(key).get("parent")
        if parent:
            out.setdefault(parent, []).append(key)
    return out


def replace_trace(store: Store, old: str, trace: Trace, *, branches: BranchParents | None = None) -> str:
    """Store ``trace`` (a changed copy of stored trace ``old``) in its place; returns its key (``old``
    when the content is unchanged). ``branches``: ``branch_parents(store)``, read here when not
    given, and kept up to date for the next call."""
    meta = store.read_meta(old)
    data = trace_bytes(trace, gzipped=True)
    new = content_key(data)
    store.forget(old)  # the caller may have changed the process's shared copy
    if new == old or trace_bytes(store.editable_trace(old)) == trace_bytes(trace):
        return old
    branches = branch_parents(store) if branches is None else branches
    counts = [len(r.steps) for r in trace.rounds]
    moved = [b for b in branches.get(old, []) if _has_step(counts, store.read_meta(b).get("fork"))]
    keep_old = bool(branches.get(old))  # a branch's file names its parent by key
    new_meta = {"added_at": time.time(), **successor_meta(meta, old)}
    kept = {k: v for k, v in meta.items() if k not in RECORD_FIELDS}
    held = begin(store, Intent(old, new, new_meta, keep_old, kept, moved))
    try:
        store.write_meta(new, new_meta)  # the metadata first: a trace file always has its metadata
        new_meta = store.write_encoded(data, new_meta)[1]
        _carry_labels(store, old, new, counts)
        row = clean_row(index_row(trace, new, new_meta, file_bytes=len(data)).to_dict())
        if not _swap_rows(store, old, row, search_text(trace), keep_old=keep_old):
            if store.row(new) is None:  # no row holds the copy: its files would come back on reindex
                store.delete([new])
            held.done()
            raise StoreError(f"trace {old} left the index while it was being replaced; nothing was changed")
        _settle_old(store, old, new, kept if keep_old else None, moved)
        held.done()
    finally:
        held.close()  # after a failure the intent stays: ``reindex`` finishes the replace
    branches.setdefault(new, []).extend(moved)
    branches[old] = [b for b in branches.get(old, []) if b not in moved]
    return new


def _settle_old(store: Store, old: str, new: str, kept: dict | None, moved: list[str]) -> None:
    """After the rows swapped: the original's files go (or, ``kept``, its metadata gives up its
    place in the dataset), and the branches that moved name the copy as their parent."""
    if kept is not None:
        store.write_meta(old, kept)
    else:
        store.delete([old])  # its row is already the new trace's: only its files go
    for b in moved:  # the branches now hang from the copy the dataset shows
        meta = store.read_meta(b)
        if meta.get("parent") == old:
            store.write_meta(b, {**meta, "parent": new})


def recover(store: Store) -> tuple[int, list[str]]:
    """Finish every replace whose process was killed (``reindex`` calls this first); returns how
    many were finished or undone, and one error line per intent that could not be."""
    done, errors, labels_read = 0, [], False
    for held, intent, problem in pending(store):
        try:
            if intent is None:  # not an intent (a hand-edited file): nothing to finish
                errors.append(f"{problem}; removed")
                held.done()
                continue
            if not labels_read:  # the carried labels a killed writer appended but did not insert
                errors += rebuild_labels(store)[1]
                labels_read = True
            _finish(store, intent)
            held.done()
            done += 1
        except O3vizError as exc:  # a full disk: the intent stays for the next reindex
            errors.append(f"replacing {intent.old if intent else held.path.name}: {exc}")
        finally:
            held.close()
    return done, errors


def _finish(store: Store, it: Intent) -> None:
    """Take a killed replace to its end from the files (the truth): the copy's metadata, labels
    and branches, the original gone or out of its dataset. Both rows are dropped, for ``reindex``
    to make again from the files. A copy whose file was never whole is dropped instead: the
    original was not yet changed."""
    if not store.path(it.new).is_file():
        store.folder.meta_path(it.new).unlink(missing_ok=True)
        return
    store.write_meta(it.new, it.meta)
    counts = [len(r.steps) for r in store.editable_trace(it.new).rounds]
    _carry_labels(store, it.old, it.new, counts)
    keep = it.keep_old and store.path(it.old).is_file()
    _settle_old(store, it.old, it.new, it.old_meta if keep else None, it.moved)
    store.delete_rows([it.old, it.new])


def _has_step(counts: list[int], fork: object) -> bool:
    if not isinstance(fork, str):
        return False
    try:
        rnd, step = parse_step(fork)
    except ValueError:  # UsageError: a hand-edited fork that names no step
        return False
    return rnd < len(counts) and step < counts[rnd]


def _carry_labels(store: Store, old: str, new: str, counts: list[int]) -> None:
    """The old trace's labels onto ``new``: all of them when every labelled step is still there
    (the usual case: verdicts and importance keep the steps), else those on the steps it has."""
    labels = all_labels(store, [old])
    kept = [x for x in labels if x.round < len(counts) and x.step < counts[x.round]]
    if len(kept) == len(labels):
        carry_labels(store, old, new)
        return
    have = {(x.round, x.step, x.labeller, x.verdict, x.time) for x in all_labels(store, [new])}
    fresh = [
        dataclasses.replace(x, key=new, uid=uuid.uuid4().hex)
        for x in kept
        if (x.round, x.step, x.labeller, x.verdict, x.time) not in have
    ]
    if fresh:
        add_labels(store, fresh, check_steps=False)


def _swap_rows(store: Store, old: str, row: dict, text: str, *, keep_old: bool) -> bool:
    """In one transaction, the index row of ``old`` becomes ``row`` (same ``id``, so the same place
    in the Library); with ``keep_old`` the old trace gets a new row outside its dataset. False,
    changing nothing, when ``old`` has no row (another process replaced or deleted it)."""
    names = ", ".join(COLUMNS)
    marks = ", ".join("?" * len(COLUMNS))
    with store.transaction("replacing a trace") as conn:
        found = conn.execute("SELECT * FROM traces WHERE key = ?", (old,)).fetchone()
        if found is None:
            return False
        rid = found["id"]
        for (same,) in conn.execute("SELECT id FROM traces WHERE key = ?", (row["key"],)).fetchall():
            conn.execute("DELETE FROM steps_fts WHERE rowid = ?", (same,))  # the same content, stored
            conn.execute("DELETE FROM traces WHERE id = ?", (same,))  # before: one row holds it now
        sets = ", ".join(f"{c} = ?" for c in COLUMNS)
        conn.execute(f"UPDATE traces SET {sets} WHERE id = ?", [*(row[c] for c in COLUMNS), rid])
        if keep_old:
            kept = {c: found[c] for c in COLUMNS} | {"dataset": "", "record": None, "part": ""}
            kept |= {"line_hash": "", "parts": 1}
            cur = conn.execute(f"INSERT INTO traces ({names}) VALUES ({marks})", [kept[c] for c in COLUMNS])
            conn.execute(
                "INSERT INTO steps_fts (rowid, text, dataset_tag) SELECT ?, text, ? FROM steps_fts "
                "WHERE rowid = ?",
                (cur.lastrowid, dataset_tag(""), rid),
            )
        conn.execute("DELETE FROM steps_fts WHERE rowid = ?", (rid,))
        conn.execute(
            "INSERT INTO steps_fts (rowid, text, dataset_tag) VALUES (?, ?, ?)",
            (rid, text, dataset_tag(row["dataset"])),
        )
        store.bump_generation(conn)
    return True
