"""The sample tree as a Plotly figure: left to right from the question, an edge as wide as the
samples that follow it and coloured by the share of them that reach the reference (a fixed scale,
wrong-red 0 → grey → right-green 1, with a colour bar; grey-blue where nothing is graded), forks
ringed, and a hover with each node's step text, samples and answers.

Edges are drawn as a few traces (bucketed by width and colour), not one per edge, so a tree of
hundreds of nodes is a handful of traces.

>>> from o3viz.samples.tree import build_tree
>>> from o3viz.testing.sample_sets import split_set
>>> fig = sample_tree_figure(build_tree(split_set(3, 3)))
>>> fig.data[-1].marker.cmin, fig.data[-1].marker.cmax, len(fig.data[-1].x)
(0.0, 1.0, 4)
"""

from __future__ import annotations

import html

import plotly.graph_objects as go

from o3viz.figures._style import (
    BAD_COLOR,
    GOOD_COLOR,
    SELECT_COLOR,
    UNGRADED_COLOR,
    base_layout,
    empty_figure,
)
from o3viz.samples.tree import SampleTree
from o3viz.samples.view_data import tree_view_data

__all__ = ["SHARE_SCALE", "sample_tree_figure"]

SHARE_SCALE = [[0.0, BAD_COLOR], [0.5, "#d6d3d1"], [1.0, GOOD_COLOR]]  # fixed: 0 → 1
MAX_WIDTH = 14.0  # px, the edge every sample follows
WIDTH_BUCKETS = 6
COLOR_BUCKETS = 11
NAMED_SHARED = 4  # shared chains named on the figure, longest first (every one says it in its hover)
NAMED_LEAVES = 24  # leaves named with their answer when there are at most this many


def _mix(share: float) -> str:
    """The scale's colour at ``share`` (0..1), as ``rgb(...)``."""
    (a, ca), (b, cb) = (SHARE_SCALE[0], SHARE_SCALE[1]) if share <= 0.5 else (SHARE_SCALE[1], SHARE_SCALE[2])
    t = (share - a) / (b - a)
    rgb = [round(int(ca[i : i + 2], 16) * (1 - t) + int(cb[i : i + 2], 16) * t) for i in (1, 3, 5)]
    return f"rgb({rgb[0]},{rgb[1]},{rgb[2]})"


def _hover(n: dict) -> str:
    answers = ", ".join(f"{html.escape(a[:30])} × {c}" for a, c in list(n["answers"].items())[:6])
    share = "ungraded" if n["reference_share"] is None else f"{n['reference_share']:.0%} reach the reference"
    if n["interval"]:
        share += f" (95% {n['interval'][0]:.0%}–{n['interval'][1]:.0%})"
    steps = f"{n['steps']} steps collapsed<br>" if n["steps"] > 1 else ""
    text = html.escape(n["text"][:160]) + (f"<br>… {html.escape(n['last'][:120])}" if n["steps"] > 1 else "")
    fork = "<br><b>fork</b>" + (f", entropy {n['entropy']:.2f} nats" if n["entropy"] is not None else "")
    return f"{steps}{text}<br>{n['samples']} samples · {share}<br>answers: {answers}" + (
        fork if n["fork"] else ""
    )


def _add_names(fig: go.Figure, nodes: list[dict]) -> None:
    """Name what was collapsed: a shared chain says "N shared steps" above it; where the leaves have
    room (at most ``NAMED_LEAVES``), each says its answer and how many steps it holds."""
    parents = {n["parent"] for n in nodes}
    leaves = [n for n in nodes if n["parent"] is not None and n["id"] not in parents]
    named = {n["id"] for n in leaves} if len(leaves) <= NAMED_LEAVES else set()
    shared = [n for n in nodes if n["steps"] > 1 and n["samples"] > 1 and n["id"] not in named]
    shared = sorted(shared, key=lambda n: -n["steps"])[:NAMED_SHARED]  # the longest: names never pile up
    for group, pos, name in (
        (shared, "top center", lambda n: f"{n['steps']} shared steps"),
        ([n for n in leaves if n["id"] in named], "middle right", _leaf_name),
    ):
        if group:
            fig.add_trace(
                go.Scatter(
                    x=[n["x"] for n in group], y=[n["y"] for n in group], mode="text",
                    text=[name(n) for n in group], textposition=pos, textfont={"size": 11, "color": "#374151"},
                    hoverinfo="skip", showlegend=False,
                )
            )  # fmt: skip


def _leaf_name(n: dict) -> str:
    steps = f"{n['steps']} {'shared ' if n['samples'] > 1 else ''}step{'s' if n['steps'] != 1 else ''}"
    return f"→ {_answers(n)} ({steps})"


def _answers(n: dict) -> str:
    return ", ".join(html.escape(a[:14]) for a in list(n["answers"])[:2]) or "—"


def sample_tree_figure(tree: SampleTree, *, height: int | None = None) -> go.Figure:
    """The tree of ``tree`` (``o3viz.samples.tree.build_tree``), drawn from ``tree_view_data``."""
    data = tree_view_data(tree)
    title = f"Where {data['n']} samples part ways"
    if not data["nodes"]:
        return empty_figure(title, "No samples.")
    nodes = data["nodes"]
    n_all = max(1, data["n"])
    groups: dict[tuple[int, int | None], tuple[list, list]] = {}
    for e in data["edges"]:
        w = min(WIDTH_BUCKETS, 1 + int((WIDTH_BUCKETS - 1) * e["width"] / n_all))
        c = None if e["color"] is None else round(e["color"] * (COLOR_BUCKETS - 1))
        xs, ys = groups.setdefault((w, c), ([], []))
        a, b = nodes[e["source"]], nodes[e["target"]]
        xs += [a["x"], (a["x"] + b["x"]) / 2, b["x"], None]
        ys += [a["y"], b["y"], b["y"], None]
    fig = go.Figure()
    for (w, c), (xs, ys) in sorted(groups.items(), key=lambda kv: kv[0][0]):
        color = UNGRADED_COLOR if c is None else _mix(c / (COLOR_BUCKETS - 1))
        fig.add_trace(
            go.Scatter(
                x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False,
                line={"width": 1 + (MAX_WIDTH - 1) * (w - 1) / (WIDTH_BUCKETS - 1), "color": color, "shape": "hv"},
            )
        )  # fmt: skip
    _add_names(fig, nodes)
    shares = [n["reference_share"] for n in nodes]
    fig.add_trace(
        go.Scatter(
            x=[n["x"] for n in nodes],
            y=[n["y"] for n in nodes],
            mode="markers",
            customdata=[n["id"] for n in nodes],
            hovertext=[_hover(n) for n in nodes],
            hovertemplate="%{hovertext}<extra></extra>",
            marker={
                "size": [8 + 10 * n["samples"] / n_all for n in nodes],
                "color": [s if s is not None else 0.5 for s in shares],
                "colorscale": SHARE_SCALE,
                "cmin": 0.0,
                "cmax": 1.0,
                "showscale": any(x is not None for x in shares),  # nothing graded: no scale to read
                "colorbar": {
                    "title": {"text": "reach the<br>reference", "side": "right"},
                    "tickformat": ".0%",
                    "thickness": 12,
                },  # fmt: skip
                "line": {
                    "width": [3 if n["fork"] else 1 for n in nodes],
                    "color": [SELECT_COLOR if n["fork"] else "white" for n in nodes],
                },
                "opacity": [1.0 if s is not None else 0.45 for s in shares],
            },
            showlegend=False,
            name="steps",
        )
    )
    fig.update_xaxes(visible=False, range=[-0.3, max(n["x"] for n in nodes) + 0.9])  # room for the names
    fig.update_yaxes(visible=False, autorange="reversed")
    rows = max(n["y"] for n in nodes) + 1
    m = data["majority"]
    sub = f"majority {m['answer']} ({m['share']:.0%})" if m["answer"] is not None else "no answers"
    return base_layout(fig, f"{title} · {sub}", height=height or int(min(900, max(260, 60 + 22 * rows))))
