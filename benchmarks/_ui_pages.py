"""The pages ``python -m benchmarks ui`` measures beside Inspect: the standalone view of each trace
(``save_view``), and two Streamlit floors for a first map, each a ``streamlit run`` of a script of
its own: the page that holds nothing but Inspect's view component (``component_floor``) and the
page that holds nothing but the same figure drawn by ``st.plotly_chart`` (``plotly_chart_floor``:
Streamlit's start and one plotly.js, nothing of ours). The traces go in a temporary store."""

from __future__ import annotations

import shutil
import statistics
import tempfile
from pathlib import Path

from benchmarks._ui_measure import CAPTURED, ROOT, _first_map

# The app's floor for any page: seconds from the navigation's start until the page shows its
# first element from the script, one with text (Streamlit's skeleton has none): Streamlit's scripts
# loaded, its websocket open, the first run's first delta drawn. A first map can be no quicker than
# this; ``page_floor_vs_standalone`` says how much of the first-map ratio Streamlit takes before the
# page's own work begins.
_FIRST_ELEMENT = """if (window === window.top) { window.__o3first = 0;
  new MutationObserver((_, mo) => {
    const els = document.querySelectorAll('[data-testid="stMain"] [data-testid="stElementContainer"]');
    if ([...els].some((e) => e.innerText.trim())) {
      window.__o3first = performance.now() / 1000; mo.disconnect(); } }).observe(document, {childList: true, subtree: true}); }"""


# Streamlit's floors for a first map, on the view data Inspect drew (``url``): a page holding
# nothing but Inspect's view component (``component``), and one holding nothing but the same
# figure drawn by ``st.plotly_chart`` (``chart``: Streamlit's start and one plotly.js, nothing of
# ours). ``streamlit run`` on this script, from a folder whose static/ holds the app's plotly.js,
# serving the view data by the app's own route, as app.py does. What no Streamlit page can beat;
# ``first_map_vs_*_floor`` is what the app adds to each.
_FLOOR_PAGE = """import re, sys
sys.path.insert(0, {root!r})
import streamlit as st
if __name__ != "__main__":  # imported by `streamlit run`: the app with the view data route
    from pages.common.trace_view import view_routes
    app = st.App(__file__, routes=view_routes())
else:
    from pages.common.trace_view import published, trace_view
    st.set_page_config(layout="wide")
    url, height = st.query_params.get("url", ""), int(st.query_params.get("h", "560"))
    if not re.fullmatch(r"/o3viz-view/data/[0-9a-f]+[.]json", url):
        st.error("no view data url")
        st.stop()
    if {kind!r} == "chart":
        import plotly.graph_objects as go
        D = published(url)
        st.plotly_chart(go.Figure(D.get("overview") or D["map"]), config={{"displaylogo": False}})
    else:
        trace_view(url, key="floor", push={{"n": 0, "id": None, "episode": None}}, height=height)
"""


def _floor_page(folder: Path, kind: str) -> Path:
    """The floor page of ``kind`` (component, chart) in ``folder``, the app's plotly.js beside it."""
    static = folder / "static"
    static.mkdir(exist_ok=True)
    for f in (ROOT / "static").glob("o3viz-plotly-*.min.js"):
        shutil.copyfile(f, static / f.name)
    script = folder / f"floor_{kind}.py"
    script.write_text(_FLOOR_PAGE.format(root=str(ROOT), kind=kind), encoding="utf-8")
    return script


def _store_traces(home: Path, sizes: list[int]) -> dict[str, tuple[str, int]]:
    from o3viz.store.store import Store
    from o3viz.testing.long_r1 import long_r1_trace
    from o3viz.trace import load_trace

    store, out = Store(home), {}
    for n in sizes:
        trace = long_r1_trace(n)
        out[f"r1_{n}"] = (store.add(trace, source="import", name=f"r1_style_{n}.txt"), len(trace.final.steps))
    captured = load_trace(CAPTURED)
    out["captured"] = (store.add_file(CAPTURED, source="run"), sum(len(r.steps) for r in captured.rounds))
    return out


def cold_first_map(browser, url: str, repeat: int = 3, marks: int | None = None) -> float:
    """The first map of ``url`` for a first visit: each load in a browser context of its own, so
    nothing is cached (no HTTP cache, no compiled code); the median of ``repeat``. Where ``marks``
    is given, every load must draw that many (the map the reload drew, not another page)."""
    times = []
    for _ in range(repeat):
        context = browser.new_context(viewport={"width": 1280, "height": 720})
        page = context.new_page()
        page.add_init_script(_FIRST_ELEMENT)
        seconds, _, drawn = _first_map(page, url)
        context.close()
        if not drawn or (marks is not None and drawn != marks):
            raise RuntimeError(f"a first visit to {url} drew {drawn} marks, a reload {marks}")
        times.append(seconds)
    return statistics.median(times)


def _floor(
    browser, views: dict[str, tuple[str, int, int]], fresh, kind: str, cold: bool = False
) -> tuple[dict[str, float], dict[str, float]]:
    """Each trace's first map on the floor page of ``kind``: on a reload (median of 3 loads in one
    page, after one untimed) and, where ``cold``, on a first visit (``cold_first_map``); the
    component's must draw as many marks as Inspect drew."""
    from o3viz.testing.browser import serve_app

    warm, visit = {}, {}
    with tempfile.TemporaryDirectory() as folder:
        script = _floor_page(Path(folder), kind)
        with serve_app({}, script=script, options=("--server.enableStaticServing", "true")) as url:
            for name, (data, height, marks) in views.items():
                page = fresh(browser)
                target = f"{url}/?url={data}&h={height}"
                _first_map(page, target)  # the server's first run of this page: not timed
                loads = [_first_map(page, target) for _ in range(3)]
                page.close()
                if kind == "component" and {m for _, _, m in loads} != {marks}:
                    raise RuntimeError(f"the component-only page drew {loads[-1][2]} marks, Inspect {marks}")
                warm[name] = statistics.median(t for t, _, _ in loads)
                if cold:
                    visit[name] = cold_first_map(browser, target)
    return warm, visit


def _component_floor(browser, views, fresh) -> dict[str, float]:
    return _floor(browser, views, fresh, "component")[0]


def _chart_floor(browser, views, fresh) -> tuple[dict[str, float], dict[str, float]]:
    return _floor(browser, views, fresh, "chart", cold=True)


def _standalone_pages(home: Path, traces: dict[str, tuple[str, int]], folder: Path) -> dict[str, Path]:
    """Each trace's standalone view (``save_view``: one page, plotly.js inlined), from the store."""
    import o3viz
    from o3viz.store.store import Store

    store = Store(home)
    return {
        name: o3viz.save_view(o3viz.show(store.trace(key), widget=False), folder / f"{name}.html")
        for name, (key, _) in traces.items()
    }
