"""plotly.js travels once per notebook: the first view a kernel displays carries it, the views
after borrow it from that view's iframe (and draw, offline, in Chromium), a view with no carrier
on its page says so instead of failing, and a saved page always carries its own copy."""

from __future__ import annotations

import pytest
from plotly.offline import get_plotlyjs

import o3viz
from o3viz.notebook import reset_shared_plotly
from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS
from o3viz.testing.synthetic import make_trace

pytestmark = [pytest.mark.browser]

PLOTLY_KB = len(get_plotlyjs()) // 1000


def _outputs(n: int, **kw) -> list[str]:
    reset_shared_plotly()  # a fresh kernel
    return [o3viz.show(make_trace(5 + k, seed=k), widget=False, **kw)._repr_html_() for k in range(n)]


def test_three_views_carry_plotly_js_once():
    outs = _outputs(3)
    sizes = [len(o) // 1000 for o in outs]
    assert sizes[0] > PLOTLY_KB and max(sizes[1:]) < 200, sizes  # the first carries it, the others ~KB
    assert sum(sizes) < 1.2 * sizes[0], sizes
    alone = _outputs(2, standalone=True)  # a view can still carry its own copy
    assert min(len(o) // 1000 for o in alone) > PLOTLY_KB


def test_the_widget_and_a_trace_borrow_too_and_save_view_writes_the_whole_page(tmp_path):
    pytest.importorskip("anywidget")
    reset_shared_plotly()
    first = make_trace(4, seed=0)._repr_mimebundle_()["text/html"]
    view = o3viz.show(make_trace(6, seed=1))
    second = view._repr_mimebundle_()[0]["text/html"]
    assert len(first) // 1000 > PLOTLY_KB and len(second) < 200_000 and len(view.page) < 200_000
    saved = o3viz.save_view(view, tmp_path / "v.html").read_text(encoding="utf-8")
    assert len(saved) // 1000 > PLOTLY_KB and "o3-plotly" in saved


def _notebook(outputs: list[str]) -> str:
    cells = "".join(f'<div class="out">{o}</div>' for o in outputs)
    return f'<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>{cells}</body></html>'


@pytest.mark.browser
def test_views_that_borrow_plotly_draw_offline_and_one_without_a_carrier_says_so(tmp_path):
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    from playwright.sync_api import sync_playwright

    outs = _outputs(3)
    (tmp_path / "nb.html").write_text(_notebook(outs), encoding="utf-8")
    (tmp_path / "orphan.html").write_text(_notebook(outs[1:]), encoding="utf-8")  # first output cleared
    local = ("file:", "about:", "data:")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(local) else r.abort())
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((tmp_path / "nb.html").as_uri())
        page.wait_for_function("document.querySelectorAll('iframe.o3viz-view').length === 3")
        frames = [h.content_frame() for h in page.query_selector_all("iframe.o3viz-view")]
        for k, frame in enumerate(frames):
            frame.wait_for_selector("body[data-ready='1']", timeout=60_000)
            assert frame.locator("#map .scatterlayer .point").count() >= 5, k  # every map is drawn
        frames[2].locator("#outline .row[data-id='step:0:3']").click()  # and answers a click
        frames[2].wait_for_function("document.body.dataset.selected === 'step:0:3'", timeout=10_000)
        page.goto((tmp_path / "orphan.html").as_uri())
        frame = page.wait_for_selector("iframe.o3viz-view").content_frame()
        frame.wait_for_selector("text=standalone=True", timeout=30_000)
        browser.close()
    assert not errors, errors
