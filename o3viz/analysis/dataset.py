"""What holds across many traces: aggregates of index rows (``o3viz.store.index.IndexRow``) for the
Dataset page, and which traces each bar stands for (``select``), so every bar leads to its traces.

Groups are the traces' correctness ("correct" / "wrong") under one named grade (``GRADES``: the
source's, o3viz's answer check, or the source's where it has one, else the check's); ungraded traces
count in totals only. Lengths are in steps (every trace has them; imported traces have no tokens).
Every proportion carries its n and a 95% Wilson interval; length bins with fewer than
``MIN_BIN`` traces are merged with their neighbour.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from o3viz.analysis import answer_measures, proportions
from o3viz.analysis.grade_choice import GRADES, GradeChoice, add_check_first, resolve_grade
from o3viz.text.classify import TYPES as STEP_TYPES

COLUMNS = (
    "key", "name", "dataset", "model", "steps", "chars", "correct", "verdict", "backtracks",
    "self_checks", "claims", "claim_errors", "first_wrong_pos", "importance", "source_correct",
    "check_correct",
) + tuple(f"t_{t}" for t in STEP_TYPES) + answer_measures.INDEX_COLUMNS  # fmt: skip
GROUPS = ("correct", "wrong")
UNGRADED = "ungraded"  # traces without the chosen grade: the figures that need no grade show them too


def groups_of(df: pd.DataFrame) -> tuple[str, ...]:
    """The groups a grade-free figure draws: ungraded traces too, where there are any."""
    return (*GROUPS, UNGRADED) if "group" in df.columns and (df["group"] == UNGRADED).any() else GROUPS


MAX_BINS = 10
MIN_BIN = 5  # a length bin holds at least this many traces (smaller ones merge with a neighbour)
OUTLIERS = 20
OUTLIER_Z = 3.5  # the stated rule: robust z-score (median, MAD) of at least this on one measure
OUTLIER_RULE = f"robust z-score ≥ {OUTLIER_Z} in length, backtracks per step or wrong claims per claim (at most {OUTLIERS})"


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float] | None:
    """The 95% Wilson score interval of k successes in n trials (None for n = 0), at z = 1.96 as
    the dataset figures have always been computed (``o3viz.analysis.proportions.wilson_z``).

    >>> [round(v, 3) for v in wilson(2, 2)]
    [0.342, 1.0]
    """
    return proportions.wilson_z(k, n, z) if n > 0 else None


def rate_text(k: int, n: int) -> str:
    """A proportion for people, with its n and interval: "80% (8 of 10; 95% CI 49–94%)".

    >>> rate_text(1, 1)
    '100% (1 of 1; 95% CI 21–100%)'
    """
    if n <= 0:
        return "— (no traces)"
    lo, hi = wilson(k, n)
    return f"{k / n:.0%} ({k:,} of {n:,}; 95% CI {lo * 100:.0f}–{hi * 100:.0f}%)"


@dataclass
class DatasetSummary:
    """Aggregates of a set of traces; every frame has a ``sel`` column (JSON) naming its traces."""

    n: int
    disagree: int  # traces whose two gradings disagree
    graded: int
    correct: int
    length: pd.DataFrame  # bin, lo, hi, correct, wrong, ungraded, accuracy, sel
    type_mix: pd.DataFrame  # type, group, share (mean fraction of a trace's steps), traces, sel
    rates: pd.DataFrame  # behaviour, group, traces_with (fraction), per_100_steps, sel
    first_wrong: pd.DataFrame  # bin, lo, hi, group, traces, sel
    claim_rates: pd.DataFrame  # model, group, error_rate (wrong claims / claims), traces_with, claims, sel
    importance: pd.DataFrame  # type, importance (mean), traces; empty when no trace has importance
    outliers: pd.DataFrame  # key, name, dataset, model, correct, steps, …, why
    grade_choice: GradeChoice | None = None  # the grade used and, where they split, both figures

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.graded if self.graded else None


def frame(
    rows: list[tuple] | list[dict] | pd.DataFrame, columns: tuple[str, ...] = COLUMNS, grade: str = "auto"
) -> pd.DataFrame:
    """Index rows as a frame; ``group`` is each trace's correctness under ``grade`` (``GRADES``;
    ``auto`` is resolved on these rows by ``o3viz.analysis.grade_choice``: ``df.attrs["grade_choice"]``)."""
    if isinstance(rows, pd.DataFrame):  # already columnar (``o3viz.store.columnar.select_frame``)
        df = rows[list(columns)].copy()
    else:
        df = (
            pd.DataFrame.from_records(rows, columns=list(columns))
            if rows
            else pd.DataFrame(columns=list(columns))
        )
    add_check_first(df)
    choice = resolve_grade(df, grade)
    df.attrs["grade_choice"] = asdict(choice)  # plain values: a frame's attrs travel into Parquet
    col = GRADES[choice.grade][0] if GRADES[choice.grade][0] in df.columns else "correct"
    df["group"] = df[col].map({1: "correct", 0: "wrong"}).fillna("ungraded")
    if {"source_correct", "check_correct"} <= set(df.columns):
        s, c = df["source_correct"], df["check_correct"]
        df["disagree"] = s.notna() & c.notna() & (s != c)
    return df


def _sel(**kw) -> str:
    return json.dumps(kw, sort_keys=True)


def _edges(values: pd.Series) -> np.ndarray:
    """Up to MAX_BINS bin edges: quantiles of the values, whole numbers, each bin non-empty."""
    qs = np.quantile(values.to_numpy(dtype=float), np.linspace(0, 1, MAX_BINS + 1))
    edges = np.unique(np.round(qs))
    if len(edges) < 2:
        edges = np.array([edges[0], edges[0] + 1])
    edges[-1] = max(edges[-1], values.max()) + 1e-9
    return edges


def _merge_small(edges: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """Drop inner edges until every bin holds at least ``MIN_BIN`` traces (or one bin is left)."""
    edges = list(edges)
    while len(edges) > 2:
        counts = np.histogram(steps, bins=edges)[0]
        small = int(np.argmin(counts))
        if counts[small] >= MIN_BIN:
            break
        # merge the smallest bin with its smaller neighbour: remove the edge between them
        left = counts[small - 1] if small > 0 else np.inf
        right = counts[small + 1] if small + 1 < len(counts) else np.inf
        edges.pop(small if left <= right else small + 1)
    return np.array(edges)


def length_bins(df: pd.DataFrame) -> pd.DataFrame:
    if df.empty:
        return pd.DataFrame(
            columns=["bin", "lo", "hi", *GROUPS, "ungraded", "graded", "accuracy", "ci_lo", "ci_hi", "sel"]
        )
    steps = df["steps"].to_numpy(dtype=float)
    edges = _merge_small(_edges(df["steps"]), steps)
    idx = np.clip(np.searchsorted(edges, steps, side="right") - 1, 0, len(edges) - 2)
    group = df["group"].to_numpy()
    nb = len(edges) - 1
    counts = {g: np.bincount(idx[group == g], minlength=nb) for g in GROUPS}
    total = np.bincount(idx, minlength=nb)
    out = []
    for b in range(nb):
        lo, hi = int(np.ceil(edges[b])), int(np.ceil(edges[b + 1])) - 1
        c, w = int(counts["correct"][b]), int(counts["wrong"][b])
        out.append(
            {
                "bin": f"{lo}" if lo >= hi else f"{lo}–{hi}",
                "lo": lo,
                "hi": max(lo, hi),
                "correct": c,
                "wrong": w,
                "ungraded": int(total[b]) - c - w,
                "graded": c + w,
                "accuracy": c / (c + w) if c + w else None,
                "ci_lo": wilson(c, c + w)[0] if c + w else None,
                "ci_hi": wilson(c, c + w)[1] if c + w else None,
                "sel": _sel(steps=[lo, max(lo, hi)]),
            }
        )
    return pd.DataFrame(out)


def type_mix(df: pd.DataFrame) -> pd.DataFrame:
    """Mean share of each step type among a trace's steps, for correct and for wrong traces."""
    out = []
    counts = df[[f"t_{t}" for t in STEP_TYPES]].to_numpy(dtype=float)  # (traces, types)
    typed = counts.sum(axis=1)
    group = df["group"].to_numpy()
    for g in groups_of(df):
        rows = (group == g) & (typed > 0)
        shares = counts[rows] / typed[rows, None] if rows.any() else None
        for j, t in enumerate(STEP_TYPES):
            out.append(
                {
                    "type": t,
                    "group": g,
                    "share": None if shares is None else float(shares[:, j].mean()),
                    "traces": int((counts[rows, j] > 0).sum()),
                    "sel": _sel(group=g, type=t),
                }
            )
    return pd.DataFrame(out)


def behaviour_rates(df: pd.DataFrame) -> pd.DataFrame:
    out = []
    for col, label in (("backtracks", "backtrack"), ("self_checks", "self-check")):
        for g in groups_of(df):
            part = df[df["group"] == g]
            steps = part["steps"].sum()
            k, n = int((part[col] > 0).sum()), len(part)
            ci = wilson(k, n)
            out.append(
                {
                    "behaviour": label,
                    "group": g,
                    "traces_with": k / n if n else None,
                    "with_n": k,
                    "ci_lo": ci[0] if ci else None,
                    "ci_hi": ci[1] if ci else None,
                    "per_100_steps": float(100 * part[col].sum() / steps) if steps else None,
                    "traces": len(part),
                    "sel": _sel(group=g, has=col),
                }
            )
    return pd.DataFrame(out)


def first_wrong_bins(df: pd.DataFrame, bins: int = 10) -> pd.DataFrame:
    """Where in the reasoning the first wrong claim sits (0 = first step, 1 = last)."""
    out = []
    pos = pd.to_numeric(df["first_wrong_pos"], errors="coerce")
    for g in groups_of(df):
        part = pos[(df["group"] == g) & pos.notna()]
        idx = np.minimum((part.to_numpy() * bins).astype(int), bins - 1)
        for b in range(bins):
            lo, hi = b / bins, (b + 1) / bins
            out.append(
                {
                    "bin": f"{lo:.1f}–{hi:.1f}",
                    "lo": lo,
                    "hi": hi,
                    "group": g,
                    "traces": int((idx == b).sum()),
                    "sel": _sel(group=g, first_wrong=[lo, hi]),
                }
            )
    return pd.DataFrame(out)


def claim_rates(df: pd.DataFrame, by: str = "model") -> pd.DataFrame:
    # one grouped pass (a boolean mask per value and group was the Dataset page's slowest part)
    part = df[[by, "group", "claims", "claim_errors"]].assign(has=df["claim_errors"] > 0)
    agg = part.groupby([by, "group"], sort=True).agg(
        claims=("claims", "sum"), errors=("claim_errors", "sum"), has=("has", "sum"), traces=("has", "size")
    )
    stats = dict(zip(agg.index, agg.itertuples(index=False), strict=True))
    out = []
    for value in agg.index.get_level_values(0).unique():
        for g in groups_of(df):
            s = stats.get((value, g))
            claims, n = (int(s.claims), int(s.traces)) if s is not None else (0, 0)
            out.append(
                {
                    by: value or "—",
                    "group": g,
                    "error_rate": s.errors / claims if claims else None,
                    "traces_with": s.has / n if n else None,
                    "claims": claims,
                    "traces": n,
                    "sel": _sel(group=g, has="claim_errors", **{by: value}),
                }
            )
    return pd.DataFrame(out)


def importance_by_type(df: pd.DataFrame) -> pd.DataFrame:
    sums: dict[str, list[float]] = {}
    for raw in df["importance"].dropna():
        try:
            d = json.loads(raw)
        except (TypeError, ValueError):
            continue
        if isinstance(d, dict):
            for t, v in d.items():
                if isinstance(v, int | float):
                    sums.setdefault(t, []).append(float(v))
    rows = [{"type": t, "importance": float(np.mean(v)), "traces": len(v)} for t, v in sums.items()]
    return pd.DataFrame(rows, columns=["type", "importance", "traces"])


def _robust_z(x: pd.Series) -> pd.Series:
    x = x.astype(float)
    med = x.median()
    mad = (x - med).abs().median() * 1.4826
    if not mad or np.isnan(mad):
        std = x.std()
        return (x - med) / std if std else x * 0.0
    return (x - med) / mad


def outliers(df: pd.DataFrame, n: int = OUTLIERS) -> pd.DataFrame:
    """The traces furthest from the others by ``OUTLIER_RULE`` (robust z-score, median and MAD, in
    length, backtracking per step or wrong claims per claim), at most ``n``, with the reason in
    words. Fewer than 3 traces have no outliers (nothing to stand out from)."""
    cols = [
        "name",
        "why",
        "correct",
        "steps",
        "backtracks",
        "self-checks",
        "claim errors",
        "model",
        "dataset",
    ]
    if len(df) < 3:
        return pd.DataFrame(columns=[*cols, "score", "key"])
    steps = df["steps"].astype(float).clip(lower=1)
    scores = pd.DataFrame(
        {
            "length": _robust_z(np.log(steps)),
            "backtracking": _robust_z(df["backtracks"].astype(float) / steps),
            "claims": _robust_z(df["claim_errors"].astype(float) / df["claims"].astype(float).clip(lower=1)),
        }
    ).fillna(0.0)
    score = scores.abs().max(axis=1)
    top = score[score >= OUTLIER_Z].sort_values(ascending=False, kind="stable").index[:n]
    out = df.loc[top].copy()

    def why(i) -> str:
        kind = scores.loc[i].abs().idxmax()
        if kind == "length":
            return f"{'long' if scores.at[i, 'length'] > 0 else 'short'}: {df.at[i, 'steps']} steps"
        if kind == "backtracking":
            return f"backtracks a lot: {df.at[i, 'backtracks']} in {df.at[i, 'steps']} steps"
        return f"wrong claims: {df.at[i, 'claim_errors']} of {df.at[i, 'claims']}"

    out["why"] = [why(i) for i in top]
    out["score"] = score[top].round(2)
    # ``group`` (correct / wrong / ungraded, under the chosen grading) is the column shown as
    # "correct": the index's own 1/0 column goes first, or the table has two "correct" columns
    # (Streamlit refused it: "Duplicate column names found")
    out = out.drop(columns=["correct"]).rename(
        columns={"group": "correct", "self_checks": "self-checks", "claim_errors": "claim errors"}
    )
    return out[[*cols, "score", "key"]].reset_index(drop=True)


def dataset_summary(df: pd.DataFrame) -> DatasetSummary:
    """All aggregates of the traces in ``df`` (a ``frame`` of index rows)."""
    graded = int(df["group"].isin(GROUPS).sum())
    return DatasetSummary(
        n=len(df),
        disagree=int(df["disagree"].sum()) if "disagree" in df.columns else 0,
        graded=graded,
        correct=int((df["group"] == "correct").sum()),
        length=length_bins(df),
        type_mix=type_mix(df),
        rates=behaviour_rates(df),
        first_wrong=first_wrong_bins(df),
        claim_rates=claim_rates(df),
        importance=importance_by_type(df),
        outliers=outliers(df),
        grade_choice=GradeChoice(**df.attrs["grade_choice"]) if "grade_choice" in df.attrs else None,
    )


def select(df: pd.DataFrame, sel: str) -> pd.DataFrame:
    """The traces a bar stands for (its ``sel``)."""
    s = json.loads(sel)
    mask = pd.Series(True, index=df.index)
    if "group" in s:
        mask &= df["group"] == s["group"]
    if s.get("disagree") and "disagree" in df.columns:
        mask &= df["disagree"]
    if "steps" in s:
        mask &= df["steps"].between(*s["steps"])
    if "type" in s:
        mask &= df[f"t_{s['type']}"] > 0
    if "has" in s:
        mask &= df[s["has"]] > 0
    if "first_wrong" in s:
        lo, hi = s["first_wrong"]
        pos = pd.to_numeric(df["first_wrong_pos"], errors="coerce")
        mask &= (pos >= lo) & ((pos < hi) | ((hi >= 1.0) & (pos <= 1.0)))
    for col in ("model", "dataset"):
        if col in s:
            mask &= df[col] == s[col]
    if "measure" in s:  # a running-answer bar: the traces it counts (``answer_measures``)
        mask &= answer_measures.listed(df, s["measure"])
    return df[mask]
