"""Inspect one trace: headline metrics, then the decision tree, attention, compression,
verification and token tabs (each tab renders only while it is open)."""

from __future__ import annotations

import streamlit as st

from o3viz import summarize
from o3viz.figures import escape_markdown
from pages._inspect_tabs import attention_tab, compression_tab, tokens_tab, tree_tab, verification_tab
from pages._ui import entry_label, library, need_traces, require_router

require_router()
st.title("Inspect")
if not need_traces(1):
    st.stop()
lib = library()
keys = list(lib)
if st.session_state.inspect_key not in lib:
    st.session_state.inspect_key = keys[0]
key = st.selectbox("Trace", keys, format_func=lambda k: entry_label(lib, k), key="inspect_key")
trace = lib[key].trace
s = summarize(trace)
st.caption(escape_markdown(f"{s.model} · {s.source} · task: {s.task}"))

cols = st.columns(6)
cols[0].metric("Tokens", s.tokens)
cols[1].metric("Steps", s.steps)
cols[2].metric("Rounds", s.rounds)
cols[3].metric("Decision points", s.decision_points)
cols[4].metric("Final verdict", s.final_verdict or "—")
cols[5].metric("Confidence", f"{trace.final.confidence:.2f}" if trace.final.confidence is not None else "—")

tabs = st.tabs(
    ["Decision tree", "Attention", "Compression", "Verification", "Tokens"],
    key="inspect_tab",
    on_change="rerun",
)
for tab, render in zip(
    tabs, (tree_tab, attention_tab, compression_tab, verification_tab, tokens_tab), strict=True
):
    if tab.open is not False:
        with tab:
            render(key, trace)
