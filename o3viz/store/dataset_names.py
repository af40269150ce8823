"""The store's datasets named in a hint ("no dataset 'x' in the store (datasets: …)"): the real
datasets first, most traces first, and the sample sets (``o3viz.samples.sets``: a dataset whose
traces carry the tag ``sample-set``) counted after them, so twenty sample sets never hide the
datasets a user meant.

>>> import tempfile
>>> from o3viz.store.store import Store
>>> dataset_names(Store(tempfile.mkdtemp()))
'none yet'
"""

from __future__ import annotations

from o3viz.store.query import Query
from o3viz.store.store import Store

__all__ = ["SET_TAG", "dataset_names"]

SET_TAG = "sample-set"  # the tag a sample set's traces carry (o3viz.samples.sets.SET_TAG)


def _is_sample_set(store: Store, dataset: str) -> bool:
    first = store.rows(Query(dataset=[dataset], limit=1), ("key", "tags"))
    return bool(first) and SET_TAG in (first[0].get("tags") or "").split(",")


def dataset_names(store: Store, limit: int = 10) -> str:
    """At most ``limit`` real datasets, most traces first, then how many sample sets there are
    and where they are listed; "none yet" for an empty store."""
    real, sets = [], 0
    for name, _ in store.distinct("dataset"):
        if _is_sample_set(store, name):
            sets += 1
        else:
            real.append(name)
    shown = ", ".join(real[:limit]) + (f", … ({len(real)} in all)" if len(real) > limit else "")
    if sets:
        shown += f"{'; ' if real else ''}{sets} sample set{'s' if sets != 1 else ''} (o3viz sample --list)"
    return shown or "none yet"
