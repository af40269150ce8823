"""Long traces in a real browser (Debian Chromium through Playwright, 1280×720): a 675-step
DeepSeek-R1 import and R1-style imports of 2,000 and 5,000 steps open on the episode overview with
the answer star inside the plot area; clicking an episode opens its steps, the URL keeps the open
episode, and opening that URL again shows it. Screenshots go to ``test-artifacts/``."""

from __future__ import annotations

import pytest

from o3viz.paths import REPO_ROOT, data_dir
from o3viz.store.store import content_key
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
    from o3viz.importers import import_trace
    from o3viz.testing.long_r1 import long_r1_trace

    samples = tmp_path_factory.mktemp("long_samples")
    traces = {
        "r1_675": import_trace(R1, record=18),
        "r1_2000": long_r1_trace(2000),
        "r1_5000": long_r1_trace(5000),
    }
    keys = {}
    for name, trace in traces.items():
        trace.save(samples / f"{name}.o3trace.json.gz")
        keys[name] = content_key((samples / f"{name}.o3trace.json.gz").read_bytes())
    home = tmp_path_factory.mktemp("long_home")
    with serve_app({"O3VIZ_SAMPLES": str(samples), "O3VIZ_HOME": str(home)}) as url:
        yield url, keys


@pytest.fixture(scope="module")
def page(app):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b.new_page(viewport={"width": 1280, "height": 720})
        b.close()


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.wait_for_timeout(800)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


_STAR_INSIDE = """() => {
    const gd = [...document.querySelectorAll('.o3v-map .js-plotly-plot')].find(g => g.offsetParent !== null &&
        g._fullData && g._fullData.some(t => t.name === 'answer'));
    if (!gd) return null;
    const area = gd.querySelector('.nsewdrag').getBoundingClientRect();
    const k = gd._fullData.filter(t => t.type === 'scatter').findIndex(t => t.name === 'answer');
    const star = gd.querySelectorAll('.scatterlayer .trace')[k].querySelector('.point').getBoundingClientRect();
    return star.width > 0 && star.left >= area.left - 1 && star.right <= area.right + 1
        && star.top >= area.top - 1 && star.bottom <= area.bottom + 1;
}"""

_EPISODE_XY = """(nth) => {
    const gd = [...document.querySelectorAll('.o3v-map .js-plotly-plot')].find(g => g.offsetParent !== null &&
        g._fullData && g._fullData.some(t => t.name === 'episode'));
    const L = gd._fullLayout, r = gd.getBoundingClientRect();
    const t = gd._fullData.find(t => t.name === 'episode');
    const i = Math.min(nth, t.base.length - 1);
    return [r.left + L._size.l + L.xaxis.l2p(t.base[i] + t.x[i] / 2), r.top + L._size.t + L.yaxis.l2p(t.y[i]),
            t.customdata[i]];
}"""


def _view(page):
    """Inspect's view component (issue 39; in the page since issue 52: no frame of its own)."""
    return page


def _overview(page, url: str, key: str) -> None:
    page.goto(f"{url}/inspect?trace={key}")
    frame = page.locator(".o3v-map")
    frame.get_by_text("Where did the reasoning turn?").first.wait_for(timeout=LOAD_MS)
    frame.locator(".js-plotly-plot .barlayer .point").first.wait_for(timeout=LOAD_MS)


@pytest.mark.parametrize("name", ["r1_675", "r1_2000", "r1_5000"])
def test_a_long_trace_opens_on_episodes_and_an_episode_click_zooms_and_stays_in_the_url(app, page, name):
    url, keys = app
    _overview(page, url, keys[name])
    view = _view(page)
    assert view.evaluate(_STAR_INSIDE), f"{name}: the answer star is cut at the edge of the overview"
    marks = view.evaluate(
        "() => [...document.querySelectorAll('.o3v-map .js-plotly-plot')].filter(g => g.offsetParent !== null)"
        ".reduce((n, g) => n + g.querySelectorAll('.point, .textpoint').length, 0)"
    )
    assert marks <= 300, f"{name}: the overview draws {marks} marks"
    _shot(page, f"inspect_long_{name}_overview_1280x720")

    x, y, episode = view.evaluate(_EPISODE_XY, 3)
    page.mouse.move(x, y)
    page.wait_for_timeout(300)
    page.mouse.click(x, y)
    n = episode.split(":")[1]
    frame = page.locator(".o3v-map")
    frame.get_by_text(f"Episode {n}: steps").first.wait_for(timeout=LOAD_MS)
    page.wait_for_function(f"() => location.search.includes('episode={n}')", timeout=30_000)
    _shot(page, f"inspect_long_{name}_episode_1280x720")

    page.goto(page.url)  # the URL alone restores the zoom
    page.locator(".o3v-map").get_by_text(f"Episode {n}: steps").first.wait_for(timeout=LOAD_MS)
    assert _view(page).evaluate(_STAR_INSIDE), f"{name}: the answer star is cut at the edge of the strip"
