"""Real browser, real server: an upload survives a browser reload and a server restart, because it
went into the persistent store (Debian's Chromium through Playwright, ``streamlit run app.py``)."""

from __future__ import annotations

import re

import pytest

from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS, free_port, serve_app
from o3viz.testing.synthetic import make_trace

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium)"
    ),
]


def _cell(grid, text: str) -> None:
    """Wait for a table cell (the grid draws on a canvas; its accessible cells hold the text)."""
    cell = grid.locator("td[role=gridcell]", has_text=re.compile(f"^{re.escape(text)}$"))
    cell.first.wait_for(state="attached", timeout=60_000)


def test_an_upload_survives_a_reload_and_a_server_restart(tmp_path):
    from playwright.sync_api import sync_playwright

    samples, home = tmp_path / "samples", tmp_path / "home"
    samples.mkdir()
    make_trace(5, seed=1).save(samples / "sample_one.o3trace.json")
    upload = tmp_path / "kept_after_restart.o3trace.json.gz"
    make_trace(12, seed=2).save(upload)
    env = {"O3VIZ_HOME": str(home), "O3VIZ_SAMPLES": str(samples)}
    port = free_port()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        with serve_app(env, port=port) as url:
            page.goto(url)
            page.get_by_text("Trace library").first.wait_for(timeout=90_000)
            page.set_input_files("input[type=file]", str(upload))
            page.get_by_text("Added kept_after_restart.o3trace.json.gz").wait_for(timeout=90_000)
            page.reload()  # a new session: the session state is gone, the store is not
            page.get_by_text("Trace library").first.wait_for(timeout=90_000)
            grid = page.locator("[data-testid='stDataFrame']")
            _cell(grid, "kept_after_restart")  # the table shows names without the extension
        with serve_app(env, port=port) as url:  # the same store, a new server process
            page.goto(url)
            page.get_by_text("Trace library").first.wait_for(timeout=90_000)
            grid = page.locator("[data-testid='stDataFrame']")
            _cell(grid, "kept_after_restart")
            _cell(grid, "sample_one")
        browser.close()
