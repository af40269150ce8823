"""While one browser session uploads a pathological file, the server keeps serving everyone else.

Real processes: ``streamlit run app.py`` on a free 127.0.0.1 port and Debian's Chromium through
Playwright. Session A uploads ``((9^400)^400)^400 = 5`` (once 118 s of one interpreter-locked
power); session B must load a page, and /_stcore/health must answer, within 5 s. The upload runs in
the app worker with a 12 s budget, so A ends with a one-line message either way: the budget ran
out, or (once the claim checker refuses such powers quickly) the file was added."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from o3viz.paths import REPO_ROOT

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
BUDGET_S = 12

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium)"
    ),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str, timeout: float) -> bool:
    try:
        return urllib.request.urlopen(f"{url}/_stcore/health", timeout=timeout).status == 200
    except OSError:
        return False


@pytest.fixture
def server(tmp_path):
    port = _free_port()
    env = {**os.environ, "O3VIZ_SAMPLES": str(tmp_path), "O3VIZ_UPLOAD_BUDGET_S": str(BUDGET_S)}
    argv = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)]
    argv += ["--server.headless", "true", "--server.address", "127.0.0.1"]
    proc = subprocess.Popen(
        argv, cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            if _healthy(url, 1):
                break
            time.sleep(0.5)
        else:
            pytest.fail("streamlit did not start")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:  # a server stuck in in-process work ignores SIGTERM
            proc.kill()
            proc.wait(10)


def _load_time(browser, url: str, timeout_s: float = 60) -> float:
    """Seconds from request to the library page rendered, in a fresh session."""
    page = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    start = time.monotonic()
    page.goto(url)
    page.get_by_text("Upload traces").first.wait_for(timeout=timeout_s * 1000)
    return time.monotonic() - start


def test_a_second_session_loads_within_5s_while_another_uploads_a_pathological_file(server, tmp_path):
    from playwright.sync_api import sync_playwright

    bomb = tmp_path / "bomb.txt"
    bomb.write_text("((9^400)^400)^400 = 5")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        idle = _load_time(browser, server)  # the same page load with nothing else going on
        a = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
        a.goto(server)
        a.get_by_text("Trace library").first.wait_for(timeout=60_000)
        a.set_input_files("input[type=file]", str(bomb))
        a.get_by_text("bomb.txt").first.wait_for(timeout=10_000)  # the upload reached the server
        time.sleep(1.0)  # the import is under way now

        start = time.monotonic()
        assert _healthy(server, 5), "/_stcore/health did not answer within 5 s"
        assert time.monotonic() - start < 5
        # Within 5 s; on a machine so loaded that an idle load alone takes longer, within twice that.
        busy = _load_time(browser, server, timeout_s=max(5.0, 2 * idle) + 1)
        assert busy < max(5.0, 2 * idle), (busy, idle)

        ended = a.get_by_text("took longer than its 12 s budget").or_(a.get_by_text("Added bomb.txt"))
        ended.first.wait_for(timeout=(BUDGET_S + 20) * 1000)
        a.screenshot(path=str(tmp_path / "a.png"))
        browser.close()
