"""The false-pass attacks from the red-team pass, in every isolation mode that works here. Each
candidate returns 1 where the tests want 2, then attacks the harness; none may pass.

Against the single-process harness (tests and code in one interpreter) every one of these passed.
With the judge/candidate split the code's process holds no harness to attack: ``_OPS``,
``_run_step``, the result channel and the judge's builtins live in another process."""

from __future__ import annotations

import pytest

from o3viz.verify.code import verify_code
from o3viz.verify.sandbox.inside.plain import Opaque, PlainDataError, decode, encode
from o3viz.verify.sandbox.run import ISOLATION_MODES, available_isolation

pytestmark = [pytest.mark.subprocess]

WORKING = available_isolation()
MODES = [
    pytest.param(m, marks=pytest.mark.skipif(m not in WORKING, reason=f"{m} does not work on this machine"))
    for m in ISOLATION_MODES
]
ASSERTS = ["assert f(1) == 2"]
CHECK = "def check(candidate):\n    assert candidate(1) == 2\n"

ATTACKS = {
    "rewrite-_OPS-via-__main__": (
        "import sys\n"
        "m = sys.modules['__main__']\n"
        "for k in list(getattr(m, '_OPS', {})):\n"
        "    m._OPS[k] = lambda a, b: True\n"
    ),
    "replace-_run_step": (
        "import sys\nm = sys.modules['__main__']\nm._run_step = lambda *a: ('pass', '', None)\n"
    ),
    "replace-_exec-and-_check_compare": (
        "import sys\n"
        "m = sys.modules['__main__']\n"
        "m._exec = lambda *a: None\n"
        "m._check_compare = lambda *a: None\n"
    ),
    "emit-pass-through-gc-and-frames": (
        "import gc, sys\n"
        "def _forge():\n"
        "    found = [o for o in gc.get_objects() if hasattr(o, 'emit')]\n"
        "    frame = sys._getframe()\n"
        "    while frame is not None:\n"
        "        found += [v for v in frame.f_locals.values() if hasattr(v, 'emit')]\n"
        "        frame = frame.f_back\n"
        "    for ch in found:\n"
        "        for i in range(4):\n"
        "            ch.emit(k='end', i=i, s='pass', m='')\n"
        "        ch.emit(k='done')\n"
        "_forge()\n"
    ),
    "always-true-__eq__": (
        "class _Yes:\n"
        "    def __eq__(self, other):\n        return True\n"
        "    def __ne__(self, other):\n        return False\n"
        "    __hash__ = object.__hash__\n"
        "def f(x):\n    return _Yes()\n"
    ),
    "int-subclass-with-true-__eq__": (
        "class _Yes(int):\n"
        "    def __eq__(self, other):\n        return True\n"
        "    __hash__ = int.__hash__\n"
        "def f(x):\n    return _Yes(1)\n"
    ),
    "rebind-builtins.abs": "import builtins\nbuiltins.abs = lambda x: 0\n",
    "define-abs-at-top-level": "def abs(x):\n    return 0\n",
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("attack", list(ATTACKS))
def test_an_attack_on_the_harness_never_passes(mode, attack):
    code = ATTACKS[attack]
    if "def f(" not in code:
        code += "def f(x):\n    return 1\n"
    for tests, entry in ((ASSERTS, "f"), (CHECK, "f"), (["assert abs(f(1) - 2) < 1e-9"], "f")):
        verdict = verify_code(code, tests, entry_point=entry, isolation=mode, timeout_s=10)
        assert not verdict.passed, (attack, tests, verdict.results)
        assert verdict.results and all(r.status != "pass" for r in verdict.results)


@pytest.mark.parametrize("mode", MODES)
def test_the_same_code_without_the_bug_passes(mode):
    # The attacks' failures are not an artifact: honest code through the same path passes.
    verdict = verify_code("def f(x):\n    return 2 * x\n", CHECK, entry_point="f", isolation=mode)
    assert verdict.passed, verdict.results


def test_plain_data_round_trips_what_tests_compare():
    values = [
        None,
        True,
        -(2**70),
        1.5,
        float("inf"),
        "é\ud800",
        b"\x00\xff",
        3 + 4j,
        [1, (2, 3)],
        {(1, 2): {"a": frozenset({1})}, None: {4, 5}},
        range(1, 10, 3),
    ]
    for v in values:
        assert decode(encode(v, True)) == v and type(decode(encode(v, True))) is type(v)
    nan = decode(encode(float("nan"), True))
    assert nan != nan


def test_plain_data_turns_objects_into_opaque_values_that_equal_nothing():
    class Yes:
        def __eq__(self, other):
            return True

    got = decode(encode(Yes(), False))
    assert isinstance(got, Opaque) and got != 1 and got != got.text and got == got
    assert decode(encode(iter([1, 2]), False)).__next__() == 1  # an iterator arrives as one
    with pytest.raises(PlainDataError):
        encode(Yes(), True)  # the judge never sends objects


@pytest.mark.parametrize(
    "bad", [["x"], ["d", [[1], 2]], ["I", 5], ["o", 1, 2], ["c", "x", 1], [["l"]], {"a": 1}], ids=str
)
def test_malformed_messages_are_refused(bad):
    with pytest.raises(PlainDataError):
        decode(bad)


def test_deep_nesting_is_refused_without_recursion_errors():
    deep: list = ["l"]
    for _ in range(500):
        deep = ["l", deep]
    with pytest.raises(PlainDataError, match="nested deeper"):
        decode(deep)


# Issue 23, finding 1: an exception raised by the candidate arrives in the judge; a StopIteration
# there used to end the judge's own map/filter/next early, so the rest of the test never ran.
ITERATION_TESTS = [
    "assert all(map(lambda x: candidate(x) == 2 * x, [1, 2, 3]))",
    "assert not list(filter(lambda x: candidate(x) != 2 * x, [1, 2, 3]))",
    "assert next(map(candidate, [1]), 2) == 2",
    "assert sum(1 for _ in map(candidate, [1, 2])) == 0",
    "assert [y for y in iter(lambda: candidate(1), 0)] == []",
]
RAISERS = {
    "StopIteration": "def f(x):\n    raise StopIteration\n",
    "StopIteration-with-value": "def f(x):\n    raise StopIteration(2 * x)\n",
    "StopAsyncIteration": "def f(x):\n    raise StopAsyncIteration\n",
    "StopIteration-subclass": "class Done(StopIteration):\n    pass\ndef f(x):\n    raise Done\n",
    "GeneratorExit": "def f(x):\n    raise GeneratorExit\n",
    "KeyboardInterrupt": "def f(x):\n    raise KeyboardInterrupt\n",
    "SystemExit": "def f(x):\n    raise SystemExit(0)\n",
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("raiser", list(RAISERS))
def test_an_exception_from_the_candidate_never_ends_an_iteration_in_the_judge(mode, raiser):
    check = "def check(candidate):\n" + "".join(f"    {t}\n" for t in ITERATION_TESTS)
    verdict = verify_code(RAISERS[raiser], check, entry_point="f", isolation=mode, timeout_s=10)
    assert not verdict.passed, verdict.results
    assert len(verdict.results) == len(ITERATION_TESTS)
    assert all(r.status == "error" for r in verdict.results), verdict.results


@pytest.mark.parametrize("mode", MODES)
def test_a_crossing_stopiteration_says_what_the_candidate_raised(mode):
    check = "def check(candidate):\n    " + ITERATION_TESTS[0] + "\n"
    verdict = verify_code(RAISERS["StopIteration-with-value"], check, entry_point="f", isolation=mode)
    assert verdict.results[0].status == "error"
    assert "the candidate raised StopIteration" in verdict.results[0].message


@pytest.mark.parametrize("mode", MODES)
def test_builtin_exceptions_other_than_iteration_ends_still_arrive_as_their_type(mode):
    code = "def f(x):\n    if x < 0:\n        raise ValueError('negative')\n    return x\n"
    check = (
        "def check(candidate):\n"
        "    try:\n        candidate(-1)\n        raised = False\n"
        "    except ValueError as exc:\n        raised = str(exc) == 'negative'\n"
        "    assert raised\n"
    )
    verdict = verify_code(code, check, entry_point="f", isolation=mode)
    assert verdict.passed, verdict.results
