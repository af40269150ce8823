"""Runs that make pairs: one task list (the first N GSM8K items, MBPP+ tasks, ...) run under two
settings, A and B (DAA off and allocate, with and without steering, two models), landing in the
store as two datasets that ``o3viz.store.paired.compare_datasets`` pairs question by question.

The two sides run interleaved, task by task, and a task's two traces enter the store together once
both finished (both encoded first; a side that cannot be stored takes its partner back out): a Stop
(or a crash) leaves both datasets holding the same questions, and what finished stays. Each trace
carries its task's stable id (``task``), its position in the source (``record``) and its side's
settings (``info["paired_run"]``); a rerun of the same request skips the tasks whose trace is
already in the store, so a stopped job resumes where it stopped, and a rerun with other settings
into the same datasets is refused before any model loads (``check_resume``).

A paired run changes only its setting: each side runs one round (the model's first reply), with the
same token limit, so no side runs more rounds because of its own verdict or confidence, and the
table's B − A measures the setting, not the number of rounds (docs/paired-compare.md). When pairs
go ungraded, ``PairedRunResult.grading_note`` says why (replies cut at the limit) and about how
many graded pairs a difference of 10 points needs (``pairs_needed``).

>>> parse_setting("daa=allocate,strength=2").label
'daa=allocate strength=2'
>>> task_ids("gsm8k", 3, start=10)  # doctest: +SKIP
['gsm8k:10', 'gsm8k:11', 'gsm8k:12']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from o3viz.errors import UsageError
from o3viz.run.paired_grading import SideOutcome, grading_note, pairs_needed, side_outcome
from o3viz.run.paired_settings import PairSetting, check_resume, parse_setting, side_settings
from o3viz.run.request import RunRequest
from o3viz.trace.io import trace_bytes

__all__ = [
    "PairSetting",
    "PairSink",
    "PairedRunRequest",
    "PairedRunResult",
    "SideOutcome",
    "grading_note",
    "pairs_needed",
    "parse_setting",
    "run_pairs",
    "side_outcome",
    "task_ids",
]

TASK_SOURCES = ("gsm8k", "humaneval", "mbppplus")
MAX_TASKS = 5000  # one job; GSM8K's test set is 1,319
SideName = Literal["A", "B"]
Loader = Callable[[str | None], tuple[Any, Any]]  # model name (None: embedded) -> (model, tokenizer)
OnProgress = Callable[[int, int, str], None]  # (runs done, runs in all, what is running now)
ROUNDS = 1  # a paired run compares each side's first reply: the loop's rounds would differ by side


class PairSink(Protocol):
    """Where the traces go (``o3viz.app.paired_run.StoreSink``: the library's store)."""

    def tasks_in(self, dataset: str) -> dict[str, str]:
        """Task id -> key of the trace of each task already in ``dataset``."""
        ...

    def add(self, trace: Any, **meta: Any) -> str:
        """Store ``trace`` with ``meta`` (source, name, dataset, record, and ``data``: its file's
        bytes, already encoded); returns its key."""
        ...

    def recorded(self, key: str) -> dict | None:
        """The settings the stored trace ``key`` was run with
        (``o3viz.run.paired_settings.recorded_settings`` of it)."""
        ...

    def discard(self, key: str) -> None:
        """Remove the trace ``key`` that this job just added (its partner could not be stored)."""
        ...


def task_ids(source: str, limit: int, start: int = 0) -> list[str]:
    """The ids of ``limit`` tasks of ``source`` from position ``start`` (0-based), as ``load_task``
    reads them: ``gsm8k:N``, ``humaneval:HumanEval/N``, ``mbppplus:Mbpp/N``."""
    source = source.lower()
    if source not in TASK_SOURCES:
        raise UsageError(f"task list {source!r}: one of {', '.join(TASK_SOURCES)}")
    if not 1 <= limit <= MAX_TASKS:
        raise UsageError(f"--limit: between 1 and {MAX_TASKS} tasks, not {limit}")
    if start < 0:
        raise UsageError(f"--start: 0 or more, not {start}")
    if source == "gsm8k":
        from o3viz.tasks.spec import gsm8k_rows

        total = len(gsm8k_rows())
        ids = [f"gsm8k:{i}" for i in range(start, min(start + limit, total))]
    else:
        from o3viz.tasks import code

        tasks = code.load_humaneval() if source == "humaneval" else code.load_mbppplus()
        total = len(tasks)
        ids = [f"{source}:{t.task_id}" for t in tasks[start : start + limit]]
    if not ids:
        raise UsageError(f"{source} has {total} tasks: --start {start} is past the end")
    return ids


@dataclass
class PairedRunRequest:
    """A task list run under two settings. ``run`` holds what both sides share (token limit,
    capture, seed, ...; its prompt and task are ignored, and its rounds are ``ROUNDS``); ``a`` and
    ``b`` what differs. The traces land in the datasets ``dataset("A")`` and ``dataset("B")``."""

    run: RunRequest
    tasks: list[str]
    a: PairSetting
    b: PairSetting
    name: str = ""  # the datasets' common name (default: the task list, e.g. "gsm8k 0-4")

    def __post_init__(self) -> None:
        if not self.name and self.tasks:
            first, last = self.tasks[0], self.tasks[-1].rpartition(":")[2]
            self.name = first if len(self.tasks) == 1 else f"{first}…{last}"

    def validate(self) -> PairedRunRequest:
        """Itself, or a one-line ``UsageError`` (before any model loads)."""
        if not self.tasks:
            raise UsageError("the task list is empty")
        if len(set(self.tasks)) != len(self.tasks):
            raise UsageError("the task list repeats a task")
        if self.a == self.b:
            raise UsageError(f"A and B are the same settings ({self.a.label}): change one side")
        if self.a.label == self.b.label:
            raise UsageError(f"A and B have the same label ({self.a.label})")
        if not self.name.strip():
            raise UsageError("name the datasets (--dataset NAME)")
        if self.run.rounds not in (None, ROUNDS):
            raise UsageError(
                f"a paired run compares each side's first reply: --rounds {self.run.rounds} would let "
                "one side's verdicts and confidence decide how many rounds it runs, so B − A would "
                "measure rounds, not the setting; leave --rounds out (or 1)"
            )
        for side in "AB":
            self.request(side, self.tasks[0]).validate()
        return self

    def setting(self, side: SideName) -> PairSetting:
        return self.a if side == "A" else self.b

    def dataset(self, side: SideName) -> str:
        """The dataset that side's traces land in, e.g. ``gsm8k:0…4 · A: daa=off``."""
        return f"{self.name} · {side}: {self.setting(side).label}"

    def request(self, side: SideName, task_id: str) -> RunRequest:
        """The one run of ``task_id`` under ``side``'s settings: one round (``ROUNDS``), whatever
        the loop's default for a task, so both sides run the same rounds."""
        base = dataclasses.replace(self.run, task_id=task_id, prompt=None, rounds=ROUNDS)
        return self.setting(side).apply(base)


@dataclass
class PairedRunResult:
    """What a paired run left in the store: per side, the keys of the tasks' traces in task order
    (those that were already there included), and what did not run."""

    request: PairedRunRequest
    keys_a: list[str] = field(default_factory=list)
    keys_b: list[str] = field(default_factory=list)
    ran: int = 0  # tasks run now (both sides, or the one side that was missing)
    resumed: int = 0  # tasks whose two traces were already in the store
    failed: list[str] = field(default_factory=list)  # "task: error" for a task that could not run
    stopped: bool = False  # a Stop ended the job before the last task
    outcomes: list[tuple[SideOutcome, SideOutcome]] = field(default_factory=list)  # (A, B), pairs run now

    @property
    def pairs(self) -> int:
        return len(self.keys_a)

    @property
    def datasets(self) -> tuple[str, str]:
        return self.request.dataset("A"), self.request.dataset("B")

    def summary(self) -> str:
        """One line for people."""
        n = len(self.request.tasks)
        line = f"{self.pairs} of {n} tasks paired in {self.datasets[0]!r} and {self.datasets[1]!r}"
        if self.resumed:
            line += f" ({self.resumed} already there)"
        if self.failed:
            line += f"; {len(self.failed)} failed (first: {self.failed[0]})"
        return line + ("; stopped early" if self.stopped else "")

    def grading_note(self) -> str | None:
        """Why pairs run now went ungraded and about how many graded pairs a 10-point difference
        needs; None when every pair run now is graded and there are enough of them."""
        return grading_note(self.outcomes, self.request.run.max_new_tokens)


def _side_settings(req: PairedRunRequest, side: SideName) -> dict:
    return side_settings(req.request(side, req.tasks[0]))


def _record(task_id: str, index: int) -> int:
    """The task's 1-based position in its source: GSM8K's line, else its place in the list."""
    source, _, ident = task_id.partition(":")
    return int(ident) + 1 if source == "gsm8k" and ident.isdigit() else index + 1


def run_pairs(
    req: PairedRunRequest,
    load: Loader,
    sink: PairSink,
    *,
    on_progress: OnProgress | None = None,
    on_token: Callable[[int, str, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> PairedRunResult:
    """Run every task of ``req`` under A, then under B, and store each task's two traces together
        (``sink.add``, source ``run``). ``load(model)`` is called once per distinct model. A Stop ends
        the job after the current generation and drops that unfinished task, so both datasets keep the
        same questions; a task whose run raises is listed in ``failed`` and the job goes on (a model that
    fails to load ends the job with its error)."""
    req.validate()
    stop = should_stop or (lambda: False)
    report = on_progress or (lambda done, total, label: None)
    have = {side: sink.tasks_in(req.dataset(side)) for side in ("A", "B")}
    for side in ("A", "B"):  # before any model loads: one stored trace speaks for its dataset
        if have[side]:
            stored = sink.recorded(next(iter(have[side].values())))
            check_resume(req.dataset(side), _side_settings(req, side), stored)
    models: dict[str | None, tuple[Any, Any]] = {}
    result = PairedRunResult(req)
    total, done = 2 * len(req.tasks), 0
    for i, task_id in enumerate(req.tasks):
        if stop():
            result.stopped = True
            break
        keys = {s: have[s].get(task_id) for s in ("A", "B")}
        try:
            traces = _run_task(req, i, task_id, keys, load, models, on_token, stop, report, done)
        except TaskFailed as exc:  # one task's failure (a prompt too long, a sandbox error) is reported
            result.failed.append(str(exc))
            done += 2
            continue
        if traces is None:  # stopped inside this task: it is dropped, so both sides keep the same questions
            result.stopped = True
            break
        done += 2
        try:
            keys |= _store_pair(req, i, task_id, traces, sink)
        except TaskFailed as exc:  # a trace that cannot be encoded: neither side is stored
            result.failed.append(str(exc))
            continue
        result.ran += bool(traces)
        result.resumed += not traces
        if len(traces) == 2:
            result.outcomes.append((side_outcome(traces["A"]), side_outcome(traces["B"])))
        result.keys_a.append(keys["A"])
        result.keys_b.append(keys["B"])
    report(done, total, result.summary())
    return result


class TaskFailed(Exception):
    """One task could not run; the job goes on with the next."""


def _store_pair(req, i, task_id, traces: dict, sink: PairSink) -> dict[str, str]:
    """Store a task's new traces together: every one encoded before the first is stored, and one
    the store refuses takes the others of this task back out, so no side is left without its pair.
    A run's trace carries its own times, so a key added here is this job's to discard."""
    data = {}
    for side, trace in traces.items():
        trace.info["paired_run"] = {"side": side, "settings": _side_settings(req, side)}
        try:
            data[side] = trace_bytes(trace, gzipped=True)
        except (TypeError, ValueError) as exc:  # NaN or a non-JSON value in the trace
            raise TaskFailed(f"{task_id}: side {side} cannot be stored: {exc}".splitlines()[0][:300]) from exc
    added: dict[str, str] = {}
    try:
        for side, trace in traces.items():
            added[side] = sink.add(
                trace,
                data=data[side],
                source="run",
                name=f"{task_id} · {side}: {req.setting(side).label}",
                dataset=req.dataset(side),
                record=_record(task_id, i),
            )
    except BaseException:  # a full disk, a second Ctrl-C: what this task stored goes again
        for key in added.values():
            sink.discard(key)
        raise
    return added


def _run_task(req, i, task_id, keys, load, models, on_token, stop, report, done) -> dict | None:
    """The task's missing sides run, A before B: side -> trace, or None when a Stop cut one short."""
    from o3viz.run.dispatch import execute

    traces = {}
    for side in ("A", "B"):
        if keys[side] is not None:
            continue
        sub = req.request(side, task_id)
        label = f"task {i + 1} of {len(req.tasks)} ({task_id}) · {side}: {req.setting(side).label}"
        report(done + (side == "B"), 2 * len(req.tasks), label)
        model, tok = _loaded(models, sub.model, load, sub)
        if stop():
            return None
        try:
            trace = execute(model, tok, sub, on_token=on_token, should_stop=stop)
        except Exception as exc:  # this task only; a model that fails to load ends the job (above)
            raise TaskFailed(f"{task_id}: {type(exc).__name__}: {exc}".splitlines()[0][:300]) from exc
        if any(r.info.get("stop_reason") == "stopped" for r in trace.rounds):
            return None
        traces[side] = trace
    return traces


def _loaded(models: dict, name: str | None, load: Loader, sub: RunRequest) -> tuple[Any, Any]:
    """The model ``name`` (loaded once per job), checked once against the capture settings."""
    if name not in models:
        from o3viz.run.config import resolve_layers
        from o3viz.run.layer_recorders import check_internals_for

        model, tok = load(name)
        resolve_layers(sub.capture.layers, model.config.num_hidden_layers)
        check_internals_for(model, sub.capture)
        models[name] = (model, tok)
    return models[name]
