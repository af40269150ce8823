"""Two datasets of the store, paired by question: the rows of each side (from the columnar copy when
it is fresh, else SQLite), people's step labels on them, and ``compare_datasets``, which hands them
to ``o3viz.analysis.paired``; ``paired_parquet`` writes the paired rows for pandas, DuckDB or R.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pandas as pd

from o3viz.analysis.paired import ROW_COLUMNS, PairedCompareRequest, PairedResult, Side, paired_compare
from o3viz.errors import UsageError
from o3viz.store.columnar import select_frame
from o3viz.store.labels import all_labels, current_labels
from o3viz.store.query import Query
from o3viz.store.question_keys import fill_question_keys
from o3viz.store.store import Store
from o3viz.trace.files import write_atomic

MAX_SIDE = 200_000  # traces read per side


def side_frame(store: Store, side: Side) -> pd.DataFrame:
    """Every trace of ``side`` (its dataset, narrowed to its model when named), oldest first, so a
    repeated question pairs its first trace; ``question_key`` keys each on its whole question."""
    q = Query(dataset=[side.dataset], model=[side.model] if side.model else [], sort="id", descending=False)
    df = select_frame(store, q, tuple(dict.fromkeys((*ROW_COLUMNS, "question_key"))), max_rows=MAX_SIDE)
    missing = df["question_key"].isna()
    if missing.any():  # rows indexed before the column, with a clipped question: keyed from the files
        found = fill_question_keys(store, df.loc[missing, "key"].tolist())
        df["question_key"] = df["question_key"].astype(object)
        df.loc[missing, "question_key"] = df.loc[missing, "key"].map(found)
    return df


def label_frame(store: Store, keys: list[str]) -> pd.DataFrame:
    """Per labelled trace: ``labelled`` (steps with a current label) and ``labelled_wrong`` (steps
    any labeller's current label calls wrong)."""
    labs = current_labels(all_labels(store, keys)) if keys else []
    steps: dict[str, set] = {}
    wrong: dict[str, set] = {}
    for lab in labs:
        steps.setdefault(lab.key, set()).add((lab.round, lab.step))
        if lab.verdict == "wrong":
            wrong.setdefault(lab.key, set()).add((lab.round, lab.step))
    rows = [{"key": k, "labelled": len(s), "labelled_wrong": len(wrong.get(k, ()))} for k, s in steps.items()]
    return pd.DataFrame(rows, columns=["key", "labelled", "labelled_wrong"])


def compare_datasets(store: Store, req: PairedCompareRequest, *, labels: bool = True) -> PairedResult:
    """``req``'s two sides read from ``store`` and paired (a side with no traces is a one-line
    ``UsageError`` naming the datasets there are)."""
    req.validate()
    frames = []
    for name, side in (("A", req.a), ("B", req.b)):
        df = side_frame(store, side)
        if df.empty:
            raise UsageError(f"side {name}: no traces in {side.label!r} ({_known(store, side)})")
        frames.append(df)
    a, b = frames
    lab = label_frame(store, [*a["key"], *b["key"]]) if labels else None
    return paired_compare(a, b, req, lab)


def paired_rows(result: PairedResult) -> pd.DataFrame:
    """The paired rows for export: the pairing key, both traces' keys and names, the flip, and
    every measure on A, on B and B − A."""
    rows = result.rows
    first = ["pair_key", "key_a", "key_b", "name_a", "name_b", "flip"]
    grades = [f"{g}_{s}" for g in ("correct", "source_correct", "check_correct") for s in "ab"]
    measures = [c for c in rows.columns if c.startswith("d_")]
    cols = first + grades + [f"{c[2:]}_{s}" for c in measures for s in "ab"] + measures
    return rows[[c for c in dict.fromkeys(cols) if c in rows.columns]]


def paired_parquet(result: PairedResult, path: str | os.PathLike, *, overwrite: bool = False) -> Path:
    """Write the paired rows as one Parquet file (atomically; refuses to overwrite unless asked)."""
    buf = io.BytesIO()
    paired_rows(result).to_parquet(buf, index=False)
    return write_atomic(Path(path), buf.getvalue(), overwrite=overwrite)


def dataset_models(store: Store, dataset: str) -> list[str]:
    """The models of ``dataset``, most traces first (each a system a side may narrow to)."""
    sql = "SELECT model, count(*) FROM traces WHERE dataset = ? GROUP BY model ORDER BY count(*) DESC"
    with store.guard("querying"):
        return [m for m, _ in store.conn.execute(sql, (dataset,)) if m]


def _known(store: Store, side: Side) -> str:
    """What a side could have named: the dataset's models when the dataset exists and a model was
    named (a misspelled model), else the datasets in the store."""
    datasets = sorted(d for d, _ in store.distinct("dataset") if d)
    if side.model and side.dataset in datasets:
        rows = store.select(Query(dataset=[side.dataset]), ("model",))
        models = sorted({m for (m,) in rows if m})
        return f"models in {side.dataset!r}: {', '.join(models[:20]) or 'none'}"
    return f"datasets in the store: {', '.join(datasets[:20]) or 'none'}"
