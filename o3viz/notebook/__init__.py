"""Traces in Jupyter and VS Code notebooks: ``o3viz.show(trace)`` is the reasoning map with the
outline and the details panel (click a step to select it) and tabs for the attention heatmap and
importance; ``o3viz.show(a, b)`` is Compare's "what changed" and the two aligned maps;
``o3viz.show("dataset A", "dataset B")`` is Compare's dataset mode (two datasets paired by question);
``o3viz.show(sample_set)`` (a ``SampleSet`` or a set's name) is the tree of where its samples part
ways (``o3viz.notebook.samples``).

The view is the trace view of ``o3viz.view``, one self-contained page (``o3viz.view.page``:
plotly.js inlined, nothing from the network) built from the figures of ``o3viz.figures``
(``o3viz.view.data``); this package is its notebook host. In a notebook plotly.js travels once: the first
view a kernel displays carries it, whatever its kind (the paired comparison too), the views after
borrow it (``standalone=True`` makes a view carry its own copy); ``save_view`` always writes the
whole page. With anywidget installed it is a widget whose ``selected`` follows clicks in Python;
its output also holds the same page as static HTML (``text/html``), which is what front ends
without the live widget show (nbconvert, when the notebook saved no widget state; GitHub).

>>> from o3viz.testing.synthetic import make_trace
>>> view = show(make_trace(4, seed=0), selected="step:0:2")
>>> view.selected, "plotly" in view.html()[:200_000]
('step:0:2', True)
"""

from __future__ import annotations

import os
from pathlib import Path

from o3viz.notebook.page import iframe_html, notebook_page, reset_shared_plotly
from o3viz.trace import Trace
from o3viz.trace.files import write_atomic
from o3viz.view import PageRenderer, compare_view_data, page_html, trace_view_data

TRACE_HEIGHT, COMPARE_HEIGHT = 575, 900  # px of the notebook output


class StaticView:
    """The view without a widget: its data, the height of its output, the selection it opens on and
    what writes its page (``render``: a trace's or a pair's ``page_html``, the paired comparison's
    ``paired_page``). ``html()`` is the whole page; its output is decided when first displayed."""

    def __init__(
        self,
        data: object,
        height: int,
        selected: str | None,
        standalone: bool = False,
        render: PageRenderer = page_html,
    ):
        self.data, self.height, self.selected, self.standalone = data, height, selected, standalone
        self.render = render
        self._shown: str | None = None

    @property
    def page(self) -> str:
        return self.render(self.data)

    def html(self) -> str:
        return self.page

    def _repr_html_(self) -> str:
        if self._shown is None:  # the kernel's first view carries plotly.js, the others borrow it
            self._shown = iframe_html(notebook_page(self.data, self.standalone, self.render), self.height)
        return self._shown

    def __repr__(self) -> str:
        return f"<o3viz view, selected={self.selected!r}>"


def _live(data: dict, height: int, selected: str | None, standalone: bool):
    try:
        from o3viz.notebook.widget import TraceView
    except ImportError:  # anywidget is optional: the static page is the same view
        return StaticView(data, height, selected, standalone)
    return TraceView(data, height, selected, standalone)


def show(
    a,
    b=None,
    *,
    selected: str | None = None,
    widget: bool = True,
    grade: str = "auto",
    standalone: bool = False,
):
    """The notebook view of ``a`` (or of ``a`` against ``b``); display it as a cell's last
    expression. ``selected`` is the node it opens on (a step id such as ``step:0:3``). Two datasets
    of the store (names, or ``o3viz.analysis.paired.Side``), or a ``PairedResult``, show the paired
    comparison by question (``o3viz.notebook.paired``), graded by ``grade``. A sample set (a
    ``SampleSet``, or one name that names a set) shows its tree (``o3viz.notebook.samples``). ``standalone``: the
    output carries its own plotly.js instead of borrowing the first view's."""
    if not isinstance(a, Trace):
        from o3viz.notebook.samples import HEIGHT, as_sample_set, tree_data, tree_page

        if (sample_set := as_sample_set(a, b)) is not None:  # a sample set or a set's name: its tree
            return StaticView(tree_data(sample_set), HEIGHT, None, standalone, render=tree_page)
        from o3viz.notebook.paired import HEIGHT, paired_page, paired_result

        return StaticView(paired_result(a, b, grade=grade), HEIGHT, None, standalone, render=paired_page)
    if b is None:
        data, height = trace_view_data(a, selected), TRACE_HEIGHT
    else:
        data, height = compare_view_data(a, b), COMPARE_HEIGHT
    sel = data["selected"]
    return _live(data, height, sel, standalone) if widget else StaticView(data, height, sel, standalone)


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


__all__ = ["StaticView", "reset_shared_plotly", "save_view", "show", "trace_bundle"]
