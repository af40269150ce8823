"""Traces in Jupyter and VS Code notebooks: ``o3viz.show(trace)`` is the reasoning map with the
outline and the details panel (click a step to select it) and tabs for the attention heatmap and
importance; ``o3viz.show(a, b)`` is Compare's "what changed" and the two aligned maps;
``o3viz.show("dataset A", "dataset B")`` is Compare's dataset mode (two datasets paired by question).

The view is one self-contained page (``page``: plotly.js inlined, nothing from the network) built
from the figures of ``o3viz.figures`` (``data``). With anywidget installed it is a widget whose
``selected`` follows clicks in Python; without it (or where widgets don't run: nbconvert, GitHub)
it is the same page as static HTML.

>>> from o3viz.testing.synthetic import make_trace
>>> view = show(make_trace(4, seed=0), selected="step:0:2")
>>> view.selected, "plotly" in view.html()[:200_000]
('step:0:2', True)
"""

from __future__ import annotations

import os
from pathlib import Path

from o3viz.notebook.data import compare_view_data, trace_view_data
from o3viz.notebook.page import iframe_html, page_html
from o3viz.trace import Trace
from o3viz.trace.files import write_atomic

TRACE_HEIGHT, COMPARE_HEIGHT = 575, 900  # px of the notebook output


class StaticView:
    """The view without a widget: the page and the selection it opens on."""

    def __init__(self, page: str, height: int, selected: str | None):
        self.page, self.height, self.selected = page, height, selected

    def html(self) -> str:
        return self.page

    def _repr_html_(self) -> str:
        return iframe_html(self.page, self.height)

    def __repr__(self) -> str:
        return f"<o3viz view, selected={self.selected!r}>"


def _live(page: str, height: int, selected: str | None):
    try:
        from o3viz.notebook.widget import TraceView
    except ImportError:  # anywidget is optional: the static page is the same view
        return StaticView(page, height, selected)
    return TraceView(page, height, selected, iframe_html(page, height))


def show(a, b=None, *, selected: str | None = None, widget: bool = True, grade: str = "either"):
    """The notebook view of ``a`` (or of ``a`` against ``b``); display it as a cell's last
    expression. ``selected`` is the node it opens on (a step id such as ``step:0:3``). Two datasets
    of the store (names, or ``o3viz.analysis.paired.Side``), or a ``PairedResult``, show the paired
    comparison by question (``o3viz.notebook.paired``), graded by ``grade``."""
    if not isinstance(a, Trace):
        from o3viz.notebook.paired import HEIGHT, paired_html

        return StaticView(paired_html(a, b, grade=grade), HEIGHT, None)
    if b is None:
        data, height = trace_view_data(a, selected), TRACE_HEIGHT
    else:
        data, height = compare_view_data(a, b), COMPARE_HEIGHT
    page = page_html(data)
    return _live(page, height, data["selected"]) if widget else StaticView(page, height, data["selected"])


def save_view(view, path: str | os.PathLike, overwrite: bool = False) -> Path:
    """Write a view's page as a standalone HTML file (atomically; refuses to overwrite unless asked)."""
    return write_atomic(Path(path), view.html().encode("utf-8"), overwrite=overwrite)


def trace_bundle(trace: Trace) -> dict:
    """A trace's display as a cell's last expression: the live view's mime bundle."""
    view = show(trace)
    bundle = view._repr_mimebundle_() if hasattr(view, "_repr_mimebundle_") else None
    if isinstance(bundle, tuple):
        bundle = bundle[0]
    return bundle or {"text/html": view._repr_html_(), "text/plain": repr(view)}


__all__ = ["StaticView", "save_view", "show", "trace_bundle"]
