"""The widget's front-end module in Chromium: ``TraceView``'s ESM rendered against a stand-in for
the Jupyter widget model (``get``/``set``/``save_changes``/``on``, the anywidget model API), with
the network blocked. A click on a step in the view reaches the model's ``selected`` (what
``view.selected`` reads in Python), and a ``selected`` set from Python moves the view."""

from __future__ import annotations

import json

import pytest

from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS
from o3viz.testing.synthetic import make_trace

pytestmark = [pytest.mark.browser]

HARNESS = """<!DOCTYPE html><html><body style="margin:0"><div id="el"></div>
<script type="module">
%(esm)s
const state = {page: %(page)s, height: 575, selected: "step:0:0"};
const handlers = {};
const model = {
  get: (k) => state[k],
  set: (k, v) => { const old = state[k]; state[k] = v; if (old !== v) (handlers["change:" + k] || []).forEach((f) => f()); },
  save_changes: () => { window.synced = state.selected; },
  on: (e, f) => { (handlers[e] = handlers[e] || []).push(f); },
  off: (e, f) => { handlers[e] = (handlers[e] || []).filter((g) => g !== f); },
};
window.model = model;
render({model, el: document.getElementById("el")});
</script></body></html>"""


@pytest.mark.browser
def test_a_click_in_the_widget_sets_selected_and_python_moves_the_view(tmp_path):
    pytest.importorskip("anywidget")
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    from playwright.sync_api import sync_playwright

    import o3viz
    from o3viz.notebook.widget import ESM

    view = o3viz.show(make_trace(8, seed=0))
    page_file = tmp_path / "widget.html"
    page_file.write_text(HARNESS % {"esm": ESM, "page": json.dumps(view.html()).replace("</", "<\\/")})
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        local = ("file:", "about:", "data:")
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(local) else r.abort())
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(page_file.as_uri())
        frame = page.wait_for_selector("iframe.o3viz-view").content_frame()
        frame.wait_for_selector("body[data-ready='1']", timeout=60_000)
        row = frame.locator("#outline .row[data-id='step:0:4']")
        row.click()
        page.wait_for_function("window.synced === 'step:0:4'", timeout=10_000)  # click -> model
        page.evaluate("window.model.set('selected', 'step:0:2')")  # Python -> view
        frame.wait_for_function("document.body.dataset.selected === 'step:0:2'", timeout=10_000)
        assert frame.locator("#details .dtitle").inner_text().startswith("Step 2")
        browser.close()
    assert not errors, errors
