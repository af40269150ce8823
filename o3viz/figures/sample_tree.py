"""The sample tree as a Plotly figure: left to right from the question, an edge as wide as the
samples that follow it and coloured by the share of them that reach the reference (a fixed scale,
wrong-red 0 → grey → right-green 1, with a colour bar; grey-blue where nothing is graded), forks
ringed, and a hover with each node's step text, samples and answers.

Edges are drawn as a few traces (bucketed by width and colour), not one per edge, so a tree of
hundreds of nodes is a handful of traces. Where ``tree_view_data`` groups the samples that leave a
node alone, each group is one triangle on a short stub, its samples listed in its hover.

**Names.** Shared chains are named above them ("48 shared steps"), and each leaf or group right of
its mark ("→ 260 (4 shared steps)", "3 samples leave here → 2 answers (0 right)"). A name is drawn
only where its box (``CHAR_PX`` a character, ``LINE_PX`` high, on a plot assumed ``PLOT_PX`` wide)
keeps ``GAP_PX`` from every other name it shares x with and clears every mark, biggest first, at
most ``MAX_NAMES``; the others stay in the hovers and a line under the figure says how many.

>>> from o3viz.samples.tree import build_tree
>>> from o3viz.testing.sample_sets import split_set
>>> fig = sample_tree_figure(build_tree(split_set(3, 3)))
>>> fig.data[-1].marker.cmin, fig.data[-1].marker.cmax, len(fig.data[-1].x)
(0.0, 1.0, 4)
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import plotly.graph_objects as go

from o3viz.figures._style import (
    BAD_COLOR,
    GOOD_COLOR,
    SELECT_COLOR,
    UNGRADED_COLOR,
    base_layout,
    clip_label,
    counted,
    empty_figure,
    esc,
)
from o3viz.samples.tree import SampleTree
from o3viz.samples.view_data import tree_view_data

__all__ = ["SHARE_SCALE", "sample_tree_figure"]

SHARE_SCALE = [[0.0, BAD_COLOR], [0.5, "#d6d3d1"], [1.0, GOOD_COLOR]]  # fixed: 0 → 1
MAX_WIDTH = 14.0  # px, the edge every sample follows
WIDTH_BUCKETS = 6
COLOR_BUCKETS = 11
MAX_NAMES = 40  # names drawn on the figure, at most
NAME_FONT = 11  # px
CHAR_PX = 6.4  # px a character of a name takes (an upper bound for the 11 px sans-serif)
LINE_PX = 13  # px a name's box is high
GAP_PX = 2  # px kept between two names' boxes
NAME_OFFSET = 4  # px between a mark and its name
PLOT_PX = 520  # px of plot width assumed for names: the Samples page's column less the colour bar
PAD_TOP, PAD_BOTTOM = 28, 10  # px above the first row (the chains' names) and below the last
SPINE_ROW_PX = 56  # px a row at most where spines' groups hang: the room below is for their names
MARGIN = {"l": 10, "r": 10, "t": 50, "b": 40}
GROUP_HOVER = 20  # samples of a group listed in its hover


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
    return f"{steps}{text}<br>{counted(n['samples'], 'sample')} · {share}<br>answers: {answers}" + (
        fork if n["fork"] else ""
    )


def _leaf_name(n: dict) -> str:
    steps = f"{n['steps']} {'shared ' if n['samples'] > 1 else ''}step{'s' if n['steps'] != 1 else ''}"
    return f"→ {_answers(n)} ({steps})"


def _answers(n: dict) -> str:
    return ", ".join(html.escape(a[:14]) for a in list(n["answers"])[:2]) or "—"


def _group_hover(g: dict, nodes: list[dict]) -> str:
    lines = [html.escape(g["label"])]
    for c in g["nodes"][:GROUP_HOVER]:
        n = nodes[c]
        ok = {None: "", 1.0: " ✓", 0.0: " ✗"}.get(n["reference_share"], "")
        lines.append(f"{html.escape(n['members'][0])} → {_answers(n)}{ok} ({n['steps']} steps)")
    if g["samples"] > GROUP_HOVER:
        lines.append(f"… {g['samples'] - GROUP_HOVER} more: click to list them all")
    return "<br>".join(lines)


@dataclass
class _Frame:
    """Data ↔ pixels of the plot area, for placing names (the width is assumed: ``PLOT_PX``)."""

    x0: float  # data x at the left edge
    ppx: float  # px per unit of x
    y0: float  # data y at the top edge (the y axis runs downwards)
    ppy: float  # px per row
    height: float  # px of the plot area
    x_range: list[float]
    y_range: list[float]  # bottom, top: reversed

    def px(self, x: float, y: float) -> tuple[float, float]:
        return (x - self.x0) * self.ppx, (y - self.y0) * self.ppy


def _frame(marks: list[dict], names: list[tuple[str, dict]], height: int) -> _Frame:
    """Rows fill the plot's height (room above for the chains' names; with spines, at most
    ``SPINE_ROW_PX`` a row, leaving room below for pinned names); x spans the tree and the widest
    terminal name right of its mark."""
    rows = max(m["y"] for m in marks)
    plot_h = height - MARGIN["t"] - MARGIN["b"]
    ppy = (plot_h - PAD_TOP - PAD_BOTTOM) / max(rows, 1)
    if any(m["spine"] for m in marks):
        ppy = min(ppy, SPINE_ROW_PX)
    x0, right = -0.3, max(m["x"] for m in marks) + 0.3
    span = right - x0
    for text, m in names:
        room = PLOT_PX - _width(text) - m["r"] - NAME_OFFSET
        span = max(span, (m["x"] - x0) * PLOT_PX / max(room, PLOT_PX * 0.2))
    y0 = -PAD_TOP / ppy
    return _Frame(x0, PLOT_PX / span, y0, ppy, plot_h, [x0, x0 + span], [y0 + plot_h / ppy, y0])


def _width(text: str) -> float:
    return len(text) * CHAR_PX + 4


def _fits(box, taken: list, blocks: list, bottom: float) -> bool:
    """Inside the plot, ``GAP_PX`` in y from every name in ``taken`` it shares x with, and clear of
    every box in ``blocks`` (marks, pins)."""
    x0, y0, x1, y1 = box
    if x0 < -0.5 or x1 > PLOT_PX + 0.5 or y0 < -0.5 or y1 > bottom + 0.5:  # 0.5: float slack
        return False
    for a0, b0, a1, b1 in taken:
        if x0 < a1 and a0 < x1 and y0 < b1 + GAP_PX and b0 < y1 + GAP_PX:
            return False
    return not any(x0 < a1 and a0 < x1 and y0 < b1 and b0 < y1 for a0, b0, a1, b1 in blocks)


def _spots(frame: _Frame, mark: dict, w: float):
    """Where a terminal mark's name may go, best first: right of the mark; for a spine's group,
    then on a line below it, tied to it by a pin (the pin's box, or None)."""
    cx, cy = frame.px(mark["x"], mark["y"])
    r = mark["r"]
    yield cx + r + NAME_OFFSET, cy, None
    if mark["spine"]:
        y = cy + r + NAME_OFFSET + LINE_PX / 2
        while y + LINE_PX / 2 <= frame.height:
            yield cx - 2, y, (cx - 1, cy + r, cx + 1, y - LINE_PX / 2)
            y += LINE_PX + GAP_PX + 0.5  # a hair over the gap: no tie at the limit


def _place_names(fig: go.Figure, frame: _Frame, marks: list[dict], chains: list[dict], names) -> None:
    """Name the chains ("N shared steps", above them) and the terminal marks (right of them, or
    pinned below a spine's group), biggest first, each only where its box keeps ``GAP_PX`` from
    every other name and clears every mark and pin; at most ``MAX_NAMES``. The rest stay in the
    hovers, and the figure says how many."""
    blocks = []
    for m in marks:
        cx, cy = frame.px(m["x"], m["y"])
        blocks.append((cx - m["r"], cy - m["r"], cx + m["r"], cy + m["r"]))
    r_top = {m["node"]: m["r"] for m in marks if m["node"] is not None}
    taken, shown, pins = [], [], []
    for c in sorted(chains, key=lambda c: -c["steps"]):  # above the chain, inside the plot
        cx, cy = frame.px((c["x0"] + c["x1"]) / 2, c["y"])
        w = _width(c["label"])
        left, cy = min(max(cx - w / 2, 0.0), PLOT_PX - w), cy - r_top.get(c["node"], 6) - 3 - LINE_PX / 2
        _try(c["label"], [(left, cy, None)], w, (taken, blocks, shown, pins), frame.height)
    names = sorted(names, key=lambda tm: -tm[1]["samples"])
    pinned = [tm for tm in names if tm[1]["spine"]]
    if pinned:  # as many as there are lines below the groups
        top = min(frame.px(m["x"], m["y"])[1] + m["r"] + NAME_OFFSET for _, m in pinned)
        pinned = pinned[: int((frame.height - top) / (LINE_PX + GAP_PX + 0.5))]
    # the biggest of a spine's groups, right to left: the rightmost's name on the first line below,
    # the next one's a line lower, so no pin crosses a name
    pinned.sort(key=lambda tm: -tm[1]["x"])
    for text, m in [tm for tm in names if not tm[1]["spine"]] + pinned:
        w = _width(text)
        _try(text, _spots(frame, m, w), w, (taken, blocks, shown, pins), frame.height)
    _draw_names(fig, frame, shown, pins, len(chains) + len(names))


def _try(text: str, spots, w: float, placed: tuple[list, list, list, list], bottom: float) -> None:
    """The first of ``spots`` where ``text`` fits, recorded in ``placed`` (names' boxes, boxes to
    clear, names shown, pins), if any."""
    taken, blocks, shown, pins = placed
    if len(shown) >= MAX_NAMES:
        return
    for left, cy, pin in spots:
        box = (left, cy - LINE_PX / 2, left + w, cy + LINE_PX / 2)
        if _fits(box, taken, blocks, bottom) and (pin is None or _fits(pin, [], blocks + taken, bottom)):
            taken.append(box)
            shown.append((text, left, cy))
            if pin is not None:
                blocks.append(pin)
                pins.append(pin)
            return


def _draw_names(fig: go.Figure, frame: _Frame, shown: list, pins: list, wanted: int) -> None:
    if pins:
        xs, ys = [], []
        for x0, y0, x1, y1 in pins:
            x = frame.x0 + (x0 + x1) / 2 / frame.ppx
            xs += [x, x, None]
            ys += [frame.y0 + y0 / frame.ppy, frame.y0 + y1 / frame.ppy, None]
        fig.add_trace(
            go.Scatter(
                x=xs, y=ys, mode="lines", line={"width": 1, "color": "#9ca3af", "dash": "dot"},
                hoverinfo="skip", showlegend=False, name="pins",
            )
        )  # fmt: skip
    if shown:
        fig.add_trace(
            go.Scatter(
                x=[frame.x0 + left / frame.ppx for _, left, _ in shown],
                y=[frame.y0 + cy / frame.ppy for _, _, cy in shown],
                text=[t for t, _, _ in shown], mode="text", textposition="middle right",
                textfont={"size": NAME_FONT, "color": "#374151"}, hoverinfo="skip", showlegend=False, name="names",
            )
        )  # fmt: skip
    if wanted > len(shown):
        fig.add_annotation(
            text=f"{len(shown)} of {wanted} names shown: hover a mark for the other {wanted - len(shown)}",
            xref="paper", yref="paper", x=0, y=0, xanchor="left", yanchor="top", yshift=-4,
            showarrow=False, font={"size": 11, "color": "#6b7280"},
        )  # fmt: skip


def _edges(fig: go.Figure, data: dict, n_all: int) -> None:
    nodes, groups = data["nodes"], data["groups"]
    buckets: dict[tuple[int, int | None], tuple[list, list]] = {}
    for e in data["edges"]:
        w = min(WIDTH_BUCKETS, 1 + int((WIDTH_BUCKETS - 1) * e["width"] / n_all))
        c = None if e["color"] is None else round(e["color"] * (COLOR_BUCKETS - 1))
        xs, ys = buckets.setdefault((w, c), ([], []))
        a = nodes[e["source"]]
        b = groups[e["group"]] if e.get("group") is not None else nodes[e["target"]]
        xs += [a["x"], (a["x"] + b["x"]) / 2, b["x"], None]
        ys += [a["y"], b["y"], b["y"], None]
    for (w, c), (xs, ys) in sorted(buckets.items(), key=lambda kv: kv[0][0]):
        color = UNGRADED_COLOR if c is None else _mix(c / (COLOR_BUCKETS - 1))
        fig.add_trace(
            go.Scatter(
                x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False,
                line={"width": 1 + (MAX_WIDTH - 1) * (w - 1) / (WIDTH_BUCKETS - 1), "color": color, "shape": "hv"},
            )
        )  # fmt: skip


def _size(samples: int, n_all: int) -> float:
    return 8 + 10 * samples / n_all


def _mark(item: dict, n_all: int, node: int | None) -> dict:
    """Where a mark sits, its radius (px) and whether it hangs from a spine, for placing names."""
    r = _size(item["samples"], n_all) / 2
    spine = bool(item.get("spine"))
    return {"x": item["x"], "y": item["y"], "r": r, "samples": item["samples"], "node": node, "spine": spine}


def _marker(items: list[dict], n_all: int, **kw) -> dict:
    shares = [n["reference_share"] for n in items]
    return {
        "size": [_size(n["samples"], n_all) for n in items],
        "color": [x if x is not None else 0.5 for x in shares],
        "colorscale": SHARE_SCALE,
        "cmin": 0.0,
        "cmax": 1.0,
        "opacity": [1.0 if x is not None else 0.45 for x in shares],
        **kw,
    }


def _add_marks(fig: go.Figure, data: dict, drawn: list[dict], n_all: int) -> None:
    """The groups' triangles, then the nodes' circles (the last trace: the one a click reads)."""
    groups = data["groups"]
    if groups:
        fig.add_trace(
            go.Scatter(
                x=[g["x"] for g in groups], y=[g["y"] for g in groups], mode="markers",
                customdata=[g["parent"] for g in groups],  # a click lists the node's samples
                hovertext=[_group_hover(g, data["nodes"]) for g in groups],
                hovertemplate="%{hovertext}<extra></extra>", showlegend=False, name="left alone",
                marker=_marker(groups, n_all, symbol="triangle-right", line={"width": 1, "color": "white"}),
            )
        )  # fmt: skip
    shares = [n["reference_share"] for n in drawn]
    fig.add_trace(
        go.Scatter(
            x=[n["x"] for n in drawn],
            y=[n["y"] for n in drawn],
            mode="markers",
            customdata=[n["id"] for n in drawn],
            hovertext=[_hover(n) for n in drawn],
            hovertemplate="%{hovertext}<extra></extra>",
            marker=_marker(
                drawn,
                n_all,
                showscale=any(x is not None for x in shares),  # nothing graded: no scale to read
                colorbar={
                    "title": {"text": "reach the<br>reference", "side": "right"},
                    "tickformat": ".0%",
                    "thickness": 12,
                },
                line={
                    "width": [3 if n["fork"] else 1 for n in drawn],
                    "color": [SELECT_COLOR if n["fork"] else "white" for n in drawn],
                },
            ),
            showlegend=False,
            name="steps",
        )
    )


def sample_tree_figure(tree: SampleTree, *, height: int | None = None) -> go.Figure:
    """The tree of ``tree`` (``o3viz.samples.tree.build_tree``), drawn from ``tree_view_data``."""
    data = tree_view_data(tree)
    title = f"Where {data['n']} samples part ways"
    if not data["nodes"]:
        return empty_figure(title, "No samples.")
    n_all = max(1, data["n"])
    drawn = [n for n in data["nodes"] if n["group"] is None]
    groups = data["groups"]
    fig = go.Figure()
    _edges(fig, data, n_all)
    marks = [_mark(n, n_all, n["id"]) for n in drawn] + [_mark(g, n_all, None) for g in groups]
    parents = {n["parent"] for n in drawn}
    names = [
        (_leaf_name(n), mark)
        for n, mark in zip(drawn, marks, strict=False)
        if n["parent"] is not None and n["id"] not in parents
    ]
    names += [(html.escape(g["label"]), mark) for g, mark in zip(groups, marks[len(drawn) :], strict=True)]
    rows = max(m["y"] for m in marks) + 1
    height = height or int(min(900, max(260, 60 + 22 * rows)))
    frame = _frame(marks, names, height)
    _place_names(fig, frame, marks, data["chains"], names)
    _add_marks(fig, data, drawn, n_all)
    fig.update_xaxes(visible=False, range=frame.x_range)
    fig.update_yaxes(visible=False, range=frame.y_range)
    m = data["majority"]
    sub = (
        f"majority {esc(clip_label(m['answer'], 30))} ({m['share']:.0%})"
        if m["answer"] is not None
        else "no answers"
    )
    if m["tied"]:
        sub = f"no majority: a {len(m['tied']) + 1}-way tie at {counted(m['count'], 'sample')} each"
    return base_layout(fig, f"{title} · {sub}", height=height, margin=MARGIN)
