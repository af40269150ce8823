"""Real browser, real server (issue 35, finding 3): the Dataset page over an imported GSM8K dataset
draws its Outliers table instead of crashing on "Duplicate column names found"."""

from __future__ import annotations

import pytest

from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS, serve_app

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium)"
    ),
]


def test_the_dataset_page_of_an_imported_gsm8k_dataset_shows_its_outliers(tmp_path, shared_data):
    from playwright.sync_api import sync_playwright

    from o3viz.importers import import_trace
    from o3viz.store.store import Store
    from o3viz.testing.synthetic import make_trace

    src = shared_data / "gsm8k" / "gsm8k_example_model_solutions.jsonl"
    home, samples = tmp_path / "home", tmp_path / "samples"
    samples.mkdir()
    store = Store(home)
    for i in range(6):
        for system in ("6b_finetuning", "175b_verification"):
            t = import_trace(
                src, record=i, text_field=f"{system}.solution", reference_field="ground_truth", claims=False
            )
            store.add(t, source="import", dataset="gsm8k", record=i + 1, name=f"{system} {i}")
    store.add(make_trace(400, seed=1), source="import", dataset="gsm8k", name="very long")  # an outlier
    with serve_app({"O3VIZ_HOME": str(home), "O3VIZ_SAMPLES": str(samples)}) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(url + "/dataset")
        page.get_by_text("Outliers: the traces furthest from the rest").wait_for(timeout=120_000)
        page.get_by_role("button", name="Inspect the selected outlier").wait_for(timeout=60_000)
        assert page.get_by_text("Duplicate column names").count() == 0
        assert page.locator("[data-testid='stException']").count() == 0
        browser.close()
