"""What Inspect's in-page views read of Streamlit's page rather than its API (a tab panel's
``data-testid``, the attribute a closed panel carries, the page's main script, the bundles they
warm) is named once, in ``pages.common.trace_view.STREAMLIT_INTERNALS`` / ``WARM`` / ``CHART``, and
injected into the scripts. Each name is looked for in the installed Streamlit's own frontend, so an
upgrade that renames one fails here, not silently in the browser."""

from __future__ import annotations

import re
from pathlib import Path

import streamlit

import pages.common.trace_view as tv

pytestmark: list = []  # light: reads files only

STATIC = Path(streamlit.__file__).parent / "static"
JS = STATIC / "static" / "js"
SCRIPTS = [tv.HERE / n for n in ("page.js", "map.js", "figures.js")]


def _bundle() -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in sorted(JS.glob("*.js")))


def test_every_internal_name_the_views_read_is_in_the_installed_streamlit():
    bundle = _bundle()
    st = tv.STREAMLIT_INTERNALS
    for name in ("tabs", "tab_panel"):  # set as a data-testid by Streamlit's own components
        assert f'"data-testid":`{st[name]}`' in bundle, (name, st[name])
    assert f"`{st['inactive_panel']}`" in bundle  # the closed panel's attribute
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    assert re.search(r'<script[^>]+src="[^"]*' + re.escape(st["main_script"]), page), st["main_script"]


def test_every_bundle_the_views_warm_is_there_once():
    assert [n.split(".")[0] for n in tv._warm_chunks(tv.WARM)] == list(tv.WARM)
    assert tv._warm_chunks((tv.CHART,)), tv.CHART
    for name in [*tv.WARM_CHUNKS, tv.CHART_CHUNK]:
        assert (JS / name).is_file(), name


def test_the_scripts_name_no_streamlit_internal_of_their_own():
    """Every testid and ``data-st-*`` attribute comes from the constant (``O3.st``), never a
    literal in a script that the checks above would not see."""
    for path in SCRIPTS:
        js = path.read_text(encoding="utf-8")
        assert not re.findall(r"\bst[A-Z][A-Za-z]+\b", js), path.name
        assert "data-st-" not in js and 'data-testid="st' not in js, path.name
    assert all(f'"{v}"' in tv.MAP_JS and f'"{v}"' in tv.FIGURES_JS for v in tv.STREAMLIT_INTERNALS.values())


def test_a_renamed_internal_fails_the_check(monkeypatch):
    """The check can fail: a name Streamlit does not use is not found."""
    monkeypatch.setitem(tv.STREAMLIT_INTERNALS, "tab_panel", "stTabPanelV2")
    bundle = _bundle()
    assert f'"data-testid":`{tv.STREAMLIT_INTERNALS["tab_panel"]}`' not in bundle


def test_the_root_the_pages_name_is_read_where_streamlit_reads_it():
    """``o3viz.app.PageBase`` sets ``window.__streamlit.BACKEND_BASE_URL`` before the bundle runs;
    the installed Streamlit must still read that object, and that name, to choose where to probe."""
    main = _bundle()
    assert "window.__streamlit" in main and "BACKEND_BASE_URL" in main
    assert "_stcore/health" in main  # what it probes there
