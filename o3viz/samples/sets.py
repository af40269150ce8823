"""Sample sets in the trace store: N traces of one question stored together under a set's name.

A set is a dataset of the store named after the set, whose traces carry the tag ``sample-set``
(``SET_TAG``) and, in ``trace.info["sample_set"]``, what the set is: its name, question, the
settings it was drawn with (temperature, model, new tokens), how many were asked for and whether a
stop cut it short. Nothing else is needed: listing sets is listing datasets whose traces carry
the tag, reading one is a dataset query, and growing one (resampling) adds traces to the dataset.
A trace's ``record`` is its place in the set (1-based).

>>> from o3viz.store.store import Store
>>> from o3viz.testing.sample_sets import split_set
>>> import tempfile
>>> store = Store(tempfile.mkdtemp())
>>> s = save_set(store, "demo", split_set(2, 1), {"temperature": 0.7})
>>> [(x.name, x.n) for x in list_sets(store)], read_set(store, "demo").n
([('demo', 3)], 3)
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from o3viz.analysis.pairing import question_key
from o3viz.errors import UsageError
from o3viz.samples.request import MAX_SAMPLES, check_room, check_set_name
from o3viz.store.dataset_names import SET_TAG
from o3viz.store.query import Query
from o3viz.store.store import Store
from o3viz.trace import Trace

__all__ = ["SET_TAG", "SampleSet", "SetSummary", "grow_set", "list_sets", "read_set", "save_set"]

INFO_KEY = "sample_set"


@dataclass
class SetSummary:
    """One line of ``list_sets``."""

    name: str
    n: int
    question: str = ""
    added: float | None = None  # when its first trace was stored (epoch seconds)


@dataclass
class SampleSet:
    """A stored set: its traces in set order, their store keys, and what the set says of itself
    (``info``: the first trace's ``info["sample_set"]``; ``stopped`` when any draw was stopped)."""

    name: str
    traces: list[Trace]
    keys: list[str] = field(default_factory=list)
    info: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.traces)

    @property
    def question(self) -> str:
        return self.traces[0].task.question if self.traces else ""

    @property
    def stopped(self) -> bool:
        return any(bool((t.info.get(INFO_KEY) or {}).get("stopped")) for t in self.traces)


def _tagged(trace: Trace, name: str, settings: dict) -> Trace:
    """A copy of ``trace`` marked as a member of set ``name``. An import's ``content_id`` is dropped:
    the copy is a set member, and the store must not take it for the same import again."""
    t = copy.copy(trace)
    t.info = {k: v for k, v in trace.info.items() if k != "content_id"}
    t.info[INFO_KEY] = {"name": name, "question": trace.task.question or "", **settings}
    return t


def _add(store: Store, name: str, traces: list[Trace], settings: dict, start: int) -> list[str]:
    keys = []
    for i, trace in enumerate(traces):
        t = _tagged(trace, name, {**settings, "member": start + i})
        keys.append(
            store.add(
                t, source=settings.get("source", "run"), dataset=name, name=f"{name} #{start + i + 1}",
                record=start + i + 1, tags=SET_TAG,
            )
        )  # fmt: skip
    return keys


def _keys(store: Store, name: str) -> list[tuple[str, int | None, str]]:
    rows = store.select(Query(dataset=[name]), ("key", "record", "tags"), max_rows=MAX_SAMPLES * 4 + 1)
    return sorted(rows, key=lambda r: (r[1] is None, r[1] or 0))


def _check_question(traces: list[Trace], question: str | None = None) -> str:
    keys = {question_key(t.task.question) for t in traces}
    if question is not None:
        keys.add(question_key(question))
    if len(keys) > 1:
        raise UsageError("a sample set holds traces of one question; these ask different questions")
    return keys.pop() if keys else ""


def save_set(store: Store, name: str, traces: list[Trace], settings: dict | None = None) -> SampleSet:
    """Store ``traces`` (one question) as the new set ``name``; ``settings`` (temperature, model,
    requested, stopped, …) go into each trace's ``info["sample_set"]``. A name already used by a
    dataset is refused, as are fewer than 2 or more than ``MAX_SAMPLES`` traces."""
    check_set_name(name)
    if not 2 <= len(traces) <= MAX_SAMPLES:
        what = "a set of one sample" if len(traces) == 1 else f"{len(traces)} samples"
        raise UsageError(f"set {name}: {what}; a set holds 2 to {MAX_SAMPLES} samples")
    _check_question(traces)
    if store.count(Query(dataset=[name]), cap=1):
        raise UsageError(f"set {name}: the store already has a dataset of that name; pick another --set")
    keys = _add(store, name, traces, dict(settings or {}), 0)
    return read_set(store, name) if len(set(keys)) == len(keys) else SampleSet(name, traces, keys)


def grow_set(store: Store, name: str, traces: list[Trace], settings: dict | None = None) -> SampleSet:
    """Add ``traces`` (more samples of the set's question, e.g. resamples) to set ``name``."""
    have = read_set(store, name)
    check_room(name, have.n, len(traces))
    _check_question(traces, have.question)
    _add(store, name, traces, {**have.info, **(settings or {})}, have.n)
    return read_set(store, name)


def read_set(store: Store, name: str) -> SampleSet:
    """Set ``name`` from the store, in set order; one ``UsageError`` line when there is none."""
    check_set_name(name)
    rows = [r for r in _keys(store, name) if SET_TAG in (r[2] or "").split(",")]
    if not rows:
        raise UsageError(f"no sample set {name!r} in the store (o3viz sample --list shows the sets)")
    if len(rows) > MAX_SAMPLES:
        raise UsageError(f"set {name}: {len(rows)} traces, over the {MAX_SAMPLES} a set holds")
    traces = [store.trace(r[0]) for r in rows]
    info = {k: v for k, v in (traces[0].info.get(INFO_KEY) or {}).items() if k != "member"}
    return SampleSet(name, traces, [r[0] for r in rows], info)


def list_sets(store: Store) -> list[SetSummary]:
    """Every set in the store, largest first: datasets whose first trace carries ``SET_TAG``."""
    out = []
    for dataset, n in store.distinct("dataset"):
        first = store.rows(Query(dataset=[dataset], limit=1), ("key", "tags", "question", "added_at"))
        if first and SET_TAG in (first[0].get("tags") or "").split(","):
            row = first[0]
            out.append(SetSummary(dataset, n, row.get("question") or "", row.get("added_at")))
    return out
