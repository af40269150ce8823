"""Background jobs for the pages, one way: start, progress as ``Progress`` data, Stop, and result.
No streamlit.

- ``Job``: work in a background thread. ``work(report, should_stop)`` calls
  ``report(Progress(done, total, label))`` as it goes, checks ``should_stop()`` between units of
  work, and returns the result.
- ``TraceJob``: a ``Job`` whose result is a trace. The trace enters the store exactly once, from
  the job's own thread (so it survives its browser tab being closed or reloaded), under the name
  the page shows.
- ``RunJob``: a model run (``o3viz.execute``'s ``on_token`` / ``should_stop``); the generated text
  streams into ``pieces``.
- ``BranchJob``: a branch of a trace (edit and continue, resample), stored linked to its parent.
- ``ImportJob``: a whole-dataset import in the app worker process, with the same interface
  (``progress``, ``stop``, ``stopped``, ``wait``, ``result``, ``error``).

The pages follow any of them with ``pages/common/jobs.py``.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from o3viz.analysis.provenance import limit_line
from o3viz.app.library import run_name
from o3viz.errors import one_line
from o3viz.store.store import Store
from o3viz.trace import Trace


@dataclass(frozen=True)
class Progress:
    """How far a job is: ``done`` of ``total`` units (tokens, steps, records; ``total`` 0 when
    unknown), and what it is doing, for people."""

    done: int
    total: int
    label: str = ""

    @property
    def fraction(self) -> float:
        """0..1 for a progress bar (0 while the total is unknown)."""
        return min(self.done / self.total, 1.0) if self.total > 0 else 0.0


class Report(Protocol):
    def __call__(self, progress: Progress) -> None: ...


class Work(Protocol):
    def __call__(self, report: Report, should_stop: Callable[[], bool]) -> Any: ...


class Job:
    """``work`` in a background thread, so a page can poll ``progress`` and ``stop`` it. Once it
    ended, ``result`` is what ``finish`` made of the work's return value, or ``error`` is one line.
    Subclasses set their own fields before calling ``Job.__init__``: the thread starts there."""

    def __init__(self, work: Work, *, start: Progress | None = None) -> None:
        self.progress = start or Progress(0, 0, "starting")
        self.started = time.monotonic()  # the page shows the seconds since, so a slow phase still ticks
        self.result: Any = None
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(work,), daemon=True)
        self._thread.start()

    def _report(self, progress: Progress) -> None:
        self.progress = progress  # one reference swap: a reader always sees one whole Progress

    def _run(self, work: Work) -> None:
        try:
            self.result = self.finish(work(self._report, self._stop.is_set))
        except Exception as exc:  # reported on the page as one line; the thread must never die silently
            self.error = f"{type(exc).__name__}: {one_line(exc)}"

    def finish(self, value: Any) -> Any:
        """Runs in the job's thread once the work returned; its return value becomes ``result``."""
        return value

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s; True once the job ended (``result`` or ``error`` is set)."""
        self._thread.join(timeout)
        return not self._thread.is_alive()


TraceName = Callable[[Trace, bool], str]  # (the trace, whether it was stopped early) -> its name


class TraceJob(Job):
    """A job whose work returns a ``Trace``. The trace enters ``store`` (default: the one at
    ``home_dir()``) once, with ``source``, under ``name(trace, stopped)``: the name the page shows
    (``self.name``; ``self.key`` is its store key). A trace that ``keep`` refuses is not stored
    (an analysis that found nothing). With ``replaces`` (the key of the stored trace the work
    changed a copy of: importance added), the trace takes that one's place instead
    (``o3viz.store.replace.replace_trace``: its dataset, record, name, tags, labels and branches),
    and ``self.name`` is the name it keeps; a sample's copy is added beside it."""

    def __init__(
        self,
        work: Work,
        *,
        name: TraceName,
        source: str = "run",
        store: Store | None = None,
        keep: Callable[[Trace], bool] | None = None,
        start: Progress | None = None,
        replaces: str | None = None,
    ) -> None:
        self.store = store if store is not None else Store()
        self.key: str | None = None
        self.name: str | None = None
        self._name, self._source, self._keep, self._replaces = name, source, keep, replaces
        super().__init__(work, start=start)

    def finish(self, value: Trace) -> Trace:
        if self._keep is not None and not self._keep(value):
            return value
        self.name = self._name(value, self.stopped)
        row = self.store.row(self._replaces) if self._replaces is not None else None
        # a sample stays as shipped (``ensure_samples`` would put it back beside its copy)
        if row is None or row["source"] == "sample":
            self.key = self.store.add(value, source=self._source, name=self.name)
            return value
        from o3viz.store.replace import replace_trace

        self.key = replace_trace(self.store, self._replaces, value)
        self.name = self.store.read_meta(self.key).get("name") or self.name
        return value

    @property
    def trace(self) -> Trace | None:
        return self.result


class RunJob(TraceJob):
    """A model run: ``fn(on_token=..., should_stop=...)`` (``o3viz.execute``'s callbacks) returns
    the trace. Each generated piece of text goes to ``pieces``; progress counts the tokens against
    ``total`` (the token limit), which the run may update. The trace is stored as ``name`` says
    (default ``run · TASK``).

    With ``load``, the model loads in the job's own thread first, so the page shows a status and a
    Stop from the click on: ``load()`` returns what ``fn`` takes first (``fn(loaded, on_token=...,
    should_stop=...)``). The label says each phase: loading the model, reading the prompt until
    the first token, the tokens, then building the trace. A Stop before the first token ends the
    job with no trace (``result`` None, nothing stored)."""

    def __init__(
        self,
        fn: Callable[..., Trace],
        total: int,
        *,
        name: TraceName | None = None,
        store: Store | None = None,
        load: Callable[[], Any] | None = None,
    ) -> None:
        self.pieces: list[str] = []

        def work(report: Report, should_stop: Callable[[], bool]) -> Trace | None:
            def on_token(index: int, text_piece: str, total: int) -> None:
                self.pieces.append(text_piece)
                report(token_progress(len(self.pieces), index, total))

            args = ()
            if load is not None:
                args = (load(),)
                if should_stop():
                    return None
                report(Progress(0, total, PREFILL_LABEL))
            return fn(*args, on_token=on_token, should_stop=should_stop)

        super().__init__(
            work,
            name=name or (lambda trace, stopped: run_name(trace)),
            store=store,
            start=Progress(0, total, LOAD_LABEL if load is not None else PREFILL_LABEL),
        )

    def finish(self, value: Trace | None) -> Trace | None:
        return None if value is None else super().finish(value)

    @property
    def text(self) -> str:
        return "".join(self.pieces)


class BranchJob(TraceJob):
    """A branch made in the background (``o3viz.branch``: edit and continue, resample):
    ``work(report, should_stop)`` returns the branch, which enters the store once, linked to its
    parent (``o3viz.branch.add_branch``); ``key`` is its store key."""

    def finish(self, value: Trace | None) -> Trace | None:
        if value is None or value.parent is None:
            return value
        from o3viz.branch.links import add_branch, label_of

        self.name = label_of(value) + (" (stopped early)" if self.stopped else "")
        self.key = add_branch(self.store, value)
        return value


LOAD_LABEL = "loading the model…"
PREFILL_LABEL = "reading the prompt (prefill) · waiting for the first token…"


def token_progress(n: int, index: int, total: int) -> Progress:
    """Progress while tokens stream: ``n`` so far (all rounds), token ``index`` of this round, of at
    most ``total``; at the limit the label says so, and that the trace is being built (verification, attention).

    >>> token_progress(3, 2, 16).label
    '3 tokens (of at most 16)'
    >>> token_progress(16, 15, 16).label
    '16 tokens · stopped at the limit (16 tokens) · building the trace…'
    """
    label = f"{n} token{'s' if n != 1 else ''}"
    if total > 0 and index + 1 >= total:
        label += f" · {limit_line(total)} · building the trace…"
    elif total > 0:
        label += f" (of at most {total})"
    return Progress(n, total, label)


IMPORT_BUDGET_S = 4 * 3600.0  # a whole dataset; the user can stop it at any time


def import_dataset_task(path: str, root: str, options: dict, workers: int, file_name: str) -> dict:
    """The app worker's task (``o3viz.app.worker``): import a dataset file into the store at
    ``root`` in worker processes, reporting progress as JSON stages; returns the report as JSON."""
    from dataclasses import asdict

    from o3viz.app.worker import report
    from o3viz.importers.bulk import ImportOptions
    from o3viz.importers.parallel import import_dataset

    def progress(done: int, total: int, rep) -> None:
        report(json.dumps({"done": done, "total": total, "traces": rep.traces, "bad": len(rep.errors)}))

    rep = import_dataset(
        path, Store(root), ImportOptions(**options), workers=workers, progress=progress, file_name=file_name
    )
    out = asdict(rep)
    out["errors"], out["keys"] = rep.errors[:1000], rep.keys[:20_000]
    out["summary"] = rep.summary()
    return out


class ImportJob:
    """A whole-dataset import in the app worker (a separate process, itself using worker
    processes for the records), so the server stays responsive; ``stop`` kills it and its
    workers. ``result`` is the report (a dict, ``import_dataset_task``) once it ends, ``error`` a
    line when it failed or was stopped. A stopped import leaves whole files; the next import
    completes them."""

    def __init__(
        self,
        path: str | os.PathLike,
        store: Store,
        options,
        *,
        workers: int = 2,
        file_name: str | None = None,
    ) -> None:
        from dataclasses import asdict

        from o3viz.app.worker import WorkerJob

        self.path = Path(path)
        self.job = WorkerJob(
            "import_dataset",
            str(self.path),
            str(store.root),
            asdict(options),
            workers,
            file_name or self.path.name,
            budget_s=IMPORT_BUDGET_S,
            label="the dataset import",
        )
        self.result: dict | None = None
        self.error: str | None = None
        self.stopped = False

    @property
    def progress(self) -> Progress:
        """Records done of the total; the label adds the traces added and the bad records."""
        stage = self.job.stage
        try:
            found = json.loads(stage) if stage.startswith("{") else {}
        except ValueError:
            found = {}
        if not isinstance(found, dict) or not found:
            return Progress(0, 0, "starting the import…")
        done, total = int(found.get("done", 0)), int(found.get("total", 0))
        label = (
            f"{done:,} / {total:,} records · {found.get('traces', 0):,} traces · {found.get('bad', 0)} bad"
        )
        return Progress(done, total, label)

    def wait(self, timeout: float = 0.0) -> bool:
        """True once the import ended (``result`` or ``error`` is set)."""
        res = self.job.wait(timeout)
        if res is None:
            return False
        if res.status == "done":
            self.result = res.value
        else:
            self.error = res.error
        return True

    def stop(self) -> None:
        self.stopped = True
        self.job.cancel()
