"""The app's views load plotly's cartesian partial bundle (1.5 MB) rather than the full one
(4.6 MB): the full bundle held the page's thread for 0.7-0.8 s before Inspect's first map. The
partial bundle is used only where it is the installed plotly's version, and a figure with a trace
type it lacks is refused where the view's data is built, not left undrawn in the browser."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from o3viz.app.inspect_view import (
    FULL_JS,
    PARTIAL_JS,
    PARTIAL_TYPES,
    PLOTLY_JS,
    VIEW_TYPES,
    ViewFigure,
    figure_view_data,
    inspect_view_data,
    pick_plotly,
    plotly_version,
)
from o3viz.testing.synthetic import make_trace


def test_the_views_load_the_partial_bundle_of_the_installed_plotly_version():
    assert plotly_version(PARTIAL_JS) == plotly_version(FULL_JS) is not None
    assert PLOTLY_JS == PARTIAL_JS and VIEW_TYPES == PARTIAL_TYPES
    assert PARTIAL_JS.stat().st_size < FULL_JS.stat().st_size / 2
    assert (PARTIAL_JS.parent / "plotly-cartesian.LICENSE").read_text().startswith("MIT License")


def test_another_plotly_version_gets_the_full_bundle(tmp_path):
    partial, full = tmp_path / "partial.js", tmp_path / "full.js"
    partial.write_text("/**\n* plotly.js (cartesian - minified) v4.1.1\n*/\n")
    full.write_text("/**\n* plotly.js v4.2.0\n*/\n")
    assert pick_plotly(partial, full) == (full, None)
    full.write_text("/**\n* plotly.js v4.1.1\n*/\n")
    assert pick_plotly(partial, full) == (partial, PARTIAL_TYPES)
    assert pick_plotly(tmp_path / "absent.js", full) == (full, None)  # a broken install: the full one


def test_a_figure_the_partial_bundle_cannot_draw_is_refused_where_the_data_is_built():
    gl = ViewFigure(go.Figure(go.Scattergl(x=[0, 1], y=[1, 2])))
    with pytest.raises(ValueError, match="does not draw scattergl traces"):
        figure_view_data([[gl]], 0)
    ok = ViewFigure(go.Figure(go.Heatmap(z=[[1, 2]])), steps=True)
    assert figure_view_data([[ok]], 0)["rows"][0][0]["figure"]["data"][0]["type"] == "heatmap"


@pytest.mark.parametrize("steps", [6, 300])  # a short trace's map, and a long one's episodes and strip
def test_every_figure_of_the_trace_view_is_one_the_partial_bundle_draws(steps):
    data = inspect_view_data(make_trace(steps, seed=1))
    types = set()
    stack = [data]
    while stack:
        d = stack.pop()
        if isinstance(d, dict):
            if isinstance(d.get("data"), list) and isinstance(d.get("layout"), dict):
                types |= {t.get("type", "scatter") for t in d["data"]}
            stack.extend(d.values())
        elif isinstance(d, list):
            stack.extend(d)
    assert types and types <= PARTIAL_TYPES, types
