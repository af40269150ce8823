"""Inspect's in-page views in Chromium, against the red team's attacks: the view draws its own
data though hostile data waits at the served folder's predictable name, the files it fetches keep
other sites out, a foreign frame's messages are not heard (no script of ours listens for one), and
a page of another origin cannot frame the app. (Where the headers are lost on the way, a framing
page's message meets a page with no listener of ours: the v1 bridge's frame, which such a page
could frame alone, is gone.) The checks that need no browser are in
``test_view_security.py``."""

from __future__ import annotations

import contextlib
import shutil
from types import SimpleNamespace

import pytest

from o3viz.paths import REPO_ROOT
from o3viz.store.store import content_key
from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS, serve_app
from tests.app.test_view_security import EVIL, assert_kept_out, plant, predictable

pytestmark = [
    pytest.mark.server,
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent"),
]

SAMPLE = REPO_ROOT / "sample_traces" / "solve_math_gsm8k.o3trace.json.gz"
LOAD_MS = 120_000  # the machine may be busy: generous waits, never a timing assertion


@pytest.fixture(scope="module")
def inspect(tmp_path_factory):
    """The app on the captured sample, with hostile view data planted (mode 0777) at the served
    folder's predictable name in its temp folder, and Chromium on its Inspect page with the map
    drawn: its ``browser`` and ``page``, the app's ``url``, the Inspect ``address``, and the
    ``responses`` that brought the view's data and plotly.js."""
    from playwright.sync_api import sync_playwright

    root = tmp_path_factory.mktemp("view_security")
    samples, home, tmp = root / "samples", root / "home", root / "tmp"
    for d in (samples, tmp):
        d.mkdir()
    plant(predictable(tmp))
    shutil.copyfile(SAMPLE, samples / SAMPLE.name)
    env = {"O3VIZ_SAMPLES": str(samples), "O3VIZ_HOME": str(home), "TMPDIR": str(tmp)}
    with serve_app(env) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page, responses = browser.new_page(viewport={"width": 1280, "height": 720}), []
            page.on(
                "response",
                lambda r: responses.append(r) if FILES in r.url or "o3viz-plotly" in r.url else None,
            )
            address = f"{url}/inspect?trace={content_key(SAMPLE.read_bytes())}"
            page.goto(address)
            page.locator(VIEW).locator("#map .point").first.wait_for(timeout=LOAD_MS)
            yield SimpleNamespace(browser=browser, page=page, url=url, address=address, responses=responses)
        finally:
            browser.close()


VIEW = ".o3v-map"  # the map view's root, in the app's page
FILES = "/o3viz-view/"  # the app's route for view data
FORGED = FILES + "data/" + "0" * 24 + ".json"  # view data the forged messages name
MESSAGE = {
    "isStreamlitMessage": True,
    "type": "streamlit:render",
    "args": {
        "url": FORGED,
        "height": 300,
        "warm": [EVIL + "/w.js"],
        "chart": EVIL + "/c.js",
        "push": {"n": 99, "id": None},
    },
}
FORGE = """([msg]) => new Promise((done) => {
  // a frame in the app's own page and origin posts Streamlit's v1 message to the page, as the
  // components v1 bridge would have heard it
  const f = document.createElement('iframe');
  f.srcdoc = '<script>parent.postMessage(' + JSON.stringify(msg) + ', "*"); window.sent = 1;<' + '/script>';
  f.onload = () => setTimeout(() => done(f.contentWindow.sent === 1), 1500);
  document.body.append(f);
})"""
STATE = "() => document.querySelector('.o3v-map').dataset.url"


def _forged_requests(page) -> list[str]:
    heard: list[str] = []
    page.on("request", lambda r: heard.append(r.url) if EVIL in r.url or FORGED in r.url else None)
    return heard


def _message_listeners_of_ours(page) -> list[str]:
    """The ``message`` listeners on the page's window whose script is one of our views' (their
    modules are named ``st-bidi-o3viz.*``), as Chromium's debugger lists them."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Debugger.enable")
    scripts: dict[str, str] = {}
    cdp.on("Debugger.scriptParsed", lambda e: scripts.__setitem__(e["scriptId"], e.get("url", "")))
    page.wait_for_timeout(200)  # (the parsed scripts are replayed on enable)
    win = cdp.send("Runtime.evaluate", {"expression": "window"})["result"]["objectId"]
    found = cdp.send("DOMDebugger.getEventListeners", {"objectId": win})["listeners"]
    urls = [scripts.get(x["scriptId"], "") for x in found if x["type"] == "message"]
    cdp.detach()
    return [u for u in urls if "o3viz" in u]


def test_the_view_draws_its_own_data_and_its_files_keep_other_sites_out(inspect):
    assert inspect.page.evaluate("() => window.__o3pwned") is None  # the planted data never shown
    assert inspect.page.evaluate(STATE) != FORGED
    served = [r for r in inspect.responses if FILES in r.url or "o3viz-plotly" in r.url]
    assert any(FILES + "data/" in r.url for r in served), [r.url for r in served]
    for r in served:
        assert_kept_out({k.lower(): v for k, v in r.all_headers().items()}, r.url)


def test_a_foreign_frames_message_is_not_heard(inspect):
    """A frame in the app's own page posts Streamlit's v1 render message: no script of our views
    listens for messages, the view fetches nothing the message names and keeps its data."""
    page = inspect.page
    heard = _forged_requests(page)
    before = page.evaluate(STATE)
    assert _message_listeners_of_ours(page) == []
    assert page.evaluate(FORGE, [MESSAGE])  # the frame did post
    assert heard == []
    assert page.evaluate(STATE) == before
    assert page.locator(VIEW).locator("#map .point").first.is_visible()


def test_a_page_of_another_origin_cannot_frame_the_app(inspect):
    """Served from this machine: Chromium's local network checks block a public site's frames
    of 127.0.0.1 before any header is read; other browsers do not, and the headers hold there."""
    with _page_at_another_origin(f'<iframe src="{inspect.address}"></iframe>') as at:
        evil = inspect.browser.new_page()
        evil.goto(at)
        inside = [f for f in evil.frames if f is not evil.main_frame]
        assert len(inside) == 1
        inside[0].wait_for_load_state(timeout=LOAD_MS)
        assert inside[0].url.startswith("chrome-error:"), inside[0].url  # refused, never the app
        evil.close()


@contextlib.contextmanager
def _page_at_another_origin(body: str):
    """``body`` served as an HTML page at http://127.0.0.1:<another port>/ (yields its URL)."""
    import http.server
    import threading

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the http.server API)
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
