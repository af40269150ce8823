"""A sample tree's answer classes (``o3viz.samples.answer_classes``): the classes of comparing each
answer with every earlier class (``pairwise_classes``, the rule as it was first written) on numbers
near every edge of the numeric rule and on symbolic answers within the budget, with a stand-in for
Math-Verify that counts its calls; real Math-Verify on a few symbolic forms; and a 256-sample set
of long tuples merges within a budget of comparisons that could reach Math-Verify, where the
pairwise rule makes one per earlier class."""

from __future__ import annotations

import random
import sys

import pytest

from o3viz.samples.tree import Sample, build_tree
from o3viz.text import equivalence
from o3viz.text.answers import MAX_ANSWER_CHARS, answers_equivalent

pytestmark = [pytest.mark.light]


def pairwise_classes(answers: list[str | None]) -> list[str]:
    """Each answer as the first-seen spelling of the first earlier class it is equivalent to."""
    reps: list[str] = []
    out = []
    for x in answers:
        a = (x or "").strip()
        if not a:
            out.append("—")
            continue
        rep = next((r for r in reps if r == a or answers_equivalent(a, r)), None)
        if rep is None:
            reps.append(a)
            rep = a
        out.append(rep)
    return out


def tree_classes(answers: list[str | None]) -> list[str]:
    """The class the tree gives each answer: one sample a leaf, read from the leaf's answers."""
    tree = build_tree([Sample(f"#{i}", [f"step {i}"], a) for i, a in enumerate(answers)])
    return [next(iter(tree.nodes[c].answers)) for c in tree.nodes[0].children]


@pytest.fixture
def slow_calls(monkeypatch):
    """A stand-in for Math-Verify (two short answers are the same when they hold the same
    characters; no verdict for a ``?``) that counts its calls, with the verdict cache cleared
    around it."""
    calls = [0]

    def fake(answer: str, reference: str) -> bool | None:
        calls[0] += 1
        if "?" in answer + reference:
            return None
        return sorted(answer) == sorted(reference) and len(answer) < 9

    monkeypatch.setattr(equivalence, "math_verify_equivalent", fake)
    equivalence._equivalent.cache_clear()
    yield calls
    equivalence._equivalent.cache_clear()


def number(rng: random.Random) -> str:
    """A number near the edges of the numeric rule: at, inside or past 6 decimal places and 1e-9
    relative, plain or in LaTeX, with a variable or a unit mark."""
    base = rng.choice([1.0, 18.0, 0.0, 1e-7, 2.5e-6, 1e6, 123456789.0, 0.333333, -7.0, 1e15])
    kind = rng.randrange(5)
    if kind == 0:
        return repr(base + rng.choice([0, 4e-7, 1e-6, 1.5e-6, -9e-7, 2e-6]))
    if kind == 1:
        return repr(base * (1 + rng.choice([0, 5e-10, 1e-9, 1.5e-9, 3e-9])))
    if kind == 2:
        return rng.choice(
            ["\\frac{1}{3}", "1/3", "0.333333", "0.3333333", "\\dfrac{36}{2}", "18.0", "x = 18"]
        )
    if kind == 3:
        return rng.choice(
            ["18^\\circ", "10\\%", "10", "3\\sqrt{13}", "3√13", "-2\\pi", "−2π", "1 000", "1000"]
        )
    return str(rng.randint(0, 5))


def few(rng: random.Random) -> str:
    """One of a few answers, most of them not numbers: seven forms, six classes."""
    return rng.choice(["ab", "ba", "(1,2)", "x?", "yes", "Yes.", "\\text{yes}", "$$", "", "0", "1", "1.0"])


@pytest.mark.parametrize("seed", range(4))
def test_numbers_get_the_pairwise_classes_without_math_verify(seed, slow_calls):
    rng = random.Random(seed)
    answers = [number(rng) for _ in range(300)] + [None, "1" * (MAX_ANSWER_CHARS + 1)] * 2
    rng.shuffle(answers)
    want = pairwise_classes(answers)
    slow_calls[0] = 0
    assert tree_classes(answers) == want and slow_calls[0] == 0
    assert len(set(want)) > 15  # many classes, not one


@pytest.mark.parametrize("seed", range(4))
def test_a_few_symbolic_forms_get_the_pairwise_classes(seed, slow_calls):
    rng = random.Random(seed)
    answers = [few(rng) for _ in range(120)]
    want = pairwise_classes(answers)
    assert tree_classes(answers) == want


def test_past_the_budget_an_answer_joins_a_class_only_by_its_normal_form(slow_calls):
    from o3viz.samples.answer_classes import MAX_SLOW

    assert tree_classes(["ab", "1", "ba"]) == ["ab", "1", "ab"]  # the stand-in's verdict, in budget
    answers = [f"w{i}" for i in range(MAX_SLOW + 4)] + ["0w", "w0", " w0 ", "$w0$"]
    got = tree_classes(answers)
    assert got[-3:] == ["w0", "w0", "w0"]  # the same text and normal form: no comparison
    assert got[-4] == "0w"  # the same to the stand-in, but the budget is spent
    assert pairwise_classes(answers)[-4] == "w0"


def test_real_math_verify_merges_symbolic_forms_as_the_pairwise_rule_does():
    answers = ["\\{1,2\\}", "3", "x^2+1", "\\{2,1\\}", "1+x^2", "3.0", "\\{1,3\\}"]
    assert tree_classes(answers) == pairwise_classes(answers)
    assert tree_classes(answers)[3:5] == ["\\{1,2\\}", "x^2+1"]


def long_tuples(n: int, size: int = 40) -> list[str]:
    """``n`` answers in ``n // 2`` classes: tuples of ``size`` elements that differ only in their
    last element (the costliest pair to tell apart element by element), each also spelled with
    spaces and dollars (the same normal form)."""
    head = ",".join(str(7 * i % 97) for i in range(size - 1))  # (3 digits after a comma: thousands)
    out = []
    for i in range(n // 2):
        out += [f"({head},-{1000 + i})", f"$({head.replace(',', ', ')}, -{1000 + i})$"]
    return out


@pytest.mark.parametrize("size", [8, 40])
def test_256_tuple_answers_merge_within_the_slow_budget(monkeypatch, slow_calls, size):
    calls = [0]

    def counted(a, b):
        calls[0] += 1
        if calls[0] > 4 * 256:
            raise AssertionError("over 4 comparisons a sample: each answer is compared with every class")
        return answers_equivalent(a, b)

    for mod in [m for name, m in sys.modules.items() if name.startswith("o3viz.samples")]:
        if hasattr(mod, "answers_equivalent"):
            monkeypatch.setattr(mod, "answers_equivalent", counted)
    answers = long_tuples(256, size)
    tree = build_tree([Sample(f"#{i}", ["one step"], a) for i, a in enumerate(answers)])
    assert len(tree.nodes[0].answers) == 128 and set(tree.nodes[0].answers.values()) == {2}
    assert calls[0] <= 65 and slow_calls[0] <= 65  # a budget, where each answer met every class
