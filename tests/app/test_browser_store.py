"""Real browser, real server: an upload survives a browser reload and a server restart, because it
went into the persistent store (Debian's Chromium through Playwright, ``streamlit run app.py``)."""

from __future__ import annotations

import re

import pytest

from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS, free_port, serve_app
from o3viz.testing.synthetic import make_trace

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
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


def test_the_library_first_screen_at_1280x720_with_the_samples_and_a_10_record_import(tmp_path):
    """Screenshots a first-time user's Library (test-artifacts/library_*.png): the samples, then a
    10-record dataset imported, then random bytes named .json. The screen says what to do, the
    dataset's records are offered, and the random bytes get one "not JSON" line and no Import all."""
    import os
    import shutil

    from playwright.sync_api import sync_playwright

    from o3viz.paths import REPO_ROOT
    from o3viz.testing.datasets import write_reasoning_jsonl

    art = REPO_ROOT / "test-artifacts"
    art.mkdir(exist_ok=True)
    samples = tmp_path / "samples"
    shutil.copytree(REPO_ROOT / "sample_traces", samples)
    dataset = write_reasoning_jsonl(tmp_path / "toy_gsm.jsonl", 10)
    junk = tmp_path / "random.json"
    junk.write_bytes(os.urandom(200_000))
    env = {"O3VIZ_HOME": str(tmp_path / "home"), "O3VIZ_SAMPLES": str(samples)}
    with sync_playwright() as p, serve_app(env) as url:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(url)
        page.get_by_text("Select one row to inspect it, two to compare them.").wait_for(timeout=120_000)
        page.wait_for_timeout(1500)
        page.screenshot(path=str(art / "library_first_screen.png"))
        page.set_input_files("input[type=file]", str(dataset))
        page.get_by_text("toy_gsm.jsonl holds 10 records").wait_for(timeout=90_000)
        page.get_by_role("button", name="Import all 10 records").click()
        page.get_by_text("Imported 10 traces from 10 records").wait_for(timeout=180_000)
        page.wait_for_timeout(1500)
        page.screenshot(path=str(art / "library_after_import.png"))
        page.set_input_files("input[type=file]", str(junk))
        page.get_by_text("random.json: not JSON").wait_for(timeout=90_000)
        assert page.get_by_text("random.json holds").count() == 0  # no "Import all" for it
        page.wait_for_timeout(800)
        page.screenshot(path=str(art / "library_random_bytes.png"))
        browser.close()
