"""Trust, in a real browser (Debian's Chromium through Playwright, ``streamlit run app.py``, 1280×720):
two traces with one name keep their own key and step count through every Inspect tab; an
imported trace read by the embedded model says so on Attention and Tokens; R1 pilot record 5
shows both gradings and their disagreement; the 3-round solve's header says "expected 18"; the
Dataset page renders one trace. Screenshots of Inspect, Compare and Dataset go to
``test-artifacts/trust_*.png``."""

from __future__ import annotations

import re
import shutil

import pytest

from o3viz.analysis.provenance import disagreement_line
from o3viz.app.library import load_file, store_entry
from o3viz.paths import REPO_ROOT, data_dir
from o3viz.store.store import Store
from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS, serve_app

ARTIFACTS = REPO_ROOT / "test-artifacts"
LOAD_MS = 120_000
TABS = (
    "Importance",
    "Attention",
    "Compression",
    "Verification",
    "Tokens",
    "Inside the layers",
    "Reasoning map",
)
THINKING = data_dir() / "traces" / "thinking_texts"
PILOT = data_dir() / "traces" / "topology_pilot_math500_r1.jsonl"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium)"
    ),
    pytest.mark.skipif(not PILOT.exists(), reason="../shared/data is absent"),
]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from playwright.sync_api import sync_playwright

    from o3viz.importers import import_trace

    tmp = tmp_path_factory.mktemp("trust")
    samples, home = tmp / "samples", tmp / "home"
    samples.mkdir()
    for name in ("import_r1_math500_3", "solve_math_gsm8k", "gsm8k_word_problem"):
        shutil.copy(REPO_ROOT / "sample_traces" / f"{name}.o3trace.json.gz", samples)
    store = Store(home)
    keys = {}
    for tag, file in (("qwq", "QwQ-32b.txt"), ("tng", "TNG_DS_r1t.txt")):  # two uploads named thinking.txt
        entry = load_file("thinking.txt", (THINKING / file).read_bytes())
        keys[tag] = (store_entry(store, entry), len(entry.trace.final.steps))
    pilot5 = import_trace(PILOT, record=4)
    keys["pilot5"] = (store.add(pilot5, source="import", dataset="pilot", name="pilot record 5", record=5), 0)
    store.close()
    with serve_app({"O3VIZ_HOME": str(home), "O3VIZ_SAMPLES": str(samples)}) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        yield url, page, keys
        browser.close()


def _totals(page) -> str:
    loc = page.get_by_text("Totals over all rounds").first
    loc.wait_for(timeout=LOAD_MS)
    return loc.inner_text()


def _open(page, url: str) -> None:
    page.goto(url)
    _totals(page)
    page.wait_for_timeout(1500)


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.wait_for_timeout(800)
    page.screenshot(path=str(ARTIFACTS / f"trust_{name}.png"))


def test_two_same_name_traces_keep_their_own_key_and_step_count_through_every_tab(app):
    url, page, keys = app
    for key, steps in (keys["qwq"], keys["tng"]):  # one session, each opened by URL in turn
        _open(page, f"{url}/inspect?trace={key}")
        shown = [t for t in TABS if page.get_by_role("tab", name=t).count()]  # tabs without data are hidden
        assert {"Reasoning map", "Attention", "Tokens"} <= set(shown), shown
        for tab in shown:
            page.get_by_role("tab", name=tab).click()
            page.wait_for_timeout(1500)
            assert f"trace={key}" in page.url, f"{tab}: the URL's key changed to {page.url}"
            assert f"{steps} steps" in _totals(page), f"{tab}: another trace is shown"
    _shot(page, "inspect_same_name")


def test_the_proxy_label_shows_on_attention_and_tokens_of_an_imported_trace(app):
    url, page, _ = app
    from o3viz.store.store import content_key

    key = content_key((REPO_ROOT / "sample_traces" / "import_r1_math500_3.o3trace.json.gz").read_bytes())
    for tab in ("Attention", "Tokens"):
        _open(page, f"{url}/inspect?trace={key}&view={tab}")
        label = page.get_by_text(re.compile("read by SmolLM2-135M.*not by the model that wrote this trace"))
        # (the closed Attention tab keeps its note too, hidden: the open tab's is the one shown)
        label.filter(visible=True).first.wait_for(timeout=LOAD_MS)
        if tab == "Attention":
            _shot(page, "inspect_attention_proxy")


def test_both_gradings_and_their_disagreement_show_on_r1_pilot_record_5(app):
    url, page, keys = app
    _open(page, f"{url}/inspect?trace={keys['pilot5'][0]}")
    body = page.locator("body")
    page.get_by_text("Source's grade: wrong").first.wait_for(timeout=LOAD_MS)
    page.get_by_text("o3viz's answer check: correct").first.wait_for(timeout=LOAD_MS)
    page.get_by_text(disagreement_line(0, 1)).first.wait_for(timeout=LOAD_MS)
    assert "0.21" in body.inner_text()
    _shot(page, "inspect_pilot5_gradings")


def test_the_3_round_solve_header_says_expected_18_and_stopped_at_the_limit(app):
    url, page, _ = app
    from o3viz.store.store import content_key

    key = content_key((REPO_ROOT / "sample_traces" / "solve_math_gsm8k.o3trace.json.gz").read_bytes())
    _open(page, f"{url}/inspect?trace={key}")
    page.get_by_text(re.compile(r"expected 18")).first.wait_for(timeout=LOAD_MS)
    page.get_by_text("stopped at the limit (200 tokens)").first.wait_for(timeout=LOAD_MS)
    _shot(page, "inspect_solve_expected")


def test_the_dataset_page_renders_one_trace(app):
    url, page, _ = app
    page.goto(f"{url}/dataset")
    page.get_by_text("Dataset").first.wait_for(timeout=LOAD_MS)
    page.get_by_text("Graded by").first.wait_for(timeout=LOAD_MS)
    page.get_by_text(re.compile(r"Rule: robust z-score")).first.wait_for(timeout=LOAD_MS)
    text = page.locator("body").inner_text()
    assert "Encountered all NA values" not in text and "Traceback" not in text
    assert "1 traces" not in text
    _shot(page, "dataset_one_trace")


def test_compare_refuses_a_equal_b_and_warns_on_different_questions(app):
    url, page, keys = app
    a, b = keys["qwq"][0], keys["pilot5"][0]
    page.goto(f"{url}/compare?trace={a}&b={a}")
    page.get_by_text("Trace B is the same trace as A").first.wait_for(timeout=LOAD_MS)
    page.goto(f"{url}/compare?trace={a}&b={b}")
    page.get_by_text("A and B answer different questions").first.wait_for(timeout=LOAD_MS)
    page.wait_for_timeout(2000)
    _shot(page, "compare_different_questions")
