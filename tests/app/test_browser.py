"""One real-browser test of the app: Debian's Chromium driven by Playwright against
``streamlit run app.py``. Upload, Inspect with a tree click, Compare, and hostile text that must
render as text (no dialog, no injected element). Screenshots go to ``test-artifacts/``."""

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
from o3viz.testing.synthetic import HOSTILE, make_trace

ROOT = REPO_ROOT
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium; .ci/run does)"
    ),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server(tmp_path):
    samples = tmp_path / "samples"
    samples.mkdir()
    make_trace(9, seed=3, hostile=True).save(samples / "hostile.o3trace.json")
    upload = tmp_path / "upload" / "longer_run.o3trace.json.gz"
    upload.parent.mkdir()
    make_trace(24, seed=5, rounds=2, daa_mode="observe").save(upload)
    port = _free_port()
    env = {**os.environ, "O3VIZ_SAMPLES": str(samples)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.port",
            str(port),
            "--server.headless",
            "true",
            "--server.address",
            "127.0.0.1",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).status == 200:
                    break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("streamlit did not start: " + proc.stderr.read1(4000).decode(errors="replace"))
        yield url, upload
    finally:
        proc.terminate()
        proc.wait(10)


def _click_first_node(page, trace_name: str) -> None:
    """Click the first marker of a trace of the first Plotly figure (WebGL: click by pixel position)."""
    page.wait_for_function(
        "() => document.querySelector('.js-plotly-plot') && document.querySelector('.js-plotly-plot')._fullLayout"
    )
    xy = page.evaluate(
        """(name) => {
        const gd = document.querySelector('.js-plotly-plot');
        const tr = gd._fullData.find(t => String(t.name).startsWith(name));
        const L = gd._fullLayout, r = gd.getBoundingClientRect();
        return [r.left + L._size.l + L.xaxis.l2p(tr.x[0]), r.top + L._size.t + L.yaxis.l2p(tr.y[0])];
    }""",
        trace_name,
    )
    page.mouse.move(xy[0], xy[1])
    page.wait_for_timeout(300)
    page.mouse.click(xy[0], xy[1])


def test_app_in_chromium_uploads_inspects_clicks_compares_and_renders_hostile_text_as_text(server):
    from playwright.sync_api import sync_playwright

    url, upload = server
    ARTIFACTS.mkdir(exist_ok=True)
    dialogs: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 2400})
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        # The server's first request goes straight to a page URL: it must pass through the router
        # (Streamlit's legacy pages/ mode would run the page alone) and come back to that page.
        page.goto(f"{url}/inspect")
        page.get_by_text("What happened").first.wait_for(timeout=90_000)
        page.get_by_role("link", name="Library").first.click()
        page.get_by_text("Trace library").first.wait_for(timeout=60_000)
        page.set_input_files("input[type=file]", str(upload))
        page.get_by_text("Added longer_run.o3trace.json.gz").wait_for(timeout=60_000)

        page.get_by_role("link", name="Inspect").first.click()
        page.get_by_text("What happened").first.wait_for(timeout=60_000)
        _click_first_node(page, "step:")
        page.get_by_text("Step 0 ·").first.wait_for(timeout=30_000)
        # The hostile sample's first step holds a <script> tag: it must show as text.
        page.get_by_text(HOSTILE[0], exact=False).first.wait_for(timeout=10_000)
        page.screenshot(path=str(ARTIFACTS / "inspect.png"), full_page=True)

        page.get_by_role("tab", name="Tokens").click()
        page.locator("span.tok").first.wait_for(timeout=30_000)
        assert page.locator("span.tok", has_text=HOSTILE[0]).count() > 0
        page.get_by_role("tab", name="Verification").click()
        page.get_by_text("claims highlighted").first.wait_for(timeout=30_000)

        page.get_by_role("link", name="Compare").first.click()
        page.get_by_text("Steps aligned").wait_for(timeout=60_000)
        page.locator(".js-plotly-plot").nth(3).wait_for(timeout=30_000)
        page.wait_for_timeout(1500)
        page.screenshot(path=str(ARTIFACTS / "compare.png"), full_page=True)

        assert dialogs == [], f"a dialog fired: {dialogs}"
        assert page.locator("img[src=x]").count() == 0
        assert page.locator("script:text('alert(1)')").count() == 0
        browser.close()
    assert (ARTIFACTS / "inspect.png").stat().st_size > 10_000
