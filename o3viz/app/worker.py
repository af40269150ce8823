"""Slow work for the app in a separate process, with a time budget and a cancel button.

An upload's import, a trace load or an analysis can take long on hostile input (a claim such as
``((9^400)^400)^400 = 5`` once held the interpreter lock for two minutes). Run in the Streamlit
server's process, that blocks every other session. ``WorkerJob`` runs one named task in a fresh
``python -m o3viz.app.worker`` process instead, so the server only waits on a pipe:

>>> job = WorkerJob("import_trace", data=b"2 + 3 = 5", budget_s=30)  # doctest: +SKIP
>>> while (res := job.wait(0.2)) is None:                             # doctest: +SKIP
...     show(job.elapsed_s / job.budget_s, job.stage)
>>> res.status, res.value                # "done", a Trace           # doctest: +SKIP

- Tasks are named (``TASKS``, ``register_task``): a name maps to an ``o3viz`` function; the
  arguments are plain JSON data plus one optional ``data`` bytes payload. Nothing is pickled.
- An upload (``take_upload``) is stored into the trace store by the worker itself, which answers
  with the row's key only: the server never parses what the worker already parsed.
- A task that returns a ``Trace`` sends back the trace file's bytes, and the parent reads them with
  ``load_trace``: what the worker made passes the same checks as any upload, so the app never
  holds a trace that ``load`` would refuse. Other results travel as JSON.
- The budget is wall-clock: past it, the process group is killed and the result says so in one
  line (``status="timeout"``). ``cancel()`` (or leaving the ``with`` block, or the page being
  rerun) kills it too. Its memory is capped (``memory_mb``, address space).
- Progress: ``stage`` is the worker's last message ("reading 2.1 MB", "importing", ...) and
  ``elapsed_s`` / ``budget_s`` give a bar.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Literal

from o3viz.errors import O3vizError, UsageError, one_line

WorkerStatus = Literal["done", "failed", "timeout", "cancelled"]
DEFAULT_BUDGET_S = 60.0
_RESULT_CAP = 80 << 20  # bytes of result accepted back (a trace file is at most 64 MiB)
_STDERR_CAP = 16 << 10

# task name -> "module:function"; every target lives in o3viz.
TASKS: dict[str, str] = {
    "take_upload": "o3viz.app.uploads:take_upload",  # stores the trace itself: the row comes back
    "import_trace": "o3viz.importers:import_trace",
    "import_dataset": "o3viz.app.jobs:import_dataset_task",  # a whole dataset into the store
    "sleep": "o3viz.testing.slow:hold_interpreter",  # holds the GIL: what a slow checker does
}


def upload_budget_s() -> float:
    """Seconds an upload may take in the app: ``O3VIZ_UPLOAD_BUDGET_S``, default 60."""
    text = os.environ.get("O3VIZ_UPLOAD_BUDGET_S", "")
    try:
        value = float(text) if text else DEFAULT_BUDGET_S
    except ValueError:
        raise UsageError(f"O3VIZ_UPLOAD_BUDGET_S: expected seconds, not {text!r}") from None
    return value if value > 0 else DEFAULT_BUDGET_S


def register_task(name: str, target: str) -> None:
    """Add a task: ``target`` is ``"o3viz.module:function"``; its arguments must be JSON data."""
    if not target.startswith("o3viz.") or ":" not in target:
        raise UsageError(f"worker task {name}: target must be 'o3viz.module:function', not {target!r}")
    TASKS[name] = target


@dataclass
class WorkerResult:
    """How a worker task ended. ``value`` is a Trace for trace tasks, else the task's JSON value."""

    status: WorkerStatus
    value: Any = None
    error: str = ""  # one line for the user when status is not "done"
    elapsed_s: float = 0.0
    detail: str = ""  # the worker's stderr tail, for an expander


class WorkerJob:
    """One task running in its own process; poll it with ``wait`` and stop it with ``cancel``."""

    def __init__(
        self,
        task: str,
        *args: Any,
        data: bytes = b"",
        budget_s: float = DEFAULT_BUDGET_S,
        memory_mb: int = 4096,
        label: str | None = None,
        hint: str = "",
    ) -> None:
        if task not in TASKS:
            raise UsageError(f"worker: unknown task {task!r}; known: {', '.join(TASKS)}")
        self.task, self.budget_s = task, float(budget_s)
        self.label, self.hint = label or task, hint  # for messages: "reading this upload", what to try
        self.stage = "starting the worker"
        self.result: WorkerResult | None = None
        self._start = time.monotonic()
        header = json.dumps({"task": task, "args": list(args), "data": len(data), "memory_mb": memory_mb})
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "o3viz.app.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # one killpg reaches anything it started
            env={**os.environ, "PYTHONSAFEPATH": "1"},
        )
        self._reply: dict | None = None
        self._payload = b""
        self._stderr = b""
        threading.Thread(target=self._feed, args=(header.encode() + b"\n" + data,), daemon=True).start()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self._start

    def _feed(self, blob: bytes) -> None:
        try:
            self._proc.stdin.write(blob)
            self._proc.stdin.close()
        except OSError:
            pass  # the worker is gone; wait() reports how it ended

    def _read(self) -> None:
        out = self._proc.stdout
        for line in iter(out.readline, b""):
            try:
                msg = json.loads(line)
            except ValueError:
                continue  # stray output from a library; only our JSON lines count
            if not isinstance(msg, dict):
                continue
            if "stage" in msg:
                self.stage = str(msg["stage"])
            elif "ok" in msg:
                size = int(msg.get("bytes", 0))
                if size > _RESULT_CAP:
                    msg = {"ok": False, "error": f"the result is {size} bytes, over the limit"}
                self._payload = out.read(min(size, _RESULT_CAP)) if msg.get("ok") else b""
                self._reply = msg
                return

    def _drain_stderr(self) -> None:
        while chunk := self._proc.stderr.read(4096):
            self._stderr = (self._stderr + chunk)[-_STDERR_CAP:]

    def wait(self, timeout: float) -> WorkerResult | None:
        """The result once the task ends (or its budget runs out), else None after ``timeout`` s."""
        if self.result is not None:
            return self.result
        left = self.budget_s - self.elapsed_s
        self._reader.join(max(0.0, min(timeout, left)))
        if self._reader.is_alive():
            if self.elapsed_s < self.budget_s:
                return None
            self._kill()
            return self._finish(
                "timeout",
                error=f"{self.label} took longer than its {self.budget_s:g} s budget and was stopped "
                f"(last step: {self.stage}){'; ' + self.hint if self.hint else ''}",
            )
        self._proc.wait()
        return self._finish_from_reply()

    def _finish_from_reply(self) -> WorkerResult:
        reply = self._reply
        if reply is None:
            code = self._proc.returncode
            how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
            return self._finish("failed", error=f"{self.label}: the worker process ended ({how})")
        if not reply.get("ok"):
            return self._finish("failed", error=str(reply.get("error", "failed")))
        try:
            value = _decode_value(reply.get("kind"), self._payload)
        except O3vizError as exc:
            return self._finish("failed", error=one_line(exc))
        return self._finish("done", value=value)

    def _finish(self, status: WorkerStatus, *, value: Any = None, error: str = "") -> WorkerResult:
        detail = self._stderr.decode("utf-8", "replace")
        self.result = WorkerResult(status, value, error, self.elapsed_s, detail)
        return self.result

    def _kill(self) -> None:
        try:
            os.killpg(self._proc.pid, signal.SIGKILL)
        except OSError:
            pass  # already gone
        self._proc.wait()

    def cancel(self) -> WorkerResult:
        """Stop the task now (no-op once it ended)."""
        if self.result is None:
            self._kill()
            self._finish("cancelled", error=f"{self.label} was cancelled")
        return self.result

    def __enter__(self) -> WorkerJob:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()  # a page that is rerun or left stops its work


def run_in_worker(
    task: str, *args: Any, on_progress=None, poll_s: float = 0.2, **options: Any
) -> WorkerResult:
    """Run ``task`` to its end; ``on_progress(elapsed_s, budget_s, stage)`` is called while it runs."""
    with WorkerJob(task, *args, **options) as job:
        while (res := job.wait(poll_s)) is None:
            if on_progress is not None:
                on_progress(job.elapsed_s, job.budget_s, job.stage)
        return res


def _decode_value(kind: str | None, payload: bytes) -> Any:
    if kind == "trace":
        from o3viz.trace.io import load_trace

        return load_trace(payload)
    return json.loads(payload) if payload else None


# ---------------------------------------------------------------- the worker process


def report(stage: str) -> None:
    """Tell the parent what the worker is doing (a no-op outside a worker)."""
    if _IN_WORKER:
        _emit({"stage": stage})


_IN_WORKER = False


def _emit(msg: dict, payload: bytes = b"") -> None:
    out = sys.__stdout__.buffer
    out.write(json.dumps(msg).encode() + b"\n" + payload)
    out.flush()


def _limit_memory(memory_mb: int) -> None:
    import resource

    limit = memory_mb << 20
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _serve() -> int:
    global _IN_WORKER
    _IN_WORKER = True
    sys.stdout = sys.stderr  # a library's print must not corrupt the reply stream
    header = json.loads(sys.stdin.buffer.readline())
    data = sys.stdin.buffer.read(header["data"])
    _limit_memory(int(header["memory_mb"]))
    os.nice(5)  # slow work yields the CPU to the server it was moved out of
    module, _, name = TASKS[header["task"]].partition(":")
    try:
        fn = getattr(importlib.import_module(module), name)
        args = list(header["args"]) + ([data] if header["data"] else [])
        value = fn(*args)
        report("sending the result")
        kind, payload = _encode_value(value)
    except O3vizError as exc:
        _emit({"ok": False, "error": one_line(exc)})
        return 0
    except MemoryError:
        _emit({"ok": False, "error": f"ran out of its {header['memory_mb']} MB memory limit"})
        return 0
    except Exception as exc:  # one line for the user; the traceback goes to stderr for the expander
        import traceback

        traceback.print_exc()
        _emit({"ok": False, "error": f"{type(exc).__name__}: {one_line(exc)}"})
        return 0
    _emit({"ok": True, "kind": kind, "bytes": len(payload)}, payload)
    return 0


def _encode_value(value: Any) -> tuple[str, bytes]:
    from o3viz.trace import Trace

    if isinstance(value, Trace):
        from o3viz.trace.io import check_trace_limits, trace_bytes

        data = trace_bytes(value, gzipped=True)
        check_trace_limits(data)
        return "trace", data
    return "json", json.dumps(value).encode()


if __name__ == "__main__":
    sys.modules["o3viz.app.worker"] = sys.modules[__name__]  # so tasks' report() reaches this module
    sys.exit(_serve())
