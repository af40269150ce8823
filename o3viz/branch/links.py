"""Branches in the store: a branch enters it linked to its parent (its ``parent`` record, and the
``parent``/``fork``/``branch`` fields of its metadata), and ``branches_of`` lists a trace's
branches from the store and from the trace's own ``branches``. The parent's file is never
rewritten: its bytes are its key."""

from __future__ import annotations

from o3viz.store.query import Query
from o3viz.store.store import Store
from o3viz.trace import Trace
from o3viz.trace.branching import MAX_LABEL_CHARS, BranchLink

MAX_LISTED = 1000  # branch rows read per listing


def label_of(branch: Trace) -> str:
    """A short label: the edited text, or "K rollouts" / "N tries"."""
    p = branch.parent
    if p is None:
        return ""
    if p.kind == "edit":
        text = " ".join((p.edited or "").split())
        return text if len(text) <= MAX_LABEL_CHARS else text[: MAX_LABEL_CHARS - 1] + "…"
    if "tries" in p.info:
        return f"{p.info['tries']} tries ({'found' if p.info.get('found') else 'not found'})"
    return f"{len(branch.rounds)} rollouts"


def add_branch(store: Store, branch: Trace, parent: Trace | None = None, **meta) -> str:
    """Store ``branch`` linked to its parent (``branch.parent.key``; ``parent`` is stored first
    when given and the key is still empty). Returns the branch's key."""
    if branch.parent is None:
        raise ValueError("not a branch: the trace has no parent")
    if not branch.parent.key and parent is not None:
        branch.parent.key = store.add(parent, source=meta.get("parent_source", "run"))
    p = branch.parent
    return store.add(branch, source="branch", parent=p.key, fork=p.step, branch=p.kind, name=label_of(branch))


def branches_of(store: Store, key: str, trace: Trace | None = None) -> list[BranchLink]:
    """The branches of trace ``key``: those the trace lists, then those the store links to it."""
    out = list(trace.branches) if trace is not None else []
    seen = {b.key for b in out}
    for row in store.rows(Query(source=["branch"], limit=MAX_LISTED)):
        if row["key"] in seen:
            continue
        meta = store.read_meta(row["key"])
        if meta.get("parent") != key or meta.get("fork") is None:
            continue
        kind = meta.get("branch") if meta.get("branch") in ("edit", "resample") else "edit"
        out.append(
            BranchLink(
                row["key"], meta["fork"], kind, meta.get("name", ""), row.get("answer"), row.get("verdict")
            )
        )
    return out
