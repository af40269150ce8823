"""Two runs on the same questions, paired: what the request names (``PairedCompareRequest``), how
questions are matched (``pair_frames``) and what changed (``paired_compare``: accuracy of A and of
B, their paired difference with a 95% interval, the 2×2 table, McNemar's exact p, and the paired
difference of every reasoning measure). Rows in are index rows (``o3viz.store.index.IndexRow``
fields) as frames; the store side is ``o3viz.store.paired``.

A flip whose two answers are the same (``answers_equivalent``, the grading's own equivalence) stays
a flip, since the 2×2 table and McNemar's test count it under the chosen grade, but it is listed
after the others with its reason (``flip_note``: "same answer; the source graded them
differently"). The result also says where another grade turns the difference the other way
(``reversals``) and which measures are thin (``thin``: fewer than ``MIN_N`` pairs or ``MIN_EVENTS``
events), and suggests the sides worth opening on (``PairedCompareRequest.suggested``).

Pairing key: the source's record (its line in the file) where both sides are provably the same
records of one file (two systems of one file, such as GSM8K's four solutions: the same record hash
and question at every record), else the question text with only spacing, case, trailing
punctuation and equivalent Unicode forms folded (``question_key``). Each side keeps the first trace
of a question; unpaired questions and repeats are counted and listed, never silently dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
import pandas as pd

from o3viz.analysis import grade_choice as gc
from o3viz.analysis.paired_measures import THIN_RULE, mark_thin, measure_frame, paired_measures
from o3viz.analysis.paired_stats import Table2x2, mcnemar_chi2, mcnemar_exact, paired_difference, table_of
from o3viz.analysis.pairing import (
    Pairing,
    pair_frames,
    question_keys,
)
from o3viz.errors import UsageError
from o3viz.text.answers import answers_equivalent
from o3viz.text.classify import TYPES as STEP_TYPES

__all__ = [
    "GRADE_COLUMNS",
    "MIN_PAIRS",
    "ROW_COLUMNS",
    "PairedCompareRequest",
    "PairedResult",
    "Side",
    "flip_notes",
    "paired_compare",
]

Grade = Literal["auto", "either", "source", "check", "check_first"]
KeyBy = Literal["auto", "record", "question"]
GRADE_COLUMNS = {"either": "correct", "source": "source_correct", "check": "check_correct", "check_first": "check_first_correct"}  # fmt: skip
ROW_COLUMNS = (
    "key", "name", "dataset", "model", "question", "answer", "record", "part", "line_hash", "tokens", "steps",
    "backtracks",
    "self_checks", "first_wrong_pos", "importance", "correct", "source_correct", "check_correct",
) + tuple(f"t_{t}" for t in STEP_TYPES)  # fmt: skip
MIN_PAIRS = 30  # fewer graded pairs and the view says n is too small to say much
GRADE_NAMES = gc.GRADE_WORDS  # "Under <name> the difference reverses"
MAX_SUGGEST_SIDES = 80  # sides compared when suggesting a pair (most traces first)


@dataclass
class Side:
    """One side of the comparison: a dataset, optionally narrowed to one model (a system)."""

    dataset: str
    model: str = ""

    @property
    def label(self) -> str:
        return f"{self.dataset} · {self.model}" if self.model else self.dataset


@dataclass
class PairedCompareRequest:
    """What to compare: A and B, the grade that decides right and wrong, and the pairing key."""

    a: Side
    b: Side
    grade: Grade = "auto"  # the grade the data supports (o3viz.analysis.grade_choice), resolved on the pairs
    key_by: KeyBy = "auto"  # record for the same records of one file, else the question text
    min_pairs: int = MIN_PAIRS

    def validate(self) -> PairedCompareRequest:
        """Itself, or a one-line ``UsageError`` naming the bad field."""
        for name, side in (("A", self.a), ("B", self.b)):
            if not isinstance(side, Side) or not side.dataset:
                raise UsageError(f"side {name}: name a dataset (`o3viz library list` shows the datasets)")
        if (self.a.dataset, self.a.model) == (self.b.dataset, self.b.model):
            raise UsageError(f"A and B are the same traces ({self.a.label}); name two datasets or two models")
        if self.grade != "auto" and self.grade not in GRADE_COLUMNS:
            raise UsageError(f"grade {self.grade!r}: one of auto, {', '.join(GRADE_COLUMNS)}")
        if self.key_by not in ("auto", "record", "question"):
            raise UsageError(f"key {self.key_by!r}: one of auto, record, question")
        if self.key_by == "record" and self.a.dataset != self.b.dataset:
            raise UsageError("--key record pairs by line of one file: A and B must be the same dataset")
        if not isinstance(self.min_pairs, int) or self.min_pairs < 1:
            raise UsageError(f"min_pairs {self.min_pairs!r}: a whole number of at least 1")
        return self

    @classmethod
    def suggested(cls, rows: pd.DataFrame) -> PairedCompareRequest | None:
        """The two sides that share the most questions (``question_key``), fewer repeats breaking a
        tie: two datasets, or two models of one; None when no two share a question. ``rows``:
        dataset, model and question of every trace.

        >>> rows = pd.DataFrame({"dataset": ["x", "y", "z", "z"], "model": ["", "", "m1", "m1"],
        ...                      "question": ["1+1?", "Who?", "1+1", "who"]})
        >>> r = PairedCompareRequest.suggested(rows)
        >>> r.a.label, r.b.label
        ('x', 'z')
        """
        if rows.empty:
            return None
        rows = rows[rows["dataset"].fillna("") != ""]
        keys = rows.assign(k=question_keys(rows))  # the whole question's, where rows has question_key
        keys = keys[keys["k"] != ""]
        sides: dict[tuple[str, str], pd.Series] = {}
        for d, g in keys.groupby("dataset", sort=True):
            sides[(d, "")] = g["k"]
            models = sorted(m for m in g["model"].dropna().unique() if m)
            if len(models) >= 2:  # systems of one dataset are sides of their own
                sides |= {(d, m): g["k"][g["model"] == m] for m in models}
        kept = sorted(sides, key=lambda s: -len(sides[s]))[:MAX_SUGGEST_SIDES]
        kept.sort()
        sets = {s: set(sides[s]) for s in kept}
        best, best_score = None, (0, 0)
        for i, sa in enumerate(kept):
            for sb in kept[i + 1 :]:
                if sa[0] == sb[0] and "" in (sa[1], sb[1]):  # a dataset and one of its own models
                    continue
                repeats = len(sides[sa]) - len(sets[sa]) + len(sides[sb]) - len(sets[sb])
                score = (len(sets[sa] & sets[sb]), -repeats)
                if score[0] and (best is None or score > best_score):
                    best, best_score = (sa, sb), score
        return None if best is None else cls(Side(*best[0]), Side(*best[1]))


@dataclass
class PairedResult:
    """What changed from A to B over the paired questions; differences are B − A."""

    request: PairedCompareRequest
    n_a: int  # traces on side A
    n_b: int
    pairing: Pairing
    graded: int  # pairs graded on both sides under the request's grade
    table: Table2x2
    acc_a: float | None
    acc_b: float | None
    diff: tuple[float, float, float] | None  # (B − A, lo, hi), Agresti–Min 95%
    p_mcnemar: float
    chi2: float  # McNemar's statistic, for comparison with tables that print it
    measures: pd.DataFrame  # measure, what, n, mean_a, mean_b, diff, lo, hi, events, thin (mark_thin)
    by_grade: dict[str, dict] = field(default_factory=dict)  # the table under each other grade
    grade_choice: gc.GradeChoice | None = None  # the grade used (``auto`` resolved) and why

    def grade_lines(self) -> list[str]:
        """Where the two grades disagree on more than 2% of the paired answers: each grade's
        accuracies and which one the headline uses; else nothing."""
        return gc.paired_grade_lines(self.grade_choice, self.grade_table())

    @property
    def n(self) -> int:
        return len(self.pairing.rows)

    @property
    def rows(self) -> pd.DataFrame:
        return self.pairing.rows

    def flips(self) -> pd.DataFrame:
        """The questions that flipped (A only right first, then B only right, then those whose two
        answers are the same, each with its ``flip_note``)."""
        return self.rows[self.rows["flip"].isin(["A only", "B only"])]

    @property
    def thin_rule(self) -> str:
        """When a measure is thin, in words."""
        return THIN_RULE

    @property
    def same_answer_flips(self) -> int:
        """Flips whose two answers are the same: graded differently, not answered differently."""
        return int((self.rows["flip_note"] != "").sum()) if "flip_note" in self.rows else 0

    def grade_table(self) -> list[dict]:
        """Accuracy of A and B under the chosen grade and under each other (``by_grade``), each
        with ``reverses``: whether its difference B − A has the opposite sign of the chosen one."""
        shown = {"graded": self.graded, "accuracy_a": self.acc_a, "accuracy_b": self.acc_b,
                 "mcnemar_p": self.p_mcnemar}  # fmt: skip
        out = [{"grade": self.request.grade, "name": GRADE_NAMES[self.request.grade], "shown": True, **shown}]
        d = None if self.acc_a is None else self.acc_b - self.acc_a
        for g, v in self.by_grade.items():
            dv = v["accuracy_b"] - v["accuracy_a"]
            out.append({"grade": g, "name": GRADE_NAMES[g], "shown": False, **v} | {"reverses": d is not None and d * dv < 0})  # fmt: skip
        out[0]["reverses"] = False
        return out

    def reversals(self) -> list[str]:
        """One sentence per other grade under which the difference goes the other way (a grade
        whose figures repeat another's, as "either" repeats the source's, is not said twice)."""
        said, out = set(), []
        for g in reversed(self.grade_table()):  # the plainer name is said: the source's, not either
            figures = (g["accuracy_a"], g["accuracy_b"], g["graded"])
            if g["reverses"] and figures not in said:
                out.insert(0, f"Under {g['name']} the difference reverses: A {figures[0]:.1%} vs B {figures[1]:.1%} (n = {figures[2]:,}).")  # fmt: skip
            said.add(figures)
        return out

    def grade_disagreements(self) -> str | None:
        """How often the source's grade and o3viz's check disagree on each side's paired answers
        (where both graded), in one sentence; None where neither side has both."""
        parts = []
        for side in ("a", "b"):
            s = pd.to_numeric(self.rows[f"source_correct_{side}"], errors="coerce")
            c = pd.to_numeric(self.rows[f"check_correct_{side}"], errors="coerce")
            both = s.notna() & c.notna()
            if both.any():
                parts.append(
                    f"{int((s[both] != c[both]).sum()):,} of {int(both.sum()):,} answers in {side.upper()}"
                )
        if not parts:
            return None
        return "The source's grade and o3viz's check disagree on " + " and ".join(parts) + "."

    def too_small(self) -> str | None:
        """A plain sentence when the pairs are too few to say which is better, else None."""
        t, need = self.table, self.request.min_pairs
        if self.graded == 0:
            return "No question is graded on both sides, so accuracy cannot be compared."
        if self.graded < need:
            return (
                f"Only {self.graded} question{'s are' if self.graded != 1 else ' is'} graded on both sides "
                f"(fewer than {need}): the "
                "interval is wide, and only a large difference could show."
            )
        if t.discordant < 6:
            return (
                f"A and B disagree on only {t.discordant} of {self.graded} questions: too few flips "
                "for the test to find a difference even if there is one."
            )
        return None

    def headline(self) -> str:
        """One sentence: which is better, by how much, how sure, out of how many."""
        if self.diff is None or self.acc_a is None or self.acc_b is None:
            return self.too_small() or "No graded pairs."
        d, lo, hi = self.diff
        a, b = self.request.a.label, self.request.b.label
        verdict = (
            f"{b if d > 0 else a} is better by {100 * abs(d):.1f} points"
            if self.p_mcnemar < 0.05
            else f"no clear difference ({100 * d:+.1f} points for B)"
        )
        return (
            f"{a}: {self.acc_a:.1%} vs {b}: {self.acc_b:.1%} on {self.graded:,} paired questions — "
            f"{verdict} (95% CI {100 * lo:+.1f} to {100 * hi:+.1f}; McNemar exact p = {self.p_mcnemar:.2g})."
        )

    def to_dict(self) -> dict:
        """Everything but the per-question rows, as plain JSON values."""
        t, p = self.table, self.pairing
        return {
            "a": self.request.a.label,
            "b": self.request.b.label,
            "grade": self.request.grade,
            "key_by": p.key_by,
            "n_a": self.n_a,
            "n_b": self.n_b,
            "pairs": self.n,
            "graded": self.graded,
            "table": {"both": t.both, "a_only": t.a_only, "b_only": t.b_only, "neither": t.neither},
            "accuracy_a": self.acc_a,
            "accuracy_b": self.acc_b,
            "difference": None
            if self.diff is None
            else dict(zip(("b_minus_a", "lo", "hi"), self.diff, strict=True)),
            "mcnemar_p": self.p_mcnemar,
            "mcnemar_chi2": None if np.isnan(self.chi2) else self.chi2,
            "too_small": self.too_small(),
            "headline": self.headline(),
            "unpaired": {
                "a": p.n_unpaired_a,
                "b": p.n_unpaired_b,
                "a_names": p.unpaired_a,
                "b_names": p.unpaired_b,
            },
            "repeats": {"a": p.repeats_a, "b": p.repeats_b},
            "measures": _records(self.measures),
            "by_grade": self.by_grade,
            "reversals": self.reversals(),
            "grade_disagreements": self.grade_disagreements(),
            "grade_asked": None if self.grade_choice is None else self.grade_choice.asked,
            "grade_lines": self.grade_lines(),
            "same_answer_flips": self.same_answer_flips,
            "thin_rule": THIN_RULE,
        }


def _records(df: pd.DataFrame) -> list[dict]:
    return [
        {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in r.items()}
        for r in df.to_dict("records")
    ]


def _grade_arrays(rows: pd.DataFrame, grade: str) -> tuple[np.ndarray, np.ndarray]:
    col = GRADE_COLUMNS[grade]
    return (
        pd.to_numeric(rows[f"{col}_a"], errors="coerce").to_numpy(dtype=float),
        pd.to_numeric(rows[f"{col}_b"], errors="coerce").to_numpy(dtype=float),
    )


def _flip_column(ca: np.ndarray, cb: np.ndarray) -> np.ndarray:
    out = np.full(len(ca), "ungraded", dtype=object)
    graded = ~(np.isnan(ca) | np.isnan(cb))
    out[graded & (ca == 1) & (cb == 1)] = "both right"
    out[graded & (ca == 1) & (cb == 0)] = "A only"
    out[graded & (ca == 0) & (cb == 1)] = "B only"
    out[graded & (ca == 0) & (cb == 0)] = "both wrong"
    return out


# flips first; a flip of two equal answers after the others (its note says why it is one)
_FLIP_ORDER = {"A only": 0, "B only": 1, "same answer": 1.5, "both wrong": 2, "both right": 3, "ungraded": 4}


def _grader(source_a, source_b, grade: str) -> str:
    """Who graded a pair differently, in words."""
    if grade == "check" or (grade == "either" and pd.isna(source_a) and pd.isna(source_b)):
        return "o3viz's check graded them differently"
    if grade == "source" or not (pd.isna(source_a) or pd.isna(source_b)):
        return "the source graded them differently"
    return "the source graded one and o3viz's check the other"


def flip_notes(rows: pd.DataFrame, grade: str) -> list[str]:
    """Per paired row, why a flip whose two answers are the same (by ``answers_equivalent``, the
    equivalence grading uses) is one; "" elsewhere.

    >>> rows = pd.DataFrame({"flip": ["B only", "B only"], "answer_a": [r"3\\sqrt{13}", "4"],
    ...                      "answer_b": [r"3 \\sqrt{13}", "5"], "source_correct_a": [0, 0],
    ...                      "source_correct_b": [1, 1]})
    >>> flip_notes(rows, "either")
    ['same answer; the source graded them differently', '']
    """
    out = []
    for f, aa, ab, sa, sb in zip(rows["flip"], rows["answer_a"], rows["answer_b"], rows["source_correct_a"],
                                 rows["source_correct_b"], strict=True):  # fmt: skip
        same = f in ("A only", "B only") and isinstance(aa, str) and isinstance(ab, str)
        out.append(f"same answer; {_grader(sa, sb, grade)}" if same and answers_equivalent(aa, ab) else "")
    return out


def paired_compare(
    a: pd.DataFrame, b: pd.DataFrame, req: PairedCompareRequest, labels: pd.DataFrame | None = None
) -> PairedResult:
    """Pair ``a`` and ``b`` (frames of ``ROW_COLUMNS``) and say what changed. ``labels`` (key,
    labelled, labelled_wrong) adds people's step labels as a measure where both traces have them."""
    req.validate()
    pairing = pair_frames(a, b, req.key_by, req.a.dataset == req.b.dataset)
    rows = gc.add_check_first(pairing.rows, ("_a", "_b"))
    choice = gc.resolve_grade(rows, req.grade)
    req = replace(req, grade=choice.grade)
    ca, cb = _grade_arrays(rows, req.grade)
    table = table_of(ca, cb)
    rows["flip"] = _flip_column(ca, cb)
    rows["flip_note"] = flip_notes(rows, req.grade)
    rows = measure_frame(rows, labels)
    order = rows["flip"].where(rows["flip_note"] == "", "same answer").map(_FLIP_ORDER)
    rows = rows.iloc[np.argsort(order.to_numpy(), kind="stable")].reset_index(drop=True)
    pairing.rows = rows
    by_grade = {}
    for g in GRADE_COLUMNS:
        t = table_of(*_grade_arrays(rows, g))
        if g != req.grade and t.n and g != "check_first":  # check_first: a mix, shown only when used
            by_grade[g] = {"graded": t.n, "accuracy_a": (t.both + t.a_only) / t.n,
                           "accuracy_b": (t.both + t.b_only) / t.n, "a_only": t.a_only,
                           "b_only": t.b_only, "mcnemar_p": mcnemar_exact(t.a_only, t.b_only)}  # fmt: skip
    n = table.n
    return PairedResult(
        request=req,
        n_a=len(a),
        n_b=len(b),
        pairing=pairing,
        graded=n,
        table=table,
        acc_a=(table.both + table.a_only) / n if n else None,
        acc_b=(table.both + table.b_only) / n if n else None,
        diff=paired_difference(table),
        p_mcnemar=mcnemar_exact(table.a_only, table.b_only),
        chi2=mcnemar_chi2(table.a_only, table.b_only),
        measures=mark_thin(paired_measures(rows), rows),
        by_grade=by_grade,
        grade_choice=choice,
    )
