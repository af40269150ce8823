"""A stored dataset's running answers (``run_dataset``): every trace of the dataset through
``o3viz.answers.run.add_answers``, resumable, with progress in the dataset's order, and what
happened to each in an ``AnswersReport`` (done, redone with other settings, skipped, failed).

Each changed trace is saved through ``o3viz.store.replace.replace_trace`` as soon as it is done, so
labels and branch links follow it and a stopped run loses nothing already stored. A save mostly
waits on the disk (the replace's intent, the copy's files and metadata are each fsynced, about 5
syncs a trace), so up to ``SAVERS`` saves run at once on threads while this thread reads and
answers the next traces; the probe itself stays on this thread. At most ``WINDOW`` answered
traces wait for their saves, which bounds the memory held. A Ctrl-C stops taking traces, lets the
saves already started finish, drops those not started, and reports it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from o3viz.answers.run import AnswersRequest, add_answers, answers_due
from o3viz.errors import O3vizError, UsageError

__all__ = ["MAX_TRACES", "SAVERS", "WINDOW", "AnswersReport", "run_dataset"]

MAX_TRACES = 100_000  # traces of one dataset run
SAVERS = 8  # saves at once: they overlap their waits on the disk (a 2-core machine gains ~2x)
WINDOW = 32  # traces answered whose saves are not yet reported
_NEW = (
    "--redo",
    "not probed yet",
    "no stated answers yet",
)  # reasons a trace is due that name no settings change

Progress = Callable[[int, int, str, str], None]  # (done, total, key, what happened)


@dataclass
class AnswersReport:
    dataset: str
    total: int = 0
    changed: int = 0
    skipped: int = 0  # already held the record
    failed: list[str] = field(default_factory=list)  # "KEY: problem"
    stopped: bool = False  # interrupted (Ctrl-C): what was done is stored
    keys: list[str] = field(default_factory=list)  # every trace's key after the run, in order

    def summary(self) -> str:
        done = f"{self.changed} trace(s) of {self.dataset!r} given their running answer"
        done += f", {self.skipped} already had it, {len(self.failed)} failed"
        if self.failed:
            done += " (nothing stored for them; run it again to redo exactly those)"
        return done + ("; stopped early, run it again to go on" if self.stopped else "")


@dataclass
class _Entry:
    """One trace on its way to the report: answered here, its save (if any) on a thread."""

    key: str
    what: str  # done, redone: WHY, skipped, failed
    saving: Future | None = None  # replace_trace's new key
    failure: str | None = None


def _answer(store: Any, key: str, request: AnswersRequest, probe: Any, save: Callable) -> _Entry:
    """Read trace ``key``, put its running answer on it, and hand its save to ``save``."""
    try:
        trace = store.editable_trace(key)  # changed below: never the process's shared copy
        why = "--redo" if request.redo else answers_due(trace, probe, request.every)
        if why is None or not add_answers(trace, probe, request.every, redo=request.redo):
            return _Entry(key, "skipped")
        return _Entry(key, "done" if why in _NEW else f"redone: {why}", save(key, trace))
    except O3vizError as exc:  # one bad trace does not stop the run: it is named and left
        return _Entry(key, "failed", failure=f"{key}: {exc}")


def _settle(e: _Entry, report: AnswersReport) -> None:
    """Count ``e`` once its save (if any) has ended; a save not started by a Ctrl-C counts as not done."""
    if e.saving is not None:
        if e.saving.cancelled():
            e.what = "not saved (stopped)"
            report.keys.append(e.key)
            return
        try:
            e.key = e.saving.result()
        except O3vizError as exc:
            e.what, e.failure = "failed", f"{e.key}: {exc}"
    if e.failure is not None:
        report.failed.append(e.failure)
    elif e.what == "skipped":
        report.skipped += 1
    else:
        report.changed += 1
    report.keys.append(e.key)


def _drain(queue: deque[_Entry], report: AnswersReport, on_progress: Progress | None, keep: int) -> None:
    """Report the traces at the head of ``queue`` whose saves have ended, in order, waiting for
    them while more than ``keep`` are queued."""
    while queue and (len(queue) > keep or queue[0].saving is None or queue[0].saving.done()):
        e = queue[0]
        if e.saving is not None and not e.saving.cancelled():
            e.saving.exception()  # waits for the save; its error is read in _settle
        queue.popleft()
        _settle(e, report)
        if on_progress is not None:
            on_progress(len(report.keys), report.total, e.key, e.what)


def run_dataset(
    store: Any, dataset: str, request: AnswersRequest, on_progress: Progress | None = None
) -> AnswersReport:
    """Every trace of ``dataset`` in ``store`` gets its running answer, each saved as soon as it is
    done (``replace_trace``). A Ctrl-C stops between traces and reports it."""
    from o3viz.store.query import Query
    from o3viz.store.replace import branch_parents, replace_trace

    request.validate()
    probe = request.make_probe()
    keys = [r[0] for r in store.select(Query(dataset=[dataset]), ("key",), max_rows=MAX_TRACES)]
    if not keys:
        raise UsageError(f"no traces in dataset {dataset!r} (`o3viz library list` shows the datasets)")
    report = AnswersReport(dataset, total=len(keys))
    branches = branch_parents(store)  # each save reads and updates its own trace's entries only
    queue: deque[_Entry] = deque()
    with ThreadPoolExecutor(SAVERS, thread_name_prefix="o3viz-answers-save") as pool:

        def save(key: str, trace: Any) -> Future:
            return pool.submit(replace_trace, store, key, trace, branches=branches)

        try:
            for key in keys:
                queue.append(_answer(store, key, request, probe, save))
                _drain(queue, report, on_progress, WINDOW)
        except KeyboardInterrupt:
            report.stopped = True
            for e in queue:
                if e.saving is not None:
                    e.saving.cancel()  # not started: not saved; started ones finish (crash-safe anyway)
        _drain(queue, report, on_progress, 0)
    return report
