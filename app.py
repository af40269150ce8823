"""o3viz: the Streamlit router. Page config, navigation over pages/, the shared sidebar, and the
session-state defaults (declared in ``pages/common/state.py``, initialised here and nowhere else).

Streamlit runs this file as ``__main__`` at every rerun: that run is ``route()``. Before that,
``streamlit run app.py`` (and so ``o3viz app``) imports it as a module to look for an ASGI app: it
finds ``app``, this script served with o3viz's security headers on every response
(``o3viz.app.SecurityHeaders``: no other site may frame the app), and each page's HTML naming the
server's root (``o3viz.app.PageBase``: a page opened at its own path skips a failed probe)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

FAVICON = Path(__file__).parent / ".streamlit" / "favicon.png"  # served by this app, not fetched
PAGES = [  # (script, title, icon); the first is the home page
    ("pages/library.py", "Library", ":material/folder_open:"),
    ("pages/run.py", "Run", ":material/play_arrow:"),
    ("pages/inspect.py", "Inspect", ":material/account_tree:"),
    ("pages/compare.py", "Compare", ":material/compare_arrows:"),
    ("pages/samples.py", "Samples", ":material/call_split:"),
    ("pages/dataset.py", "Dataset", ":material/bar_chart:"),
    ("pages/labels.py", "Labels", ":material/label:"),
]


def route() -> None:
    """One run of the app: the shared setup, the navigation, then the chosen page."""
    from pages.common.state import init_state, take
    from pages.common.ui import add_entries, cached_samples, store, warm_figures_once

    st.set_page_config(
        page_title="o3viz", page_icon=str(FAVICON), layout="wide", initial_sidebar_state="collapsed"
    )
    init_state()
    warm_figures_once()  # plotly's first figures, in the background, before a reader opens one

    pages = [st.Page(f, title=t, icon=i, default=k == 0) for k, (f, t, i) in enumerate(PAGES)]
    page = st.navigation(pages, position="top")  # first, so the sidebar never shows the raw pages/ folder

    if not st.session_state.samples_loaded:
        entries, errors = cached_samples()
        add_entries(entries)
        st.session_state.sample_errors = errors
        st.session_state.samples_loaded = True

    # Less empty space above the page (the default leaves ~6rem under the top navigation), so a
    # page's first screen fits 1280×720.
    st.html("<style>[data-testid='stMainBlockContainer']{padding-top:4.4rem;padding-bottom:2rem}</style>")

    resume = take("_resume")  # set by pages.common.ui.require_router
    if resume and resume[0] in {f for f, _, _ in PAGES}:
        st.switch_page(resume[0], query_params=resume[1])

    with st.sidebar:
        st.markdown("### o3viz")
        st.caption(
            "Look inside an open model's reasoning: attention, verification, compression. "
            "o3viz runs the article's mechanisms on open-weight models; it shows nothing of o3 itself."
        )
        n = store().count()
        st.caption(f"{n:,} trace{'' if n == 1 else 's'} in the library")

    page.run()


if __name__ == "__main__":  # a run of the script (Streamlit's script runner and AppTest)
    route()
else:  # imported by `streamlit run app.py`, which serves the st.App it finds here
    from starlette.middleware import Middleware

    from o3viz.app import PageBase, SecurityHeaders
    from pages.common.trace_view import view_routes  # Inspect's view data, by content hash

    def _heads() -> dict[str, str]:
        """Inspect's page fetches plotly.js at once and runs it while Streamlit connects."""
        from o3viz.app import plotly_loader
        from pages.common.trace_view import PLOTLY_SRC

        return {"inspect": plotly_loader(PLOTLY_SRC)}

    page_paths = [Path(f).stem for f, _, _ in PAGES]  # each page's URL path (st.Page's default)
    app = st.App(
        __file__,
        routes=view_routes(),
        middleware=[
            Middleware(SecurityHeaders),
            Middleware(
                PageBase,
                pages=page_paths,
                base=lambda: st.get_option("server.baseUrlPath") or "",
                head=_heads(),
            ),
        ],
    )
