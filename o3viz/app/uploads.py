"""An upload, from bytes to a row in the trace store, done in the app worker: the server never
parses the file (a 134 KB ``.gz`` may expand to 120 MB of JSON and gigabytes of objects).

``take_upload`` is the worker's task. It recognises the file before accepting it (bytes that are
not UTF-8 JSON, JSONL or text are "not JSON: …"), stages a multi-record dataset (counting its
records under the worker's time budget and a cap on the decompressed size), or reads one trace
and writes it into the store itself, answering with the row only. What the store already holds
(same file bytes, or the same trace) is recognised and named, and nothing is added.

``take_upload_in_worker`` is what the server calls: one short JSON reply, no trace. No streamlit.
"""

from __future__ import annotations

import gzip
import io
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from o3viz.errors import O3vizError, TraceError
from o3viz.store.store import Store, content_key
from o3viz.trace.io import MAX_FILE_BYTES
from o3viz.trace.safejson import MAX_IMPORT_NESTING, loads

DATASET_SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".json.gz")
CONTAINER_SUFFIXES = (".eval", ".parquet")  # binary datasets the CLI imports: Inspect AI logs, Parquet
MAX_DATASET_EXPANDED = 1 << 30  # bytes a dataset upload may expand to (gunzipped): counting costs ~5 s/GiB
UPLOAD_HASH = "file:"  # line_hash prefix of an upload's own bytes (dataset records use bare hashes)


@dataclass
class Upload:
    """What became of one upload: a row (new or already there), a staged dataset, or an error."""

    name: str  # the uploaded file's name
    key: str | None = None  # the store key of its trace
    source: str = ""  # upload | import
    added: bool = False  # False with a key: the store already held it (``existing`` names the row)
    existing: str = ""  # "NAME (source, added DATE)" of the row that already holds it
    dataset: Path | None = None  # a staged multi-record dataset …
    records: int = 0  # … and how many records it holds
    error: str = ""  # "NAME: problem", one line

    def message(self) -> str:
        """The line the Library shows for a stored upload."""
        if self.added:
            return f"Added {self.name} ({self.source})"
        return f"{self.name} is already in the library as {self.existing}; nothing was added"


def _describe(row: dict) -> str:
    added = datetime.fromtimestamp(row.get("added_at") or 0).strftime("%Y-%m-%d %H:%M")
    return f"“{row.get('name') or row['key']}” ({row.get('source') or '—'}, added {added})"


def refuse_non_json(name: str, data: bytes) -> None:
    """Refuse, in one line, bytes that cannot be JSON, JSONL or text (binary, not UTF-8), and a
    ``.json`` document that cannot hold reasoning (a bare string, number or ``null``)."""
    head = _head(data)
    if b"\x00" in head:
        raise TraceError("not JSON: binary data (NUL bytes), not UTF-8 JSON, JSONL or text")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not a multi-byte character cut at the end of the head
            raise TraceError(
                f"not JSON: binary data (byte {exc.start} is not UTF-8), not UTF-8 JSON, JSONL or text"
            ) from None
    from o3viz.app.library import TRACE_SUFFIXES

    lower = name.lower()
    first = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    json_doc = lower.endswith((".json", ".json.gz")) and not lower.endswith(TRACE_SUFFIXES)
    if json_doc and first not in (b"{", b"["):
        found = "nothing" if not first else "a JSON string" if first == b'"' else "not an object"
        raise TraceError(
            f"not JSON that holds reasoning: found {found}; expected an object with the reasoning text "
            '(a field such as "response" or "reasoning_content", a chat completion, or an o3viz trace)'
        )


def _head(data: bytes, size: int = 1 << 16) -> bytes:
    if data[:2] != b"\x1f\x8b":
        return data[:size]
    try:
        return gzip.GzipFile(fileobj=io.BytesIO(data)).read(size)
    except (OSError, EOFError):
        return data[:size]  # not really gzip: the loader says so in its own words


def _first_record(path: Path) -> object:
    """The first non-empty line of a JSONL file as JSON, or None when it is not JSON."""
    from o3viz.importers.bulk import MAX_RECORD_BYTES, open_dataset

    with open_dataset(path) as f:
        for raw in iter(lambda: f.readline(MAX_RECORD_BYTES + 1), b""):
            if raw.strip():
                try:
                    return loads(raw, "the first record", max_nesting=MAX_IMPORT_NESTING)
                except TraceError:  # not a record: the file is read as one document
                    return None
    return None


def stage_dataset(store: Store, name: str, data: bytes, *, max_bytes: int = MAX_DATASET_EXPANDED):
    """An uploaded JSONL file (or JSON array) with more than one record, written to the store's
    ``incoming/`` folder; returns (its path, its record count), else None. Run it in the worker:
    counting reads the whole file (``max_bytes`` caps the decompressed size, one line past it)."""
    from o3viz.app.library import TRACE_SUFFIXES
    from o3viz.importers.bulk import count_records

    lower = name.lower()
    if lower.endswith(TRACE_SUFFIXES) or not lower.endswith(DATASET_SUFFIXES):
        return None
    folder = store.root / "incoming"
    gz = data[:2] == b"\x1f\x8b"
    path = folder / (content_key(data) + (".jsonl.gz" if gz else ".jsonl"))
    with store.guard("keeping the upload"):
        folder.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_bytes(data)
    n = 0
    try:
        array = _head(data, 4096).lstrip().startswith(b"[")
        if array or isinstance(_first_record(path), dict):  # pretty-printed JSON is one document
            n = count_records(path, max_bytes=max_bytes)
    except (OSError, ValueError, O3vizError) as exc:
        path.unlink(missing_ok=True)
        if isinstance(exc, TraceError) and "expands to" in str(exc):
            raise TraceError(str(exc).split(": ", 1)[-1]) from None  # named by the upload, not the copy
        n = 0
    if n > 1:
        return path, n
    path.unlink(missing_ok=True)
    return None


def store_upload(store: Store, name: str, data: bytes) -> dict:
    """Read one upload and put its trace in the store (in the worker); the row as JSON data."""
    from o3viz.app.library import TRACE_SUFFIXES, load_file
    from o3viz.app.worker import report

    upload_hash = UPLOAD_HASH + content_key(data)
    is_file = name.lower().endswith(TRACE_SUFFIXES)
    stored = (data if data[:2] == b"\x1f\x8b" else gzip.compress(data, mtime=0)) if is_file else None
    row = store.row(content_key(stored)) if stored else store.row_by_line_hash(upload_hash)
    if row is None:
        report(f"reading {name} ({len(data) / 1e6:.1f} MB)")
        entry = load_file(name, data)
        report("adding it to the library")
        data_in = entry.raw if entry.raw is not None and entry.raw[:2] == b"\x1f\x8b" else None
        meta = {"source": entry.source, "name": entry.name, "line_hash": upload_hash}
        new_row, text = store.write_files(entry.trace, meta, data_in)
        if store.insert([(new_row, text)], drop_duplicates=True):
            return {"key": new_row.key, "source": entry.source, "added": True}
        # the same trace came in another file, or the same record by another way (its content)
        row = store.row(store.stored_key(new_row) or new_row.key)
    return {"key": row["key"], "source": row["source"], "added": False, "existing": _describe(row)}


def accepted_suffix(name: str) -> bool:
    """Whether the upload takes a file of this name: every format the CLI imports."""
    from o3viz.app.library import IMPORT_SUFFIXES, TRACE_SUFFIXES

    return name.lower().endswith(TRACE_SUFFIXES + IMPORT_SUFFIXES + DATASET_SUFFIXES + CONTAINER_SUFFIXES)


def refuse_suffix(name: str) -> None:
    """One line, in words, for a file type the upload does not read (the widget takes any file,
    so the reason is said on the page rather than on hover)."""
    if not accepted_suffix(name):
        from o3viz.app.library import IMPORT_SUFFIXES, TRACE_SUFFIXES

        kinds = TRACE_SUFFIXES + IMPORT_SUFFIXES + (".jsonl.gz",) + CONTAINER_SUFFIXES
        suffix = Path(name).suffix or "(no extension)"
        raise TraceError(f"unknown file type {suffix}: o3viz reads {', '.join(kinds)}")


def stage_container(store: Store, name: str, data: bytes) -> tuple[Path, int]:
    """An uploaded Inspect AI ``.eval`` log or Parquet file, written to the store's ``incoming/``
    folder as a dataset of its samples or rows; returns (its path, its record count)."""
    from o3viz.importers.bulk import count_records
    from o3viz.importers.inspect_log import ZIP_MAGIC
    from o3viz.importers.parquet import MAGIC as PARQUET_MAGIC

    suffix = ".eval" if name.lower().endswith(".eval") else ".parquet"
    magic, what = (
        (ZIP_MAGIC, "an Inspect AI .eval log (a zip)") if suffix == ".eval" else (PARQUET_MAGIC, "Parquet")
    )
    if not data.startswith(magic):
        raise TraceError(f"not {what}: the file does not start like one")
    path = store.root / "incoming" / (content_key(data) + suffix)
    with store.guard("keeping the upload"):
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_bytes(data)
    try:
        n = count_records(path)
    except (OSError, ValueError, O3vizError):
        path.unlink(missing_ok=True)
        raise
    if n < 1:
        path.unlink(missing_ok=True)
        raise TraceError(f"{'no samples' if suffix == '.eval' else 'no rows'} to import")
    return path, n


def take_upload(root: str, name: str, data: bytes) -> dict:
    """The worker's task: refuse, stage (a dataset) or store (one trace) an upload."""
    from o3viz.app.worker import report

    if len(data) > MAX_FILE_BYTES:
        raise TraceError(f"{len(data)} bytes exceeds the limit of {MAX_FILE_BYTES} bytes")
    refuse_suffix(name)
    store = Store(root)
    if name.lower().endswith(CONTAINER_SUFFIXES):
        report(f"counting the records of {name}")
        path, n = stage_container(store, name, data)
        return {"dataset": str(path), "records": n}
    refuse_non_json(name, data)
    report(f"looking at {name}")
    staged = stage_dataset(store, name, data)
    if staged is not None:
        return {"dataset": str(staged[0]), "records": staged[1]}
    return store_upload(store, name, data)


def take_upload_in_worker(
    store: Store, name: str, data: bytes, *, budget_s: float | None = None, on_progress=None
) -> Upload:
    """``take_upload`` in a worker process with a time budget; the server gets a few fields back."""
    from o3viz.app.worker import run_in_worker, upload_budget_s

    if not data:
        return Upload(name, error=f"{name}: empty input")
    res = run_in_worker(
        "take_upload",
        str(store.root),
        name,
        data=data,
        budget_s=budget_s if budget_s is not None else upload_budget_s(),
        on_progress=on_progress,
        label="reading this file",
        hint="try a smaller file, or raise O3VIZ_UPLOAD_BUDGET_S",
    )
    if res.status != "done":
        return Upload(name, error=f"{name}: {res.error}")
    v = res.value
    if "dataset" in v:
        return Upload(name, dataset=Path(v["dataset"]), records=int(v["records"]))
    return Upload(name, v["key"], v["source"], bool(v["added"]), v.get("existing", ""))


@dataclass
class ImportOutcome:
    """How the Library reports a finished dataset import: ``kind`` error | warning | success."""

    kind: str
    line: str


def import_outcome(result: dict) -> ImportOutcome:
    """A finished import's report (``import_dataset_task``'s dict) as one line: an import that
    added nothing and found nothing already there is an error, never a success; a stopped one a
    warning."""
    summary = result.get("summary", "")
    if not result.get("traces") and not result.get("duplicates"):
        errors = result.get("errors") or []
        first = f"; first problem: {errors[0]}" if errors else ""
        return ImportOutcome(
            "error",
            f"Imported nothing: {result.get('records', 0)} records read, {len(errors)} skipped{first}. "
            "Check which field holds the text (Fields) and import again.",
        )
    if result.get("stopped"):
        return ImportOutcome("warning", f"Imported {summary}.")
    return ImportOutcome("success", f"Imported {summary}.")
