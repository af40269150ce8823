"""A 16k-token capture in a real browser (Debian Chromium through Playwright, 1280×720): Inspect
opens a capture-shaped trace of a 16,384-token prompt (``o3viz.testing.long_capture``: the mean
rows, per-head rows kept as top-k pairs, the storage plan's sentence) on its Attention tab, with the
step view, the token heatmap binned to the browser's width and what was kept at this length said;
the Tokens tab shows the generated tokens. Screenshots go to ``test-artifacts/``."""

from __future__ import annotations

import pytest

from o3viz.paths import REPO_ROOT
from o3viz.store.store import content_key
from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS, serve_app

ARTIFACTS = REPO_ROOT / "test-artifacts"
LOAD_MS = 180_000  # the machine may be busy: generous waits, never a timing assertion

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent"),
]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from o3viz.testing.long_capture import long_capture_trace

    samples = tmp_path_factory.mktemp("long_capture_samples")
    path = samples / "capture_16k.o3trace.json.gz"
    long_capture_trace(16384).save(path)
    home = tmp_path_factory.mktemp("long_capture_home")
    with serve_app({"O3VIZ_SAMPLES": str(samples), "O3VIZ_HOME": str(home)}) as url:
        yield url, content_key(path.read_bytes())


@pytest.fixture(scope="module")
def page(app):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b.new_page(viewport={"width": 1280, "height": 720})
        b.close()


def _no_errors(page, where: str) -> None:
    text = page.locator("body").inner_text()
    for bad in ("DeltaGenerator", "Traceback", "StreamlitAPIException", "Error"):
        assert bad not in text, f"{where}: the page shows {bad!r}"


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.wait_for_timeout(800)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def test_a_16k_capture_opens_on_attention_with_binned_heatmaps_and_says_what_was_kept(app, page):
    url, key = app
    page.goto(f"{url}/inspect?trace={key}&view=Attention&node=step:0:2")
    # the figures are drawn in the browser, in the tab's figure views: the step heatmap, then
    # the token level (token × context, layer × head, DAA)
    page.locator(".o3v-fig").first.get_by_text("Where each step").first.wait_for(timeout=LOAD_MS)
    page.get_by_text("Kept at this length: prefill attention kept as top-64 rows").first.wait_for(
        timeout=LOAD_MS
    )
    page.get_by_text("Token level").first.wait_for(timeout=LOAD_MS)
    # (a figure below the fold is drawn when the reader scrolls to it)
    page.get_by_text("Token level").first.scroll_into_view_if_needed()
    page.wait_for_function(
        """() => [...document.querySelectorAll(".o3v-fig .js-plotly-plot")].filter((g) => g._fullData &&
          g._fullData.some((t) => t.type === 'heatmap')).length >= 2""",
        timeout=LOAD_MS,
    )
    _no_errors(page, "attention")
    # every heatmap draws a bounded number of cells, whatever the context length
    widths = page.evaluate(
        "() => [...document.querySelectorAll('.o3v-fig .js-plotly-plot')].flatMap(g => (g._fullData || [])"
        ".filter(t => t.type === 'heatmap').map(t => (t.z[0] || []).length))"
    )
    assert widths and max(widths) <= 600, widths
    _shot(page, "inspect_attention_capture16k_1280x720")
    page.get_by_text("Token level").first.scroll_into_view_if_needed()
    _shot(page, "inspect_attention_capture16k_tokens_heatmap_1280x720")


def test_a_16k_capture_shows_its_tokens(app, page):
    url, key = app
    page.goto(f"{url}/inspect?trace={key}&view=Tokens")
    page.get_by_text("Colour by").first.wait_for(timeout=LOAD_MS)
    page.locator("span.tok").first.wait_for(timeout=LOAD_MS)
    _no_errors(page, "tokens")
    assert 0 < page.locator("span.tok").count() <= 3000
    _shot(page, "inspect_tokens_capture16k_1280x720")
