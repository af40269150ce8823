"""Where each built-in task list is read from, in this order:

1. a file the user names (``--tasks-file``, or ``use_tasks_file`` in Python);
2. the full list in the shared data folder (``$O3VIZ_DATA``, else ``../shared/data`` beside a
   checkout);
3. the sample that ships in the package (``o3viz/tasks/data/``, licences in its README), so a pip
   user can run ``gsm8k:0`` to ``gsm8k:49`` and the first 20 MBPP+ tasks with nothing else.

A task id beyond the sample gets one line naming the two fixes. Files the user names are read
bounded (``MAX_TASKS_FILE_BYTES``) and each line must be a JSON object.

>>> tasks_file("gsm8k").path.name in ("gsm8k_test.jsonl", "gsm8k_test_sample.jsonl")
True
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from o3viz.errors import UsageError
from o3viz.paths import data_dir

BUNDLED = Path(__file__).resolve().parent / "data"
MAX_TASKS_FILE_BYTES = 256 * 1024 * 1024  # a task list the user names; GSM8K's whole test set is 0.75 MB


@dataclass(frozen=True)
class TaskList:
    """One built-in list: where its full file sits in the shared data, and its bundled sample."""

    name: str  # "GSM8K"
    shared: str  # path below the shared data folder
    sample: str  # file name in o3viz/tasks/data/
    fields: tuple[str, ...]  # what each line must hold


LISTS = {
    "gsm8k": TaskList("GSM8K", "gsm8k/gsm8k_test.jsonl", "gsm8k_test_sample.jsonl", ("question", "answer")),
    "mbppplus": TaskList(
        "MBPP+",
        "code_tasks/mbppplus_evalplus_2023-11-16.jsonl",
        "mbppplus_sample.jsonl",
        ("task_id", "prompt", "entry_point", "canonical_solution", "base_input"),
    ),
}

_chosen: dict[str, Path] = {}  # source -> a file the user named for this process


@dataclass(frozen=True)
class TasksFile:
    """The file a list is read from, and whether it is only the bundled sample."""

    path: Path
    sample: bool
    source: str

    def describe(self) -> str:
        return f"the bundled sample ({self.path.name})" if self.sample else str(self.path)


def use_tasks_file(source: str, path: str | Path) -> None:
    """Read the ``source`` list (``gsm8k``, ``mbppplus``) from ``path`` for the rest of the process;
    checked now (a regular file, its lines JSON objects with the list's fields), one line if not."""
    if source not in LISTS:
        raise UsageError(f"--tasks-file: only for {', '.join(LISTS)} tasks, not {source!r}")
    path = Path(path).expanduser()
    read_task_lines(source, path)  # refuses a bad file before any model loads
    _chosen[source] = path


def forget_tasks_files() -> None:
    """Back to the default lookup (tests, and the app between sessions)."""
    _chosen.clear()


def tasks_file(source: str) -> TasksFile:
    """Where ``source``'s tasks are read from now (see the module's order)."""
    if source in _chosen:
        return TasksFile(_chosen[source], False, source)
    shared = data_dir() / LISTS[source].shared
    if shared.is_file():
        return TasksFile(shared, False, source)
    return TasksFile(BUNDLED / LISTS[source].sample, True, source)


def read_task_lines(source: str, path: Path) -> tuple[dict, ...]:
    """The JSON objects of a task list, one per non-blank line; one-line ``UsageError`` otherwise."""
    from o3viz.errors import TraceError
    from o3viz.trace.files import read_bounded

    try:
        data = read_bounded(path, MAX_TASKS_FILE_BYTES, "the task-file limit (256 MiB)")
    except TraceError as exc:
        raise UsageError(f"--tasks-file: {exc}") from None
    need = LISTS[source].fields
    rows = []
    for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):
            raise UsageError(f"{path}: line {n} is not JSON") from None
        if not isinstance(row, dict) or any(k not in row for k in need):
            raise UsageError(
                f"{path}: line {n} is not a {LISTS[source].name} task (it needs {', '.join(need)})"
            )
        rows.append(row)
    if not rows:
        raise UsageError(f"{path}: no {LISTS[source].name} tasks in it")
    return tuple(rows)


def beyond_sample(source: str, n: int, total: int) -> str:
    """The line for a task past the bundled sample: what there is, and the two ways to the rest."""
    full = LISTS[source]
    return (
        f"{source}:{n}: the bundled {full.name} sample holds tasks 0..{total - 1}; for the full list "
        f"pass --tasks-file FILE (the {Path(full.shared).name} you downloaded) or set O3VIZ_DATA to a "
        f"folder holding {full.shared}"
    )


__all__ = [
    "LISTS",
    "MAX_TASKS_FILE_BYTES",
    "TaskList",
    "TasksFile",
    "beyond_sample",
    "forget_tasks_files",
    "read_task_lines",
    "tasks_file",
    "use_tasks_file",
]
