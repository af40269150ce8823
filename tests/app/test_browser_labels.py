"""Labelling in a real browser (Chromium through Playwright, ``streamlit run app.py``, 1280×720):
the name is asked once, three steps are labelled with the keys w / c / u and moved through with n,
and the golden-set export holds the three labels. Screenshots of Inspect while labelling and of
the Labels page go to ``test-artifacts/labels_*.png``."""

from __future__ import annotations

import json
import shutil

import pytest

from o3viz.cli.main import main
from o3viz.paths import REPO_ROOT
from o3viz.store.store import Store, content_key
from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS, serve_app

ARTIFACTS = REPO_ROOT / "test-artifacts"
LOAD_MS = 120_000
SAMPLE = REPO_ROOT / "sample_traces" / "gsm8k_word_problem.o3trace.json.gz"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium)"
    ),
]


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.wait_for_timeout(800)
    page.screenshot(path=str(ARTIFACTS / f"labels_{name}.png"))


def _settle(page) -> None:
    """Wait for the rerun a key press started to end (Streamlit marks the app as running)."""
    page.wait_for_timeout(400)
    page.locator("[data-testid='stStatusWidget']").wait_for(state="detached", timeout=LOAD_MS)
    page.wait_for_timeout(300)


def test_three_steps_labelled_with_the_keyboard_are_in_the_export(tmp_path, monkeypatch):
    from playwright.sync_api import sync_playwright

    samples, home = tmp_path / "samples", tmp_path / "home"
    samples.mkdir()
    shutil.copy(SAMPLE, samples)
    key = content_key(SAMPLE.read_bytes())
    env = {"O3VIZ_HOME": str(home), "O3VIZ_SAMPLES": str(samples)}
    with serve_app(env) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(f"{url}/inspect?trace={key}&node=step:0:1")
        page.get_by_label("Your name, to label steps").wait_for(timeout=LOAD_MS)
        start = page.get_by_role("button", name="Start labelling")
        fits = "b => [b, ...b.querySelectorAll('*')].every(e => e.scrollWidth <= e.clientWidth + 1)"
        assert start.evaluate(fits), "the name prompt's button label is cut off at 1280x720"
        _shot(page, "name_prompt")
        page.get_by_label("Your name, to label steps").fill("ann")
        start.click()
        page.locator(f".st-key-lab_w_{key}_0_1").wait_for(timeout=LOAD_MS)
        # the key listener is a component of its own, mounted after the buttons: on a busy machine
        # a key pressed before it was there went nowhere
        page.wait_for_function("() => !!window.__o3LabelKeys", timeout=LOAD_MS)
        page.wait_for_timeout(1000)
        page.evaluate("document.activeElement && document.activeElement.blur()")  # off the name box
        for letter, shows in (
            ("w", "ann: wrong"),
            ("n", "Step 2 ·"),
            ("c", "ann: correct"),
            ("n", "Step 3 ·"),
            ("u", "ann: unsure"),
        ):
            page.keyboard.press(letter)
            page.get_by_text(shows).first.wait_for(timeout=LOAD_MS)
            _settle(page)
        _shot(page, "inspect_keyboard")
        page.goto(f"{url}/labels")
        page.get_by_text("How well the labellers agree").first.wait_for(timeout=LOAD_MS)
        page.wait_for_timeout(1500)
        _shot(page, "page")
        browser.close()
    monkeypatch.setenv("O3VIZ_HOME", str(home))
    out = tmp_path / "gold.jsonl"
    assert main(["labels", "export", "--format", "jsonl", "--out", str(out)]) == 0
    (rec,) = [json.loads(line) for line in out.read_text().splitlines()]
    got = {s["step"]: [(lab["labeller"], lab["verdict"]) for lab in s["labels"]] for s in rec["steps"]}
    assert rec["key"] == key and got == {
        "0:1": [("ann", "wrong")],
        "0:2": [("ann", "correct")],
        "0:3": [("ann", "unsure")],
    }
    assert len(Store(home).trace(key).final.steps) > 3
