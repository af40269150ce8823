"""The app's pages open without a wasted probe, and Inspect's without waiting for plotly.js.

**The root.** Streamlit's page, loaded at a page's own path
(``/inspect?trace=…``: a shared link, a reload), does not know where the server's root is: it
probes ``/inspect/_stcore/health`` first, which fails, waits 100 ms and then probes
``/_stcore/health``. That costs every first visit and every reload of a page other than the home
page about 0.15 s before anything is drawn (measured in the browser: the second probe starts
0.10–0.14 s after the first fails).

Streamlit reads ``window.__streamlit.BACKEND_BASE_URL``, when a page sets it before its bundle
runs, as the one place to probe. ``PageBase`` is an ASGI middleware that sets it on the HTML of a
request for one of the app's pages: a script that takes the page's own segment off the address
the browser shows (so a proxy's prefix is kept) and names what is left. It writes nothing when the
path is not ``{base}/{page}``, when the page already set ``window.__streamlit``, or when the
response is not plain HTML; Streamlit then probes as it always did. The HTML is asked for
uncompressed (it is 8 KB) so that it can be read; its length is set again.

**What a page needs first** (``head``: page → HTML). Inspect's map waits for plotly.js, which its
component asked for only once it was mounted, after the page's first elements were drawn.
``plotly_loader`` starts the fetch with the page and runs the script when the page's own scripts
have run, while Streamlit connects and the server runs the page; the component waits on the same
promise (``pages/common/o3view/plotly.js``). A first visit to ``/inspect?trace=…`` drew its first
map in 2.21 s instead of 2.42 s (median of 5 fresh browser contexts; Streamlit's own
``st.plotly_chart`` page: 1.91 s). The script is plotly's cartesian partial bundle
(``o3viz.app.inspect_view.PLOTLY_JS``: 1.5 MB, about 0.28 s of the page's thread to run, where the
full bundle's 4.6 MB held it 0.78 s); with it the first map took 1.73-1.91 s, below that page's
1.95-2.02 s (``python -m benchmarks ui`` has the figures on three traces).

What it relies on in Streamlit's frontend (``window.__streamlit``, ``BACKEND_BASE_URL``) is looked
for in the installed bundle by ``tests/app/test_view_streamlit_internals.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping

from o3viz.app.headers import ASGIApp, Message, Receive, Scope, Send

__all__ = ["MAX_HTML_BYTES", "PageBase", "base_script", "plotly_loader"]

MAX_HTML_BYTES = 256 * 1024  # Streamlit's index.html is 8 KB; a larger body passes untouched


def base_script(segment: str) -> str:
    """The script that names the server's root for a page served at ``…/{segment}``."""
    seg = json.dumps(segment)
    return (
        "<script>(function(){if(window.__streamlit)return;"
        'var p=location.pathname.replace(/\\/+$/,""),i=p.lastIndexOf("/");'
        f"if(p.slice(i+1)!=={seg})return;"
        "window.__streamlit={BACKEND_BASE_URL:location.origin+p.slice(0,i+1)};})();</script>"
    )


def plotly_loader(src: str, promise: str = "__o3vizPlotly") -> str:
    """A script that fetches ``src`` at once (a preload) and runs it when the page's own scripts
    have run (``DOMContentLoaded``): the browser compiles and runs it while Streamlit connects and
    the server runs the page, not after the page's first elements are drawn. ``window[promise]``
    is the load's promise (a component that needs the script waits on it instead of adding its
    own tag); an error sets it back to null, so the component tries once more itself."""
    url, name = json.dumps(src), json.dumps(promise)
    load = (
        f"function(){{if(window.Plotly||window[{name}])return;"
        f"var p=new Promise(function(r,f){{var s=document.createElement('script');s.id='o3viz-plotly';"
        f"s.src=new URL({url},document.baseURI).toString();s.onload=function(){{r()}};"
        f"s.onerror=function(){{window[{name}]=null;f(new Error('did not load: '+s.src))}};"
        f"document.head.append(s)}});p.catch(function(){{}});window[{name}]=p}}"
    )
    return (
        f'<link rel="preload" as="script" href={url}>'
        f"<script>document.addEventListener('DOMContentLoaded',function(){{setTimeout({load},0)}});</script>"
    )


class PageBase:
    """ASGI middleware: the HTML of a GET for ``{base}/{page}`` (``page`` one of ``pages``, their
    URL paths) carries ``base_script(page)``. ``base()`` is the server's ``server.baseUrlPath``
    (read per request: Streamlit's config is loaded after the app is imported)."""

    def __init__(
        self,
        app: ASGIApp,
        pages: Iterable[str],
        base: Callable[[], str] = lambda: "",
        head: Mapping[str, str] | None = None,
    ) -> None:
        self.app, self.pages, self.base, self.head = app, frozenset(pages), base, dict(head or {})

    def _segment(self, scope: Scope) -> str | None:
        if scope["type"] != "http" or scope.get("method") != "GET":
            return None
        path = scope.get("path", "").rstrip("/")
        head, _, seg = path.rpartition("/")
        prefix = "/" + self.base().strip("/")
        return seg if seg in self.pages and head == prefix.rstrip("/") else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        seg = self._segment(scope)
        if seg is None:
            await self.app(scope, receive, send)
            return
        scope = dict(scope)
        scope["headers"] = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"accept-encoding"]
        start: Message | None = None
        parts: list[bytes] = []
        size = 0
        passing = False  # not HTML we may change: messages go on as they come

        async def rewrite(message: Message) -> None:
            nonlocal start, size, passing
            if passing:
                await send(message)
                return
            if message["type"] == "http.response.start":
                headers = {k.lower(): v for k, v in message.get("headers", [])}
                html = headers.get(b"content-type", b"").startswith(b"text/html")
                if message.get("status") != 200 or not html or b"content-encoding" in headers:
                    passing = True
                    await send(message)
                else:
                    start = message
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            parts.append(message.get("body", b""))
            size += len(parts[-1])
            if size > MAX_HTML_BYTES:  # not the page we know: send it as it came
                passing = True
                await send(start)
                await send({"type": "http.response.body", "body": b"".join(parts), "more_body": True})
                if not message.get("more_body", False):
                    await send({"type": "http.response.body", "body": b""})
                return
            if message.get("more_body", False):
                return
            body = b"".join(parts)
            at = body.lower().find(b"</head>")
            if at >= 0:
                body = body[:at] + (base_script(seg) + self.head.get(seg, "")).encode() + body[at:]
            kept = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            await send({**start, "headers": [*kept, (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, rewrite)
