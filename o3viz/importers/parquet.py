"""Parquet datasets of reasoning traces (Hugging Face's OpenThoughts-, OpenR1-style columns): one
record per row, mapped to a trace by the same field options as JSON/JSONL (``--text-field``,
``--question-field``, ...; dotted paths reach into lists: ``generations.0``,
``conversations.1.value``).

Rows are streamed with pyarrow one row group at a time, in batches (never the whole table, and
no read-ahead), through ``o3viz.trace.bounded``. The file is untrusted: its footer must parse,
each row group's declared size is checked before it is read (against the cap and against what the
file may still decode to), a batch has so few rows that a dictionary value repeated in every row
stays within one record's limit (16 MiB) dense, a row over the record limit is skipped from its Arrow size with one line
(never turned into Python objects), and a broken page stops the file with one line naming the row
it reached.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from o3viz.errors import TraceError, one_line
from o3viz.trace.bounded import MAX_RECORD_BYTES, Budget, arrow_rows, batch_rows

MAGIC = b"PAR1"
MAX_ROW_GROUP_BYTES = 2 * 1024**3  # uncompressed, as the footer declares it
MAX_ROW_BYTES = MAX_RECORD_BYTES  # one row, from its Arrow size, and again as JSON
BATCH_ROWS = 64


def _plain(v: Any) -> Any:
    """JSON for the Arrow values ``json`` does not know (dates, decimals, bytes)."""
    if isinstance(v, dt.date | dt.datetime | dt.time):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, bytes):
        return base64.b64encode(v[:1024]).decode()
    return str(v)


def _json(row: dict) -> str:
    """A row as JSON text that ``o3viz.trace.safejson`` reads back: a float column's NaN or
    infinity (how pandas writes a missing value) becomes ``null``, never the ``NaN`` JSON lacks."""
    return json.dumps(_finite(row), default=_plain, ensure_ascii=False)


def _finite(v: Any) -> Any:
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_finite(x) for x in v]
    return v


def _open(path: Path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise TraceError(f"{path.name}: not a readable Parquet file ({one_line(exc, 160)})") from None
    md = pf.metadata
    for i in range(md.num_row_groups):
        size = md.row_group(i).total_byte_size
        if size > MAX_ROW_GROUP_BYTES:
            raise TraceError(
                f"{path.name}: row group {i} declares {size:,} bytes, over the limit of {MAX_ROW_GROUP_BYTES:,}"
            )
    return pf


def count_rows(path: str | Path) -> int:
    return _open(Path(path)).metadata.num_rows


def _batches(pf, path: Path, groups: range, budget: Budget) -> Iterator:
    """The record batches of ``groups``, each group checked against ``budget`` before it is read."""
    for group in groups:  # one at a time: iter_batches reads ahead
        declared = pf.metadata.row_group(group).total_byte_size
        budget.check(declared, f"row group {group}")
        rows = batch_rows(declared, BATCH_ROWS)
        yield from pf.iter_batches(batch_size=rows, row_groups=[group], use_threads=False)


def _budget(path: Path) -> Budget:
    return Budget(path.name, path.stat().st_size)


def parquet_rows(path: str | Path) -> Iterator[tuple[int, str | None, str | None]]:
    """``(n, json_text, problem)`` per row (``n`` from 1): the row as a JSON object, or one line
    saying why it is skipped."""
    import pyarrow as pa

    path = Path(path)
    pf, n, budget = _open(path), 0, _budget(path)
    try:
        for batch in _batches(pf, path, range(pf.metadata.num_row_groups), budget):
            for row, problem in arrow_rows(batch, budget, MAX_ROW_BYTES):
                n += 1
                text = None if row is None else _json(row)
                if problem is None and len(text) > MAX_ROW_BYTES:
                    problem, text = f"row larger than the limit of {MAX_ROW_BYTES} bytes", None
                yield n, text, problem
    except TraceError:
        raise
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise TraceError(f"{path.name}: unreadable after row {n} ({one_line(exc, 160)})") from None


def read_row(path: str | Path, record: int | None = None) -> tuple[int, dict]:
    """``(index, row)``: row ``record`` (0-based, default 0; negative from the end) as a dict,
    reading only the row group that holds it, in bounded batches."""

    path = Path(path)
    pf = _open(path)
    total, n = pf.metadata.num_rows, record or 0
    if not -total <= n < total:
        raise TraceError(f"{path.name}: record {n} is out of range (the file has {total} rows)")
    index = n = n % total
    for i in range(pf.metadata.num_row_groups):
        rows = pf.metadata.row_group(i).num_rows
        if n < rows:
            return index, _row_in_group(pf, path, i, n)
        n -= rows
    raise TraceError(f"{path.name}: record {record} not found")


def _row_in_group(pf, path: Path, group: int, n: int) -> dict:
    import pyarrow as pa

    budget = _budget(path)
    try:
        for batch in _batches(pf, path, range(group, group + 1), budget):
            if n >= batch.num_rows:
                n -= batch.num_rows
                budget.take(batch.nbytes)
                continue
            row, problem = next(arrow_rows(batch.slice(n, 1), budget, MAX_ROW_BYTES))
            if problem is not None:
                raise TraceError(f"{path.name}: {problem}")
            return json.loads(_json(row))
    except TraceError:
        raise
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise TraceError(f"{path.name}: unreadable in row group {group} ({one_line(exc, 160)})") from None
    raise TraceError(f"{path.name}: row group {group} ended early")
