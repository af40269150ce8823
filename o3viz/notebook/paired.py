"""``o3viz.show(a, b)`` for two datasets of the store (names, or ``Side(dataset, model)``): the
paired comparison, computed from the store (``paired_result``) and drawn as one self-contained page
by ``o3viz.view.paired`` (``paired_page``, re-exported here). In a notebook it shares plotly.js
with the other views (``o3viz.notebook.page``): it carries the copy when it is the first view
shown, and borrows it otherwise.
"""

from __future__ import annotations

from o3viz.analysis.paired import PairedCompareRequest, PairedResult, Side
from o3viz.errors import UsageError
from o3viz.store.paired import compare_datasets
from o3viz.store.store import Store
from o3viz.view.paired import CSS, DRAW, MAX_FLIPS, paired_figures, paired_page

HEIGHT = 900  # px of the notebook output

__all__ = [
    "CSS",
    "DRAW",
    "HEIGHT",
    "MAX_FLIPS",
    "paired_figures",
    "paired_html",
    "paired_page",
    "paired_result",
    "side_of",
]


def side_of(x) -> Side:
    """A side from a dataset name or a ``Side``."""
    if isinstance(x, Side):
        return x
    if isinstance(x, str):
        return Side(x)
    raise TypeError(f"a dataset name or o3viz.analysis.paired.Side, not {type(x).__name__}")


def paired_result(a, b=None, *, grade: str = "auto", store: Store | None = None) -> PairedResult:
    """The comparison of two datasets (``a``, ``b``: names or sides), or a ``PairedResult`` given
    as ``a`` as it is (``o3viz.show`` wraps it in its static view, drawn by ``paired_page``)."""
    if isinstance(a, PairedResult):
        return a
    if b is None:
        raise UsageError("o3viz.show: name two datasets (A and B) to compare them question by question")
    return compare_datasets(store or Store(), PairedCompareRequest(side_of(a), side_of(b), grade=grade))


def paired_html(a, b=None, *, grade: str = "auto", store: Store | None = None) -> str:
    """The whole page (plotly.js inlined) of two datasets, or of a ``PairedResult`` given as ``a``."""
    return paired_page(paired_result(a, b, grade=grade, store=store))
