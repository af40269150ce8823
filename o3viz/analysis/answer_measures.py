"""The Dataset view's four running-answer measures (issue 53), read from index rows: which traces
each one counts (its n) and, for a share, which of them are its hits. One definition serves a
bar's value (``o3viz.analysis.answer_dataset.answer_rows``) and the traces its click lists
(``o3viz.analysis.dataset.select``). The columns are those ``o3viz.store.index`` computes with
``o3viz.analysis.answer_figures``, and the definitions are ``answer_dataset_figures``':

- ``early_correct``: a share of the graded traces (``answer_flips`` known); hits: the first
  correct point lies before the final 10% of the round (``EARLY_BEFORE``);
- ``convergence``: the traces with a running answer (``convergence_frac`` known); the value is
  the mean position where it last changed, among answers read with confidence;
- ``flip_rate``: a share of the graded traces; hits: a right answer lost at least once
  (``answer_losses`` > 0), between two answers read with confidence
  (``o3viz.analysis.running_answer.RULE``: a flip on an uncertain reading is no loss here);
- ``tokens_saved``: the traces right somewhere (``first_correct_frac`` known); the value is the
  mean share of the round after the first correct point (what stopping there saves).

A row with ``answer_losses`` NULL was indexed before these columns existed (or has no steps):
it counts in no measure.

>>> import pandas as pd
>>> df = pd.DataFrame({"first_correct_frac": [0.2, 0.95, None], "convergence_frac": [0.5, 1.0, 0.3],
...     "answer_flips": [2, 0, None], "answer_losses": [1, 0, 0]})
>>> n, hits = counted(df, "early_correct")
>>> n.tolist(), hits.tolist()
([True, True, False], [True, False, False])
>>> values(df, "tokens_saved").round(2).tolist()
[0.8, 0.05]
"""

from __future__ import annotations

from typing import Literal, get_args

import numpy as np
import pandas as pd

from o3viz.analysis.answer_figures import EARLY_BEFORE

__all__ = ["INDEX_COLUMNS", "MEASURES", "SHARES", "Measure", "counted", "listed", "values"]

Measure = Literal["early_correct", "convergence", "flip_rate", "tokens_saved"]
MEASURES: tuple[str, ...] = get_args(Measure)
SHARES = ("early_correct", "flip_rate")  # the others are means
# the index columns the measures (and a bar's trace list) read
INDEX_COLUMNS = (
    "first_correct_frac",
    "convergence_frac",
    "answer_flips",
    "answer_losses",
    "tokens_after_correct",
    "overthinking",
)


def _num(df: pd.DataFrame, col: str) -> pd.Series:
    """A column as floats (NaN for NULL; all NaN where the frame lacks it)."""
    if col not in df.columns:
        return pd.Series(np.nan, index=df.index)
    return pd.to_numeric(df[col], errors="coerce")


def counted(df: pd.DataFrame, measure: str) -> tuple[pd.Series, pd.Series | None]:
    """The traces ``measure`` counts (a mask: its n) and, for a share, its hits (else None)."""
    first = _num(df, "first_correct_frac")
    if measure == "early_correct":
        return _num(df, "answer_flips").notna(), first < EARLY_BEFORE
    if measure == "flip_rate":
        return _num(df, "answer_flips").notna(), _num(df, "answer_losses") > 0
    if measure == "convergence":
        return _num(df, "convergence_frac").notna(), None
    if measure == "tokens_saved":
        return first.notna(), None
    raise ValueError(f"unknown running-answer measure {measure!r}; one of {', '.join(MEASURES)}")


def values(df: pd.DataFrame, measure: str) -> pd.Series:
    """The per-trace values a mean measure averages, over the traces it counts."""
    if measure == "convergence":
        return _num(df, "convergence_frac").dropna()
    if measure == "tokens_saved":
        return 1.0 - _num(df, "first_correct_frac").dropna()
    raise ValueError(f"{measure!r} is a share, not a mean")


def listed(df: pd.DataFrame, measure: str) -> pd.Series:
    """The traces a bar of ``measure`` stands for (a mask): a share's hits, a mean's n."""
    n, hits = counted(df, measure)
    return n if hits is None else n & hits
