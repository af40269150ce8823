"""The Importance view in a real browser (Chromium through Playwright, ``streamlit run app.py``,
1280×720) on a real on-model trace: the embedded model's own one-step addition trace with its
receiver, suppression and resampling records (K = 4; made by
``scripts/make_onmodel_importance_trace.py``). The scores, the agreement line and the resampling intervals against the noise floor are
on screen; the screenshot goes to ``test-artifacts/importance_trust.png``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from o3viz.paths import REPO_ROOT
from o3viz.store.store import content_key
from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS, serve_app

TRACE = Path(__file__).parent / "data" / "onmodel_addition_importance.o3trace.json.gz"
ARTIFACTS = REPO_ROOT / "test-artifacts"
LOAD_MS = 120_000

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium)"
    ),
]


def test_the_importance_view_shows_intervals_noise_floor_and_agreement(tmp_path):
    from playwright.sync_api import sync_playwright

    samples = tmp_path / "samples"
    samples.mkdir()
    shutil.copy(TRACE, samples)
    env = {"O3VIZ_HOME": str(tmp_path / "home"), "O3VIZ_SAMPLES": str(samples)}
    with serve_app(env) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(f"{url}/inspect?trace={content_key(TRACE.read_bytes())}&view=Importance")
        page.get_by_text("Agreement between methods").first.wait_for(timeout=LOAD_MS)
        page.get_by_text("Which resampled steps stand out from the noise?").first.wait_for(timeout=LOAD_MS)
        page.get_by_text("Which steps mattered?").first.wait_for(timeout=LOAD_MS)
        page.wait_for_timeout(1500)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "importance_trust.png"))
        browser.close()
