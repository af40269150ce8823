"""A page opened at its own path (``/inspect?trace=…``) names the server's root to Streamlit
(``o3viz.app.PageBase``), so the page probes the root once instead of probing ``/inspect/`` first,
failing and waiting 100 ms. The middleware alone on every kind of response, then the real server in
a real Chromium: no probe of ``/inspect/_stcore/health``, and the page still connects."""

from __future__ import annotations

import asyncio
import os

import pytest

from o3viz.app.page_base import MAX_HTML_BYTES, PageBase, base_script, plotly_loader
from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS, serve_app

PAGES = ("inspect", "samples", "library")
# the page's script drew an element with text (Streamlit's skeleton has none)
SCRIPT_DREW = """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stElementContainer"]')]
  .some((e) => e.innerText.trim())"""
HTML = b"<!doctype html><html><head><title>x</title></head><body>app</body></html>"


def _call(
    path: str, *, status=200, ctype=b"text/html; charset=utf-8", body=HTML, chunks=1, extra=(), base=""
):
    """Run the middleware on a GET of ``path`` answered by an app that sends ``body`` in
    ``chunks`` parts; returns (the headers the app saw, the messages sent on)."""
    seen: dict = {}

    async def app(scope, receive, send):
        seen["headers"] = scope["headers"]
        headers = [(b"content-type", ctype), (b"content-length", str(len(body)).encode()), *extra]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        step = max(1, len(body) // chunks)
        pieces = [body[i : i + step] for i in range(0, len(body), step)] or [b""]
        for i, piece in enumerate(pieces):
            await send({"type": "http.response.body", "body": piece, "more_body": i < len(pieces) - 1})

    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": path, "headers": [(b"accept-encoding", b"gzip")]}
    head = {"inspect": plotly_loader("app/static/p.js")}
    asyncio.run(PageBase(app, PAGES, base=lambda: base, head=head)(scope, None, send))
    return seen["headers"], sent


def _body(sent) -> bytes:
    return b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


@pytest.mark.parametrize("path", ["/inspect", "/inspect/", "/samples"])
def test_a_pages_html_names_the_root_and_says_its_new_length(path):
    asked, sent = _call(path, chunks=3)
    body = _body(sent)
    seg = path.strip("/")
    assert base_script(seg).encode() in body.split(b"</head>")[0]
    assert dict(sent[0]["headers"])[b"content-length"] == str(len(body)).encode()
    assert [k for k, _ in sent[0]["headers"]].count(b"content-length") == 1
    assert b"accept-encoding" not in dict(asked)  # asked for plain HTML, so it can be read


@pytest.mark.parametrize(
    ("path", "kw"),
    [
        ("/", {}),  # the home page probes the root already
        ("/_stcore/health", {}),
        ("/static/js/index.js", {"ctype": b"text/javascript"}),
        ("/nowhere", {}),  # not a page of the app
        ("/x/inspect", {}),  # not at the server's base
        ("/inspect", {"status": 404}),
        ("/inspect", {"extra": [(b"content-encoding", b"gzip")]}),  # compressed after all: left alone
        (
            "/inspect",
            {"body": b"<html><head>" + b"x" * (MAX_HTML_BYTES + 10) + b"</head></html>", "chunks": 4},
        ),
    ],
)
def test_anything_else_passes_as_it_came(path, kw):
    body = kw.get("body", HTML)
    _, sent = _call(path, **kw)
    assert _body(sent) == body
    assert dict(sent[0]["headers"])[b"content-length"] == str(len(body)).encode()


def test_inspect_alone_fetches_plotly_js_with_the_page_and_runs_it_once_the_page_has_run():
    inspect, samples = _body(_call("/inspect")[1]), _body(_call("/samples")[1])
    assert b'<link rel="preload" as="script" href="app/static/p.js">' in inspect
    assert b"DOMContentLoaded" in inspect and b'window["__o3vizPlotly"]=p' in inspect
    assert b"preload" not in samples and b"BACKEND_BASE_URL" in samples


def test_under_a_base_url_path_only_its_pages_are_named():
    assert b"BACKEND_BASE_URL" in _body(_call("/o3/inspect", base="o3")[1])
    assert _body(_call("/inspect", base="o3")[1]) == HTML
    assert _body(_call("/o3/inspect", base="/o3/")[1]) != HTML


def test_the_script_keeps_a_proxys_prefix_and_leaves_a_set_config_alone():
    js = base_script("inspect")
    assert "if(window.__streamlit)return;" in js  # a page that set its own config keeps it
    assert 'p.slice(i+1)!=="inspect"' in js and "location.origin+p.slice(0,i+1)" in js


@pytest.mark.browser
@pytest.mark.server
@pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium)")
def test_a_page_opened_at_its_path_probes_the_root_once_and_connects(tmp_path):
    from playwright.sync_api import sync_playwright

    env = {"O3VIZ_HOME": os.environ["O3VIZ_HOME"], "O3VIZ_SAMPLES": str(tmp_path)}
    with serve_app(env) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for path in ("/inspect", "/samples"):
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            probes: list[str] = []
            page.on(
                "request",
                lambda r, probes=probes: "_stcore/health" in r.url and probes.append(r.url[len(url) :]),
            )
            page.goto(url + path)
            page.wait_for_function(SCRIPT_DREW, timeout=120_000)  # connected, and the page's script ran
            assert probes == ["/_stcore/health"], probes
            assert page.evaluate("window.__streamlit.BACKEND_BASE_URL") == url + "/"
            if path == "/inspect":  # plotly.js fetched with the page, run once the page's scripts ran
                page.wait_for_function("() => window.__o3vizPlotly && window.Plotly", timeout=120_000)
                assert page.evaluate("document.querySelectorAll('script#o3viz-plotly').length") == 1
            else:
                assert page.evaluate("window.__o3vizPlotly === undefined")
            page.close()
        browser.close()
