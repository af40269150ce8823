"""The library a session sees: loading uploaded files (trace files, and importable reasoning
formats) with a one-line error per bad file, the session's view of the persistent trace store
(``StoreLibrary``: runs, uploads and imports enter the store, so they survive a reload and a
server restart). The background jobs that add to it (runs, dataset imports) are in
``o3viz.app.jobs``. No streamlit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from o3viz.errors import O3vizError, one_line
from o3viz.figures._style import clip_label
from o3viz.store.store import Store, content_key
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
    "eval",
    "parquet",
]  # what the upload reads (bare suffixes); the widget takes any file and says in words why it refuses one
SOURCES = ("run", "sample", "upload", "import")
NAME_CHARS = 200  # a name, dataset or model in the Library table (the store may hold 1 MB ones)


@dataclass(eq=False)
class LibraryEntry:
    """One trace available in a session."""

    key: str  # stable id: a hash of the file bytes (or of the run's trace bytes)
    name: str
    source: str  # run | sample | upload | import
    trace: Trace
    file_bytes: int | None = None
    raw: bytes | None = field(default=None, repr=False)  # the uploaded bytes of a trace file


@dataclass
class LoadResult:
    entries: list[LibraryEntry] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # one line each, naming the file


def _import(name: str, data: bytes) -> Trace:
    from o3viz.importers import import_trace  # here, not at the top: Library and Inspect stay light

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
    raw = data if lower.endswith(TRACE_SUFFIXES) else None
    return LibraryEntry(content_key(data), name, source, trace, len(data), raw)


def load_files(files: list[tuple[str, bytes]], *, source: str = "upload") -> LoadResult:
    """Load every file it can; each failure becomes ``"NAME: problem"`` and the rest still load."""
    out = LoadResult()
    for name, data in files:
        try:
            out.entries.append(load_file(name, data, source=source))
        except (O3vizError, ValueError, OSError, UnicodeDecodeError) as exc:
            out.errors.append(f"{name}: {one_line(exc)}")
    return out


STORE_COLUMNS = (
    "key", "name", "dataset", "source", "model", "steps", "tokens", "correct", "verdict",
    "backtracks", "self_checks", "claim_errors", "added_at",
    "first_correct_frac", "convergence_frac", "answer_flips", "tokens_after_correct", "overthinking",
)  # fmt: skip


def _share(v) -> str:
    """A fraction of the reasoning as people read it: ``0.62`` → ``62%``; missing → "—"."""
    return "—" if v is None else f"{v:.0%}"


def display_name(name: str | None, key: str = "") -> str:
    """A stored name as people read it: without the trace-file extension (``a.o3trace.json.gz`` → ``a``)."""
    name = name or key
    for suffix in (".o3trace.json.gz", ".o3trace.json"):
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def store_rows(rows: list[dict]) -> list[dict]:
    """Index rows as the Library table shows them: names without the trace-file extension (capped
    at ``NAME_CHARS``), correctness as ✓/✗/—, "—" for a missing value, the date it was added."""
    from datetime import datetime

    out = []
    for r in rows:
        out.append(
            {
                "name": clip_label(display_name(r["name"], r["key"]), NAME_CHARS),
                "dataset": clip_label(r["dataset"] or "—", NAME_CHARS),
                "model": clip_label(r["model"] or "—", NAME_CHARS),
                "correct": {1: "✓", 0: "✗"}.get(r["correct"], "—"),
                "steps": r["steps"],
                "backtracks": r["backtracks"],
                "claim errors": r["claim_errors"],
                "verdict": r["verdict"] or "—",
                "source": r["source"],
                "added": datetime.fromtimestamp(r["added_at"] or 0).strftime("%Y-%m-%d %H:%M"),
                "self-checks": r["self_checks"],
                "tokens": f"{r['tokens']:,}" if r["tokens"] else "—",  # an import has none: "—", never "None"
                # the running answer (o3viz.analysis.answer_figures); "—" where it was never right
                "first right": _share(r.get("first_correct_frac")),
                "converged": _share(r.get("convergence_frac")),
                "flips": "—" if r.get("answer_flips") is None else f"{int(r['answer_flips']):,}",
                "tokens after right": "—"
                if r.get("tokens_after_correct") is None
                else f"{r['tokens_after_correct']:,}",
                "overthinking": r.get("overthinking") or "—",
            }
        )
    return out


def run_name(trace: Trace, n: int | None = None) -> str:
    """A name for the n-th run of a session, e.g. ``run 2 · gsm8k:12`` (``run · gsm8k:12`` without n)."""
    what = trace.task.id or " ".join(trace.task.question.split())[:32]
    number = "" if n is None else f" {n}"
    return f"run{number} · {what}"


# ---------------------------------------------------------------------- the store, as a session sees it

SHELF = 200  # the newest traces a session's pickers offer (the Library page pages through all)
_ENTRY_COLUMNS = ("key", "name", "source", "dataset", "file_bytes")


class StoredEntry:
    """A trace in the store, as the pages use it: name and source at once, the trace on demand."""

    def __init__(self, store: Store, row: dict) -> None:
        self.store = store
        self.key, self.name, self.source = row["key"], row["name"] or row["key"], row["source"]
        self.dataset, self.file_bytes = row.get("dataset") or "", row.get("file_bytes")

    @property
    def trace(self) -> Trace:
        return self.store.trace(self.key)


class StoreLibrary(Mapping):
    """Every trace in the store by key (``lib[key].trace``); iterating yields the session's
    ``pinned`` traces (samples, uploads, runs, opened traces, in the order given) and then the
    newest ``SHELF`` others, so pickers stay short however large the store is. ``total`` counts
    the whole store."""

    def __init__(self, store: Store, pinned: list[str] | tuple = ()) -> None:
        from o3viz.store.query import Query

        self.store = store
        newest = store.rows(Query(limit=SHELF), _ENTRY_COLUMNS)
        found = store.rows(Query(keys=list(pinned), limit=len(pinned) or 1), _ENTRY_COLUMNS) if pinned else []
        rows = {r["key"]: r for r in found + newest}
        order = [k for k in pinned if k in rows] + [r["key"] for r in newest]
        self._rows = {k: rows[k] for k in dict.fromkeys(order)}

    def __getitem__(self, key: str) -> StoredEntry:
        row = self._rows.get(key)
        if row is None and isinstance(key, str):
            row = self.store.row(key)
            if row is not None:
                self._rows[key] = row
        if row is None:
            raise KeyError(key)
        return StoredEntry(self.store, row)

    def __iter__(self):
        return iter(list(self._rows))

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def total(self) -> int:
        return self.store.count()


def stored_entries(store: Store, keys: list[str]) -> list[StoredEntry]:
    """The entries of ``keys`` that are in the store, in the order given (one query)."""
    from o3viz.store.query import Query

    if not keys:
        return []
    rows = {r["key"]: r for r in store.rows(Query(keys=list(keys), limit=len(keys)), _ENTRY_COLUMNS)}
    return [StoredEntry(store, rows[k]) for k in dict.fromkeys(keys) if k in rows]


def store_entry(store: Store, entry: LibraryEntry, *, dataset: str = "") -> str:
    """Put a loaded entry (upload, import, run) in the store; returns its store key."""
    data = entry.raw if entry.raw is not None and entry.raw[:2] == b"\x1f\x8b" else None
    return store.add(entry.trace, data=data, source=entry.source, name=entry.name, dataset=dataset)
