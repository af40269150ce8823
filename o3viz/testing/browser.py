"""Driving the real app in a real browser, for tests and screenshots: ``streamlit run app.py`` on a
free 127.0.0.1 port (``serve_app``) and Debian's Chromium through Playwright (``CHROMIUM``,
``CHROMIUM_ARGS``; never a browser download)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from o3viz.paths import REPO_ROOT

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve_app(
    env: dict[str, str],
    *,
    port: int | None = None,
    start_timeout: float = 90.0,
    script: str | Path = "app.py",
    options: tuple[str, ...] = (),
):
    """Run the app (or another Streamlit ``script``, with more ``options`` for ``streamlit run``)
    with ``env`` added to this process's environment; yields its URL and stops it."""
    port = port or free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", str(script), "--server.port", str(port)]
    cmd += ["--server.headless", "true", "--server.address", "127.0.0.1", *options]
    proc = subprocess.Popen(
        cmd, cwd=REPO_ROOT, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + start_timeout
        while True:
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).status == 200:
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    err = proc.stderr.read1(4000).decode(errors="replace") if proc.stderr else ""
                    raise RuntimeError(f"streamlit did not start: {err}") from None
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


class Wire:
    """The page's websocket to the server, forwarded until ``cut``; then nothing passes either way,
    and what the page tried to send is counted. Route it with
    ``page.route_web_socket("**/_stcore/stream", wire.route)`` to prove a click is answered in the
    browser."""

    def __init__(self):
        self.cut, self.held = False, 0

    def route(self, ws):
        server = ws.connect_to_server()

        def up(msg):
            if self.cut:
                self.held += 1
            else:
                server.send(msg)

        def down(msg):
            if not self.cut:
                ws.send(msg)

        ws.on_message(up)
        server.on_message(down)
