"""The trace library behind the app's home page: loading sample folders and uploaded files (trace
files, and importable reasoning formats when ``o3viz.importers`` is present) with a one-line
error per bad file, and the rows of the library table. No streamlit here.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from o3viz.analysis.summary import summarize
from o3viz.errors import O3vizError
from o3viz.paths import samples_dir
from o3viz.trace import Trace
from o3viz.trace.io import MAX_FILE_BYTES, load_trace
from o3viz.verify.trace_checks import ensure_claim_checks

TRACE_SUFFIXES = (".o3trace.json", ".o3trace.json.gz")
IMPORT_SUFFIXES = (".txt", ".json", ".jsonl", ".md")
UPLOAD_TYPES = [
    "json",
    "gz",
    "txt",
    "jsonl",
    "md",
]  # what the upload widget accepts (streamlit wants bare suffixes)
SOURCES = ("run", "sample", "upload", "import")


@dataclass(eq=False)
class LibraryEntry:
    """One trace available in a session."""

    key: str  # stable id: a hash of the file bytes (or of the run's trace bytes)
    name: str
    source: str  # run | sample | upload | import
    trace: Trace
    file_bytes: int | None = None


@dataclass
class LoadResult:
    entries: list[LibraryEntry] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # one line each, naming the file


def bytes_key(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _import(name: str, data: bytes) -> Trace:
    try:
        from o3viz.importers import import_trace
    except ImportError:
        raise O3vizError("importing reasoning formats is not available in this installation") from None
    return import_trace(data)


def load_file(name: str, data: bytes, *, source: str = "upload") -> LibraryEntry:
    """A trace file or, for other suffixes, an imported reasoning trace. Raises ``O3vizError``."""
    lower = name.lower()
    if len(data) > MAX_FILE_BYTES:
        raise O3vizError(f"{len(data)} bytes exceeds the limit of {MAX_FILE_BYTES} bytes")
    if lower.endswith(TRACE_SUFFIXES):
        trace = load_trace(data)
        ensure_claim_checks(trace)  # every trace with text shows its claims, however it was made
    elif lower.endswith(IMPORT_SUFFIXES):
        trace = _import(name, data)
        source = "import" if source == "upload" else source
    else:
        raise O3vizError(f"unknown file type; use {', '.join(TRACE_SUFFIXES + IMPORT_SUFFIXES)}")
    return LibraryEntry(bytes_key(data), name, source, trace, len(data))


def load_upload_trace(name: str, data: bytes) -> Trace:
    """The trace an upload holds (``load_file``), saying what it does: the app worker's task."""
    from o3viz.app.worker import report

    report(f"reading {name} ({len(data) / 1e6:.1f} MB)")
    if name.lower().endswith(IMPORT_SUFFIXES) and not name.lower().endswith(TRACE_SUFFIXES):
        report(f"importing {name}: splitting steps, checking claims")
    return load_file(name, data).trace


def load_upload_in_worker(
    name: str, data: bytes, *, budget_s: float | None = None, on_progress=None
) -> LoadResult:
    """``load_files`` for one upload, run in a worker process with a time budget (o3viz.app.worker),
    so a pathological file cannot stall the server. ``on_progress(elapsed_s, budget_s, stage)``."""
    from o3viz.app.worker import run_in_worker, upload_budget_s

    if len(data) > MAX_FILE_BYTES:
        return LoadResult(errors=[f"{name}: {len(data)} bytes exceeds the limit of {MAX_FILE_BYTES} bytes"])
    budget = budget_s if budget_s is not None else upload_budget_s()
    res = run_in_worker(
        "load_upload",
        name,
        data=data,
        budget_s=budget,
        on_progress=on_progress,
        label="reading this file",
        hint="the app kept serving; try a smaller file, or raise O3VIZ_UPLOAD_BUDGET_S",
    )
    if res.status != "done":
        return LoadResult(errors=[f"{name}: {res.error}"])
    lower = name.lower()
    source = "import" if lower.endswith(IMPORT_SUFFIXES) and not lower.endswith(TRACE_SUFFIXES) else "upload"
    return LoadResult(entries=[LibraryEntry(bytes_key(data), name, source, res.value, len(data))])


def load_files(files: list[tuple[str, bytes]], *, source: str = "upload") -> LoadResult:
    """Load every file it can; each failure becomes ``"NAME: problem"`` and the rest still load."""
    out = LoadResult()
    for name, data in files:
        try:
            out.entries.append(load_file(name, data, source=source))
        except (O3vizError, ValueError, OSError, UnicodeDecodeError) as exc:
            out.errors.append(f"{name}: {_one_line(exc)}")
    return out


def load_samples(folder: str | os.PathLike | None = None) -> LoadResult:
    """Every trace file in the sample folder (none if the folder does not exist)."""
    folder = Path(folder) if folder is not None else samples_dir()
    if not folder.is_dir():
        return LoadResult()
    files = sorted(p for p in folder.iterdir() if p.name.endswith(TRACE_SUFFIXES))
    out = LoadResult()
    for p in files:
        try:
            out.entries.append(
                LibraryEntry(bytes_key(p.read_bytes()), p.name, "sample", load_trace(p), p.stat().st_size)
            )
        except (O3vizError, OSError) as exc:
            out.errors.append(f"{p.name}: {_one_line(exc)}")
    return out


def library_rows(entries: list[LibraryEntry]) -> list[dict]:
    """One table row per entry: name, source, model, task, tokens, steps, rounds, final verdict,
    DAA mode, compression ratio and date."""
    rows = []
    for e in entries:
        s = summarize(e.trace, file_bytes=e.file_bytes)
        rows.append(
            {
                "name": e.name,
                "source": e.source,
                "model": s.model,
                "task": s.task,
                "tokens": s.tokens,
                "steps": s.steps,
                "rounds": s.rounds,
                "final verdict": s.final_verdict or "—",
                "DAA": s.daa_mode,
                "compression": None if s.compression_ratio is None else round(s.compression_ratio, 3),
                "date": (s.created_at or "")[:19].replace("T", " "),
            }
        )
    return rows


def run_name(trace: Trace, n: int) -> str:
    """A name for the n-th run of a session, e.g. ``run 2 · gsm8k:12``."""
    what = trace.task.id or " ".join(trace.task.question.split())[:32]
    return f"run {n} · {what}"


class RunJob:
    """A run in a background thread, so the app can poll progress and stop it between tokens.

    ``fn(on_token=..., should_stop=...)`` must return a ``Trace``; tokens stream into ``pieces``.
    """

    def __init__(self, fn, total: int) -> None:
        import threading

        self.total, self.pieces = total, []
        self.trace: Trace | None = None
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, args=(fn,), daemon=True)
        self._thread.start()

    def _on_token(self, index: int, text_piece: str, total: int) -> None:
        self.pieces.append(text_piece)
        self.total = total

    def _work(self, fn) -> None:
        try:
            self.trace = fn(on_token=self._on_token, should_stop=self._stop.is_set)
        except Exception as exc:  # reported on the page as one line; the thread must never die silently
            self.error = f"{type(exc).__name__}: {_one_line(exc)}"

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def wait(self, timeout: float) -> None:
        self._thread.join(timeout)
