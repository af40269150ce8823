"""Inspect's view component in Chromium, against the red team's attacks: it is served from its own
files though a hostile bridge.js waits at the served folder's predictable name, its files keep
other sites out, a sibling frame's forged message is not heard, a page of another origin can frame
neither the app nor the view, and where the headers are lost on the way a framing page's message
is not heard either. The checks that need no browser are in ``test_view_security.py``."""

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
    """The app on the captured sample, with a hostile bridge.js planted (mode 0777) at the served
    folder's predictable name in its temp folder, and Chromium on its Inspect page with the map
    drawn: its ``browser`` and ``page``, the app's ``url``, the Inspect ``address``, and the
    ``responses`` that brought the component's files."""
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
            page.on("response", lambda r: responses.append(r) if "/component/" in r.url else None)
            address = f"{url}/inspect?trace={content_key(SAMPLE.read_bytes())}"
            page.goto(address)
            page.frame_locator(VIEW).locator("#map .point").first.wait_for(timeout=LOAD_MS)
            yield SimpleNamespace(browser=browser, page=page, url=url, address=address, responses=responses)
        finally:
            browser.close()


VIEW = "iframe[src*='o3view']"
FORGED = "data/" + "0" * 24 + ".json"  # view data the forged messages name (the old bridge fetched it)
FORGE = """([url, evil]) => new Promise((done) => {
  // a sibling frame of the view's, in the app's own page and origin, posts Streamlit's message
  const msg = {type: 'streamlit:render', args: {url: url, height: 300, warm: [evil + '/w.js'],
    chart: evil + '/c.js', push: {n: 99, id: null}}};
  const f = document.createElement('iframe');
  f.srcdoc = '<script>parent.document.querySelector(\\'iframe[src*="o3view"]\\').contentWindow' +
    '.postMessage(' + JSON.stringify(msg) + ', "*"); window.sent = 1;<' + '/script>';
  f.onload = () => setTimeout(() => done(f.contentWindow.sent === 1), 1500);
  document.body.append(f);
})"""


def _forged_requests(page) -> list[str]:
    heard: list[str] = []
    page.on("request", lambda r: heard.append(r.url) if EVIL in r.url or FORGED in r.url else None)
    return heard


def test_the_view_draws_from_its_own_files_and_they_keep_other_sites_out(inspect):
    assert inspect.page.evaluate("() => window.__o3pwned") is None  # the planted bridge.js never ran
    served = {r.url.rsplit("/", 1)[-1].split("?")[0]: r for r in inspect.responses}
    for name in ("index.html", "bridge.js", "view.js"):
        assert name in served, sorted(served)
        assert_kept_out({k.lower(): v for k, v in served[name].all_headers().items()}, name)


def test_a_sibling_frames_message_is_not_heard(inspect):
    """A frame beside the view's, in the app's own page: the view fetches nothing its message
    names (the old bridge fetched the forged url at once, and warmed the bundles it named) and
    keeps its data."""
    page = inspect.page
    heard = _forged_requests(page)
    view = page.frame(url=lambda u: "o3view" in u)
    before = view.evaluate("() => document.body.dataset.url")
    assert page.evaluate(FORGE, [FORGED, EVIL])  # the sibling did post
    assert heard == []
    assert view.evaluate("() => document.body.dataset.url") == before
    assert page.frame_locator(VIEW).locator("#map .point").first.is_visible()


def test_a_page_of_another_origin_can_frame_neither_the_app_nor_the_view(inspect):
    """Served from this machine: Chromium's local network checks block a public site's frames
    of 127.0.0.1 before any header is read; other browsers do not, and the headers hold there."""
    view = inspect.page.frame(url=lambda u: "o3view" in u)
    framing = f'<iframe src="{inspect.address}"></iframe><iframe src="{view.url}"></iframe>'
    with _page_at_another_origin(framing) as at:
        evil = inspect.browser.new_page()
        evil.goto(at)
        inside = [f for f in evil.frames if f is not evil.main_frame]
        assert len(inside) == 2
        for f in inside:  # refused: an error page, never the app
            f.wait_for_load_state(timeout=LOAD_MS)
            assert f.url.startswith("chrome-error:"), f.url  # (about:blank would be a race)
        evil.close()


def test_a_framing_page_is_not_heard_where_the_headers_are_lost(inspect):
    """The headers stripped on the way (as a proxy might): a page of another origin frames the
    view's page and posts Streamlit's message; the view does not obey (the old bridge fetched the
    url the message named)."""
    view = inspect.page.frame(url=lambda u: "o3view" in u)
    with _page_at_another_origin(_POST_INTO_FRAME.format(src=view.url, url=FORGED)) as at:
        evil = inspect.browser.new_page()
        evil.route("**/component/**", _without_framing_headers)
        heard = _forged_requests(evil)
        evil.goto(at)
        evil.wait_for_function("() => window.posted === 1", timeout=LOAD_MS)
        evil.wait_for_timeout(1500)  # the old bridge's fetch came at once
        assert [f.url for f in evil.frames if f.url.startswith(inspect.url)]  # framed this time
        assert heard == []
        evil.close()


_POST_INTO_FRAME = """<iframe id="v" src="{src}"></iframe><script>
document.getElementById('v').onload = () => setTimeout(() => {{
  document.getElementById('v').contentWindow.postMessage(
    {{type: 'streamlit:render', args: {{url: '{url}', height: 300}}}}, '*');
  window.posted = 1; }}, 500);
</script>"""


def _without_framing_headers(route):
    response = route.fetch()
    drop = {"x-frame-options", "content-security-policy"}
    route.fulfill(
        response=response, headers={k: v for k, v in response.headers.items() if k.lower() not in drop}
    )


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
