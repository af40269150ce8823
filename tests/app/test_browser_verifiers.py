"""Issue 42 in Debian Chromium at 1280×720: a stored trace carries the verdicts of two real
verifiers (the claim checker and a tiny random tag-shape PRM, run on it through the library as
``o3viz verify`` runs them); Inspect's details list both verdicts on a step, and the "First wrong
step by" switch moves the map between them: the checks lane draws the chosen verifier's marks and
names it, and the first-wrong ring moves to that verifier's first wrong step. Read from plotly's
``gd.data`` in the page; screenshots go to ``test-artifacts/``."""

from __future__ import annotations

import pytest

from o3viz.paths import REPO_ROOT
from o3viz.store.store import content_key
from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS, serve_app

ARTIFACTS = REPO_ROOT / "test-artifacts"
LOAD_MS = 120_000  # the machine may be busy: generous waits, never a timing assertion
TEXT = (
    "<think>\nWe need the cost of 3 boxes of 4 pens.\nEach box has 4 pens, so 3 boxes have 4 * 3 = 13 "
    "pens.\nWait, let me check: 4 + 4 + 4 = 12.\nEach pen costs 2 dollars.\nSo the cost is 12 * 2 = 24."
    "\n</think>\nThe answer is 24."
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.model,
    pytest.mark.server,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent"),
]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from o3viz.importers import import_trace
    from o3viz.testing.prm import save_tiny_prm
    from o3viz.verify.verifiers import add_verdicts, make_verifier

    tmp = tmp_path_factory.mktemp("verifiers")
    trace = import_trace(TEXT)  # the built-in claim checks too: the map's default lane
    add_verdicts(trace, make_verifier("claims"))
    prm = make_verifier("prm", model=str(save_tiny_prm(tmp / "tag", "tag")), device="cpu")
    add_verdicts(trace, prm)
    claims, tiny = trace.final.verdicts
    assert claims.first_wrong is not None and tiny.first_wrong is not None
    assert claims.first_wrong != tiny.first_wrong  # two verifiers that disagree on where it went wrong
    samples = tmp / "samples"
    samples.mkdir()
    path = samples / "two_verifiers.o3trace.json.gz"
    trace.save(path)
    home = tmp_path_factory.mktemp("home")
    with serve_app({"O3VIZ_SAMPLES": str(samples), "O3VIZ_HOME": str(home)}) as url:
        yield url, content_key(path.read_bytes()), trace


@pytest.fixture
def page(app):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = b.new_page(viewport={"width": 1280, "height": 720})
        yield page
        b.close()


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.wait_for_timeout(600)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def _view(page):
    return page  # (the view is in the page: no frame of its own)


def _map_state(page) -> dict:
    """The checks lane's marks by verifier, the ring's x, the checks lane's tick and every step's x,
    read from plotly's ``gd.data`` in the component."""
    return _view(page).evaluate(
        """() => {
          const gd = document.querySelector('#map'), out = {marks: {}, ring: null, steps: {}, url: document.querySelector('.o3v-map').dataset.url};
          for (const t of gd._fullData) {  // (x decoded from plotly's typed-array JSON)
            const meta = t.meta || '';
            if (meta.startsWith('verdicts:'))
              Array.from(t.customdata).forEach((id) => { out.marks[id] = t.name; });
            if (t.name === 'first wrong step') out.ring = t.x[0];
            if ((t.name || '').startsWith('step: '))
              Array.from(t.customdata).forEach((id, i) => { out.steps[id] = t.x[i]; });
          }
          out.ticks = gd.layout.yaxis.ticktext;
          return out;
        }"""
    )


def _switch(page, name: str, before: str) -> dict:
    page.locator("[data-testid='stButtonGroup'] button", has_text=name).first.click()
    page.wait_for_function(
        "u => { const b = document.querySelector('.o3v-map'); return b && b.dataset.url && b.dataset.url !== u; }",
        arg=before,
        timeout=LOAD_MS,
    )
    _view(page).locator("#map .scatterlayer .point").first.wait_for(timeout=LOAD_MS)
    return _map_state(page)


def test_two_verifiers_show_in_the_details_and_the_switch_moves_the_map(app, page):
    url, key, trace = app
    claims, tiny = trace.final.verdicts
    step = f"step:0:{trace.final.steps[claims.first_wrong].index}"
    page.goto(f"{url}/inspect?trace={key}&node={step}")
    frame = page.locator(".o3v-map")
    page.locator(".o3v-map[data-ready='1']").wait_for(timeout=LOAD_MS)
    frame.locator("#map .scatterlayer .point").first.wait_for(timeout=LOAD_MS)
    # the details beside the map list both verifiers' verdicts on the selected step
    details = frame.locator("#details")
    details.get_by_text(tiny.verifier).wait_for(timeout=LOAD_MS)
    text = details.inner_text()
    k = claims.first_wrong
    assert "claims · claim checker" in text and f"{tiny.verifier} · prm" in text
    assert "Checks and verifiers" in text  # the heading says the list holds verifiers too
    assert text.count(claims.verdicts[k]) >= 1 and f"score {tiny.scores[k]:.2f}" in text
    default = _map_state(page)
    assert default["marks"] == {}  # no verifier chosen: the lane draws the checks, as before
    assert any(t.endswith(" checks") for t in default["ticks"])
    _shot(page, "inspect_verifiers_checks")

    by_prm = _switch(page, tiny.verifier, default["url"])
    ids = [f"step:0:{s.index}" for s in trace.final.steps]
    assert by_prm["marks"] == {
        i: f"{tiny.verifier}: {v}" for i, v in zip(ids, tiny.verdicts, strict=True) if v
    }
    assert any(t.endswith(f"checks: {tiny.verifier}") for t in by_prm["ticks"])
    assert by_prm["ring"] == by_prm["steps"][ids[tiny.first_wrong]]
    _shot(page, "inspect_verifiers_prm")

    by_claims = _switch(page, "claims", by_prm["url"])
    assert by_claims["marks"] == {i: f"claims: {v}" for i, v in zip(ids, claims.verdicts, strict=True) if v}
    assert by_claims["marks"] != by_prm["marks"]
    assert (
        by_claims["ring"] == by_claims["steps"][ids[claims.first_wrong]] != by_prm["ring"]
    )  # the ring moved
    _shot(page, "inspect_verifiers_claims")
