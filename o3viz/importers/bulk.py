"""Whole-dataset import: every record of a JSONL file (or JSON array) becomes a trace, grouped
under a dataset name, imported in parallel worker processes.

- Records are read one at a time, each capped at ``MAX_RECORD_BYTES``; a record that is too big,
  binary, not UTF-8, not JSON or over a JSON limit (``o3viz.trace.safejson``) is reported with its line number and skipped.
- A record that holds several solutions and no text of its own (GSM8K's example solutions: one
  question, four graded solutions) fans out into one trace per solution (``fan_out``).
- A record already in the sink (same bytes, same options) is recognised before it is parsed.
- Workers write the trace files themselves and return rows; the parent commits them in batches,
  so a crash leaves files without rows (which ``reindex`` repairs), never rows without files.
- Each record has a time budget inside its worker; a worker that stops answering altogether (a
  hang in C code) is killed after ``stall_s`` and the import stops with one line saying so.

The sink (the trace store, ``o3viz.store.store.Store``) is passed in, so importers never import the app.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from o3viz.errors import TraceError, UsageError, one_line
from o3viz.importers import inspect_log, parquet
from o3viz.importers.datasets import is_dataset
from o3viz.importers.fields import ImportFields
from o3viz.importers.formats import MAX_IMPORT_BYTES, detect_json_format
from o3viz.importers.source_steps import SourceStepCount
from o3viz.trace.bounded import MAX_RECORD_BYTES, Budget, read_lines
from o3viz.trace.safejson import MAX_IMPORT_NESTING, loads

# MAX_RECORD_BYTES: one record; a whole JSONL file is read line by line (o3viz.trace.bounded)
MAX_FILE_BYTES = 4 * 1024**3  # JSONL; a JSON array is parsed whole and keeps MAX_IMPORT_BYTES
MAX_PARTS = 64  # solutions one record may fan out into
MAX_PART_CHARS = 60  # a part's name (the record's key): it names the trace and becomes its model
CHUNK = 32  # records per task sent to a worker
RECORD_BUDGET_S = 30.0  # per record, inside the worker
STALL_S = 120.0  # no answer from a worker for this long: the import stops
StartMethod = Literal["fork", "forkserver", "spawn"]


class Sink(Protocol):
    """Where imported traces go (the trace store implements it)."""

    def known_lines(self, hashes: list[str]) -> set[str]: ...
    def write_files(self, trace: Any, meta: dict, *, durable: bool) -> Any: ...  # in a worker: a row payload
    # in the parent; returns how many were new (a record already there by content is not, and
    # with ``drop_duplicates`` its new files go)
    def insert(self, payloads: list, *, drop_duplicates: bool = False) -> int: ...


@dataclass
class ImportOptions(ImportFields):
    """How records become traces (part of each record's identity, with its bytes): the dataset's
    name, whether claims are checked, and the ``ImportFields`` (keywords: ``ImportOptions("gsm8k",
    text_field="output")``)."""

    dataset: str
    claims: bool = True

    def fingerprint(self) -> str:
        # fields added later count only when set, so a store's earlier imports keep their hashes
        later = ("id_field", "model_field", "grade_field")
        named = {k: v for k, v in self.as_dict().items() if v is not None or k not in later}
        return json.dumps({**named, "claims": self.claims}, sort_keys=True)

    def fields(self) -> ImportFields:
        """The field options alone, as ``import_trace(fields=...)`` takes them."""
        return ImportFields.of(self)


@dataclass
class ImportReport:
    dataset: str
    records: int = 0  # records read (good or bad)
    traces: int = 0  # traces added to the sink
    duplicates: int = 0  # records (or traces) already there
    errors: list[str] = field(default_factory=list)  # "line N: problem", one per bad record
    keys: list[str] = field(default_factory=list)  # keys of the added traces, in record order
    stopped: str | None = None  # why the import ended early, if it did
    seconds: float = 0.0
    steps: SourceStepCount = field(default_factory=SourceStepCount)  # records that gave a list of steps

    def summary(self) -> str:
        s = f"{self.traces} traces from {self.records} records into dataset {self.dataset!r}"
        s += f", {self.duplicates} already there, {len(self.errors)} bad records skipped"
        s += f", {self.steps.text()}" if self.steps.source else ""
        return s + (f" ({self.stopped})" if self.stopped else "")


@dataclass
class Record:
    line: int  # 1-based line (JSONL) or position (JSON array)
    text: str  # the record's JSON text
    hash: str = ""


def _bad(line: int, kind: str, msg: str) -> Record:
    return Record(line, "", f"!{kind} {line}: {msg}")


def _decode_line(raw: bytes, n: int, kind: str) -> Record:
    if b"\x00" in raw:
        return _bad(n, kind, "binary data, not JSON")
    try:
        return Record(n, raw.decode("utf-8-sig").strip())
    except UnicodeDecodeError as exc:
        return _bad(n, kind, f"not UTF-8 text at byte {exc.start}")


def open_dataset(path: Path):
    """A dataset file opened for reading in binary, gunzipped when its first bytes say gzip."""
    if not path.is_file():  # a missing file, a folder or a FIFO (opening it would block): one line
        raise UsageError(f"{path}: no such file (or not a regular file)")
    with path.open("rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gz else path.open("rb")


def read_records(path: str | os.PathLike) -> Iterator[Record]:
    """The records of a JSONL or JSON-array file, in order; a record whose ``hash`` starts with
    ``!`` is a one-line problem instead (too big, binary, not UTF-8)."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"{path}: no such file (or not a regular file)")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise TraceError(f"{path}: larger than the dataset limit of {MAX_FILE_BYTES} bytes")
    with open_dataset(path) as f:
        head = f.read(4096).lstrip()
    container = _container(path, head)
    if container is not None:
        yield from container
        return
    if head.startswith(b"["):
        yield from _read_array(path)
        return
    with open_dataset(path) as f:  # the one bounded line reader (o3viz.trace.bounded)
        for n, raw, problem in read_lines(f, MAX_RECORD_BYTES, Budget(path.name, path.stat().st_size)):
            if problem is not None:
                yield _bad(n, "line", problem)
            elif raw.strip():
                yield _decode_line(raw, n, "line")


def _container(path: Path, head: bytes) -> Iterator[Record] | None:
    """The records of a file that is not JSON lines: an Inspect AI log (``.eval`` zip or ``.json``
    log, one record per sample) or a Parquet file (one per row, read a row group at a time)."""
    if head.startswith(inspect_log.ZIP_MAGIC):
        samples = inspect_log.eval_samples(path)
    elif inspect_log.looks_like_json_log(head):
        samples = inspect_log.json_log_samples(path)
    elif head.startswith(parquet.MAGIC):
        return (Record(n, t) if p is None else _bad(n, "row", p) for n, t, p in parquet.parquet_rows(path))
    else:
        return None
    return (
        _bad(n, "sample", p) if p is not None else _record(n, json.dumps(r, ensure_ascii=False))
        for n, r, p in samples
    )


def _record(n: int, text: str) -> Record:
    if len(text) > MAX_RECORD_BYTES:
        return _bad(n, "sample", f"record larger than the limit of {MAX_RECORD_BYTES} bytes")
    return Record(n, text)


def _read_array(path: Path) -> Iterator[Record]:
    from o3viz.importers.formats import read_input

    if path.stat().st_size > MAX_IMPORT_BYTES:
        raise TraceError(f"{path}: a JSON array over {MAX_IMPORT_BYTES} bytes; convert it to JSONL")
    raw = read_input(path)
    if not isinstance(raw.data, list):
        raise TraceError(f"{path}: not a JSON array or JSONL file")
    for i, rec in enumerate(raw.data, 1):
        yield Record(i, json.dumps(rec, ensure_ascii=False, sort_keys=True))


def count_records(path: str | os.PathLike, *, max_bytes: int | None = None) -> int:
    """Non-empty lines of a JSONL file (records of a JSON array), for a progress bar. With
    ``max_bytes``, a file that expands (gunzipped) past it is refused in one line, so a small
    ``.gz`` cannot cost minutes of counting."""
    path = Path(path)
    with open_dataset(path) as f:
        head = f.read(4096).lstrip()
    if head.startswith(inspect_log.ZIP_MAGIC):
        return inspect_log.count_samples(path)
    if head.startswith(parquet.MAGIC):
        return parquet.count_rows(path)
    if head.startswith(b"[") or inspect_log.looks_like_json_log(head):
        return sum(1 for _ in read_records(path))
    n = seen = 0
    with open_dataset(path) as f:
        for raw in iter(lambda: f.readline(MAX_RECORD_BYTES + 1), b""):
            n += bool(raw.strip())
            seen += len(raw)
            if max_bytes is not None and seen > max_bytes:
                raise TraceError(
                    f"{path.name}: expands to more than {max_bytes:,} bytes (the limit for a dataset "
                    "upload); import it with the CLI (python -m o3viz import) instead"
                )
    return n


def fan_out(rec: Any) -> list[tuple[str, Any]]:
    """``[(part, record)]``: the record itself, or for a record with no text of its own whose
    object fields each hold a solution, one merged record per solution (shared fields such as
    the question and reference are copied in; the part's name becomes its model when it has none).
    """
    if not isinstance(rec, dict) or detect_json_format(rec) or is_dataset(rec):
        return [("", rec)]
    parts = [(k, v) for k, v in rec.items() if isinstance(v, dict) and is_dataset(v)]
    if not parts:
        return [("", rec)]
    shared = {k: v for k, v in rec.items() if not isinstance(v, dict)}
    out = []
    for k, v in parts[:MAX_PARTS]:
        k = k if len(k) <= MAX_PART_CHARS else k[: MAX_PART_CHARS - 1] + "…"  # a key may be 1 MB
        out.append((k, {**shared, **v, **({} if ("model" in v or "model_name" in v) else {"model": k})}))
    return out


def trace_name(line: int, part: str, about: str) -> str:
    """``#12 175b_verification · Janet's ducks lay 16 eggs…``: where it came from and what it is,
    its LaTeX made readable (``$\\overline{BC}$`` → ``B̅C̅``, ``o3viz.text.latex``)."""
    from o3viz.text.latex import readable_latex

    about = " ".join(readable_latex(about[:1000]).split())  # bounded work, whatever the question's size
    about = about if len(about) <= 60 else about[:59] + "…"
    part = part if len(part) <= MAX_PART_CHARS else part[: MAX_PART_CHARS - 1] + "…"
    return f"#{line}" + (f" {part}" if part else "") + f" · {about}"


FATAL = "fatal: "  # an error result that stops the whole import


def error_line(error: str) -> int:
    """The line (or record) number an error names, for sorting; 0 when it names none."""
    parts = error.split(maxsplit=2)
    return int(parts[1].rstrip(":")) if len(parts) > 1 and parts[1].rstrip(":").isdigit() else 0


class _Timeout(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001 - signal handler signature
    raise _Timeout


def _import_one(rec: Any, line: int, opts: ImportOptions, file: str, created: str) -> list[tuple[str, Any]]:
    from o3viz.importers import import_trace

    out = []
    for part, sub in fan_out(rec):
        trace = import_trace(sub, claims=opts.claims, fields=opts.fields())
        src = trace.provenance.source
        src.update({"file": file, "record": line, **({"part": part} if part else {})})
        trace.provenance.created_at = created  # the data's date: the same record gives the same bytes
        if trace.task.id is None:
            trace.task.id = f"{Path(file).stem}:{line}" + (f":{part}" if part else "")
        out.append((part, trace))
    return out


def import_chunk(sink: Sink, records: list[Record], opts: ImportOptions, file: str, created: str) -> list:
    """In a worker: import each record, write its traces through ``sink``; returns per record
    ``(line, payloads, error, source steps)``. Never raises for a bad record."""
    results = []
    use_alarm = threading.current_thread() is threading.main_thread()
    if use_alarm:
        signal.signal(signal.SIGALRM, _alarm)
    for r in records:
        try:
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, RECORD_BUDGET_S)
            rec = loads(r.text, "record", max_nesting=MAX_IMPORT_NESTING)
            if not isinstance(rec, dict):
                raise TraceError(f"a JSON {type(rec).__name__}, not a record object")
            traces = _import_one(rec, r.line, opts, file, created)
            meta = {"source": "import", "dataset": opts.dataset, "record": r.line, "line_hash": r.hash}
            stem = Path(file).stem
            payloads = [
                sink.write_files(
                    t,
                    {
                        **meta,
                        "part": part,
                        "parts": len(traces),
                        "name": trace_name(r.line, part, t.task.question or stem),
                    },
                    durable=False,
                )
                for part, t in traces
            ]
            steps = SourceStepCount()
            for _, t in traces:
                steps.add(t.info.get("source_steps"))
            results.append((r.line, payloads, None, steps))
        except _Timeout:
            results.append((r.line, [], f"took longer than {RECORD_BUDGET_S:.0f} s; skipped", None))
        except Exception as exc:  # noqa: BLE001 - one bad record never stops the others
            if getattr(exc, "fatal", False):  # the sink cannot take more (a full disk): stop
                results.append((r.line, [], FATAL + one_line(exc, 300), None))
                break
            results.append((r.line, [], one_line(exc, 300).replace("(input): ", ""), None))
        finally:
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
    return results
