"""Inspect's first view: the outline (left), the reasoning map (centre) and the selection's details
(right), all in one row so the details are in view at desktop widths. Selecting in the outline, on
the map, by search or by URL selects the same node everywhere (``pages._ui.select_node``)."""

from __future__ import annotations

import streamlit as st

from o3viz import Trace, build_graph, build_outline, search_outline
from o3viz.figures import outline_items, reasoning_map_figure
from pages._inspect_details import details_panel
from pages._outline import outline_list
from pages._ui import select_node, selected_node, show_figure

MAP_HEIGHT = 430


@st.cache_resource(max_entries=8, show_spinner="Reading the trace…")
def outline_of(key: str, _trace: Trace):
    return build_outline(_trace)


@st.cache_resource(max_entries=8, show_spinner="Building the run graph…")
def graph_of(key: str, _trace: Trace):
    return build_graph(_trace)


def _on_map_click(chart_key: str) -> None:
    points = (st.session_state.get(chart_key) or {}).get("selection", {}).get("points", [])
    ids = [p.get("customdata") for p in points if isinstance(p.get("customdata"), str)]
    if ids:
        select_node(ids[0])


def _on_outline_click(list_key: str) -> None:
    picked = (st.session_state.get(list_key) or {}).get("select")
    if isinstance(picked, str):
        select_node(picked)


def _on_search(box_key: str) -> None:
    if st.session_state.get(box_key):
        select_node(st.session_state[box_key])
        st.session_state.map_focus = st.session_state[box_key]


def _search(key: str, outline) -> list[str]:
    query = st.text_input(
        "Find a step",
        key=f"map_search_{key}",
        placeholder="Find a step: text or id (wait, step:0:3)",
        label_visibility="collapsed",
    )
    matches = search_outline(outline, query) if query else []
    if query:
        st.selectbox(
            f"{len(matches)} match{'es' if len(matches) != 1 else ''}",
            matches,
            index=None,
            key=f"map_match_{key}",
            format_func=lambda n: outline.label(n),
            on_change=_on_search,
            args=(f"map_match_{key}",),
            placeholder="Pick one to go there",
            label_visibility="collapsed",
        )
    return matches


def query_open(key: str) -> bool:
    return bool(st.session_state.get(f"map_search_{key}"))


def map_view(key: str, trace: Trace) -> None:
    outline = outline_of(key, trace)
    node = selected_node()
    if node is not None and outline.find(node) is None and node not in graph_of(key, trace):
        node = None  # (the graph is built only for ids the outline does not know)
    left, centre, right = st.columns([1.25, 2.45, 1.5], gap="small")
    with left:
        matches = _search(key, outline)
        list_key = f"outline_{key}"
        outline_list(
            outline_items(outline),
            node,
            key=list_key,
            height=MAP_HEIGHT - 100 if query_open(key) else MAP_HEIGHT - 52,
            on_select=lambda: _on_outline_click(list_key),
        )
    with centre:
        focus = node if st.session_state.map_focus == node else None
        dep_min = 0.0
        if outline.has_dependencies:
            dep_min = st.slider(
                "Dependency arcs into steps of importance at least",
                0.0,
                1.0,
                0.0,
                0.05,
                key=f"map_dep_min_{key}",
                help="Importance is each step's rank within the trace (0 to 1). Raise it to keep only "
                "the arcs that lead into the steps that mattered most.",
            )
        height = MAP_HEIGHT - 76 if outline.has_dependencies else MAP_HEIGHT  # the slider's room
        fig = reasoning_map_figure(
            outline, selected=node, highlight=matches, focus=focus, height=height, dep_min=dep_min
        )
        chart_key = f"map_{key}_{node}"
        show_figure(fig, chart_key, on_select=lambda: _on_map_click(chart_key), selection_mode="points")
    with right:
        details_panel(trace, outline, lambda: graph_of(key, trace), node)
