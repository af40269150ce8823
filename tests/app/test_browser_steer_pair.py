"""Real browser, real server (issue 35, finding 7): "Run with and without steering" runs the pair
with the embedded model and lands on a Compare page that shows both runs, not a blank page. (It
passed on its first run here, 7 min on a busy 2-core machine: the blank page did not reproduce, so
this guards the workflow rather than proving a fix.)"""

from __future__ import annotations

import re

import pytest

from o3viz.paths import REPO_ROOT
from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS, serve_app

LOAD_MS = 120_000
PAIR_MS = 420_000  # two short runs of the embedded model on a busy 2-core machine

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium)"
    ),
]


def test_run_with_and_without_steering_lands_on_a_compare_page_that_shows_the_pair(tmp_path):
    from playwright.sync_api import sync_playwright

    samples, home = tmp_path / "samples", tmp_path / "home"
    samples.mkdir()
    with serve_app({"O3VIZ_HOME": str(home), "O3VIZ_SAMPLES": str(samples)}) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(f"{url}/run")
        page.get_by_text("Model, attention and DAA").first.click(timeout=LOAD_MS)
        slider = page.get_by_role("slider").first  # "Max new tokens": the shortest run
        slider.wait_for(timeout=LOAD_MS)
        slider.focus()
        page.keyboard.press("Home")
        page.get_by_text("Steer attention to part of the prompt (PASTA)").first.click(timeout=LOAD_MS)
        span = page.get_by_label("…or type or paste a span of the prompt (exact text)")
        span.fill("Natalia sold clips to 48 of her friends in April")
        span.press("Enter")
        page.get_by_role("button", name="Run with and without steering").click(timeout=LOAD_MS)
        try:
            page.wait_for_url(re.compile(r"/compare"), timeout=PAIR_MS)
        finally:  # what the page showed, pass or fail
            (REPO_ROOT / "test-artifacts").mkdir(exist_ok=True)
            page.screenshot(path=str(REPO_ROOT / "test-artifacts" / "steer_pair_after_run.png"))
        page.get_by_text("(steered) answered").first.wait_for(timeout=LOAD_MS)
        page.get_by_text("(unsteered) answered").first.wait_for(timeout=LOAD_MS)
        page.wait_for_timeout(3000)  # the run page's live fragments would have fired by now
        assert page.get_by_text("(steered) answered").first.is_visible()
        assert page.locator("[data-testid='stException']").count() == 0
        browser.close()
