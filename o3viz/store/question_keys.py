"""The whole question's key of stored traces (``IndexRow.question_key``), for the readers that key
questions: pairing two datasets (``o3viz.store.paired``) and grouping a dataset into sample sets
(``o3viz.samples.group``). The index's ``question`` column is clipped, so neither may key on it.

A row indexed before store schema 6 whose question was clipped has no key yet (``reindex --full``
fills every row): ``fill_question_keys`` computes it from the trace's file and writes it into the
index, so the first reader pays once.
"""

from __future__ import annotations

from o3viz.analysis.pairing import question_hash
from o3viz.errors import O3vizError
from o3viz.store.store import Store, StoreError

__all__ = ["fill_question_keys"]


def fill_question_keys(store: Store, keys: list[str]) -> dict[str, str]:
    """The question key of each of ``keys`` (rows without one), read from its trace file and
    stored in its row. A trace whose file no longer reads is left out (its caller falls back to
    the clipped question)."""
    found: dict[str, str] = {}
    for key in keys:
        try:
            found[key] = question_hash(store.editable_trace(key).task.question)
        except O3vizError:
            continue
    if found:
        try:  # a read-only store still pairs right: the keys are only not kept for next time
            with store.transaction("storing question keys") as conn:
                conn.executemany(
                    "UPDATE traces SET question_key = ? WHERE key = ?", [(v, k) for k, v in found.items()]
                )
                store.bump_generation(conn)
        except StoreError:
            pass
    return found
