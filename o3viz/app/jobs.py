"""Background jobs that add to the store: a run in a thread (``RunJob``: progress per token, stop
between tokens) and a whole-dataset import in the app worker process (``ImportJob``). No streamlit."""

from __future__ import annotations

import json
import os
from pathlib import Path

from o3viz.app.library import _one_line, run_name
from o3viz.store.store import Store
from o3viz.trace import Trace


class RunJob:
    """A run in a background thread, so the app can poll progress and stop it between tokens.

    ``fn(on_token=..., should_stop=...)`` must return a ``Trace``; tokens stream into ``pieces``.
    The finished trace enters the store (``store``, default: the one at ``home_dir()``) from the
    job's own thread, so a run survives its browser tab being closed or reloaded.
    """

    def __init__(self, fn, total: int, store: Store | None = None) -> None:
        import threading

        self.total, self.pieces = total, []
        self.trace: Trace | None = None
        self.error: str | None = None
        self.key: str | None = None  # the run's key in the store, once it is there
        self.store = store if store is not None else Store()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, args=(fn,), daemon=True)
        self._thread.start()

    def _on_token(self, index: int, text_piece: str, total: int) -> None:
        self.pieces.append(text_piece)
        self.total = total

    def _work(self, fn) -> None:
        try:
            self.trace = fn(on_token=self._on_token, should_stop=self._stop.is_set)
            self.key = self.store.add(
                self.trace, source="run", name=run_name(self.trace, 0).replace("run 0", "run")
            )
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
    line when it failed. A stopped import leaves whole files; the next import completes them."""

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

    @property
    def progress(self) -> dict:
        """``done``, ``total`` records, ``traces`` added and ``bad`` records so far."""
        stage = self.job.stage
        try:
            found = json.loads(stage) if stage.startswith("{") else {}
        except ValueError:
            found = {}
        return {"done": 0, "total": 0, "traces": 0, "bad": 0, **found}

    def poll(self, timeout: float = 0.0) -> bool:
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
        self.job.cancel()
