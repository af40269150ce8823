"""What Inspect and Compare derive from a trace, computed once per content key and cached: the outline,
the episodes (with the first wrong step) and the run graph."""

from __future__ import annotations

import streamlit as st

from o3viz.app import Trace, build_graph, build_outline, find_episodes, first_wrong_step


@st.cache_resource(max_entries=8, show_spinner="Reading the trace…")
def outline_of(key: str, _trace: Trace):
    return build_outline(_trace)


@st.cache_resource(max_entries=8, show_spinner="Finding the episodes…")
def episodes_of(key: str, _trace: Trace):
    outline = outline_of(key, _trace)
    wrong = first_wrong_step(_trace)  # the one rule Inspect's header and details use too
    return find_episodes(outline), (wrong.node if wrong else None)


@st.cache_resource(max_entries=8, show_spinner="Building the run graph…")
def graph_of(key: str, _trace: Trace):
    return build_graph(_trace)
