"""The trace view: the outline, the reasoning map and the details panel of one trace (or a pair),
one selection among them, answered in the browser. This package owns all of it; its two hosts only
embed it:

- the notebook (``o3viz.notebook``: ``o3viz.show``, the anywidget) shows ``page_html`` in an iframe;
- the app (``o3viz.app.inspect_view`` and ``pages/common/trace_view.py``) serves ``static/`` as
  Inspect's component and publishes each trace's data as a JSON file.

Its parts:

- ``data``: the view's data, plain JSON built from the figure builders of ``o3viz.figures``
  (``trace_view_data``, ``compare_view_data``, and the parts Inspect's data is made of:
  ``node_table``, ``episode_data``, ``search_items``, ``intro_panel``);
- ``verifiers``: verifiers' verdicts, each verifier named once per view;
- ``static/view.js`` and ``static/view.css``: the script that draws the data (``o3view(D, opts)``)
  and its styles (``STATIC``);
- ``page``: the standalone page (plotly.js inlined, or borrowed from another view: ``shared``);
- ``paired``: the paired comparison of two datasets as a page.

What ``view.js`` reads of its data ``D``: ``kind`` (``trace``, ``compare``), ``map`` (``maps`` for a
pair), ``outline`` (rows), ``nodes`` (id → details: ``title``, ``verdict``, ``facts``, ``text``,
``checks``, ``attention``, and ``verdicts``: ``[index into verifiers, verdict, score]``),
``verifiers`` and ``verifier_colors``, ``selected``, ``tabs``, ``colors``; a long trace's
``episodes``, ``node_ep``, ``overview``, ``strip``, ``episode``; Inspect's ``find`` and ``intro``;
a pair's ``summary`` and ``metrics``.

>>> from o3viz.testing.synthetic import make_trace
>>> d = trace_view_data(make_trace(4, seed=0))
>>> d["kind"], d["selected"], 'id="o3-data"' in page_html(d)
('trace', 'step:0:0', True)
"""

from __future__ import annotations

from o3viz.view.data import (
    MAP_HEIGHT,
    STRIP_HEIGHT,
    compare_view_data,
    episode_data,
    figure_json,
    intro_panel,
    node_table,
    search_items,
    trace_view_data,
    verifier_data,
)
from o3viz.view.page import STATIC, PageRenderer, page_html, plotly_head, script_json
from o3viz.view.verifiers import VERIFIER_COLORS, verifier_rows, verifier_table

__all__ = [
    "MAP_HEIGHT",
    "STATIC",
    "STRIP_HEIGHT",
    "VERIFIER_COLORS",
    "PageRenderer",
    "compare_view_data",
    "episode_data",
    "figure_json",
    "intro_panel",
    "node_table",
    "page_html",
    "plotly_head",
    "script_json",
    "search_items",
    "trace_view_data",
    "verifier_data",
    "verifier_rows",
    "verifier_table",
]
