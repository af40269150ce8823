"""o3viz: the Streamlit router. Page config, navigation over pages/, the shared sidebar, and the
session-state defaults (initialised here and nowhere else)."""

from __future__ import annotations

import streamlit as st

from pages._ui import add_entries, cached_samples

DEFAULTS = {
    "library": {},  # key -> o3viz.app.library.LibraryEntry, in insertion order
    "inspect_key": None,  # the trace shown on Inspect
    "compare_a": None,  # the traces shown on Compare
    "compare_b": None,
    "inspect_node": None,  # the node selected on Inspect (map, outline, search or URL)
    "inspect_view": None,  # the open Inspect tab (its title; None = the first view)
    "tree_last_click": None,
    "runs": 0,  # runs made in this session (names them)
    "run_job": None,  # the run in progress (o3viz.app.library.RunJob)
    "samples_loaded": False,
    "upload_results": {},  # upload bytes key -> (entries, errors), read once in a worker process
}

st.set_page_config(page_title="o3viz", page_icon=":material/account_tree:", layout="wide")
for key, value in DEFAULTS.items():
    if key not in st.session_state:
        st.session_state[key] = value.copy() if isinstance(value, dict) else value

pages = [
    st.Page("pages/library.py", title="Library", icon=":material/folder_open:", default=True),
    st.Page("pages/run.py", title="Run", icon=":material/play_arrow:"),
    st.Page("pages/inspect.py", title="Inspect", icon=":material/account_tree:"),
    st.Page("pages/compare.py", title="Compare", icon=":material/compare_arrows:"),
]
page = st.navigation(pages)  # first, so the sidebar never shows the raw pages/ folder

if not st.session_state.samples_loaded:
    entries, errors = cached_samples()
    add_entries(entries)
    st.session_state.sample_errors = errors
    st.session_state.samples_loaded = True

with st.sidebar:
    st.markdown("### o3viz")
    st.caption(
        "Look inside an open model's reasoning: attention, verification, compression. "
        "o3viz runs the article's mechanisms on open-weight models; it shows nothing of o3 itself."
    )
    n = len(st.session_state.library)
    st.caption(f"{n} trace{'' if n == 1 else 's'} in this session")

page.run()
