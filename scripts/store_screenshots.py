"""Screenshots of the Library and Dataset pages at 1280x720 for the README, with the real
browser: ``python scripts/store_screenshots.py STORE_FOLDER OUT_FOLDER`` (a store filled with
``o3viz import FILE --all``; see the README's trace store section)."""

import sys

from playwright.sync_api import sync_playwright

from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS, serve_app

home, out = sys.argv[1], sys.argv[2]
h = int(sys.argv[3]) if len(sys.argv) > 3 else 720
with serve_app({"O3VIZ_HOME": home}) as url:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = b.new_page(viewport={"width": 1280, "height": h})
        page.goto(url)
        page.get_by_text("Trace library").first.wait_for(timeout=120_000)
        page.wait_for_timeout(3000)
        box = page.get_by_placeholder("words in the reasoning")
        box.fill("wait")
        box.press("Enter")
        page.wait_for_timeout(5000)
        page.screenshot(path=f"{out}/library.png")
        page.goto(f"{url}/dataset")
        page.locator(".js-plotly-plot").first.wait_for(timeout=120_000)
        page.wait_for_timeout(5000)
        page.screenshot(path=f"{out}/dataset.png")
        b.close()
