"""The verification layer for code: run a candidate against tests in the sandbox, one verdict per test.

Owns ``verify_code`` / ``verify_many``, the ``CodeVerdict`` and ``TestResult`` dataclasses (with
their untrusted-file contract ``from_dict``); the HumanEval / MBPP+ tasks it verifies are loaded by
``o3viz.tasks.code``. Tests come
in two shapes: HumanEval's ``def check(candidate): ...`` (split into one result per top-level
``assert`` in its body where that is safe, else one result for the whole check), or MBPP's list of
``assert`` statements. Generated code never runs in this process, nor in the tests' process: see
o3viz/verify/sandbox/run.py and docs/sandbox.md.
"""

from __future__ import annotations

import ast
import dataclasses
import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from o3viz.errors import TraceError, UsageError
from o3viz.verify.sandbox.run import ISOLATION_MODES, SandboxLimits, SandboxRun, run_sandboxed

Status = Literal["pass", "fail", "error", "timeout"]
STATUSES: tuple[str, ...] = ("pass", "fail", "error", "timeout")
_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_OPS |= {ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}
_NAME_CAP = 120


@dataclass(frozen=True)
class TestResult:
    """One test's verdict. ``message`` is the assertion message or exception, empty on a pass."""

    __test__ = False  # not a pytest class
    name: str
    status: Status
    message: str = ""


@dataclass
class CodeVerdict:
    """What the verification layer said about one piece of code."""

    passed: bool  # every test passed, at least one test ran, and no result was forged
    results: list[TestResult]
    isolation: str  # the sandbox mode that ran: bubblewrap, landlock+rlimits or rlimits
    duration_s: float = 0.0
    stdout: str = ""  # truncated to the sandbox's output cap
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    exit_code: int | None = None  # of the sandbox process; negative: killed by that signal
    timed_out: bool = False  # the wall-clock limit killed the run
    error: str = ""  # a problem with the whole run (code failed to load, forged results), else ""
    info: dict[str, Any] = field(default_factory=dict)  # provenance: python version, limits, ...

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Any, path: str = "verdict") -> CodeVerdict:
        """Validate an untrusted dict (from a trace file); raise TraceError naming the bad field."""
        _need(d, dict, path)
        results = [
            _result_from_dict(r, f"{path}.results[{i}]") for i, r in enumerate(_get(d, "results", list, path))
        ]
        kw = {name: _get(d, name, kind, path) for name, kind in _VERDICT_FIELDS}
        if kw["isolation"] not in ISOLATION_MODES:
            raise TraceError(f"{path}.isolation: unknown mode {kw['isolation']!r}")
        if not (math.isfinite(kw["duration_s"]) and kw["duration_s"] >= 0):
            raise TraceError(f"{path}.duration_s: must be a finite number >= 0")
        info = _get(d, "info", dict, path)
        for key, value in info.items():
            if not isinstance(key, str) or not isinstance(value, str | int | float | bool | type(None)):
                raise TraceError(f"{path}.info.{key}: must map names to plain values")
        verdict = cls(results=results, info=info, **kw)
        if verdict.passed and not (results and all(r.status == "pass" for r in results)):
            raise TraceError(f"{path}.passed: true, but not every result passed")
        return verdict


_VERDICT_FIELDS = (
    ("passed", bool),
    ("isolation", str),
    ("duration_s", (int, float)),
    ("stdout", str),
    ("stderr", str),
    ("stdout_truncated", bool),
    ("stderr_truncated", bool),
    ("exit_code", (int, type(None))),
    ("timed_out", bool),
    ("error", str),
)


def _need(value: Any, kind: Any, path: str) -> Any:
    bad_bool = (
        isinstance(value, bool)
        and kind is not bool
        and bool not in (kind if isinstance(kind, tuple) else (kind,))
    )
    if not isinstance(value, kind) or bad_bool:
        want = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise TraceError(f"{path}: expected {want}, got {type(value).__name__}")
    return value


def _get(d: dict, key: str, kind: Any, path: str) -> Any:
    if key not in d:
        raise TraceError(f"{path}.{key}: missing")
    return _need(d[key], kind, f"{path}.{key}")


def _result_from_dict(d: Any, path: str) -> TestResult:
    _need(d, dict, path)
    status = _get(d, "status", str, path)
    if status not in STATUSES:
        raise TraceError(f"{path}.status: must be one of {', '.join(STATUSES)} (got {status!r})")
    return TestResult(_get(d, "name", str, path), status, _get(d, "message", str, path))


def _name_steps(steps: list[dict]) -> list[dict]:
    seen: dict[str, int] = {}
    for step in steps:
        name = step["src"].splitlines()[0]
        name = name if len(name) <= _NAME_CAP else name[: _NAME_CAP - 3] + "..."
        seen[name] = seen.get(name, 0) + 1
        step["name"] = name if seen[name] == 1 else f"{name} #{seen[name]}"
    return steps


def _steps_from(stmts: list[ast.stmt]) -> list[dict]:
    """One step per statement: asserts (and blocks holding asserts) are tests, the rest set-up."""
    steps = []
    for stmt in stmts:
        if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Constant) and stmt.test.value:
            continue  # `assert True` checks nothing
        is_def = isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        is_test = not is_def and any(isinstance(n, ast.Assert) for n in ast.walk(stmt))
        step = {"src": ast.unparse(stmt), "kind": "test" if is_test else "setup"}
        test = stmt.test if isinstance(stmt, ast.Assert) else None
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _OPS:
            # Evaluated side by side in the runner, so a failure says what both sides were.
            step.update(
                left=ast.unparse(test.left),
                op=_OPS[type(test.ops[0])],
                right=ast.unparse(test.comparators[0]),
            )
            step["msg"] = ast.unparse(stmt.msg) if stmt.msg else None
        steps.append(step)
    return _name_steps(steps)


def _splittable(fn: ast.FunctionDef) -> bool:
    """A check body can run statement by statement unless it returns, yields or rebinds scopes."""
    todo = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return | ast.Yield | ast.YieldFrom | ast.Global | ast.Nonlocal | ast.Await):
            return False
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))
    return len(fn.args.args) == 1 and not fn.args.vararg and not fn.decorator_list


def _calls_check(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "check"


def build_job(tests: str | Sequence[str], entry_point: str | None) -> dict[str, Any]:
    """Turn tests (a check function, or assert statements) into a sandbox runner job, minus the code."""
    sources = [tests] if isinstance(tests, str) else list(tests)
    try:
        trees = [ast.parse(src) for src in sources]
    except SyntaxError as exc:
        raise UsageError(f"tests: not valid Python: {exc.msg} (line {exc.lineno})") from None
    checks = [n for t in trees for n in t.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    job = {"entry_point": entry_point, "candidate_name": "candidate", "test_module": "", "scope": "module"}
    if not checks:
        job["steps"] = _steps_from([n for t in trees for n in t.body])
        return job
    body = [n for t in trees for n in t.body]
    # LeetCode-style tests end in `check(Solution().f)`: the harness makes that call itself.
    calls = [n for n in body if isinstance(n, ast.Expr) and _calls_check(n.value)]
    if entry_point is None and calls and calls[-1].value.args:
        job["entry_point"] = entry_point = ast.unparse(calls[-1].value.args[0])
    if entry_point is None:
        raise UsageError("entry_point: required for tests in check(candidate) form")
    check = checks[-1]
    module = ast.unparse(ast.Module([n for n in body if n not in calls], [])) if calls else "\n".join(sources)
    job.update(test_module=module, scope="check")
    if _splittable(check):
        job.update(candidate_name=check.args.args[0].arg, steps=_steps_from(check.body))
    else:
        job["steps"] = _name_steps([{"src": "check(candidate)", "kind": "test"}])
    return job


def verify_code(
    code: str,
    tests: str | Sequence[str],
    *,
    entry_point: str | None = None,
    timeout_s: float | None = None,
    test_timeout_s: float | None = None,
    isolation: str = "auto",
    limits: SandboxLimits | None = None,
    context: str = "",
) -> CodeVerdict:
    """Run ``code`` against ``tests`` in the sandbox and return one TestResult per test.

    The tests run in one sandboxed process and ``code`` in another; the tests' ``candidate`` (and
    any function of ``code`` they call by name) is a proxy that exchanges plain data only, so no
    object, builtin or frame of the code can reach the judge. ``context`` is trusted code the
    tests may use (a HumanEval prompt's helpers, such as ``poly``); it runs with the tests.

    ``timeout_s`` bounds the whole run (default 10 s, from SandboxLimits); ``test_timeout_s`` each
    test. ``isolation`` is ``auto`` or a mode from ISOLATION_MODES; a mode that does not work here
    raises UsageError rather than running with less isolation than asked for. Always returns a
    verdict: a failure of the sandbox itself becomes ``error`` on every test.
    """
    job = build_job(tests, entry_point)
    job["candidate_code"] = code
    job["context"] = context
    limits = limits or SandboxLimits()  # timeout_s / test_timeout_s, when given, override it
    limits = dataclasses.replace(
        limits,
        timeout_s=timeout_s or limits.timeout_s,
        test_timeout_s=test_timeout_s or limits.test_timeout_s,
    )
    try:
        run = run_sandboxed(job, isolation=isolation, limits=limits)
    except UsageError:
        raise  # a mode that does not work here: the caller asked for something impossible
    except Exception as exc:  # the sandbox itself failed (no fork, full disk): still a verdict
        return _sandbox_failure(job["steps"], isolation, f"{type(exc).__name__}: {exc}")
    results, error = _results_from(run, job["steps"], limits)
    error = run.stopped_for or error
    if run.forged_lines:
        error = (
            f"{run.forged_lines} result line(s) failed authentication: the code wrote to the result channel"
        )
    passed = bool(results) and all(r.status == "pass" for r in results) and not run.forged_lines
    info = dict(run.info, tests=len(results), forged_lines=run.forged_lines, timeout_s=limits.timeout_s)
    return CodeVerdict(
        passed=passed,
        results=results,
        isolation=run.isolation,
        duration_s=run.duration_s,
        stdout=run.stdout,
        stderr=run.stderr,
        stdout_truncated=run.stdout_truncated,
        stderr_truncated=run.stderr_truncated,
        exit_code=run.exit_code,
        timed_out=run.timed_out,
        error=error if results or error else "no tests to run",
        info=info,
    )


def _sandbox_failure(steps: list[dict], isolation: str, why: str) -> CodeVerdict:
    message = f"the sandbox failed: {' '.join(why.split())[:500]}"
    results = [TestResult(s["name"], "error", message) for s in steps if s["kind"] == "test"]
    mode = isolation if isolation in ISOLATION_MODES else "rlimits"
    return CodeVerdict(passed=False, results=results, isolation=mode, error=message)


def _missing(run: SandboxRun, started: bool, loaded: bool, limits: SandboxLimits) -> tuple[str, str]:
    """Status and message for a test with no result, from how the process ended."""
    if run.stopped_for:
        return "error", run.stopped_for
    if run.timed_out:
        if not loaded:
            return "timeout", f"not run: the code did not finish loading within {limits.timeout_s:g}s"
        return "timeout", f"time limit of {limits.timeout_s:g}s reached " + (
            "during this test" if started else "before this test"
        )
    how = f"exit code {run.exit_code}" if (run.exit_code or 0) >= 0 else f"killed by signal {-run.exit_code}"
    if run.exit_code in (-24, 152):  # SIGXCPU, directly or as bwrap reports it
        return "timeout", f"CPU time limit reached ({how})"
    return "error", f"no result: the process ended ({how}) " + (
        "during this test" if started else "before this test"
    )


def _results_from(run: SandboxRun, steps: list[dict], limits: SandboxLimits) -> tuple[list[TestResult], str]:
    load = next((r for r in run.records if r.get("k") == "load"), None)
    ends = {r.get("i"): r for r in run.records if r.get("k") == "end"}
    started = {r.get("i") for r in run.records if r.get("k") == "start"}
    load_error = load.get("m", "") if load and load.get("s") != "ok" else ""
    results = []
    for i, step in enumerate(steps):
        end = ends.get(i)
        if end is not None and step["kind"] == "setup" and end.get("s") == "pass":
            continue
        if end is not None:
            status, message = str(end.get("s")), str(end.get("m", ""))
        elif load_error:
            status, message = "error", load_error
        elif step["kind"] == "setup":
            continue
        else:
            status, message = _missing(run, i in started, load is not None, limits)
        name = step["name"] if step["kind"] == "test" else f"setup: {step['name']}"
        results.append(TestResult(name, status if status in STATUSES else "error", message))
    return results, load_error


class CodeTaskLike(Protocol):
    """What ``verify_many`` reads of a task: ``o3viz.tasks.code.CodeTask`` has it (the tasks layer
    sits above this one, so it is not imported here)."""

    tests: str | tuple[str, ...]
    entry_point: str
    canonical_solution: str
    context: str


def verify_many(
    tasks: Sequence[CodeTaskLike], codes: Sequence[str] | None = None, *, workers: int = 2, **options: Any
) -> list[CodeVerdict]:
    """Verify many tasks (their canonical solutions unless ``codes`` is given) on a thread pool;
    each task's ``context`` (HumanEval's prompt) runs with its tests."""
    codes = [t.canonical_solution for t in tasks] if codes is None else list(codes)
    if len(codes) != len(tasks):
        raise UsageError(f"codes: {len(codes)} given for {len(tasks)} tasks")

    def one(pair: tuple[CodeTaskLike, str]) -> CodeVerdict:
        task = pair[0]
        return verify_code(pair[1], task.tests, entry_point=task.entry_point, context=task.context, **options)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(one, zip(tasks, codes, strict=True)))


__all__ = [
    "CodeVerdict",
    "TestResult",
    "build_job",
    "verify_code",
    "verify_many",
]
