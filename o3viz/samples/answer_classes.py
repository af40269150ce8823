r"""Which of N samples' answers are the same answer: classes under ``answers_equivalent``, found
without comparing every answer with every class.

An answer joins a class it is equivalent to (the class is named by its first spelling), else opens
a class, as comparing it with every earlier class would; but most comparisons are known without
being made, and the ones that can reach Math-Verify (tens to hundreds of milliseconds each) are
rationed:

- **The same text, or the same normal form** (``normalize_answer``), **is the same class**, at once.
- **A number is compared only with the numbers near it.** Two answers that both read as numbers
  (``evaluate_number``) are compared by value, in this process, and never match further apart
  than 6 decimal places or 1e-9 relative; the number classes sit in a sorted list, so a number
  finds the few in that window by bisection, and joins the first-seen one it matches.
- **Anything else is compared with the largest classes, up to a budget.** A comparison where a
  side is not a number can reach Math-Verify, which takes from 0.05 s for a short formula to
  seconds for a long tuple on a loaded machine. A number that matched no number, and an answer
  that is not a number, is compared with at most ``MAX_COMPARED`` classes, largest first (the
  ones the answer counts change), and at most ``MAX_SLOW`` such comparisons are made per tree;
  an answer longer than ``MAX_SLOW_CHARS`` that is not a number, and any answer past the budget,
  joins a class only by its text, normal form or value.

So on a set whose answers have a few forms (every pair of 7 fits the budget), the classes are
those of comparing each answer with every earlier class (``tests/samples/test_answer_classes.py``
checks this); a set of 256 distinct tuples costs at most ``MAX_SLOW`` comparisons, not 32,640.

>>> answer_classes(["18", "18.0", "\\frac{36}{2}", "18.0000001", None, "14", "x = 14"])
['18', '18', '18', '18', '—', '14', '14']
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from dataclasses import dataclass, field

from o3viz.text.answers import MAX_ANSWER_CHARS, answers_equivalent, evaluate_number, normalize_answer

__all__ = ["MAX_COMPARED", "MAX_SLOW", "MAX_SLOW_CHARS", "NO_ANSWER", "answer_classes"]

NO_ANSWER = "—"  # a sample without an answer
MAX_COMPARED = 6  # classes an answer is compared with where a side is not a number, largest first
MAX_SLOW = 24  # such comparisons per tree: each may reach Math-Verify (0.05 to 3 s, by length and load)
MAX_SLOW_CHARS = 80  # an answer that is not a number and longer than this joins by its normal form
_DECIMALS, _REL = 2e-6, 2e-9  # a number's window: wider than 6 decimal places and 1e-9 relative


@dataclass
class _Classes:
    """The classes so far: first spellings and sizes in first-seen order, the number classes'
    values in a sorted list of ``(value, class)``, the other classes' ids, and the comparisons
    that may reach Math-Verify still allowed."""

    reps: list[str] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    numbers: list[tuple[float, int]] = field(default_factory=list)
    others: list[int] = field(default_factory=list)
    slow_left: int = MAX_SLOW

    def near(self, v: float) -> list[int]:
        """The number classes within ``v``'s window, first-seen first."""
        d = max(_DECIMALS, _REL * abs(v))
        lo, hi = bisect_left(self.numbers, (v - d, -1)), bisect_right(self.numbers, (v + d, len(self.reps)))
        return sorted(c for _, c in self.numbers[lo:hi])

    def match(self, a: str, v: float | None) -> int | None:
        """A class ``a`` (a number of value ``v``, or not: None) is equivalent to, or None."""
        if v is not None:
            c = next((c for c in self.near(v) if answers_equivalent(a, self.reps[c])), None)
            if c is not None:
                return c
        if v is None and len(a) > MAX_SLOW_CHARS:
            return None
        slow = self.others if v is not None else range(len(self.reps))
        slow = [c for c in slow if len(self.reps[c]) <= MAX_SLOW_CHARS]
        for c in sorted(slow, key=lambda c: (-self.sizes[c], c))[:MAX_COMPARED]:
            if self.slow_left <= 0:
                return None
            self.slow_left -= 1
            if answers_equivalent(a, self.reps[c]):
                return c
        return None

    def add(self, a: str, v: float | None) -> int:
        c = len(self.reps)
        self.reps.append(a)
        self.sizes.append(0)
        if v is None:
            self.others.append(c)
        else:
            insort(self.numbers, (v, c))
        return c


def answer_classes(answers: list[str | None]) -> list[str]:
    """Each answer as its class's first spelling (stripped; ``NO_ANSWER`` for none); see the module
    docstring."""
    by_text: dict[str, int | str] = {}  # a class id, or the text itself where it matches only itself
    by_norm: dict[str, int] = {}
    classes = _Classes()
    out = []
    for raw in answers:
        a = (raw or "").strip()
        if not a:
            out.append(NO_ANSWER)
            continue
        if a not in by_text:
            by_text[a] = _class_of(a, by_norm, classes)
        c = by_text[a]
        if isinstance(c, str):
            out.append(c)
            continue
        classes.sizes[c] += 1
        out.append(classes.reps[c])
    return out


def _class_of(a: str, by_norm: dict[str, int], classes: _Classes) -> int | str:
    """The class of ``a``, opened for it when it matches none; ``a`` itself where it can match
    nothing but its own text (too long, or nothing left once normalised)."""
    n = normalize_answer(a) if len(a) <= MAX_ANSWER_CHARS else ""
    if not n:
        return a
    if n not in by_norm:
        v = evaluate_number(n)
        c = classes.match(a, v)
        by_norm[n] = c if c is not None else classes.add(a, v)
    return by_norm[n]
