"""What Inspect's view component draws for one trace, as plain JSON-ready data: the app's host of
the trace view (``o3viz.view``), built from the view's own parts (``o3viz.view.data``, plus a long
trace's episodes, the search and the chosen verifier's lane): the reasoning map, the outline rows
and every node's details, so a click, a hover, an episode or Prev/Next is answered in the browser
(``o3viz/view/static/view.js``, served from ``VIEW_STATIC``) without asking the server.

A long trace (more than ``OVERVIEW_FROM`` steps) also carries the episode overview, the
whole-trace strip, each episode's span on the map's x axis (opening one zooms the whole map to it),
the outline's step rows tagged with their episode (shown when it is open), and which episode holds
each node.

>>> from o3viz.testing.synthetic import make_trace
>>> d = inspect_view_data(make_trace(4, seed=0))
>>> sorted(d["nodes"])[:2], "episodes" in d
(['answer:0', 'check:0:0'], False)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import plotly
import plotly.graph_objects as go

from o3viz.analysis.episodes import OVERVIEW_FROM, Episode, find_episodes
from o3viz.analysis.outline import Outline, build_outline
from o3viz.analysis.verdicts import first_wrong_by, lane_verdicts
from o3viz.figures import SELECT_COLOR, label_rows, lane_of, mark_labels, outline_items, reasoning_map_figure
from o3viz.trace import Trace
from o3viz.view import STATIC as VIEW_STATIC
from o3viz.view import (
    STRIP_HEIGHT,
    episode_data,
    figure_json,
    intro_panel,
    node_table,
    search_items,
    verifier_data,
    verifier_table,
)

MAP_HEIGHT = 410  # px: the map beside the outline and the details, in a 1280×720 first screen

# plotly.js for the app's views. The full bundle (4.6 MB) holds the page's thread for 0.7-0.8 s
# while it runs, the largest part of Inspect's first map; plotly's "cartesian" partial bundle
# (1.5 MB, from npm's plotly.js-cartesian-dist-min, MIT, its licence beside it) runs in about a
# third of that and draws every trace type the views use. It is used where it is the same plotly.js
# version as the installed plotly's full bundle (the figures' JSON is written for that version);
# otherwise the full bundle is. Served by the app, never fetched from the network.
FULL_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
PARTIAL_JS = VIEW_STATIC / "plotly-cartesian.min.js"
PARTIAL_TYPES = frozenset(
    {"bar", "box", "contour", "heatmap", "histogram", "histogram2d", "histogram2dcontour", "image"}
    | {"pie", "scatter", "scatterternary", "violin"}
)
_VERSION = re.compile(rb"plotly\.js(?: \([^)]*\))? v(\d+\.\d+\.\d+)")


def plotly_version(path: Path) -> str | None:
    """The plotly.js version a bundle's header names (``plotly.js (cartesian - minified) v4.1.1``)."""
    try:
        with open(path, "rb") as f:
            m = _VERSION.search(f.read(400))
    except OSError:
        return None
    return m.group(1).decode() if m else None


def pick_plotly(partial: Path = PARTIAL_JS, full: Path = FULL_JS) -> tuple[Path, frozenset[str] | None]:
    """(the plotly.js the views load, the trace types it draws: None for every type). The partial
    bundle only where its version is the full bundle's."""
    v = plotly_version(partial)
    if v is not None and v == plotly_version(full):
        return partial, PARTIAL_TYPES
    return full, None


PLOTLY_JS, VIEW_TYPES = pick_plotly()
__all__ = [
    "MAP_HEIGHT",
    "PLOTLY_JS",
    "VIEW_STATIC",
    "VIEW_TYPES",
    "ViewFigure",
    "drawable",
    "figure_view_data",
    "inspect_view_data",
    "pick_plotly",
    "plotly_version",
]


def drawable(data, types: frozenset[str] | None = None) -> None:
    """Raise ValueError where a figure in a view's ``data`` (any dict with a ``data`` list and a
    ``layout``) has a trace type the views' plotly.js lacks (``types``; default ``VIEW_TYPES``;
    None: every type). The partial bundle would leave such a trace undrawn without a word.

    >>> drawable({"map": {"data": [{"type": "scattergl"}], "layout": {}}}, frozenset({"scatter"}))
    Traceback (most recent call last):
    ...
    ValueError: the views' plotly.js does not draw scattergl traces (it draws: scatter)
    """
    types = VIEW_TYPES if types is None else types
    if types is None:
        return
    stack = [data]
    while stack:
        d = stack.pop()
        if isinstance(d, list):
            stack.extend(x for x in d if isinstance(x, dict | list))
        elif isinstance(d, dict):
            if isinstance(d.get("data"), list) and isinstance(d.get("layout"), dict):
                for t in d["data"]:
                    kind = t.get("type", "scatter") if isinstance(t, dict) else "scatter"
                    if kind not in types:
                        raise ValueError(
                            f"the views' plotly.js does not draw {kind} traces (it draws: {', '.join(sorted(types))})"
                        )
            stack.extend(x for x in d.values() if isinstance(x, dict | list))


def inspect_view_data(
    trace: Trace,
    outline: Outline | None = None,
    *,
    verifier: str | None = None,
    episodes: list[Episode] | None = None,
    dep_min: float = 0.0,
    forks: Sequence = (),
    labels: dict[str, str] | None = None,
    height: int = MAP_HEIGHT,
) -> dict:
    """The component's data for ``trace``: ``verifier`` marks the first wrong step (None: the
    checks), ``forks`` are its branches, ``labels`` (node id → verdict) people's labels."""
    outline = outline if outline is not None else build_outline(trace)
    wrong = first_wrong_by(trace, verifier)
    first_wrong = wrong.node if wrong else None
    long = len(outline.steps) > OVERVIEW_FROM
    episodes = (episodes if episodes is not None else find_episodes(outline)) if long else []
    widths = sorted(e.hi - e.lo for e in episodes)
    lane = lane_verdicts(trace, verifier)  # the checks lane shows the chosen verifier's verdicts
    answers = lane_of(trace)  # the running answer's row under the map and the overview
    fig = reasoning_map_figure(
        outline,
        # a long trace's map opens zoomed on one episode: its markers are sized for an episode's width
        x_range=(0, widths[len(widths) // 2] + 1) if widths else None,
        first_wrong=first_wrong,
        verdicts=lane,
        dep_min=dep_min,
        forks=list(forks),
        height=max(height - STRIP_HEIGHT - 30, 260) if long else height,
        answer_lane=answers,
    )
    if labels:
        fig = mark_labels(fig, labels)
    verifiers = verifier_table(trace)
    nodes = node_table(trace, outline, verifiers)
    if verifier is not None:  # the chosen verifier's first wrong step, not the checks'
        for nid, d in nodes.items():
            facts = [f for f in d.get("facts", []) if not f.startswith("first wrong step:")]
            if wrong is not None and nid == wrong.node:
                facts.append(f"first wrong step by {verifier}: {wrong.reason}")
            nodes[nid] = {**d, "facts": facts}
    data = {
        "find": search_items(outline),
        "kind": "trace",
        "map": figure_json(fig),
        "outline": outline_items(outline, first_wrong),
        "nodes": nodes,
        "intro": intro_panel(outline, wrong),
        "selected": None,
        **verifier_data(verifiers),
    }
    if long:
        data.update(
            episode_data(outline, episodes, first_wrong, height=height, lane=lane, answer_lane=answers)
        )
    if labels:
        data["outline"] = label_rows(data["outline"], labels)
    drawable(data)
    return data


@dataclass(frozen=True)
class ViewFigure:
    """One figure in a figure view (``figure_view_data``). ``steps``: its x axis is the round's step
    indices, so the selected step is outlined on it and a click on a column selects that step."""

    figure: go.Figure
    steps: bool = False


ROW_GAP = 8  # px between two rows of a figure view


def figure_view_data(rows: Sequence[Sequence[ViewFigure]], round_index: int) -> dict:
    """Figures of one Inspect tab, in rows (two in a row share it), as the view component draws
    them in the browser: drawn when the tab is first shown, the first figure first, the selected
    step outlined on the ``steps`` figures (in ``SELECT_COLOR``, as the map rings it). ``height``
    is what the frame needs: each row as tall as its tallest figure.

    >>> d = figure_view_data([[ViewFigure(go.Figure(go.Heatmap(z=[[1, 2]], x=["0", "1"])), steps=True)]], 0)
    >>> d["kind"], d["round"], d["rows"][0][0]["steps"], d["rows"][0][0]["figure"]["data"][0]["x"]
    ('figures', 0, True, ['0', '1'])
    """
    out, height = [], 0
    for row in rows:
        out.append([{"figure": figure_json(f.figure), "steps": f.steps} for f in row])
        height += max(int(f.figure.layout.height or 450) for f in row)
    height += ROW_GAP * max(len(out) - 1, 0)
    drawable(out)
    return {"kind": "figures", "rows": out, "round": round_index, "select": SELECT_COLOR, "height": height}
