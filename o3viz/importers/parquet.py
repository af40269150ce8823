"""Parquet datasets of reasoning traces (Hugging Face's OpenThoughts-, OpenR1-style columns): one
record per row, mapped to a trace by the same field options as JSON/JSONL (``--text-field``,
``--question-field``, ...; dotted paths reach into lists: ``generations.0``,
``conversations.1.value``).

Rows are streamed with pyarrow one row group at a time, in batches (never the whole table, and
no read-ahead), so Arrow memory stays about one row group. The file is untrusted: its footer must
parse, each row group's declared size is capped before it is read, a row whose JSON is over the record limit is skipped with one line, and
a broken page stops the file with one line naming the row it reached.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from o3viz.errors import TraceError, one_line

MAGIC = b"PAR1"
MAX_ROW_GROUP_BYTES = 2 * 1024**3  # uncompressed, as the footer declares it
MAX_ROW_BYTES = 16 * 1024 * 1024  # one row as JSON (the bulk importer's record limit)
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


def parquet_rows(path: str | Path) -> Iterator[tuple[int, str | None, str | None]]:
    """``(n, json_text, problem)`` per row (``n`` from 1): the row as a JSON object, or one line
    saying why it is skipped."""
    import pyarrow as pa

    path = Path(path)
    pf, n = _open(path), 0
    try:
        for group in range(pf.metadata.num_row_groups):  # one at a time: iter_batches reads ahead
            for batch in pf.iter_batches(batch_size=BATCH_ROWS, row_groups=[group], use_threads=False):
                for row in batch.to_pylist():
                    n += 1
                    text = json.dumps(row, default=_plain, ensure_ascii=False)
                    if len(text) > MAX_ROW_BYTES:
                        yield n, None, f"row larger than the limit of {MAX_ROW_BYTES} bytes"
                    else:
                        yield n, text, None
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise TraceError(f"{path.name}: unreadable after row {n} ({one_line(exc, 160)})") from None


def read_row(path: str | Path, record: int | None = None) -> tuple[int, dict]:
    """``(index, row)``: row ``record`` (0-based, default 0; negative from the end) as a dict,
    reading only the row group that holds it."""
    path = Path(path)
    pf = _open(path)
    total, n = pf.metadata.num_rows, record or 0
    if not -total <= n < total:
        raise TraceError(f"{path.name}: record {n} is out of range (the file has {total} rows)")
    index = n = n % total
    for i in range(pf.metadata.num_row_groups):
        rows = pf.metadata.row_group(i).num_rows
        if n < rows:
            row = pf.read_row_group(i).slice(n, 1).to_pylist()[0]
            return index, json.loads(json.dumps(row, default=_plain))
        n -= rows
    raise TraceError(f"{path.name}: record {record} not found")
