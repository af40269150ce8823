"""Golden sets: labelled datasets into the store (traces and their labellers' labels), the
labelled steps out (JSONL shaped like PRM800K: one record per trace, its steps with every
labeller's label; Parquet: one row per label), label files back in, and the agreement table of a
dataset (``o3viz.analysis.labels``) over the labels in force.
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from o3viz.analysis.labels import AgreementTable, agreement_table
from o3viz.errors import O3vizError, UsageError
from o3viz.store.dataset_names import dataset_names
from o3viz.store.golden_lines import golden_labels, label_lines
from o3viz.store.labels import (
    MAX_LABELLER_CHARS,
    Label,
    add_labels,
    all_labels,
    check_step,
    current_labels,
    latest_labels,
    step_counts,
)
from o3viz.store.query import Query
from o3viz.store.store import Store, StoreError
from o3viz.trace.files import check_output, write_atomic

MAX_LABELS_PER_FILE = 1_000_000  # labels in one golden-set file (labels import)
LABEL_BATCH = 5_000  # labels added at a time by labels import
BATCH = 200


def import_labelled(
    store: Store,
    path: str | os.PathLike,
    *,
    by: str | None = None,
    dataset: str = "",
    limit: int | None = None,
    progress: Callable[[int], None] | None = None,
    options=None,
) -> tuple[int, int, str]:
    """Store every trace of a labelled dataset (MR-GSM8K, PRM800K, ProcessBench) with its labels
    as labeller ``by`` (default: the dataset's annotators); returns (traces, labels, labeller).
    ``options``: an ``o3viz.importers.process_labels.LabelOptions`` (its grade field; it counts the
    source steps read)."""
    from o3viz.importers.formats import read_input
    from o3viz.importers.process_labels import LABELLERS, label_format, labelled_records

    data = read_input(path).data
    fmt = label_format(data)
    name = by or LABELLERS[fmt.split("_raw")[0]]
    dataset = dataset or os.path.basename(os.fspath(path)).split(".")[0]
    rows, labels, traces, count = [], [], 0, 0
    now = time.time()
    for rec in labelled_records(data if isinstance(data, list) else path, limit=limit, options=options):
        key = _stored(store, rec, dataset, rows)
        rnd = rec.trace.final.index
        labels += [Label(key, rnd, s, name, v, first_error=f, time=now) for s, v, f in rec.labels]
        traces += 1
        if count + len(labels) > MAX_LABELS_PER_FILE:
            raise UsageError(
                f"{os.fspath(path)}: more than {MAX_LABELS_PER_FILE:,} labels; the first {count:,} were "
                "stored; split the file"
            )
        if traces % BATCH == 0:
            count += _flush(store, rows, labels)
            rows, labels = [], []
            if progress:
                progress(traces)
    count += _flush(store, rows, labels)
    return traces, count, name


def _stored(store: Store, rec, dataset: str, rows: list) -> str:
    """The key of the record's trace: the one a previous import made, else a new one (queued)."""
    known = store.row_by_line_hash(rec.line_hash)
    if known is not None:
        return known["key"]
    meta = {"source": "import", "dataset": dataset, "record": rec.record + 1, "line_hash": rec.line_hash}
    row, text = store.write_files(rec.trace, {**meta, "name": f"{dataset} #{rec.record + 1}"})
    rows.append((row, text))
    return row.key


def _flush(store: Store, rows: list, labels: list[Label]) -> int:
    """Insert the batch's new rows, then the labels this labeller has not yet given those steps."""
    if rows:
        store.insert(rows)
    names = {x.labeller for x in labels}
    have = current_labels(all_labels(store, sorted({x.key for x in labels})))
    known = {(x.key, x.round, x.step) for x in have if x.labeller in names}
    fresh = [x for x in labels if (x.key, x.round, x.step) not in known]  # a re-import adds none
    return add_labels(store, fresh, check_steps=False)


def dataset_keys(store: Store, dataset: str | None) -> list[str]:
    """The keys of a dataset's traces (every trace for None); an unknown dataset is one line."""
    q = Query(dataset=[dataset] if dataset else [])
    keys = [r[0] for r in store.select(q, ("key",))]
    if dataset and not keys:
        raise UsageError(f"no dataset {dataset!r} in the store (datasets: {dataset_names(store)})")
    return keys


def labels_of(store: Store, dataset: str | None, *, agreed: bool = False) -> list[Label]:
    """The labels in force on a dataset's steps; ``agreed``: only steps that two or more labellers
    labelled with one verdict, and none with another."""
    labels = on_steps(store, current_labels(all_labels(store, dataset_keys(store, dataset))))
    if not agreed:
        return labels
    by_step: dict[tuple, list[Label]] = defaultdict(list)
    for lab in labels:
        by_step[(lab.key, lab.round, lab.step)].append(lab)
    ok = {s for s, labs in by_step.items() if len(labs) >= 2 and len({lab.verdict for lab in labs}) == 1}
    return [lab for lab in labels if (lab.key, lab.round, lab.step) in ok and lab.verdict != "unsure"]


def on_steps(store: Store, labels: list[Label]) -> list[Label]:
    """The labels whose step exists in its trace (a ``labels.jsonl`` line put back by ``reindex``
    may name any step; the table keeps it, the readers leave it out)."""
    shape: dict[str, list[int]] = {}
    for key in sorted({lab.key for lab in labels}):
        try:
            shape[key] = [len(r.steps) for r in store.trace(key).rounds]
        except O3vizError:  # a trace deleted, or a file that no longer reads
            shape[key] = []
    return [lab for lab in labels if lab.round < len(shape[lab.key]) and lab.step < shape[lab.key][lab.round]]


def golden_records(store: Store, labels: list[Label]) -> list[dict]:
    """PRM800K-like records: per trace its question and steps, each step with its labels."""
    by_key: dict[str, list[Label]] = defaultdict(list)
    for lab in labels:
        by_key[lab.key].append(lab)
    out = []
    for key in sorted(by_key):
        trace, row = store.trace(key), store.row(key) or {}
        steps: dict[tuple, dict] = {}
        for lab in sorted(by_key[key], key=lambda lab: (lab.round, lab.step, lab.labeller)):
            st = trace.rounds[lab.round].steps[lab.step]
            entry = steps.setdefault(
                (lab.round, lab.step), {"step": lab.step_id, "text": st.text, "type": st.type, "labels": []}
            )
            entry["labels"].append({f: getattr(lab, f) for f in ("labeller", "verdict", "first_error", "type", "note", "time")})  # fmt: skip
        out.append({"key": key, "dataset": row.get("dataset", ""), "question": trace.task.question,
                    "reference": trace.task.reference, "steps": list(steps.values())})  # fmt: skip
    return out


def export_labels(
    store: Store,
    dataset: str | None,
    path: str | os.PathLike,
    fmt: str,
    *,
    agreed: bool = False,
    overwrite: bool = False,
) -> tuple[int, int]:
    """Write a golden set (``jsonl`` or ``parquet``); returns (traces, labels)."""
    if fmt not in ("jsonl", "parquet"):
        raise UsageError(f"--format {fmt!r}: jsonl or parquet")
    path = check_output(path, overwrite, what="--out")
    labels = labels_of(store, dataset, agreed=agreed)
    if not labels:
        raise StoreError("no labelled steps to export" + (" that two labellers agreed on" if agreed else ""))
    if fmt == "jsonl":
        recs = golden_records(store, labels)
        data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs).encode()
    else:
        data = _parquet(labels)
    with store.guard("writing the golden set"):
        write_atomic(path, data, overwrite=overwrite)
    return len({lab.key for lab in labels}), len(labels)


def _parquet(labels: list[Label]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{**lab.to_dict(), "step_id": lab.step_id} for lab in labels]
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(rows), sink)
    return sink.getvalue().to_pybytes()


def _scan_label_file(store: Store, path: str | os.PathLike) -> set[str]:
    """First pass: every line parses, the file holds at most ``MAX_LABELS_PER_FILE`` labels, and
    every labelled step exists (each trace loaded once; what is kept per trace is its step counts).
    Returns the labellers' names (two at most: only whether there is more than one matters)."""
    names: set[str] = set()
    counts: dict[str, list[int]] = {}  # key -> steps per round, for the keys seen so far
    total = 0
    for n, line in label_lines(path):
        for lab in golden_labels(line, n, os.fspath(path)):
            total += 1
            if total > MAX_LABELS_PER_FILE:
                raise UsageError(
                    f"{os.fspath(path)}: more than {MAX_LABELS_PER_FILE:,} labels; split the file"
                )
            if len(names) < 2:
                names.add(lab.labeller)
            if lab.key not in counts:
                counts[lab.key] = step_counts(store, lab.key)
            check_step(store, lab.key, lab.round, lab.step, counts[lab.key])
    return names


def import_label_file(store: Store, path: str | os.PathLike, by: str) -> int:
    """Add the labels of a golden-set JSONL file (``export_labels``) as labeller ``by`` (a file
    with several labellers: ``by/their name``); unknown keys and steps are refused in one line,
    before any label is added. The file is read twice, line by line, and labels are added in
    batches, so memory does not grow with it; a label the labeller already gives that step (the
    same verdict, first-error mark, type and note), or a line repeated, is not added again."""
    several = len(_scan_label_file(store, path)) > 1
    added, batch = 0, []
    for n, line in label_lines(path):
        for lab in golden_labels(line, n, os.fspath(path)):
            lab.labeller = f"{by}/{lab.labeller}"[:MAX_LABELLER_CHARS] if several else by
            batch.append(lab)  # checked in golden_labels, and by add_labels with its new name
            if len(batch) >= LABEL_BATCH:  # within a line too: one line may hold every label
                added, batch = added + _add_new(store, batch), []
    return added + _add_new(store, batch)


def _add_new(store: Store, labels: list[Label]) -> int:
    """Add ``labels`` but those already in force with the same content (or repeated in the batch)."""

    def same(lab: Label) -> tuple:
        return lab.key, lab.round, lab.step, lab.labeller, lab.verdict, lab.first_error, lab.type, lab.note

    have = {same(x) for x in latest_labels(store, {(x.key, x.round, x.step, x.labeller) for x in labels})}
    fresh = []
    for lab in labels:
        if same(lab) not in have:
            have.add(same(lab))
            fresh.append(lab)
    return add_labels(store, fresh, check_steps=False)


def dataset_agreement(store: Store, dataset: str | None) -> AgreementTable:
    """The agreement table over a dataset's labels in force and its labelled traces."""
    labels = labels_of(store, dataset)
    if not labels:
        where = f"in dataset {dataset!r}" if dataset else "in the library"
        raise StoreError(
            f"no labelled steps {where} yet: label steps on Inspect (keys c, w, u) or with o3viz label, "
            "or import a labelled dataset with o3viz import FILE --labels"
        )
    traces = {key: store.trace(key) for key in sorted({lab.key for lab in labels})}
    return agreement_table(labels, traces)


def labels_on(store: Store, key: str) -> list[Label]:
    """The labels in force on one trace's steps (every labeller's)."""
    return on_steps(store, current_labels(all_labels(store, [key])))


@dataclass
class QueueState:
    """Where one labeller stands in an annotation queue: "23 of 120" and the next step to label."""

    labeller: str
    done: int  # steps of the assigned traces this labeller has labelled
    total: int  # steps of the assigned traces
    traces: int  # traces assigned to this labeller
    next: tuple[str, int, int] | None  # (key, round, step); None when nothing is left

    @property
    def progress(self) -> str:
        return f"{self.done} of {self.total}"


def assigned(keys: list[str], labeller: str, labellers: list[str], overlap: int = 1) -> list[str]:
    """The traces of ``keys`` a labeller gets when they are dealt round-robin to ``labellers``,
    each to ``overlap`` of them (so that pairs overlap for agreement); all of them otherwise.

    >>> assigned(["a", "b", "c", "d"], "ann", ["ann", "bob", "cy"], overlap=2)
    ['a', 'c', 'd']
    """
    if labeller not in labellers:
        return list(keys)
    me, n = labellers.index(labeller), len(labellers)
    return [k for i, k in enumerate(keys) if any((i + j) % n == me for j in range(min(overlap, n)))]


def label_queue(
    store: Store,
    dataset: str | None,
    labeller: str,
    *,
    labellers: list[str] | None = None,
    overlap: int = 1,
    skip: set[tuple[str, int, int]] | frozenset = frozenset(),
) -> QueueState:
    """The labeller's progress over the dataset's traces assigned to them, and the next step they
    have not labelled (nor skipped), in the order the traces entered the store."""
    q = Query(dataset=[dataset] if dataset else [], sort="id", descending=False)
    steps = dict(store.select(q, ("key", "steps")))
    keys = assigned(list(steps), labeller, labellers or [], overlap)
    mine = {
        (lab.key, lab.round, lab.step)
        for lab in current_labels(all_labels(store, keys))
        if lab.labeller == labeller
    }
    state = QueueState(labeller, len(mine), sum(steps[k] for k in keys), len(keys), None)
    for key in keys:
        if sum(1 for m in mine if m[0] == key) >= steps[key]:
            continue
        trace = store.trace(key)
        for rnd in trace.rounds:
            for st in rnd.steps:
                item = (key, rnd.index, st.index)
                if item not in mine and item not in skip:
                    state.next = item
                    return state
    return state
