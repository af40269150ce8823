"""A notebook of three views (two traces and the paired dataset comparison) exported by nbconvert:
every view is in the HTML as its static page (the widget's ``text/html`` fallback), plotly.js is in
it once (the paired view borrows it too), the notebook stays about one plotly.js big, and in
Chromium with the network blocked every view draws. A notebook that saved its widget state makes
nbconvert pick the widget instead; clearing the metadata on export brings the static views back.

The outputs are the views' own display bundles, as a kernel would record them, without a kernel."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pandas as pd
import pytest
from plotly.offline import get_plotlyjs

import o3viz
from o3viz.analysis.paired import ROW_COLUMNS, PairedCompareRequest, Side, paired_compare
from o3viz.notebook import reset_shared_plotly
from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS

nbformat = pytest.importorskip("nbformat")
nbconvert = pytest.importorskip("nbconvert")

TRACES = ("gsm8k_word_problem_importance", "solve_math_gsm8k")
MARK = "Copyright 2012-"  # plotly.min.js's licence header: once in every copy of it
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
# one copy of plotly.js (4.8 MB) escaped into an iframe's srcdoc and then into the notebook's JSON
# comes to about 1.2 times its size (5.9 MB for these three views); two copies pass 2 times
MAX_NOTEBOOK = int(1.5 * len(get_plotlyjs()))


def _row(key: str, question: str, correct: int, steps: int) -> dict:
    row = dict.fromkeys(ROW_COLUMNS, 0)
    row.update(key=key, name=key, dataset="d", model="m", question=question, record=None, importance=None)
    row.update(correct=correct, source_correct=correct, check_correct=None, first_wrong_pos=None, answer="7")
    row.update(steps=steps, backtracks=1, t_active_computation=steps, part="")
    return row


def _paired(n: int = 40):
    a = pd.DataFrame([_row(f"a{i}", f"question {i}", int(i % 3 == 0), 4) for i in range(n)])
    b = pd.DataFrame([_row(f"b{i}", f"question {i}", int(i % 2 == 0), 6) for i in range(n)])
    return paired_compare(a, b, PairedCompareRequest(Side("A"), Side("B")))


def _output(view) -> dict:
    bundle = view._repr_mimebundle_() if hasattr(view, "_repr_mimebundle_") else None
    data, meta = bundle if isinstance(bundle, tuple) else (bundle, {})
    if not data:
        data = {"text/html": view._repr_html_(), "text/plain": repr(view)}
    return nbformat.v4.new_output("display_data", data=data, metadata=meta)


@pytest.fixture(scope="module")
def views():
    """The two traces and the notebook whose three cells show them, then the paired view."""
    reset_shared_plotly()  # a fresh kernel
    traces = [o3viz.load_trace(f"sample_traces/{name}.o3trace.json.gz") for name in TRACES]
    shown = [o3viz.show(t) for t in traces] + [o3viz.show(_paired())]
    nb = nbformat.v4.new_notebook()
    for k, view in enumerate(shown):
        cell = nbformat.v4.new_code_cell(f"o3viz.show(x{k})", execution_count=k + 1)
        cell.outputs = [_output(view)]
        nb.cells.append(cell)
    return traces, shown, nb


def _export(nb, **config) -> str:
    from traitlets.config import Config

    return nbconvert.HTMLExporter(config=Config(config)).from_notebook_node(nb)[0]


class _Frames(HTMLParser):
    """The pages of the o3viz views on an HTML page (their iframes' ``srcdoc``, unescaped)."""

    def __init__(self, page: str):
        super().__init__()
        self.pages: list[str] = []
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "iframe" and "o3viz-view" in (a.get("class") or ""):
            self.pages.append(a.get("srcdoc") or "")


def _view_data(page: str) -> dict:
    start = page.index('<script type="application/json" id="o3-data">')
    text = page[page.index(">", start) + 1 : page.index("</script>", start)]
    return json.loads(text)


def test_nbconvert_html_holds_every_view_and_plotly_js_once(views):
    traces, _, nb = views
    page = _export(nb)
    frames = _Frames(page).pages
    assert len(frames) == 3, len(frames)
    for trace, frame in zip(traces, frames, strict=False):
        data = _view_data(frame)
        texts = " ".join(node["text"] for node in data["nodes"].values())
        assert trace.steps[2].text.strip() in texts and data["question"]  # the view's own content
    assert "Questions that flipped" in frames[2] and "A = A · B = B" in frames[2]
    assert page.count(MARK) == 1, page.count(MARK)  # the first view carries it, the others borrow it
    assert sum(MARK in f for f in frames) == 1 and MARK in frames[0]


def test_the_notebook_holds_plotly_js_once_and_stays_under_its_bound(views):
    _, _, nb = views
    text = nbformat.writes(nb)
    assert text.count(MARK) == 1, text.count(MARK)
    assert len(text.encode("utf-8")) < MAX_NOTEBOOK, (len(text) / 1e6, MAX_NOTEBOOK / 1e6)


def test_saved_widget_state_hides_the_static_views_unless_export_clears_the_metadata(views):
    _, shown, nb = views
    widgets = [v for v in shown if hasattr(v, "get_state")]
    if not widgets:
        pytest.skip("anywidget is not installed: the views are static HTML only")
    saved = nbformat.reads(nbformat.writes(nb), as_version=4)  # a copy
    state = {
        w.model_id: {"model_name": "AnyModel", "model_module": "anywidget", "state": w.get_state()}
        for w in widgets
    }  # what nbclient (and Lab's "save widget state") keeps
    saved.metadata["widgets"] = {WIDGET_STATE: {"state": state, "version_major": 2, "version_minor": 0}}
    assert len(_Frames(_export(saved)).pages) == 1  # nbconvert picks the widget, which needs its CDN
    cleared = _export(saved, ClearMetadataPreprocessor={"enabled": True})
    assert len(_Frames(cleared).pages) == 3 and cleared.count(MARK) == 1


@pytest.mark.browser
def test_the_exported_views_draw_offline(views, tmp_path):
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    from playwright.sync_api import sync_playwright

    _, _, nb = views
    (tmp_path / "nb.html").write_text(_export(nb), encoding="utf-8")
    local = ("file:", "about:", "data:")  # nbconvert's own CDN scripts (MathJax, require.js) fail
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(local) else r.abort())
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((tmp_path / "nb.html").as_uri())
        page.wait_for_function("document.querySelectorAll('iframe.o3viz-view').length === 3")
        frames = [h.content_frame() for h in page.query_selector_all("iframe.o3viz-view")]
        for k, frame in enumerate(frames[:2]):
            frame.wait_for_selector("body[data-ready='1']", timeout=60_000)
            assert frame.locator("#map .scatterlayer .point").count() >= 5, k
        for k in range(2):  # the paired view borrowed plotly.js too and drew both figures
            frames[2].wait_for_selector(f"#o3-fig{k} .main-svg", timeout=60_000)
        browser.close()
    assert not errors, errors
