"""Compare in a real browser (Debian Chromium through Playwright, 1280×720): two 2,000-step R1-style
imports, the second with one episode replaced, stored with ``Store.add`` in a temporary O3VIZ_HOME,
open on two episode overviews with the first divergence named; two short samples open on two maps
whose divergence label sits above the plot. Screenshots go to ``test-artifacts/``."""

from __future__ import annotations

import pytest

from o3viz.paths import REPO_ROOT, data_dir
from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS, serve_app

ARTIFACTS = REPO_ROOT / "test-artifacts"
R1 = data_dir() / "traces" / "topology_math500_deepseek_r1.jsonl"
LOAD_MS = 120_000  # the machine may be busy: generous waits, never a timing assertion

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent"),
    pytest.mark.skipif(not R1.exists(), reason="../shared/data is absent"),
]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from o3viz.store.store import Store
    from o3viz.testing.compare_pair import planted_pair
    from o3viz.testing.synthetic import make_trace

    home = tmp_path_factory.mktemp("compare_home")
    store = Store(home)
    a, b, at = planted_pair(2000)
    short_a, short_b = make_trace(10, seed=7), make_trace(10, seed=7)
    short_b.final.steps = short_b.final.steps[:4] + short_b.final.steps[6:]
    keys = {
        "long_a": store.add(a, name="r1_2000", source="import"),
        "long_b": store.add(b, name="r1_2000_one_episode_replaced", source="import"),
        "short_a": store.add(short_a, name="short_run"),
        "short_b": store.add(short_b, name="short_run_two_steps_skipped"),
    }
    empty = tmp_path_factory.mktemp("no_samples")
    with serve_app({"O3VIZ_HOME": str(home), "O3VIZ_SAMPLES": str(empty)}) as url:
        yield url, keys, at


@pytest.fixture(scope="module")
def page(app):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b.new_page(viewport={"width": 1280, "height": 720})
        b.close()


def _open(page, url, ka, kb) -> None:
    page.goto(f"{url}/compare?trace={ka}&b={kb}")
    page.get_by_text("What changed").first.wait_for(timeout=LOAD_MS)
    page.locator(".js-plotly-plot").nth(1).wait_for(timeout=LOAD_MS)
    page.wait_for_timeout(1500)


def test_two_long_traces_open_on_episode_overviews_with_the_planted_divergence(app, page):
    url, keys, at = app
    _open(page, url, keys["long_a"], keys["long_b"])
    page.get_by_text(f"first divergence: A step {at} vs B step {at}").first.wait_for(timeout=LOAD_MS)
    page.locator(".js-plotly-plot .barlayer .point").first.wait_for(timeout=LOAD_MS)
    assert page.get_by_text("aligned by episode first").count() >= 1
    page.locator(".js-plotly-plot").nth(0).scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "compare_long_2000_1280x720.png"))


def test_two_short_traces_keep_the_divergence_label_above_the_plot(app, page):
    url, keys, _ = app
    _open(page, url, keys["short_a"], keys["short_b"])
    inside = page.evaluate(
        """() => [...document.querySelectorAll('.js-plotly-plot')].slice(0, 2).map(gd => {
            const area = gd.querySelector('.nsewdrag').getBoundingClientRect();
            const ann = [...gd.querySelectorAll('.annotation')].find(a => a.textContent.includes('first divergence'));
            return ann ? ann.querySelector('.annotation-text-g').getBoundingClientRect().bottom <= area.top + 1 : null;
        })"""
    )
    assert inside == [True, True], f"the divergence label is not above the plot: {inside}"
    page.locator(".js-plotly-plot").nth(0).scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "compare_short_1280x720.png"))
