"""Which grade a headline uses, and the figures under both: the source's grade (the imported file's
own label) and o3viz's answer check (the reference, read with the field's equivalence) can
disagree, and a source grade can be broken (it took ``13`` from ``3\\sqrt{13}``). ``auto``, the
default everywhere a grade is chosen (the Dataset page, Compare, ``o3viz compare``, ``o3viz.show``),
is the grade the data supports:

- where the two disagree on more than ``DISAGREE_LIMIT`` of the traces graded by both, o3viz's
  check where it has one, else the source's (``check_first``: the check's reading can be inspected
  answer by answer, the source's cannot; traces with no reference keep the source's grade);
- otherwise the source's grade where it has one, else o3viz's check (``either``).

Wherever they disagree by more than the limit, every headline shows both figures and says which
one it uses (``GradeChoice.lines``).

>>> c = choose_grade([1, 0, 0, 1], [1, 1, 1, 1])
>>> c.grade, c.disagree, c.both
('check_first', 2, 4)
>>> choose_grade([1, 1, None], [1, 1, 0]).grade
'either'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

__all__ = [
    "DISAGREE_LIMIT",
    "GRADED_BY",
    "GRADES",
    "GRADE_LABELS",
    "GRADE_WORDS",
    "GradeChoice",
    "add_check_first",
    "choose_grade",
    "paired_grade_lines",
    "resolve_grade",
]

GRADES = {
    "auto": (
        "correct",
        "the grade the data supports (o3viz's check first where the two disagree on over 2%)",
    ),
    "either": ("correct", "the source's grade where it has one, else o3viz's answer check"),
    "check_first": ("check_first_correct", "o3viz's answer check where it has one, else the source's grade"),
    "source": ("source_correct", "the source's grade (the imported file's own label)"),
    "check": ("check_correct", "o3viz's answer check against the reference"),
}
# The one name of the option and of each choice, on every page ("Graded by") and in the CLI (--grade)
GRADED_BY = "Graded by"
GRADE_LABELS = {
    "auto": "the data's choice",
    "either": "the source, else o3viz",
    "check_first": "o3viz, else the source",
    "source": "the source",
    "check": "o3viz's check",
}

DISAGREE_LIMIT = 0.02  # over this share of doubly graded traces, headlines show both grades
GRADE_WORDS = {  # each grade in a headline's words
    "check_first": "o3viz's check (else the source's grade)",
    "either": "the source's grade (else o3viz's check)",
    "source": "the source's grade",
    "check": "o3viz's check",
}


@dataclass
class GradeChoice:
    """The grade used, why, and each grade's figure (right, graded) over the same traces."""

    grade: str  # the grade used: check_first, either, source or check (never auto)
    asked: str  # what was asked for: auto, either, source or check
    both: int  # traces graded by both the source and o3viz's check
    disagree: int  # of those, where the two grades differ
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)  # grade -> (right, graded)

    @property
    def share(self) -> float:
        """The share of doubly graded traces whose grades differ (0 when none is graded by both)."""
        return self.disagree / self.both if self.both else 0.0

    @property
    def split(self) -> bool:
        """Whether the two grades disagree by more than ``DISAGREE_LIMIT``: then both are shown."""
        return self.share > DISAGREE_LIMIT

    def reason(self) -> str:
        """Why this grade, in one sentence."""
        if self.asked != "auto":
            return f"Graded by {GRADE_WORDS[self.grade]}, as chosen."
        if self.split:
            return (
                f"Graded by {GRADE_WORDS[self.grade]}: the check and the source's grade disagree on "
                f"{self.disagree:,} of {self.both:,} answers graded by both ({self.share:.0%}, over "
                f"{DISAGREE_LIMIT:.0%})."
            )
        return (
            f"Graded by {GRADE_WORDS['either']}: the two grades agree on at least {1 - DISAGREE_LIMIT:.0%}."
        )

    def lines(self) -> list[str]:
        """The headline's grade lines: where the grades split, each one's figure and which is
        used; else nothing (one grade tells the story)."""
        if not self.split:
            return []
        used = self.counts.get(self.grade)  # another grade with the same figure is not repeated
        shown = [self.grade] + [
            g for g in ("check", "source") if g != self.grade and self.counts.get(g) != used
        ]
        figs = []
        for g in shown:
            k, n = self.counts.get(g, (0, 0))
            if n:
                used = " (used)" if g == self.grade else ""
                figs.append(f"{k / n:.0%} correct by {GRADE_WORDS[g]} ({k:,} of {n:,}){used}")
        return ["; ".join(figs) + ".", self.reason()]


def _series(values) -> pd.Series:
    return pd.to_numeric(
        pd.Series(list(values) if not isinstance(values, pd.Series) else values), errors="coerce"
    )


def choose_grade(source: Iterable, check: Iterable, asked: str = "auto") -> GradeChoice:
    """The grade for traces whose source grades are ``source`` and o3viz's checks ``check`` (1, 0
    or missing, aligned); ``asked`` other than ``auto`` is kept as it is, with the figures."""
    s, c = _series(source).reset_index(drop=True), _series(check).reset_index(drop=True)
    both = s.notna() & c.notna()
    disagree = int((s[both] != c[both]).sum())
    either, check_first = s.where(s.notna(), c), c.where(c.notna(), s)
    pairs = (("source", s), ("check", c), ("either", either), ("check_first", check_first))
    counts = {g: (int((v == 1).sum()), int(v.notna().sum())) for g, v in pairs}
    choice = GradeChoice(asked, asked, int(both.sum()), disagree, counts)
    if asked == "auto":
        choice.grade = "check_first" if choice.split else "either"
    return choice


def resolve_grade(df: pd.DataFrame, asked: str = "auto") -> GradeChoice:
    """``choose_grade`` over a frame's ``source_correct`` and ``check_correct`` columns (suffixed
    ``_a``/``_b`` for paired rows: both sides count)."""
    if {"source_correct", "check_correct"} <= set(df.columns):
        return choose_grade(df["source_correct"], df["check_correct"], asked)
    if {"source_correct_a", "check_correct_a"} <= set(df.columns):
        s = pd.concat([df["source_correct_a"], df["source_correct_b"]], ignore_index=True)
        c = pd.concat([df["check_correct_a"], df["check_correct_b"]], ignore_index=True)
        return choose_grade(s, c, asked)
    return choose_grade([], [], asked)


def add_check_first(df: pd.DataFrame, suffixes: tuple[str, ...] = ("",)) -> pd.DataFrame:
    """``df`` with ``check_first_correct`` (per suffix): o3viz's check where it has one, else the
    source's grade. The frame is changed in place and returned."""
    for x in suffixes:
        s, c = f"source_correct{x}", f"check_correct{x}"
        if {s, c} <= set(df.columns):
            check = pd.to_numeric(df[c], errors="coerce")
            df[f"check_first_correct{x}"] = check.where(check.notna(), pd.to_numeric(df[s], errors="coerce"))
    return df


def paired_grade_lines(choice: GradeChoice | None, grade_table: list[dict]) -> list[str]:
    """A paired comparison's grade lines (``PairedResult.grade_lines``): where the two grades
    split, A's and B's accuracy under each (``grade_table`` rows) and which one is used."""
    if choice is None or not choice.split:
        return []

    def pct(v: float | None) -> str:
        return "—" if v is None else f"{v:.1%}"

    parts = [
        f"{GRADE_WORDS[g['grade']]}: A {pct(g['accuracy_a'])}, B {pct(g['accuracy_b'])} (n = {g['graded']:,})"
        + (" (used)" if g["shown"] else "")
        for g in grade_table
        if g["grade"] in ("source", "check") or g["shown"]
    ]
    return ["; ".join(parts) + ".", choice.reason()]
