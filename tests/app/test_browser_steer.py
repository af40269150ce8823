"""Steering in a real browser (Chromium through Playwright, ``streamlit run app.py``, 1280×720):
the Run page's steering inputs list the prompt's sentences to mark, and Compare opened on a
steered run and its unsteered twin (made here with the embedded model) shows both answers and the
marked spans' attention per step on one scale. Screenshots: ``test-artifacts/steer_*.png``."""

from __future__ import annotations

import re

import pytest

from o3viz.paths import REPO_ROOT
from o3viz.store.store import content_key
from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS, serve_app

ARTIFACTS = REPO_ROOT / "test-artifacts"
LOAD_MS = 120_000
PROMPT = "Answer with one word. What is the capital city of France? Tell me about it."

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium)"
    ),
]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from playwright.sync_api import sync_playwright

    from o3viz import DAAConfig, RunRequest, SteerSpan, capture, load_model

    tmp = tmp_path_factory.mktemp("steer")
    samples, home = tmp / "samples", tmp / "home"
    samples.mkdir()
    model, tok = load_model()
    keys = []
    for name, daa in (
        ("unsteered", DAAConfig()),
        ("steered", DAAConfig(mode="steer", spans=[SteerSpan("Answer with one word.")])),
    ):
        path = capture(model, tok, RunRequest(prompt=PROMPT, max_new_tokens=40, daa=daa)).save(
            samples / f"{name}.o3trace.json.gz"
        )
        keys.append(content_key(path.read_bytes()))
    with serve_app({"O3VIZ_HOME": str(home), "O3VIZ_SAMPLES": str(samples)}) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        yield url, page, keys
        browser.close()


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.wait_for_timeout(1000)
    page.screenshot(path=str(ARTIFACTS / f"steer_{name}.png"))


def test_compare_shows_both_answers_and_the_spans_attention_on_one_scale(app):
    url, page, (off, on) = app
    page.goto(f"{url}/compare?trace={off}&b={on}")
    page.get_by_text("(steered) answered").first.wait_for(timeout=LOAD_MS)
    page.get_by_text("(unsteered) answered").first.wait_for(timeout=LOAD_MS)
    page.get_by_text("How much of each step's attention went to the marked spans?").first.wait_for(
        timeout=LOAD_MS
    )
    page.mouse.wheel(0, 260)
    _shot(page, "compare")


def test_the_run_page_lists_the_prompts_sentences_to_mark(app):
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    url, page, _ = app
    page.goto(f"{url}/run")
    page.get_by_text("Steer attention to part of the prompt (PASTA)").first.click(timeout=LOAD_MS)
    page.get_by_text("Sentences to steer towards").first.wait_for(timeout=LOAD_MS)
    option = page.get_by_role("option", name=re.compile(r"^0: Natalia sold clips")).first
    for _ in range(6):  # a rerun that lands just after the click redraws the list closed: open it again
        page.locator('[data-testid="stMultiSelect"]').first.click()
        try:
            option.wait_for(
                timeout=LOAD_MS // 6
            )  # the prompt's first sentence, numbered as the span names it
            break
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    option.click()
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Run with and without steering").wait_for(timeout=LOAD_MS)
    page.mouse.wheel(0, 200)
    _shot(page, "run")
    assert page.get_by_role("button", name="Run with and without steering").is_enabled()


def test_a_finished_run_and_its_inspect_link_are_on_the_first_screen(app):
    url, page, _ = app
    page.goto(f"{url}/run")
    run = page.get_by_role("button", name="Run", exact=True)
    run.wait_for(timeout=LOAD_MS)
    run.click()
    done = page.get_by_text(re.compile(r"^Finished: ")).first
    done.wait_for(timeout=LOAD_MS)
    link = page.get_by_role("link", name="Inspect it")
    link.wait_for(timeout=LOAD_MS)
    page.evaluate("window.scrollTo(0, 0)")
    for element in (done, link):  # the answer to "did it work, and where is it?" needs no scroll
        box = element.bounding_box()
        assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= 720, box
    _shot(page, "run_finished")
