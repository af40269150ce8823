"""Issue 38, finding 12: ``<!--<script>`` in any trace text (a step, the question) must not kill the
notebook page: the view's JSON is embedded with every ``<`` escaped, so the HTML parser's "script
data double escaped" state is never entered and the data block ends where it should."""

from __future__ import annotations

import json

import pytest

from o3viz.notebook.data import trace_view_data
from o3viz.notebook.page import page_html
from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS
from o3viz.trace import Round, Step, Task, Trace

EVIL = "x <!--<script> y"


def _page() -> str:
    t = Trace(Task(EVIL), [Round(text=EVIL + ". 2+2=4.", steps=[Step(0, EVIL, 0, len(EVIL))], answer="4")])
    return page_html(trace_view_data(t))


def test_the_data_block_holds_no_angle_bracket_and_reads_back():
    page = _page()
    data = page.split('id="o3-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data  # before: "<!--<script>" sat in the block as it is
    assert json.loads(data)["nodes"]["step:0:0"]["text"] == EVIL


@pytest.mark.browser
def test_a_step_with_a_comment_and_script_opener_still_renders_in_chromium(tmp_path):
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    from playwright.sync_api import sync_playwright

    path = tmp_path / "view.html"
    path.write_text(_page(), encoding="utf-8")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(path.as_uri())
            page.wait_for_selector("body[data-ready='1']", timeout=30_000)  # before: never ready
            text = page.evaluate(
                "JSON.parse(document.getElementById('o3-data').textContent).nodes['step:0:0'].text"
            )
        finally:
            browser.close()
    assert text == EVIL and not errors
