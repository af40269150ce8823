"""Running a whole-dataset import over worker processes: records go out in chunks, rows come back
and are committed in batches; progress is reported as records finish; the import can be stopped,
and a worker that stops answering is killed (see ``o3viz.importers.bulk`` for the records).

>>> from o3viz.store.store import Store                                   # doctest: +SKIP
>>> import_dataset("solutions.jsonl", Store(), ImportOptions("gsm8k"))  # doctest: +SKIP
ImportReport(dataset='gsm8k', records=1319, traces=5276, ...)
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from o3viz.importers.bulk import (
    CHUNK,
    FATAL,
    STALL_S,
    ImportOptions,
    ImportReport,
    Record,
    Sink,
    StartMethod,
    count_records,
    error_line,
    import_chunk,
    read_records,
)

COMMIT_EVERY = 256  # rows per index transaction
Progress = Callable[[int, int, ImportReport], None]


def _line_hash(fingerprint: str, text: str) -> str:
    import hashlib

    return hashlib.sha256(f"{fingerprint}\n{text}".encode()).hexdigest()[:16]


class _Committer:
    def __init__(self, sink: Sink, report: ImportReport, label: str) -> None:
        self.sink, self.report, self.label = sink, report, label
        self.pending: list = []
        self.done = 0

    def take(self, results: list) -> None:
        for line, payloads, err, steps in results:
            self.done += 1
            if steps is not None:
                self.report.steps.merge(steps)
            if err is not None and err.startswith(FATAL):
                self.report.stopped = err[len(FATAL) :]
            elif err is not None:
                self.report.errors.append(f"{self.label} {line}: {err}")
            self.pending.extend(payloads)
        if len(self.pending) >= COMMIT_EVERY:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        added = self.sink.insert(self.pending, drop_duplicates=True)
        self.report.traces += added
        self.report.duplicates += len(self.pending) - added
        if len(self.report.keys) < 100_000:
            keys = [p[0].key for p in self.pending]
            stored = getattr(self.sink, "stored_key", None)
            if added < len(self.pending) and stored is not None:  # some were there already, by content
                keys = [stored(p[0]) or p[0].key for p in self.pending]
            self.report.keys.extend(keys)
        self.pending = []


def _chunks(
    path: Path, opts: ImportOptions, commit: _Committer, only: set[int] | None
) -> Iterator[list[Record]]:
    """Chunks of new records; bad and already-stored records are counted on the way."""
    fp = opts.fingerprint()
    report = commit.report
    buf: list[Record] = []

    def flush() -> list[Record]:
        known = commit.sink.known_lines([r.hash for r in buf])
        report.duplicates += sum(r.hash in known for r in buf)
        commit.done += sum(r.hash in known for r in buf)
        return [r for r in buf if r.hash not in known]

    for r in read_records(path):
        if only is not None and r.line not in only:
            continue
        report.records += 1
        if r.hash.startswith("!"):
            report.errors.append(r.hash[1:])
            commit.done += 1
            continue
        r.hash = _line_hash(fp, r.text)
        buf.append(r)
        if len(buf) >= CHUNK:
            fresh, buf = flush(), []
            if fresh:
                yield fresh
    if buf:
        fresh = flush()
        if fresh:
            yield fresh


def import_dataset(
    path: str | os.PathLike,
    sink: Sink,
    opts: ImportOptions,
    *,
    workers: int = 2,
    only: set[int] | None = None,
    progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
    start_method: StartMethod = "fork",
    stall_s: float = STALL_S,
    file_name: str | None = None,
) -> ImportReport:
    """Import every record of ``path`` (or the lines in ``only``) into ``sink``. ``workers=0``
    imports in this process. Bad records are reported in ``report.errors`` and skipped.
    ``file_name`` is the name traces carry (an upload's own name rather than its staged copy's)."""
    path = Path(path)
    t0 = time.perf_counter()
    report = ImportReport(opts.dataset)
    total = len(only) if only is not None else (count_records(path) if progress else 0)
    with path.open("rb") as f:
        label = "record" if f.read(4096).lstrip().startswith(b"[") else "line"
    created = datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat(timespec="seconds")
    commit = _Committer(sink, report, label)
    chunks = _chunks(path, opts, commit, only)
    args = (opts, file_name or path.name, created)

    def tick() -> None:
        if progress:
            progress(commit.done, total, report)

    if workers <= 0:
        for chunk in chunks:
            if should_stop and should_stop():
                report.stopped = "stopped by the user"
            if report.stopped:
                break
            commit.take(import_chunk(sink, chunk, *args))
            tick()
    else:
        _run_pool(chunks, sink, args, commit, report, workers, start_method, stall_s, should_stop, tick)
    commit.flush()
    report.errors.sort(key=error_line)
    report.seconds = time.perf_counter() - t0
    if progress:
        progress(total, total, report)
    return report


def _run_pool(chunks, sink, args, commit, report, workers, start_method, stall_s, should_stop, tick) -> None:
    ctx = mp.get_context(start_method)
    results: queue.Queue = queue.Queue()
    pool = ctx.Pool(workers)
    in_flight = 0
    try:
        exhausted = False
        while True:
            while not exhausted and in_flight < 2 * workers:
                chunk = next(chunks, None)
                if chunk is None:
                    exhausted = True
                    break
                pool.apply_async(
                    import_chunk, (sink, chunk, *args), callback=results.put, error_callback=results.put
                )
                in_flight += 1
            if in_flight == 0:
                return
            waited = 0.0
            got = None
            while got is None:
                if should_stop and should_stop():
                    report.stopped = "stopped by the user"
                    return
                try:
                    got = results.get(timeout=0.2)
                except queue.Empty:
                    waited += 0.2
                    if waited >= stall_s:
                        report.stopped = f"a worker stopped answering for {stall_s:.0f} s; the import stopped"
                        return
            in_flight -= 1
            if isinstance(got, BaseException):  # a worker died in a way import_chunk could not catch
                report.errors.append(f"a chunk of records failed ({type(got).__name__}: {got})")
            else:
                commit.take(got)
            tick()
            if report.stopped:
                return
    except BaseException:
        report.stopped = report.stopped or "interrupted"
        raise
    finally:
        if report.stopped:
            pool.terminate()
        else:
            pool.close()
        pool.join()
