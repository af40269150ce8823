"""Library (home): every trace in the session (samples, runs, uploads, imports), uploads with a
one-line error per bad file, selection for Inspect or Compare, and a download per trace."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from o3viz import UPLOAD_TYPES, library_rows, trace_bytes
from o3viz.figures import escape_markdown
from pages._ui import add_entries, library, load_upload, require_router

require_router()
st.title("Trace library")
st.caption(
    "Samples, runs made in this session, and uploaded files. Select one row to inspect it, or two to compare."
)

uploads = st.file_uploader(
    "Upload traces (.o3trace.json, .o3trace.json.gz) or reasoning to import (.txt, .json, .jsonl)",
    type=UPLOAD_TYPES,
    accept_multiple_files=True,
    key="uploads",
)
for f in uploads or []:
    entries, errors = load_upload(f.name, f.getvalue())
    for e in entries:
        if e.key not in library():
            st.success(escape_markdown(f"Added {e.name} ({e.source})"), icon=":material/check_circle:")
    add_entries(entries)
    for err in errors:
        st.error(escape_markdown(err), icon=":material/error:")
for err in st.session_state.get("sample_errors", []):
    st.warning(escape_markdown(f"sample {err}"))

lib = library()
if not lib:
    st.info("No traces yet. Upload a trace file, or make one on the Run page.")
    st.stop()

keys = list(lib)
table = st.dataframe(
    pd.DataFrame(library_rows([lib[k] for k in keys])),
    hide_index=True,
    key="library_table",
    on_select="rerun",
    selection_mode="multi-row",
    width="stretch",
)
picked = [keys[i] for i in table.selection.rows] if table and table.selection else []

c1, c2, _ = st.columns([1, 1, 4])
if c1.button("Inspect", disabled=len(picked) != 1, type="primary", icon=":material/account_tree:"):
    st.session_state.inspect_key, st.session_state.inspect_node = picked[0], None
    st.switch_page("pages/inspect.py")
if c2.button("Compare", disabled=len(picked) != 2, icon=":material/compare_arrows:"):
    st.session_state.compare_a, st.session_state.compare_b = picked[0], picked[1]
    st.switch_page("pages/compare.py")

with st.expander("Download traces"):
    for k in keys:
        e = lib[k]
        st.download_button(
            escape_markdown(e.name),
            data=lambda e=e: trace_bytes(e.trace, gzipped=True),
            file_name=e.name if e.name.endswith(".gz") else f"{e.name.split('.o3trace')[0]}.o3trace.json.gz",
            mime="application/gzip",
            key=f"dl_trace_{k}",
            on_click="ignore",
            icon=":material/download:",
        )
