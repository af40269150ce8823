"""samples_answers: a sample tree's answer classes (``o3viz.samples.answer_classes``) against
comparing each answer with every earlier class (the rule before, measured in the same run), with
the load it ran at.

- ``classes_long_tuples_vs_pairwise``: the time of ``build_tree``'s answer classes over ``--n``
  samples whose answers are distinct 40-element tuples (118 characters, the issue's shape: each
  pairwise comparison goes to Math-Verify, about a second apiece on a loaded machine), new over
  pairwise, verdict caches cleared before each; ``classes_long_tuples_s`` and
  ``pairwise_long_tuples_s`` are the two times and ``*_comparisons`` how many
  ``answers_equivalent`` calls each made.
- ``classes_short_tuples_vs_pairwise``: the same for 10-element tuples (29 characters), which the
  new classes compare with Math-Verify too, within their budget (``MAX_SLOW``).
- ``classes_256_long_tuples_s``, ``classes_256_short_tuples_s``: the new classes of 256 such
  samples (pairwise would make 32,640 comparisons).
- ``classes_256_numbers_s``: 256 numeric answers with 128 distinct values, some written as
  fractions and decimals.

The run checks that both ways gave the same classes, so the ratio compares like with like.
"""

from __future__ import annotations

import argparse
import os
import time

from o3viz.samples import answer_classes as classes_module
from o3viz.text import equivalence
from o3viz.text.answers import answers_equivalent

GOALS = {"classes_long_tuples_vs_pairwise": "≤ 0.1 (near-linear)"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--n", type=int, default=32, help="samples in the timed comparison (32)")


def tuples(n: int, size: int, first: int = 1000) -> list[str]:
    """``n`` distinct tuples of ``size`` small numbers that differ only in their last element
    (``-first``, ``-first - 1``, …)."""
    head = ",".join(str(7 * i % 97) for i in range(size - 1))  # (3 digits after a comma read as thousands)
    return [f"({head},-{first + i})" for i in range(n)]


def numbers(n: int) -> list[str]:
    out = []
    for i in range(n // 2):
        out += [str(i), f"\\frac{{{2 * i}}}{{2}}" if i % 2 else f"{i}.0"]
    return out


def pairwise(answers: list[str], calls: list[int]) -> list[str]:
    """The rule before: each answer against every earlier class, first-seen first."""
    reps: list[str] = []
    out = []
    for a in answers:
        rep = None
        for r in reps:
            calls[0] += 1
            if r == a or answers_equivalent(a, r):
                rep = r
                break
        if rep is None:
            reps.append(a)
            rep = a
        out.append(rep)
    return out


def timed_classes(answers: list[str]) -> tuple[float, list[str], int]:
    """Seconds, classes and comparisons of ``answer_classes`` (its calls counted)."""
    calls = [0]
    real = classes_module.answers_equivalent

    def counted(a, b):
        calls[0] += 1
        return real(a, b)

    classes_module.answers_equivalent = counted
    equivalence._equivalent.cache_clear()
    try:
        t = time.perf_counter()
        got = classes_module.answer_classes(answers)
        return time.perf_counter() - t, got, calls[0]
    finally:
        classes_module.answers_equivalent = real


def compare(name: str, n: int, size: int) -> None:
    """Time the new classes and the pairwise ones on ``n`` tuples and print both. Each way gets
    tuples of its own (Math-Verify's child keeps what it parsed), and the classes of the pairwise
    way's tuples are checked to be the same both ways."""
    new_s, _, new_calls = timed_classes(tuples(n, size, 1000))
    answers = tuples(n, size, 5000)
    calls = [0]
    equivalence._equivalent.cache_clear()
    t = time.perf_counter()
    want = pairwise(answers, calls)
    old_s = time.perf_counter() - t
    got = classes_module.answer_classes(answers)
    assert got == want, "the new classes differ from the pairwise ones: the ratio would mislead"
    assert calls[0] == n * (n - 1) // 2, "the baseline did not compare every pair"
    print(f"classes_{name}_s: {new_s:.3f}")
    print(f"pairwise_{name}_s: {old_s:.3f}")
    print(f"classes_{name}_comparisons: {new_calls}")
    print(f"pairwise_{name}_comparisons: {calls[0]}")
    print(f"classes_{name}_vs_pairwise: {new_s / old_s:.2g}")


def run(args: argparse.Namespace) -> int:
    print(f"load_before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"samples: {args.n}")
    compare("long_tuples", args.n, 40)
    compare("short_tuples", args.n, 10)
    for name, size in (("long", 40), ("short", 10)):
        s256, _, c256 = timed_classes(tuples(256, size, 9000))
        print(f"classes_256_{name}_tuples_s: {s256:.3f} ({c256} comparisons)")
    sn, got_n, _ = timed_classes(numbers(256))
    assert len(set(got_n)) == 128
    print(f"classes_256_numbers_s: {sn:.3f}")
    print(f"load_after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0
