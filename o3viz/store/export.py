"""The store as a step-level table (one row per reasoning step, with its trace's facts) written to
Parquet for pandas, DuckDB or Spark. Rows come from the trace files, the store's truth.

Columns: ``key, dataset, model, source, record, part, task, correct, verdict, round, step, kind,
type, parent, start, end, chars, claims, claim_errors, text``.

``export_layout`` writes the store's whole Parquet layout instead (``o3viz.store.columnar``): the
trace table and this step table, each partitioned by dataset, in a new folder.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from o3viz.errors import O3vizError
from o3viz.store.query import Query
from o3viz.store.store import Store, StoreError
from o3viz.trace import Trace
from o3viz.trace.files import check_output, write_atomic

TRACE_COLUMNS = ("key", "dataset", "model", "source", "record", "part", "task", "correct", "verdict")
BATCH_ROWS = 20_000


def _schema():
    import pyarrow as pa

    text, i64 = pa.string(), pa.int64()
    cols = {
        "key": text, "dataset": text, "model": text, "source": text, "record": i64, "part": text,
        "task": text, "correct": pa.bool_(), "verdict": text, "round": i64, "step": i64, "kind": text,
        "type": text, "parent": i64, "start": i64, "end": i64, "chars": i64, "claims": i64,
        "claim_errors": i64, "text": text,
    }  # fmt: skip
    return pa.schema(list(cols.items()))


def step_rows(trace: Trace, facts: dict) -> list[dict]:
    """One dict per step of every round: the trace's ``facts`` plus the step's own."""
    out = []
    for rnd in trace.rounds:
        claims: dict[int, list[str]] = {}
        for c in rnd.checks:
            if c.kind == "claim" and c.step is not None:
                claims.setdefault(c.step, []).append(c.verdict)
        for st in rnd.steps:
            verdicts = claims.get(st.index, [])
            out.append(
                {
                    **facts,
                    "round": rnd.index,
                    "step": st.index,
                    "kind": st.kind,
                    "type": st.type,
                    "parent": st.parent,
                    "start": st.start,
                    "end": st.end,
                    "chars": st.end - st.start,
                    "claims": len(verdicts),
                    "claim_errors": sum(v == "wrong" for v in verdicts),
                    "text": st.text,
                }
            )
    return out


def export_steps(
    store: Store,
    q: Query,
    path: str | os.PathLike,
    *,
    overwrite: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[int, int, list[str]]:
    """Write the steps of every trace matching ``q`` to a Parquet file; returns (traces, steps,
    one error line per unreadable trace). The file is built in memory and written by the one atomic
    writer: an existing name is refused unless ``overwrite`` (and then only a regular file is
    replaced), so a device node, a ``/proc`` link or a planted temp-file link is never written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = check_output(path, overwrite, what="--parquet")  # before the slow part
    schema = _schema()
    facts_rows = [dict(zip(TRACE_COLUMNS, r, strict=True)) for r in store.select(q, TRACE_COLUMNS)]
    if not facts_rows:
        raise StoreError("no traces match; nothing to export")
    sink = pa.BufferOutputStream()
    steps, errors = 0, []
    with pq.ParquetWriter(sink, schema) as writer:
        for batch in _step_batches(store, facts_rows, errors, progress):
            writer.write_batch(batch)
            steps += batch.num_rows
    if not steps:
        raise StoreError(f"no steps to export ({len(facts_rows)} traces matched, {len(errors)} unreadable)")
    with store.guard("writing the Parquet file"):
        write_atomic(path, sink.getvalue().to_pybytes(), overwrite=overwrite)
    return len(facts_rows), steps, errors


def _step_batches(
    store: Store, facts_rows: list[dict], errors: list[str], progress, no_dataset: str | None = None
) -> object:
    """The steps of ``facts_rows``' traces as record batches of about ``BATCH_ROWS`` rows (one
    error line per unreadable trace into ``errors``); ``no_dataset`` names the traces without a
    dataset (the partitioned layout needs a name)."""
    import pyarrow as pa

    from o3viz.store.columnar import partition_value

    schema, batch = _schema(), []
    for i, facts in enumerate(facts_rows):
        try:
            batch.extend(step_rows(store.trace(facts["key"]), facts))
        except O3vizError as exc:
            errors.append(f"{facts['key']}: {exc}")
        if len(batch) >= BATCH_ROWS or (i == len(facts_rows) - 1 and batch):
            for r in batch:
                r["correct"] = None if r["correct"] is None else bool(r["correct"])
                if no_dataset is not None:  # the partition, as the traces' (columnar.partition_value)
                    r["dataset"] = partition_value(r["dataset"])
            yield pa.RecordBatch.from_pylist(batch, schema=schema)
            batch = []
        if progress:
            progress(i + 1, len(facts_rows))


def export_layout(
    store: Store,
    q: Query,
    folder: str | os.PathLike,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[int, int, list[str]]:
    """Write the store's Parquet layout for the traces matching ``q`` into ``folder`` (new or
    empty): ``traces/`` and ``steps/``, partitioned by dataset (``o3viz.store.columnar``). Returns
    (traces, steps, one error line per unreadable trace)."""
    from o3viz.store.columnar import (
        LAYOUT_VERSION,
        NO_DATASET,
        STAMP,
        trace_batches,
        trace_schema,
        write_table,
    )

    folder = Path(folder)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise StoreError(f"--parquet: {folder} exists and is not an empty folder; give a new folder")
    facts_rows = [
        dict(zip(TRACE_COLUMNS, r, strict=True)) for r in store.select(q, TRACE_COLUMNS, max_rows=2**62)
    ]
    if not facts_rows:
        raise StoreError("no traces match; nothing to export")
    errors: list[str] = []
    with store.guard("writing the Parquet layout"):
        folder.mkdir(parents=True, exist_ok=True)
        traces = write_table(trace_batches(store, q), folder / "traces", trace_schema(), partition=True)
        steps = write_table(
            _step_batches(store, facts_rows, errors, progress, NO_DATASET), folder / "steps", _schema(), True
        )
        stamp = {"layout": LAYOUT_VERSION, "generation": store.generation(), "traces": traces, "steps": steps}
        write_atomic(folder / STAMP, json.dumps(stamp).encode())
    return traces, steps, errors
