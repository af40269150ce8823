"""Issue 39: switching Inspect's views answers in the browser. The Attention tab's step heatmap is
drawn by an in-page view component (``.o3v-fig``) in every run, waiting hidden while its tab is
closed, and the map's view is kept while another tab is open; the tab block's identity no longer
changes with the open tab, so a switch no longer rebuilds both views; and a closed tab's panel that
holds one of these views is laid out unseen at full width, so the heatmap is drawn before its tab
opens and the map is not resized when its tab closes. In Debian Chromium at 1280×720, on the
captured sample with attention, with the websocket cut after the first render (as
``test_browser_inspect_client`` cuts it): the switch to Attention draws the heatmap, and the switch
back shows the map, with none of the page's messages reaching the server. Then, on a working
connection, a click on a step's column in the heatmap selects that step for the map and its
details. Screenshots go to ``test-artifacts/``."""

from __future__ import annotations

import shutil

import pytest

from o3viz.paths import REPO_ROOT
from o3viz.store.store import content_key
from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS, Wire, serve_app

ARTIFACTS = REPO_ROOT / "test-artifacts"
SAMPLE = REPO_ROOT / "sample_traces" / "solve_math_gsm8k.o3trace.json.gz"
LOAD_MS = 120_000  # the machine may be busy: generous waits, never a timing assertion
CLIENT_MS = 30_000  # an answer in the browser (no server): still generous, for a busy machine
FIG = ".o3v-fig"  # a tab's figures, in the page (pages/common/o3view/figures.js)
MAP = ".o3v-map"  # the map view, in the page
# a view is shown (its tab is open) and has drawn what it draws
SHOWN = """([sel, what]) => { const f = document.querySelector(sel);
  return !!f && f.checkVisibility({visibilityProperty: true}) && !!f.querySelector(what); }"""

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent"),
]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    samples, home = tmp_path_factory.mktemp("tabs_samples"), tmp_path_factory.mktemp("tabs_home")
    shutil.copyfile(SAMPLE, samples / SAMPLE.name)
    with serve_app({"O3VIZ_SAMPLES": str(samples), "O3VIZ_HOME": str(home)}) as url:
        yield url, content_key(SAMPLE.read_bytes())


@pytest.fixture
def browser(app):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


def _open(browser, url: str):
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    wire = Wire()
    page.route_web_socket("**/_stcore/stream", wire.route)
    page.goto(url)
    page.wait_for_function(SHOWN, arg=[MAP, "#map .point"], timeout=LOAD_MS)
    # the closed tab's view is in the page, unseen, and plotly.js is loaded (once, for every view)
    page.wait_for_function(
        f"""() => {{ const f = document.querySelector("{FIG}");
          return !!f && !!window.Plotly && !f.checkVisibility({{visibilityProperty: true}}); }}""",
        timeout=LOAD_MS,
    )
    return page, wire


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.wait_for_timeout(600)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def test_switching_to_attention_and_back_needs_no_server(app, browser):
    url, key = app
    page, wire = _open(browser, f"{url}/inspect?trace={key}")
    page.wait_for_timeout(1500)  # the first render's messages have settled
    # the closed tab's heatmap is drawn before the reader opens it, unseen, at the width it shows at
    page.wait_for_function(
        f"""() => {{ const f = document.querySelector("{FIG}");
          return !f.checkVisibility({{visibilityProperty: true}}) && !!f.querySelector('.fig .main-svg'); }}""",
        timeout=LOAD_MS,
    )
    drawn = f"""() => [document.querySelector("{FIG}"), document.querySelector("{MAP}")].map((f) => [
        f.dataset.drawn || '', f.getBoundingClientRect().width])"""
    before = page.evaluate(drawn)
    page.evaluate(f"""() => {{ document.querySelector("{MAP}").__o3mark = 1;
                            document.querySelector("{FIG}").__o3mark = 1; }}""")
    wire.cut = True
    held = wire.held
    page.locator("[role='tab']", has_text="Attention").first.click()
    page.wait_for_function(SHOWN, arg=[FIG, ".fig .main-svg"], timeout=CLIENT_MS)
    fig = page.locator(FIG).first  # the step heatmap (the token level is the second)
    assert fig.locator(".fig .gtitle").first.text_content().startswith("Where each step's attention went")
    assert fig.locator(".fig .heatmaplayer image, .fig .hm image").count() >= 1  # the cells are drawn
    _shot(page, "inspect_tabs_attention_cut")
    page.locator("[role='tab']", has_text="Reasoning map").first.click()
    page.wait_for_function(SHOWN, arg=[MAP, "#map .point"], timeout=CLIENT_MS)
    page.wait_for_timeout(1000)
    assert wire.held > held  # the switches did try to tell the server, and nothing got through
    # neither view was rebuilt: both are the ones drawn before the server was cut off
    marks = page.evaluate(f"""() => [document.querySelector("{MAP}").__o3mark,
                                   document.querySelector("{FIG}").__o3mark]""")
    assert marks == [1, 1]
    assert page.evaluate(drawn) == before  # the switches showed what was drawn: nothing redrawn or resized
    page.close()


def test_a_click_on_a_heatmap_column_selects_that_step_for_the_map(app, browser):
    url, key = app
    page, _ = _open(browser, f"{url}/inspect?trace={key}&view=Reasoning+map")
    page.locator("[role='tab']", has_text="Attention").first.click()
    page.wait_for_function(SHOWN, arg=[FIG, ".fig .main-svg"], timeout=LOAD_MS)
    fr = page  # (the figures are in the page: no frame of their own)
    # the heatmap shows the last round (no step selected yet): its title says which. Wait for the
    # title itself and the heatmap's data (the svg can show before plotly draws them: a fresh clone
    # at load 6 read an empty title here)
    fr.wait_for_function(
        """() => { const t = document.querySelector('.o3v-fig .fig .gtitle'), gd = document.querySelector('.o3v-fig .fig');
          return !!(t && t.textContent.includes('(round ') && gd._fullData && gd._fullData.length); }""",
        timeout=LOAD_MS,
    )
    title = fr.evaluate("document.querySelector('.o3v-fig .fig .gtitle').textContent")
    rnd = int(title.split("(round ")[1].split(")")[0])
    node = f"step:{rnd}:2"
    # the pixel of step 2's column (category axis: the x value is the step index as text)
    xy = fr.evaluate(
        """() => { const gd = document.querySelector('.o3v-fig .fig'), fl = gd._fullLayout, r = gd.getBoundingClientRect();
          const t = gd._fullData[0], i = Array.from(t.x).map(String).indexOf('2');
          return i < 0 ? null : [r.left + fl._size.l + fl.xaxis.l2p(i), r.top + fl._size.t + fl.yaxis.l2p(0)]; }"""
    )
    assert xy is not None
    page.mouse.click(xy[0], xy[1])
    # outlined in the heatmap at once, and the URL says so
    fr.wait_for_function(
        "document.querySelector('.o3v-fig .fig')._fullLayout.shapes.length === 2", timeout=CLIENT_MS
    )
    page.wait_for_function(
        "(n) => decodeURIComponent(location.search).includes('node=' + n)", arg=node, timeout=CLIENT_MS
    )
    _shot(page, "inspect_tabs_attention_selected")
    page.wait_for_timeout(2000)  # the server heard of it
    page.locator("[role='tab']", has_text="Reasoning map").first.click()
    page.wait_for_function(SHOWN, arg=[MAP, "#map .point"], timeout=LOAD_MS)
    view = page.locator(MAP)
    view.locator("#details .dtitle", has_text="Step 2").wait_for(timeout=LOAD_MS)
    assert view.locator("#outline .row.sel").get_attribute("data-id") == node
    _shot(page, "inspect_tabs_map_after_heatmap_click")
    page.close()
