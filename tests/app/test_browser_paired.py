"""Real browser, real server: Compare's dataset mode on two GSM8K systems (6B fine-tuned and 6B with a
verifier, the first 40 questions) imported as two datasets. The first screen at 1280×720 shows the
accuracies, the 2×2 table and the flips, each equal to a count straight from the file; one click on
a flipped question opens that pair of traces in the two-trace Compare."""

from __future__ import annotations

import re

import pytest

from o3viz.cli.main import main
from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS, serve_app
from o3viz.testing.paired import expected, system_files

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium)"
    ),
]
N, A, B = 40, "6b_finetuning", "6b_verification"
LOAD_MS = 120_000


def _import(shared_data, tmp_path) -> dict:
    src = shared_data / "gsm8k" / "gsm8k_example_model_solutions.jsonl"
    if not src.exists():
        pytest.skip(f"{src} is absent")
    for path, name in zip(
        system_files(src, (A, B), tmp_path, limit=N), ("gsm8k-6b-ft", "gsm8k-6b-ver"), strict=True
    ):
        assert main(["import", str(path), "--all", "--dataset", name, "--workers", "0"]) == 0
    return expected(src, A, B, limit=N)


def _first_row_checkbox(page):
    """The selection box of the flip table's first row (the grid draws on a canvas)."""
    grid = page.locator("[data-testid='stDataFrame']").first
    box = grid.bounding_box()
    return box["x"] + 18, box["y"] + 35 + 17


def test_paired_view_matches_the_file_and_opens_a_flipped_pair(shared_data, tmp_path, monkeypatch):
    from playwright.sync_api import sync_playwright

    from o3viz.paths import REPO_ROOT
    from o3viz.store.query import Query
    from o3viz.store.store import Store

    want = _import(shared_data, tmp_path)
    samples = tmp_path / "samples"
    samples.mkdir()
    import os

    env = {"O3VIZ_HOME": os.environ["O3VIZ_HOME"], "O3VIZ_SAMPLES": str(samples)}
    art = REPO_ROOT / "test-artifacts"
    art.mkdir(exist_ok=True)
    flips = want["a_only"] + want["b_only"]
    with sync_playwright() as p, serve_app(env) as url:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(f"{url}/compare?mode=datasets&da=gsm8k-6b-ft&db=gsm8k-6b-ver&grade=source")
        page.get_by_text(f"Questions that flipped ({flips})").wait_for(timeout=LOAD_MS)
        # the page renders in pieces: wait for the last of the first screen, not only the first
        page.get_by_text(f"Accuracy B (n = {N})").wait_for(timeout=LOAD_MS)
        two_by_two = page.locator("table", has_text="A right").locator("td")  # not the flips' table
        two_by_two.first.wait_for(timeout=LOAD_MS)
        body = page.locator("[data-testid='stMain']")
        text = body.inner_text()
        assert f"{100 * want['accuracy_a']:.1f}%" in text and f"{100 * want['accuracy_b']:.1f}%" in text
        assert f"Accuracy A (n = {N})" in text
        cells = two_by_two.all_inner_texts()
        assert cells[:6] == ["A right", str(want["both"]), str(want["a_only"]),
                             "A wrong", str(want["b_only"]), str(want["neither"])]  # fmt: skip
        assert f"({flips} flips)" in text
        assert "fewer than 30" not in text  # 40 pairs: no "too small" sentence
        page.wait_for_timeout(1500)
        page.screenshot(path=str(art / "paired_compare.png"))
        # the first flipped question (A right, B wrong: listed first) opens in the two-trace Compare
        x, y = _first_row_checkbox(page)
        page.mouse.click(x, y)
        page.get_by_text("What changed").first.wait_for(timeout=LOAD_MS)
        # wait for both sides in the URL (the page writes them as it renders; reading at the first
        # one read "trace" without "b" under load)
        page.wait_for_function("() => /[?&]trace=/.test(location.search) && /[?&]b=/.test(location.search)",
                               timeout=LOAD_MS)  # fmt: skip
        opened = dict(re.findall(r"[?&](trace|b)=([^&]+)", page.url))
        assert "mode=datasets" not in page.url
        page.wait_for_timeout(1500)
        page.screenshot(path=str(art / "paired_compare_opened_pair.png"))
        browser.close()
    store = Store()
    question = want["flips"]["a_only"][0]
    key_a = [r["key"] for r in store.rows(Query(dataset=["gsm8k-6b-ft"], limit=100), ("key", "question"))
             if r["question"] == question[:300]]  # fmt: skip
    key_b = [r["key"] for r in store.rows(Query(dataset=["gsm8k-6b-ver"], limit=100), ("key", "question"))
             if r["question"] == question[:300]]  # fmt: skip
    assert opened == {"trace": key_a[0], "b": key_b[0]}
