"""Repairing the store: ``reindex`` makes the index match the trace files (the files are the
truth), and ``ensure_samples`` puts the sample traces in the store once per change of the folder."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from o3viz.errors import O3vizError
from o3viz.store.index import IndexRow, index_row, search_text
from o3viz.store.labels import rebuild_labels
from o3viz.store.replace import recover
from o3viz.store.store import SUFFIX, Store
from o3viz.trace.io import MAX_FILE_BYTES, parse_trace_bytes


@dataclass
class ReindexReport:
    added: int = 0  # files that had no row
    removed: int = 0  # rows whose file is gone
    kept: int = 0
    errors: list[str] = field(default_factory=list)  # unreadable files, one line each
    labels: int = 0  # labels put back into the table from the label file
    replaces: int = 0  # replaces a killed process left halfway, finished (``o3viz.store.replace``)


def reindex(store: Store, *, full: bool = False, progress=None) -> ReindexReport:
    """Make the index match the files: rows for files without one, no rows for missing files,
    leftover temp files removed. ``full`` rebuilds every row (e.g. after a schema change). First,
    every replace a killed process left halfway is finished from the files (``recover``)."""
    report = ReindexReport()
    report.replaces, report.errors = recover(store)
    with store.guard("reindexing"):
        for tmp in store.files.glob("*/.*.tmp") if store.files.is_dir() else []:
            tmp.unlink(missing_ok=True)
        on_disk = store.stored_keys()
    indexed = {r[0] for r in store.conn.execute("SELECT key FROM traces")}
    report.removed = len(indexed - on_disk)
    stale = sorted(indexed) if full else sorted(indexed - on_disk)
    if stale:
        store.delete_rows(stale)
    todo = sorted(on_disk) if full else sorted(on_disk - indexed)
    report.kept = len(on_disk) - len(todo)
    batch: list[tuple[IndexRow, str]] = []
    for i, key in enumerate(todo):
        try:  # one bad trace or metadata file is reported and skipped; the rest are indexed
            data = store.read_file(key)
            trace = parse_trace_bytes(data)
            row = index_row(trace, key, store.read_meta(key), file_bytes=len(data))
        except O3vizError as exc:
            report.errors.append(f"{key}: {exc}")
            continue
        batch.append((row, search_text(trace)))
        if len(batch) >= 200:
            report.added += store.insert(batch)
            batch = []
        if progress:
            progress(i + 1, len(todo))
    report.added += store.insert(batch) if batch else 0
    report.labels, bad = rebuild_labels(store)
    report.errors += bad
    return report


def ensure_samples(store: Store, folder: str | os.PathLike) -> tuple[list[str], list[str]]:
    """Put the sample traces in the store once (and again when the folder changes). Returns the
    samples' keys in name order and one error line per unreadable sample."""
    folder = Path(folder)
    if not folder.is_dir():
        return [], []
    files = sorted(p for p in folder.iterdir() if p.name.endswith((".o3trace.json", SUFFIX)))
    stamp = [(p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files]
    name = f"samples:{folder.resolve()}"
    with store.guard("reading the index"):
        found = store.conn.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
    known = json.loads(found[0]) if found is not None else {}
    if known.get("stamp") == json.loads(json.dumps(stamp)) and all(
        store.path(k).exists() for k in known["keys"]
    ):
        return known["keys"], []
    keys, errors = {}, []
    for p in reversed(files):  # the last added is listed first: samples read alphabetically
        if p.stat().st_size > MAX_FILE_BYTES:
            errors.append(f"{p.name}: larger than {MAX_FILE_BYTES} bytes")
            continue
        try:
            keys[p.name] = store.add_file(p, source="sample")
        except O3vizError as exc:
            errors.append(f"{p.name}: {exc}")
    ordered = [keys[p.name] for p in files if p.name in keys]
    with store.transaction("noting the samples") as conn:
        value = json.dumps({"stamp": stamp, "keys": ordered})
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (name, value))
    return ordered, errors[::-1]
