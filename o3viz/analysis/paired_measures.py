"""The reasoning measures of a paired comparison, per question and on aggregate: steps, backtracks,
self-checks, where the first wrong step sits, the step-type mix, tokens, and (where the traces carry
them) importance per step type and people's step labels. Each becomes ``<m>_a``, ``<m>_b`` and
``d_<m>`` (B − A) columns of the paired rows, and one line of ``paired_measures``: the mean paired
difference with its Student-t 95% interval over the questions where both sides have the measure.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from o3viz.analysis.paired_stats import mean_difference
from o3viz.text.classify import TYPES as STEP_TYPES

MIN_N = 10  # a measure over fewer pairs is thin: drawn hollow and labelled "thin: n = 4"
MIN_EVENTS = 5  # a count or share resting on fewer events (both sides together) is thin too
EVENT_MEASURES = ("steps", "backtracks", "self_checks", "tokens", "labelled_wrong")  # counts of events
THIN_RULE = f"thin: fewer than {MIN_N} pairs, or a count or share resting on fewer than {MIN_EVENTS} events"

# measure -> what it counts, in words (the fixed ones; importance and label measures are added
# when present)
MEASURES = {
    "steps": "steps",
    "backtracks": "backtracks",
    "self_checks": "self-checks",
    "first_wrong_pos": "first wrong step (0 = first, 1 = last)",
    "tokens": "generated tokens",
    **{f"share_{t}": f"share of {t.replace('_', ' ')} steps" for t in STEP_TYPES},
}


def _num(s: pd.Series) -> np.ndarray:
    return pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)


def _shares(rows: pd.DataFrame, side: str) -> dict[str, np.ndarray]:
    counts = np.stack([_num(rows[f"t_{t}_{side}"]) for t in STEP_TYPES], axis=1)  # (pairs, types)
    total = counts.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = np.where(total > 0, counts / total, np.nan)
    return {f"share_{t}": shares[:, j] for j, t in enumerate(STEP_TYPES)}


def _importance(rows: pd.DataFrame, side: str) -> dict[str, np.ndarray]:
    """``importance_<type>`` per pair from the index's JSON {type: mean importance}."""
    out: dict[str, list] = {}
    raw = rows[f"importance_{side}"].tolist()
    for i, text in enumerate(raw):
        try:
            d = json.loads(text) if isinstance(text, str) else None
        except ValueError:
            d = None
        for t, v in (d or {}).items() if isinstance(d, dict) else ():
            if isinstance(v, int | float) and not isinstance(v, bool) and t in STEP_TYPES:
                out.setdefault(f"importance_{t}", [np.nan] * len(raw))[i] = float(v)
    return {k: np.array(v, dtype=float) for k, v in out.items()}


def _labels(rows: pd.DataFrame, labels: pd.DataFrame | None, side: str) -> dict[str, np.ndarray]:
    """``labelled_wrong``: steps people labelled wrong, on traces with any current label."""
    if labels is None or labels.empty:
        return {}
    by_key = labels.set_index("key")["labelled_wrong"]
    return {"labelled_wrong": rows[f"key_{side}"].map(by_key).to_numpy(dtype=float)}


def measure_frame(rows: pd.DataFrame, labels: pd.DataFrame | None = None) -> pd.DataFrame:
    """``rows`` (paired, ``_a``/``_b`` suffixed index columns) with ``<m>_a``, ``<m>_b`` and
    ``d_<m>`` for every measure present on at least one pair."""
    rows = rows.copy()
    new: dict[str, np.ndarray] = {}
    for side in ("a", "b"):
        vals = {
            m: _num(rows[f"{m}_{side}"]) for m in ("steps", "backtracks", "self_checks", "first_wrong_pos")
        }
        tokens = _num(rows[f"tokens_{side}"])
        vals["tokens"] = np.where(tokens > 0, tokens, np.nan)  # imported traces count no tokens
        vals |= _shares(rows, side) | _importance(rows, side) | _labels(rows, labels, side)
        new |= {f"{m}_{side}": v for m, v in vals.items()}
    names = dict.fromkeys(c[:-2] for c in new)  # a measure on either side (importance may be one-sided)
    for m in names:
        a = new.get(f"{m}_a", np.full(len(rows), np.nan))
        b = new.get(f"{m}_b", np.full(len(rows), np.nan))
        new[f"{m}_a"], new[f"{m}_b"], new[f"d_{m}"] = a, b, b - a
    for c, v in new.items():
        rows[c] = v
    return rows


def measure_names(rows: pd.DataFrame) -> list[str]:
    """The measures of ``rows`` (``measure_frame``'s), fixed ones first."""
    found = [c[2:] for c in rows.columns if c.startswith("d_")]
    return [m for m in MEASURES if m in found] + sorted(m for m in found if m not in MEASURES)


def describe(measure: str) -> str:
    if measure in MEASURES:
        return MEASURES[measure]
    if measure.startswith("importance_"):
        return f"importance of {measure[len('importance_') :].replace('_', ' ')} steps"
    if measure == "labelled_wrong":
        return "steps people labelled wrong"
    return measure


def paired_measures(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per measure: pairs with it on both sides (n), the means on A and B, and the mean
    paired difference B − A with its 95% interval (None under 2 pairs)."""
    out = []
    for m in measure_names(rows):
        d = rows[f"d_{m}"].to_numpy(dtype=float)
        ok = ~np.isnan(d)
        if not ok.any():
            continue
        ci = mean_difference(d[ok])
        out.append(
            {
                "measure": m,
                "what": describe(m),
                "n": int(ok.sum()),
                "mean_a": float(rows[f"{m}_a"].to_numpy(dtype=float)[ok].mean()),
                "mean_b": float(rows[f"{m}_b"].to_numpy(dtype=float)[ok].mean()),
                "diff": float(d[ok].mean()),
                "lo": None if ci is None else ci[1],
                "hi": None if ci is None else ci[2],
            }
        )
    cols = ["measure", "what", "n", "mean_a", "mean_b", "diff", "lo", "hi"]
    return pd.DataFrame(out, columns=cols)


def mark_thin(measures: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """``measures`` with ``events`` (the counted things behind a count or a share, both sides
    together over the measure's pairs; NaN for other measures) and ``thin`` ("thin: n = 4",
    "thin: 1 event", or "" for a measure that rests on enough)."""
    events, thin = [], []
    for m, n in zip(measures["measure"], measures["n"], strict=True):
        ok = rows[f"d_{m}"].notna()
        if m in EVENT_MEASURES:
            e = float(rows.loc[ok, f"{m}_a"].sum() + rows.loc[ok, f"{m}_b"].sum())
        elif m.startswith("share_") and f"t_{m[6:]}_a" in rows:
            e = float(sum(pd.to_numeric(rows.loc[ok, f"t_{m[6:]}_{s}"], errors="coerce").sum() for s in "ab"))
        else:
            e = np.nan
        events.append(e)
        if n < MIN_N:
            thin.append(f"thin: n = {n}")
        elif e < MIN_EVENTS:  # False for NaN
            thin.append(f"thin: {e:.0f} event{'' if e == 1 else 's'}")
        else:
            thin.append("")
    return measures.assign(events=events, thin=thin)
