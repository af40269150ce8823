"""Real browser, real server: the Samples page. It samples a set on the embedded model through its
form (a prompt with a reference, N = 24, 24 tokens: a job with progress, then the set's tree),
clicks the set's first fork and lands in Compare at that fork, showing the two samples' step there.
The prompt ("Is 9 a prime number? Start your reply with Yes or No.", reference "no") forks at its
first step on the 135M model: most samples open "Yes" and every one of those is wrong, while the
ones that open "No" are right. Drawn with 30 seeds (0 to 29) on this machine, all 30 sets
forked, so the test does not lean on this machine's arithmetic. It then opens the tree of a set
grouped from the four GSM8K systems and its fork (2 right / 2 wrong after a shared first step).
Screenshots at 1280×720 of the embedded model's tree, of the GSM8K tree (and its fork selected),
of the twenty thinking texts' tree and of 64 synthetic samples of about 4k tokens go to
test-artifacts/, and an undecided split is firmed up with the embedded model through its button
(copied to docs/screenshots/ for docs/samples.md)."""

from __future__ import annotations

import os
import re

import pytest

from o3viz.cli.main import main
from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS, serve_app

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
    pytest.mark.model,  # the form samples on the embedded model
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium)"
    ),
]
LOAD_MS = 120_000
SAMPLE_MS = 600_000  # the model loads, then 3 samples decode on a shared, loaded CPU
LINES = (12, 352)  # the GSM8K records grouped into sets g:q1 and g:q2
PRIME = ("Is 9 a prime number? Start your reply with Yes or No.", "no")
ROPES = "Two ropes each burn for 60 minutes, unevenly. How do you measure 20 minutes?"


def _sets(shared_data, tmp_path) -> None:
    src = (shared_data / "gsm8k" / "gsm8k_example_model_solutions.jsonl").read_text().splitlines()
    path = tmp_path / "two.jsonl"
    path.write_text("".join(src[i - 1] + "\n" for i in LINES))
    assert main(["import", str(path), "--all", "--dataset", "g", "--workers", "0"]) == 0
    assert main(["sample", "--group-dataset", "g"]) == 0
    texts = sorted((shared_data / "traces" / "thinking_texts").glob("*.txt"))
    assert main(["sample", "--texts", *map(str, texts), "--question", ROPES, "--set", "ropes"]) == 0
    from o3viz.samples.sets import save_set
    from o3viz.store.store import Store
    from o3viz.testing.sample_sets import long_texts, text_sample

    save_set(Store(), "long", [text_sample(t) for t in long_texts(64, 200)])  # 64 samples of ~4k tokens
    from o3viz.testing.sample_sets import undecided_set

    save_set(Store(), "u", undecided_set(), {"temperature": 0.7, "max_new_tokens": 8})


def _shot(page, path) -> None:
    page.locator("[data-testid='stPlotlyChart']").first.wait_for(timeout=LOAD_MS)
    page.wait_for_timeout(1500)  # plotly's first draw
    page.screenshot(path=str(path))


def test_sample_a_set_then_open_a_fork_in_compare(shared_data, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    from o3viz.paths import REPO_ROOT

    _sets(shared_data, tmp_path)
    samples = tmp_path / "samples"
    samples.mkdir()
    env = {"O3VIZ_HOME": os.environ["O3VIZ_HOME"], "O3VIZ_SAMPLES": str(samples)}
    art = REPO_ROOT / "test-artifacts"
    art.mkdir(exist_ok=True)
    with sync_playwright() as p, serve_app(env) as url:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        # 1. a set sampled on the embedded model, through the form; its fork, then Compare there
        page.goto(f"{url}/samples?set=g:q1")
        page.get_by_text("Sample a new set").click()
        page.get_by_role("radio", name="A prompt").or_(
            page.get_by_role("button", name="A prompt")
        ).first.click()
        prompt = page.get_by_label("Prompt", exact=True)
        prompt.wait_for(timeout=LOAD_MS)
        for label, value in (
            ("Prompt", PRIME[0]), ("Reference answer", PRIME[1]), ("Samples N", "24"),
            ("Temperature", "0.70"), ("New tokens each", "24"), ("Set name (optional)", "prime"),
        ):  # fmt: skip
            box = page.get_by_label(label, exact=True)
            box.fill(value)
            box.press("Enter")
        page.get_by_text(
            '--reference "no" --n 24 --temperature 0.7 --max-new-tokens 24', exact=False
        ).wait_for(timeout=LOAD_MS)
        page.get_by_role("button", name="Sample 24").click()
        page.get_by_text("Set prime: 24 samples stored.").wait_for(timeout=SAMPLE_MS)
        expect(page.get_by_text("n = 24", exact=False).first).to_be_visible(timeout=LOAD_MS)
        page.wait_for_function("() => location.search.includes('set=prime')", timeout=LOAD_MS)
        fork = page.get_by_text("Fork 1 at the first step", exact=False).first
        fork.wait_for(timeout=LOAD_MS)
        _shot(page, art / "samples_embedded_fork.png")
        page.get_by_role("link", name="Compare the two sides").first.click()
        at = page.get_by_text("At the fork, step 0", exact=False)
        at.wait_for(timeout=LOAD_MS)
        assert "/compare" in page.url and "at=0" in page.url
        sides = re.findall(r"“([^”]*)”", at.inner_text())  # A: the fork's right side, B: its wrong one
        assert len(sides) == 2 and sides[0] != sides[1] and all(sides), at.inner_text()
        page.screenshot(path=str(art / "samples_embedded_compare_at_fork.png"))
        # 2. the GSM8K set's tree: its fork, both sides, then Compare at the fork
        page.goto(f"{url}/samples?set=g:q2")
        fork = page.get_by_text("Fork 1", exact=False).first
        fork.wait_for(timeout=LOAD_MS)
        box = fork.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 720, box  # on the first screen
        _shot(page, art / "samples_gsm8k.png")
        page.get_by_role("button", name="Select this fork").click()  # the node's samples, beside the tree
        resample = page.get_by_role("button", name="Resample from here")
        resample.wait_for(timeout=LOAD_MS)
        box = resample.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 720, box
        page.wait_for_timeout(1000)
        page.screenshot(path=str(art / "samples_gsm8k_node.png"))
        page.get_by_role("button", name="Forks").click()
        page.get_by_role("link", name="Compare the two sides").first.click()
        at = page.get_by_text("At the fork, step 1", exact=False)
        at.wait_for(timeout=LOAD_MS)
        assert "/compare" in page.url and "at=1" in page.url
        text = at.inner_text()
        assert "April" in text and " · B " in text
        page.screenshot(path=str(art / "samples_compare_at_fork.png"))
        # 3. the twenty thinking texts: one ungraded tree
        page.goto(f"{url}/samples?set=ropes")
        page.get_by_text("n = 20", exact=False).first.wait_for(timeout=LOAD_MS)
        _shot(page, art / "samples_thinking_texts.png")
        # 4. 64 samples of about 4k tokens: the collapsed chains are named
        page.goto(f"{url}/samples?set=long")
        page.get_by_text("n = 64", exact=False).first.wait_for(timeout=LOAD_MS)
        page.locator("text=shared steps").first.wait_for(timeout=LOAD_MS)
        _shot(page, art / "samples_long_64.png")
        # 5. an undecided split firmed up on the embedded model: 1 continuation a side
        page.goto(f"{url}/samples?set=u")
        firm = page.get_by_role("button", name="Firm up 1 undecided split")
        firm.wait_for(timeout=LOAD_MS)
        box = firm.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 720, box  # on the first screen
        _shot(page, art / "samples_firm_up.png")
        k = page.get_by_label("K a side")
        k.fill("1")
        k.press("Enter")
        page.get_by_text("draws 2 continuations", exact=False).wait_for(timeout=LOAD_MS)
        firm.click()
        page.get_by_text("2 continuations added after the sides of 1 undecided split", exact=False).wait_for(
            timeout=SAMPLE_MS
        )
        expect(page.get_by_text("n = 6", exact=False).first).to_be_visible(timeout=LOAD_MS)
        browser.close()
