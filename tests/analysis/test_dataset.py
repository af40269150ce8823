"""Dataset aggregates and their figures: the numbers match a count by hand, and every bar's
selection names exactly the traces the bar counts (so a click leads to them)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from o3viz.analysis.dataset import COLUMNS, dataset_summary, frame, select
from o3viz.figures.dataset import (
    claim_rates_figure,
    first_wrong_figure,
    importance_figure,
    length_figure,
    rates_figure,
    type_mix_figure,
)
from o3viz.text.classify import TYPES


def _rows(n: int = 300, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        steps = int(rng.integers(2, 60))
        claims = int(rng.integers(0, 8))
        errors = int(rng.integers(0, claims + 1)) if rng.random() < 0.3 else 0
        row = dict.fromkeys(COLUMNS)
        row.update(
            key=f"{i:016x}",
            name=f"t{i}",
            dataset="d",
            model=("m1", "m2")[i % 2],
            steps=steps,
            chars=steps * 80,
            correct=(1, 0, None)[i % 3],
            backtracks=int(rng.integers(0, 4)) if rng.random() < 0.5 else 0,
            self_checks=int(rng.integers(0, 3)) if rng.random() < 0.4 else 0,
            claims=claims,
            claim_errors=errors,
            first_wrong_pos=float(rng.random()) if errors else None,
            importance=json.dumps({"plan_generation": 0.5, "active_computation": 0.1})
            if i % 5 == 0
            else None,
        )
        for t in TYPES:
            row[f"t_{t}"] = int(rng.integers(0, 4))
        rows.append(row)
    return rows


@pytest.fixture
def df() -> pd.DataFrame:
    return frame([tuple(r[c] for c in COLUMNS) for r in _rows()])


def test_headline_counts_match_a_count_by_hand(df):
    s = dataset_summary(df)
    assert (s.n, s.graded, s.correct) == (300, 200, 100) and s.accuracy == 0.5
    assert s.length[["correct", "wrong", "ungraded"]].to_numpy().sum() == 300
    by_hand = df[(df["group"] == "wrong")]["backtracks"].gt(0).mean()
    rate = s.rates.query("behaviour == 'backtrack' and group == 'wrong'")["traces_with"].item()
    assert rate == pytest.approx(by_hand)
    m1 = df[(df["model"] == "m1") & (df["group"] == "correct")]
    err = s.claim_rates.query("model == 'm1' and group == 'correct'")["error_rate"].item()
    assert err == pytest.approx(m1["claim_errors"].sum() / m1["claims"].sum())
    assert set(s.importance["type"]) == {"plan_generation", "active_computation"}


def test_every_bar_selects_exactly_the_traces_it_counts(df):
    s = dataset_summary(df)
    for _, row in s.length.iterrows():
        for g in ("correct", "wrong"):
            sel = json.dumps({**json.loads(row["sel"]), "group": g})
            assert len(select(df, sel)) == row[g], (row["bin"], g)
    for _, row in s.first_wrong.iterrows():
        assert len(select(df, row["sel"])) == row["traces"], row["bin"]
    for _, row in s.type_mix.iterrows():
        assert len(select(df, row["sel"])) == row["traces"]


def test_a_wrong_selection_would_be_caught(df):
    """The contract test above can fail: a bin shifted by one step selects other traces."""
    s = dataset_summary(df)
    row = s.length.iloc[1]
    lo, hi = json.loads(row["sel"])["steps"]
    shifted = json.dumps({"steps": [lo + 1, hi + 1], "group": "correct"})
    assert len(select(df, shifted)) != row["correct"]


def test_outliers_are_the_extremes_and_say_why(df):
    df.loc[5, "steps"] = 5000
    out = dataset_summary(df).outliers
    assert out.iloc[0]["key"] == df.loc[5, "key"] and out.iloc[0]["why"] == "long: 5000 steps"


def test_the_outlier_table_has_one_column_of_each_name(df):
    """Issue 35, finding 3: the Dataset page crashed, "Duplicate column names found: ['name', 'why',
    'correct', 'correct', …]"; pyarrow (what st.dataframe sends) refuses such a table."""
    import pyarrow as pa

    df.loc[5, "steps"] = 5000
    out = dataset_summary(df).outliers
    assert out.columns.is_unique and out.iloc[0]["correct"] in ("correct", "wrong", "ungraded")
    pa.Table.from_pandas(out)


def test_figures_carry_selections_and_say_why_they_are_empty(df):
    s = dataset_summary(df)
    for fig in (
        length_figure(s.length),
        type_mix_figure(s.type_mix),
        rates_figure(s.rates),
        first_wrong_figure(s.first_wrong),
        claim_rates_figure(s.claim_rates),
    ):
        bars = [t for t in fig.data if t.type == "bar"]
        assert bars and all(json.loads(cd) for t in bars for cd in t.customdata)
        assert fig.layout.title.text.endswith("?")
    assert importance_figure(s.importance).data
    empty = dataset_summary(frame([]))
    for fig in (length_figure(empty.length), importance_figure(empty.importance), rates_figure(empty.rates)):
        assert not fig.data and fig.layout.annotations[0].text
