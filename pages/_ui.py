"""Streamlit helpers shared by the pages: cached loading, the session library, and figures with
a standalone-HTML download button. Thin wrappers only; the logic lives in ``o3viz``."""

from __future__ import annotations

import re

import streamlit as st

from o3viz import LibraryEntry, bytes_key, load_files, load_samples, samples_dir
from o3viz.figures import figure_html


@st.cache_data(max_entries=4, show_spinner="Loading sample traces…")
def _samples(folder: str, stamp: tuple) -> tuple[list[LibraryEntry], list[str]]:
    res = load_samples(folder)
    return res.entries, res.errors


def cached_samples() -> tuple[list[LibraryEntry], list[str]]:
    folder = samples_dir()
    stamp = tuple(sorted((p.name, p.stat().st_mtime_ns) for p in folder.iterdir())) if folder.is_dir() else ()
    return _samples(str(folder), stamp)


@st.cache_data(max_entries=32, show_spinner="Loading…")
def _load_one(key: str, name: str, _data: bytes) -> tuple[list[LibraryEntry], list[str]]:
    """Keyed by the bytes' hash (``key``): the bytes themselves are not hashed again."""
    res = load_files([(name, _data)])
    return res.entries, res.errors


def load_upload(name: str, data: bytes) -> tuple[list[LibraryEntry], list[str]]:
    return _load_one(bytes_key(data), name, data)


def add_entries(entries: list[LibraryEntry]) -> None:
    lib = st.session_state.library
    for e in entries:
        lib.setdefault(e.key, e)


def library() -> dict[str, LibraryEntry]:
    return st.session_state.get("library", {})


def entry_label(lib: dict[str, LibraryEntry], key: str) -> str:
    e = lib.get(key)
    return f"{e.name}  ({e.source})" if e else str(key)


def show_figure(fig, key: str, **kwargs):
    """Render a figure and a button that downloads it as standalone HTML (plotly.js inlined)."""
    event = st.plotly_chart(fig, key=key, theme=None, **kwargs)  # the figures carry their own style
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", key)
    st.download_button(
        "Download figure (HTML)",
        data=lambda: figure_html(fig),
        file_name=f"o3viz_{safe}.html",
        mime="text/html",
        key=f"dl_{key}",
        on_click="ignore",
        icon=":material/download:",
    )
    return event


def need_traces(n: int) -> bool:
    """Say what to do when the library has fewer than ``n`` traces; True when there are enough."""
    if len(library()) >= n:
        return True
    st.info(f"This page needs {n} trace{'s' if n > 1 else ''} in the library: upload one or make a run.")
    st.page_link("pages/library.py", label="Go to the library", icon=":material/folder_open:")
    return False


def require_router() -> None:
    """Run the page through ``app.py``. Until some session has called ``st.navigation``, Streamlit's
    legacy ``pages/`` mode (on because this folder is named ``pages/``) runs a page URL such as
    ``/inspect`` without the router, so the session has no defaults. Turn the legacy mode off (what
    ``st.navigation`` itself does) and send that first request through the router."""
    if "library" not in st.session_state:
        from streamlit.runtime.pages_manager import PagesManager

        PagesManager.uses_pages_directory = False
        st.switch_page("app.py")
