"""The page's script turns the view's verifier table back into rows (issue 52), in Chromium with
the network blocked: the details of a step judged by two verifiers list both by name and kind,
with their verdicts, scores and colours, as the Python twin (``o3viz.view.verifier_rows``) says."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

import o3viz
from o3viz.figures import VERDICT_COLORS
from o3viz.importers import import_trace
from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS
from o3viz.verify.verifiers import Judgement, Solution, add_verdicts, make_verifier
from o3viz.view import trace_view_data, verifier_rows

pytestmark = [pytest.mark.browser]

TEXT = (
    "<think>\nWe need x.\nx = 2 + 3 = 5.\nThen y = 4 * 3 = 13.\nSo x + y = 18.\n</think>\nThe answer is 18."
)


@dataclass
class Scored:
    """Every step ok with score 0.8, the last one wrong."""

    name: str = "scored"
    provenance: dict = field(default_factory=lambda: {"kind": "toy"})

    def verify(self, sol: Solution) -> Judgement:
        n = len(sol.steps)
        return Judgement(["ok"] * (n - 1) + ["wrong"], [0.8] * (n - 1) + [0.1])


def _rgb(hex_color: str) -> str:
    r, g, b = (int(hex_color[k : k + 2], 16) for k in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def test_the_page_lists_each_verifiers_verdict_from_the_table(tmp_path):
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    from playwright.sync_api import sync_playwright

    trace = import_trace(TEXT)
    add_verdicts(trace, make_verifier("claims"))
    add_verdicts(trace, Scored())
    expected = verifier_rows(trace_view_data(trace), "step:0:2")
    path = o3viz.save_view(o3viz.show(trace, widget=False, selected="step:0:2"), tmp_path / "v.html")
    local = ("file:", "about:", "data:")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(local) else r.abort())
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(path.as_uri())
        page.wait_for_selector("body[data-ready='1']", timeout=60_000)
        details = page.locator("#details")
        assert "Checks and verifiers" in details.inner_text()
        facts = details.locator(".fact").all_inner_texts()
        for row in expected:
            line = f"{row['verdict']} {row['name']}" + (f": {row['message']}" if row["message"] else "")
            assert line in facts, (line, facts)
        chips = details.locator(".fact .chip")
        colors = {c.inner_text(): c.evaluate("e => getComputedStyle(e).backgroundColor") for c in chips.all()}
        assert colors["wrong"] == _rgb(VERDICT_COLORS["fail"]) and colors["ok"] == _rgb(
            VERDICT_COLORS["pass"]
        )
        browser.close()
    assert not errors, errors
    assert {r["name"] for r in expected} == {"claims · claim checker", "scored · toy"}
