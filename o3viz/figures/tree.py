"""The decision-tree figure: a collapsible view of the run graph, laid out with ``tree_layout``,
drawn with WebGL traces so trees of thousands of nodes stay responsive.

Layout: depth runs left to right (task → rounds → steps → decisions/checks → alternatives →
branches). Steps hang from their round, in order, so a long chain of reasoning reads top to
bottom; the ``next`` edges are drawn as the spine between consecutive steps.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import networkx as nx
import numpy as np
import plotly.graph_objects as go

from o3viz.analysis.graph import tree_layout
from o3viz.figures._style import KIND_COLORS, VERDICT_COLORS, base_layout, clip_label

ALL_KINDS = (
    "task",
    "segment",
    "round",
    "step",
    "decision",
    "alternative",
    "branch",
    "check",
    "answer",
    "compression",
)
DEFAULT_SHOWN = ("task", "round", "step", "decision", "alternative", "branch", "check", "answer")
LARGE_SHOWN = ("task", "round", "step", "answer")  # collapsed default for big trees
LARGE_TREE = 2000  # nodes; at or above this the default view collapses subtrees
LABELS_UP_TO = 2500  # tall trees open zoomed on their first rows, where labels still fit
MAX_ROWS = 48  # rows in the initial view of a tall tree  # draw text labels next to markers only for views this small
_SYMBOLS = {
    "self_check": "diamond",
    "backtrack": "triangle-left",
    "final": "star",
    "decision": "diamond",
    "alternative": "circle-open",
    "branch": "hexagon",
    "check": "square",
    "answer": "star",
    "round": "hexagram",
    "task": "pentagon",
    "segment": "square-open",
    "compression": "x",
}
_EDGE_STYLE = {
    "contains": ("#cbd5e1", 1.0),
    "next": ("#0ea5e9", 2.0),
    "decision": ("#f59e0b", 1.0),
    "alternative": ("#fcd34d", 1.0),
    "explores": ("#a855f7", 1.5),
    "checks": ("#94a3b8", 1.0),
    "answers": ("#14b8a6", 1.5),
    "backtrack": ("#f43f5e", 1.5),
    "compresses": ("#ec4899", 1.0),
    "revision": ("#6366f1", 2.5),
    "attends": ("#10b981", 1.0),
}


@dataclass
class TreeView:
    """The subgraph to draw and its positions; ``hidden`` counts collapsed nodes per kind."""

    graph: nx.DiGraph
    pos: dict[str, tuple[float, float]]
    hidden: dict[str, int] = field(default_factory=dict)
    flagged: set[str] = field(
        default_factory=set
    )  # steps with a failing check (outlined red even when checks are collapsed)


def default_shown(G: nx.DiGraph) -> tuple[str, ...]:
    """Which kinds the tree shows before the user expands anything."""
    return LARGE_SHOWN if G.number_of_nodes() >= LARGE_TREE else DEFAULT_SHOWN


def _descendants_to_expand(G: nx.DiGraph, expand: set[str]) -> set[str]:
    """Nodes made visible by expanding ``expand``: their decision/check subtrees (not the chain)."""
    out: set[str] = set()
    for n in expand:
        if n not in G:
            continue
        out.add(n)
        stack = [n]
        while stack:
            for m in G.successors(stack.pop()):
                if m not in out and G.nodes[m]["kind"] in (
                    "decision",
                    "alternative",
                    "branch",
                    "check",
                    "answer",
                ):
                    out.add(m)
                    stack.append(m)
    return out


def view_graph(
    G: nx.DiGraph, shown: tuple[str, ...] | set[str], expand: tuple[str, ...] | set[str] = ()
) -> TreeView:
    """Collapse every node whose kind is not in ``shown``, except under the nodes in ``expand``.

    Steps are re-hung under their round (``contains``) so the layout stacks them; the original
    ``next``/``backtrack`` edges are kept for drawing.
    """
    keep = {n for n, k in G.nodes(data="kind") if k in shown} | _descendants_to_expand(G, set(expand))
    V = nx.DiGraph()
    V.add_nodes_from((n, G.nodes[n]) for n in G if n in keep)
    for u, v, d in G.edges(data=True):
        if u in keep and v in keep:
            V.add_edge(u, v, **d)
    layout_graph = nx.DiGraph()
    layout_graph.add_nodes_from(V)
    for u, v, d in V.edges(data=True):
        kind = d.get("kind")
        if kind in ("next", "backtrack") and V.nodes[v]["kind"] == "step":
            continue
        layout_graph.add_edge(u, v, kind=kind)
    for n, d in V.nodes(data=True):
        if d["kind"] == "round" and "task" in V:  # later rounds hang from the task, beside round 0
            layout_graph.add_edge("task", n, kind="contains")
        if d["kind"] == "step" and f"round:{d['round']}" in V:
            layout_graph.add_edge(f"round:{d['round']}", n, kind="contains")
    pos = tree_layout(layout_graph, root="task")
    hidden: dict[str, int] = {}
    for n, k in G.nodes(data="kind"):
        if n not in keep:
            hidden[k] = hidden.get(k, 0) + 1
    bad = ("fail", "wrong", "error", "timeout")
    flagged = {u for u, v in G.edges() if G.nodes[v]["kind"] == "check" and G.nodes[v]["verdict"] in bad}
    return TreeView(V, pos, hidden, flagged & set(V))


def _hover(n: str, d: dict) -> str:
    parts = [
        f"<b>{html.escape(d['kind'])}</b> {html.escape(n)}",
        html.escape(clip_label(d.get("text", ""), 90)),
    ]
    if d.get("verdict"):
        parts.append(f"verdict: <b>{html.escape(str(d['verdict']))}</b>")
    if d.get("score") is not None:
        parts.append(f"score: {d['score']:.3f}")
    if d.get("type"):
        parts.append(f"type: {html.escape(str(d['type']))}")
    if d.get("entropy") is not None:
        parts.append(f"entropy: {d['entropy']:.2f} nats, margin {d.get('margin', 0):.2f}")
    return "<br>".join(parts)


def _node_color(d: dict) -> str:
    if d.get("verdict") in VERDICT_COLORS and d["kind"] in ("check", "answer", "branch", "round", "task"):
        return VERDICT_COLORS[d["verdict"]]
    return KIND_COLORS.get(d["kind"], "#64748b")


def _node_size(d: dict) -> float:
    score = d.get("score")
    base = {"task": 22, "round": 20, "answer": 18}.get(d["kind"], 9)
    if score is None or d["kind"] in ("task", "round") or not (0 <= score <= 1):
        return base
    return base + 14 * float(score)  # confidence (steps) or probability (alternatives)


def _edge_traces(view: TreeView) -> list[go.Scatter]:
    """One SVG path per edge kind (a single DOM element however many edges; WebGL line gaps
    render unreliably across plotly.js builds)."""
    by_kind: dict[str, tuple[list, list]] = {}
    for u, v, d in view.graph.edges(data=True):
        kind = d.get("kind", "contains")
        if kind == "attends" or u not in view.pos or v not in view.pos:
            continue
        xs, ys = by_kind.setdefault(kind, ([], []))
        (x0, y0), (x1, y1) = view.pos[u], view.pos[v]
        xs += [x0, x1, np.nan]  # NaN breaks the line: one path per kind; arrays skip per-item validation
        ys += [y0, y1, np.nan]
    traces = []
    for kind, (xs, ys) in by_kind.items():
        xs, ys = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
        color, width = _EDGE_STYLE.get(kind, ("#cbd5e1", 1.0))
        dash = "dash" if kind in ("revision", "backtrack") else "solid"
        traces.append(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                line={"color": color, "width": width, "dash": dash},
                hoverinfo="skip",
                name=f"{kind} edge",
                showlegend=kind in ("revision", "backtrack"),
                legendgroup="edges",
            )
        )
    return traces


def _style_of(view: TreeView, kind: str, n: str) -> tuple[str, str, bool]:
    d = view.graph.nodes[n]
    return (
        _node_color(d),
        _SYMBOLS.get(d.get("step_kind") if kind == "step" else kind, "circle"),
        n in view.flagged,
    )


def _node_traces(view: TreeView, kind: str, nodes: list[str], labels: bool) -> list[go.Scattergl]:
    """One WebGL trace per (colour, symbol, flagged) group of a kind: every style property is then a
    scalar, which keeps validation and the JSON small on trees of thousands of nodes."""
    groups: dict[tuple[str, str, bool], list[str]] = {}
    for n in nodes:
        groups.setdefault(_style_of(view, kind, n), []).append(n)
    traces = []
    for (color, symbol, flagged), members in groups.items():
        data = [view.graph.nodes[n] for n in members]
        traces.append(
            go.Scattergl(
                x=np.array([view.pos[n][0] for n in members]),
                y=np.array([view.pos[n][1] for n in members]),
                mode="markers+text" if labels else "markers",
                # WebGL text is drawn as plain glyphs (no HTML parsing), so it is not escaped; hover is.
                text=np.array([clip_label(d.get("label", ""), 24) for d in data], dtype=object)
                if labels
                else None,
                textposition="middle right",
                textfont={"size": 10, "color": "#334155"},
                marker={
                    "color": color,
                    "size": np.array([_node_size(d) for d in data]),
                    "symbol": symbol,
                    "line": {
                        "width": 3 if flagged else 1,
                        "color": VERDICT_COLORS["fail"] if flagged else "white",
                    },
                    "opacity": 0.95,
                },
                customdata=np.array(members, dtype=object),
                hovertext=np.array([_hover(n, d) for n, d in zip(members, data, strict=True)], dtype=object),
                hovertemplate="%{hovertext}<extra></extra>",
                name=kind,
                legendgroup=kind,
            )
        )
    return traces


def tree_figure(
    view: TreeView,
    *,
    title: str = "Decision tree",
    highlight: tuple[str, ...] | list[str] = (),
    selected: str | None = None,
    height: int | None = None,
    labels: bool | None = None,
) -> go.Figure:
    """The decision tree: markers coloured by kind (verdict for checks, answers, branches and rounds),
    sized by confidence; ``customdata`` of every marker is its node id, for click events.
    ``labels`` draws text beside markers (default: when the view has at most LABELS_UP_TO nodes)."""
    nodes_by_kind: dict[str, list[str]] = {}
    for n, k in view.graph.nodes(data="kind"):
        if n in view.pos:
            nodes_by_kind.setdefault(k, []).append(n)
    labels = view.graph.number_of_nodes() <= LABELS_UP_TO if labels is None else labels
    fig = go.Figure(_edge_traces(view))
    for kind in ALL_KINDS:
        if nodes_by_kind.get(kind):
            fig.add_traces(_node_traces(view, kind, nodes_by_kind[kind], labels))
    marks = [n for n in (*highlight, *([selected] if selected else [])) if n in view.pos]
    if marks:
        fig.add_trace(
            go.Scattergl(
                x=[view.pos[n][0] for n in marks],
                y=[view.pos[n][1] for n in marks],
                mode="markers",
                marker={"size": 26, "color": "rgba(0,0,0,0)", "line": {"width": 3, "color": "#e11d48"}},
                customdata=marks,
                hoverinfo="skip",
                name="search / selected",
            )
        )
    rows = len({round(p[1], 3) for p in view.pos.values()})
    _frame(fig, view, title, height or int(min(max(rows, 12), MAX_ROWS) * 16 + 140), labels)
    return fig


def _frame(fig: go.Figure, view: TreeView, title: str, height: int, labels: bool) -> None:
    ys = [p[1] for p in view.pos.values()] or [0.0]
    xs = [p[0] for p in view.pos.values()] or [0.0]
    rows = max(ys) - min(ys) + 1
    hidden = ", ".join(f"{v} {k}" for k, v in sorted(view.hidden.items()))
    sub = f"{view.graph.number_of_nodes()} nodes shown" + (f"; collapsed: {hidden}" if hidden else "")
    base_layout(
        fig,
        f"{title} <span style='font-size:11px;color:#64748b'>{html.escape(sub)}</span>",
        height=height,
        dragmode="pan",
        clickmode="event+select",
        hovermode="closest",
    )
    # Long chains: open on the first rows (the user pans or zooms for the rest).
    y_range = [min(ys) - 1, min(ys) + MAX_ROWS] if rows > MAX_ROWS else [min(ys) - 1, max(ys) + 1]
    fig.update_yaxes(visible=False, autorange=False, range=y_range[::-1])
    fig.update_xaxes(visible=False, range=[min(xs) - 0.3, max(xs) + (1.6 if labels else 0.4)])
    # A one-line key instead of plotly's legend (which hosts may restyle into a tall column).
    shown = {k for _, k in view.graph.nodes(data="kind")}
    key = "   ".join(f'<span style="color:{KIND_COLORS[k]}">●</span> {k}' for k in ALL_KINDS if k in shown)
    key += (
        f'   <span style="color:{VERDICT_COLORS["pass"]}">●</span> pass/correct'
        f'   <span style="color:{VERDICT_COLORS["fail"]}">●</span> fail/wrong'
    )
    fig.add_annotation(
        text=key,
        xref="paper",
        yref="paper",
        x=0,
        y=1.0,
        xanchor="left",
        yanchor="bottom",
        showarrow=False,
        font={"size": 11, "color": "#334155"},
    )
    fig.update_layout(showlegend=False, margin={"l": 10, "r": 10, "t": 78, "b": 10})


def search_nodes(G: nx.DiGraph, query: str, limit: int = 50) -> list[str]:
    """Ids of nodes whose text, label or id contains ``query`` (case-insensitive), in graph order."""
    q = query.strip().lower()
    if not q:
        return []
    out = []
    for n, d in G.nodes(data=True):
        if q in n.lower() or q in str(d.get("text", "")).lower():
            out.append(n)
            if len(out) >= limit:
                break
    return out
