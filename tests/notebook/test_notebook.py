"""``o3viz.show`` in a real notebook: the view executed in an ipykernel through nbclient, then the
saved output opened in Debian's Chromium with the network blocked, where it must draw the map and
change the details on a click. The screenshot goes to test-artifacts/notebook.png (the README's
docs/screenshots/notebook.png is a copy of one, so a test run leaves the tracked files alone)."""

from __future__ import annotations

import pytest

from o3viz.paths import REPO_ROOT
from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS

pytestmark = [pytest.mark.browser, pytest.mark.subprocess]

SAMPLE = "sample_traces/gsm8k_word_problem_importance.o3trace.json.gz"
CELLS = [
    f'import o3viz\ntrace = o3viz.load_trace("{SAMPLE}")',
    "view = o3viz.show(trace)  # the map, the outline and the details; click a step\nview",
    'view.selected = "step:0:3"  # the selection lives in Python too\nview.selected',
    "trace  # a Trace shows itself as a cell's last expression",
]
WIDGET = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    from o3viz.testing.notebook import execute, kernel_spec

    jupyter = kernel_spec(tmp_path_factory.mktemp("jupyter"))
    return execute(CELLS, jupyter)


def test_executed_notebook_holds_the_view_as_widget_and_static_html(executed):
    view_out = executed.cells[1].outputs[0]["data"]
    assert WIDGET in view_out  # a live widget where the front end runs them
    assert 'class="o3viz-view"' in view_out["text/html"] and "Plotly" in view_out["text/html"]
    assert "'step:0:3'" in executed.cells[2].outputs[0]["data"]["text/plain"]
    trace_out = executed.cells[3].outputs[0]["data"]
    assert 'class="o3viz-view"' in trace_out["text/html"]


def _step_point(frame, nth: int) -> tuple[float, float]:
    return frame.evaluate(
        """(nth) => {
        const gd = document.querySelector('#map');
        const L = gd._fullLayout, r = gd.getBoundingClientRect();
        const pts = [];
        gd._fullData.forEach(t => { if (String(t.name).startsWith('step:'))
            Array.from(t.x).forEach((x, i) => pts.push([x, t.y[i]])); });
        pts.sort((a, b) => a[0] - b[0]);
        const [x, y] = pts[nth];
        return [r.left + L._size.l + L.xaxis.l2p(x), r.top + L._size.t + L.yaxis.l2p(y)];
    }""",
        nth,
    )


@pytest.mark.browser
def test_saved_notebook_draws_the_map_offline_and_a_click_changes_the_details(executed, tmp_path):
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    from playwright.sync_api import sync_playwright

    from o3viz.testing.notebook import notebook_page

    page_file = tmp_path / "notebook.html"
    page_file.write_text(notebook_page(executed), encoding="utf-8")
    blocked: list[str] = []

    def only_local(route):
        url = route.request.url
        if url.startswith(("file:", "about:", "data:")):
            return route.continue_()
        blocked.append(url)
        return route.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.route("**/*", only_local)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(page_file.as_uri())
        handle = page.wait_for_selector("iframe.o3viz-view")
        frame = handle.content_frame()
        frame.wait_for_selector("body[data-ready='1']", timeout=60_000)
        assert frame.locator("#map .scatterlayer .point").count() >= 8  # the map is drawn
        before = frame.locator("#details .dtitle").inner_text()
        box = handle.bounding_box()
        x, y = _step_point(frame, 5)
        page.mouse.move(box["x"] + x, box["y"] + y)
        page.wait_for_timeout(300)
        page.mouse.click(box["x"] + x, box["y"] + y)
        frame.wait_for_function("document.body.dataset.selected === 'step:0:5'", timeout=10_000)
        after = frame.locator("#details .dtitle").inner_text()
        assert before.startswith("Step 0") and after.startswith("Step 5"), (before, after)
        page.mouse.move(5, 5)  # no hover label over the screenshot
        page.wait_for_timeout(300)
        (REPO_ROOT / "test-artifacts").mkdir(exist_ok=True)
        page.screenshot(path=str(REPO_ROOT / "test-artifacts" / "notebook.png"))
        frame.locator("#outline .row", has_text="Round 0").click()  # the outline selects too
        assert frame.locator("#details .dtitle").inner_text().startswith("Round 0")
        frame.locator("nav button", has_text="Importance").click()
        frame.wait_for_selector("#tab2 .js-plotly-plot", timeout=10_000)
        browser.close()
    assert not errors and not blocked, (errors, blocked)
