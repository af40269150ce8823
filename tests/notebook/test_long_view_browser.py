"""A long trace's notebook view in Chromium (network blocked): it opens on the episode overview,
whose marks are bounded (not one per step), the step map is not drawn until an episode opens, and
opening one from the outline zooms the map to its steps and lets a step be selected, all in the
page."""

from __future__ import annotations

import pytest

import o3viz
from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS
from o3viz.testing.synthetic import make_trace

pytestmark = [pytest.mark.browser]


@pytest.mark.browser
def test_a_675_step_view_opens_on_bounded_episodes_and_zooms_into_one(tmp_path):
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    from playwright.sync_api import sync_playwright

    path = o3viz.save_view(o3viz.show(make_trace(675, seed=0), widget=False), tmp_path / "long.html")
    local = ("file:", "about:", "data:")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(local) else r.abort())
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(path.as_uri())
        page.wait_for_selector("body[data-ready='1']", timeout=60_000)
        drawn = page.locator(".js-plotly-plot .point, .js-plotly-plot .textpoint").count()
        assert 10 <= drawn <= 150, drawn  # the overview only: the issue counted 716 marks here
        assert page.locator("#map .point").count() == 0  # the step map waits for an episode
        page.locator("#outline .row[data-id='episode:2']").click()
        page.wait_for_function("document.body.dataset.episode === '2'", timeout=10_000)
        page.wait_for_selector("#map .scatterlayer .point", timeout=30_000)
        row = page.locator("#outline .row.step:visible").nth(1)
        node = row.get_attribute("data-id")
        row.click()
        page.wait_for_function(f"document.body.dataset.selected === '{node}'", timeout=10_000)
        assert page.locator("#details .dtitle").inner_text().startswith("Step ")
        browser.close()
    assert not errors, errors
