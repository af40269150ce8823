"""What holds across many traces: aggregates of index rows (``o3viz.store.index.IndexRow``) for the
Dataset page, and which traces each bar stands for (``select``), so every bar leads to its traces.

Groups are the traces' correctness ("correct" / "wrong"); ungraded traces count in totals only.
Lengths are in steps (every trace has them; imported traces have no tokens).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from o3viz.text.classify import TYPES as STEP_TYPES

COLUMNS = (
    "key", "name", "dataset", "model", "steps", "chars", "correct", "verdict", "backtracks",
    "self_checks", "claims", "claim_errors", "first_wrong_pos", "importance",
) + tuple(f"t_{t}" for t in STEP_TYPES)  # fmt: skip
GROUPS = ("correct", "wrong")
MAX_BINS = 10
OUTLIERS = 25


@dataclass
class DatasetSummary:
    """Aggregates of a set of traces; every frame has a ``sel`` column (JSON) naming its traces."""

    n: int
    graded: int
    correct: int
    length: pd.DataFrame  # bin, lo, hi, correct, wrong, ungraded, accuracy, sel
    type_mix: pd.DataFrame  # type, group, share (mean fraction of a trace's steps), traces, sel
    rates: pd.DataFrame  # behaviour, group, traces_with (fraction), per_100_steps, sel
    first_wrong: pd.DataFrame  # bin, lo, hi, group, traces, sel
    claim_rates: pd.DataFrame  # model, group, error_rate (wrong claims / claims), traces_with, claims, sel
    importance: pd.DataFrame  # type, importance (mean), traces; empty when no trace has importance
    outliers: pd.DataFrame  # key, name, dataset, model, correct, steps, …, why

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.graded if self.graded else None


def frame(rows: list[tuple] | list[dict], columns: tuple[str, ...] = COLUMNS) -> pd.DataFrame:
    df = (
        pd.DataFrame.from_records(rows, columns=list(columns))
        if rows
        else pd.DataFrame(columns=list(columns))
    )
    df["group"] = df["correct"].map({1: "correct", 0: "wrong"}).fillna("ungraded")
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


def length_bins(df: pd.DataFrame) -> pd.DataFrame:
    if df.empty:
        return pd.DataFrame(columns=["bin", "lo", "hi", *GROUPS, "ungraded", "accuracy", "sel"])
    steps = df["steps"].to_numpy(dtype=float)
    edges = _edges(df["steps"])
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
                "accuracy": c / (c + w) if c + w else None,
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
    for g in GROUPS:
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
        for g in GROUPS:
            part = df[df["group"] == g]
            steps = part["steps"].sum()
            out.append(
                {
                    "behaviour": label,
                    "group": g,
                    "traces_with": float((part[col] > 0).mean()) if len(part) else None,
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
    for g in GROUPS:
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
    out = []
    for value, part in df[[by, "group", "claims", "claim_errors"]].groupby(by, sort=True):
        for g in GROUPS:
            sub = part[part["group"] == g]
            claims = int(sub["claims"].sum())
            out.append(
                {
                    by: value or "—",
                    "group": g,
                    "error_rate": sub["claim_errors"].sum() / claims if claims else None,
                    "traces_with": float((sub["claim_errors"] > 0).mean()) if len(sub) else None,
                    "claims": claims,
                    "traces": len(sub),
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
    """The traces furthest from the others (robust z-score) in length, backtracking per step or
    wrong claims per claim, with the reason in words."""
    if df.empty:
        return pd.DataFrame(columns=["name", "why", "correct", "key"])
    steps = df["steps"].clip(lower=1)
    scores = pd.DataFrame(
        {
            "length": _robust_z(np.log(steps)),
            "backtracking": _robust_z(df["backtracks"] / steps),
            "claims": _robust_z(df["claim_errors"] / df["claims"].clip(lower=1)),
        }
    )
    score = scores.abs().max(axis=1)
    top = score.sort_values(ascending=False, kind="stable").index[:n]
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
    cols = ["name", "why", "group", "steps", "backtracks", "self_checks", "claim_errors", "model", "dataset"]
    out = out[[*cols, "score", "key"]].rename(
        columns={"group": "correct", "self_checks": "self-checks", "claim_errors": "claim errors"}
    )
    return out.reset_index(drop=True)


def dataset_summary(df: pd.DataFrame) -> DatasetSummary:
    """All aggregates of the traces in ``df`` (a ``frame`` of index rows)."""
    graded = int(df["group"].isin(GROUPS).sum())
    return DatasetSummary(
        n=len(df),
        graded=graded,
        correct=int((df["group"] == "correct").sum()),
        length=length_bins(df),
        type_mix=type_mix(df),
        rates=behaviour_rates(df),
        first_wrong=first_wrong_bins(df),
        claim_rates=claim_rates(df),
        importance=importance_by_type(df),
        outliers=outliers(df),
    )


def select(df: pd.DataFrame, sel: str) -> pd.DataFrame:
    """The traces a bar stands for (its ``sel``)."""
    s = json.loads(sel)
    mask = pd.Series(True, index=df.index)
    if "group" in s:
        mask &= df["group"] == s["group"]
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
    return df[mask]
