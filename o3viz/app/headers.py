"""The headers the app's server adds to every HTTP response: no other site may frame the app or
its components (a framing page could post messages into them), and the app's pages fetch no
images or plugins from other sites (a trace's text that slipped through unescaped would become a
request to the URL it names). An ASGI middleware of its own, so it needs neither streamlit nor
starlette to be tested; ``app.py`` installs it on the ``st.App`` that ``streamlit run`` serves."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# frame-ancestors: only the app frames itself (its components are frames of its page). img-src:
# Streamlit's own images, plotly's data: URIs and st.image's blobs; no URL of another site.
# No script-src or style-src: Streamlit's page and the view component inject inline ones.
CSP = "frame-ancestors 'self'; img-src 'self' data: blob:; object-src 'none'; base-uri 'self'"
SECURITY_HEADERS: dict[str, str] = {
    "X-Frame-Options": "SAMEORIGIN",
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


class SecurityHeaders:
    """ASGI middleware: ``headers`` (``SECURITY_HEADERS``) set on every HTTP response of ``app``,
    replacing any the app set under the same names. Websocket traffic passes as it is."""

    def __init__(self, app: ASGIApp, headers: dict[str, str] | None = None) -> None:
        self.app = app
        items = (headers or SECURITY_HEADERS).items()
        self.raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in items]
        self.names = {k for k, _ in self.raw}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in self.names]
                message["headers"] = kept + self.raw
            await send(message)

        await self.app(scope, receive, send_with_headers)


__all__ = ["CSP", "SECURITY_HEADERS", "SecurityHeaders"]
