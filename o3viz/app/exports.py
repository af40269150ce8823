"""Downloads the app offers as bytes: the labelled steps of a dataset as a golden set (the same
file ``o3viz labels export`` writes). No streamlit."""

from __future__ import annotations

import tempfile
from pathlib import Path

from o3viz.store.golden import export_labels
from o3viz.store.store import Store


def label_export(
    store: Store, dataset: str | None, fmt: str = "jsonl", *, agreed: bool = False
) -> tuple[bytes, int, int]:
    """``(file bytes, traces, labels)`` of the golden set of ``dataset`` (every labelled trace for
    None); raises ``StoreError`` when there is nothing to export."""
    with tempfile.TemporaryDirectory(prefix="o3viz-labels-") as tmp:
        path = Path(tmp) / f"labels.{fmt}"
        traces, labels = export_labels(store, dataset, path, fmt, agreed=agreed)
        return path.read_bytes(), traces, labels
