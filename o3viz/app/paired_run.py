"""A paired run (``o3viz.run.paired_run``) as the app's and the CLI's job: ``StoreSink`` puts its
traces in the library's store, and ``PairedRunJob`` runs it in the background with progress (runs
done of 2N, the task and side, the tokens of the current generation) and Stop. Imports torch:
the pages reach it through ``o3viz.app.running``."""

from __future__ import annotations

from typing import Any

from o3viz.app.jobs import LOAD_LABEL, Job, Progress, Report
from o3viz.run.paired_run import Loader, PairedRunRequest, PairedRunResult, run_pairs
from o3viz.run.paired_settings import recorded_settings
from o3viz.store.query import Query
from o3viz.store.store import Store


class StoreSink:
    """The store as a paired run's sink: which tasks a dataset already holds, the settings a stored
    trace was run with, ``add``, and ``discard`` (a trace whose partner could not be stored)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def tasks_in(self, dataset: str) -> dict[str, str]:
        rows = self.store.select(Query(dataset=[dataset], sort="id", descending=False), ("task", "key"))
        out: dict[str, str] = {}
        for task, key in rows:
            out.setdefault(task, key)  # a repeated task: its first trace, as pairing keeps it
        return out

    def add(self, trace: Any, **meta: Any) -> str:
        return self.store.add(trace, **meta)

    def recorded(self, key: str) -> dict | None:
        return recorded_settings(self.store.trace(key))

    def discard(self, key: str) -> None:
        self.store.delete([key])


class PairedRunJob(Job):
    """``run_pairs(request)`` in a background thread; ``result`` is its ``PairedRunResult``. The
    models load in the job's thread (``load``), so the page shows the status and Stop at once; a
    Stop ends it after the current generation and keeps every finished pair."""

    def __init__(self, request: PairedRunRequest, load: Loader, *, store: Store | None = None) -> None:
        self.request = request
        self.store = store if store is not None else Store()
        self._at = (0, 2 * len(request.tasks), LOAD_LABEL)

        def work(report: Report, should_stop) -> PairedRunResult:
            def on_progress(done: int, total: int, label: str) -> None:
                self._at = (done, total, label)
                report(Progress(done, total, label))

            def on_token(index: int, piece: str, total: int) -> None:
                done, runs, label = self._at
                report(Progress(done, runs, f"{label} · {index + 1} of at most {total} tokens"))

            return run_pairs(
                request,
                load,
                StoreSink(self.store),
                on_progress=on_progress,
                on_token=on_token,
                should_stop=should_stop,
            )

        super().__init__(work, start=Progress(0, 2 * len(request.tasks), LOAD_LABEL))

    @property
    def datasets(self) -> tuple[str, str]:
        return self.request.dataset("A"), self.request.dataset("B")
