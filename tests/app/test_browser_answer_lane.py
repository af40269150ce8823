"""The running-answer lane in a real browser (issue 53; Debian Chromium through Playwright,
1280×720): a 417-step DeepSeek-R1 MATH-500 import opens in Inspect on its episode overview with the
lane under it, and the lane's first-right mark sits at the step ``o3viz answers KEY --json``
reports as ``first_correct_step``. The mark is read from the plot's own data (the graph div's
``data``), waited for; the view may live in Inspect's iframe or in the page, so both are searched.
The screenshot goes to ``docs/screenshots/answer_lane.png``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from o3viz.paths import REPO_ROOT, data_dir
from o3viz.store.store import content_key
from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS, serve_app

R1 = data_dir() / "traces" / "topology_math500_deepseek_r1.jsonl"
RECORD = 9  # 417 steps, first right at step 283 of the reasoning, 5 flips: a long trace with turns
SHOTS = REPO_ROOT / "docs" / "screenshots"
LOAD_MS = 120_000  # the machine may be busy: generous waits, never a timing assertion

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
    pytest.mark.subprocess,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent"),
    pytest.mark.skipif(not R1.exists(), reason="../shared/data is absent"),
]

# The step id under the visible lane's first-right mark, or null while it is not drawn yet.
_FIRST_RIGHT = """() => {
    const gds = [...document.querySelectorAll('.js-plotly-plot')].filter(g => g.offsetParent !== null && g.data);
    for (const gd of gds) {
        const t = gd.data.find(t => t.meta === 'answer-lane:first_correct');
        if (t && gd.querySelector('.scatterlayer')) return {step: t.customdata[0], x: t.x[0]};
    }
    return null;
}"""


def _cli_first_correct(trace_file, home) -> str:
    """``first_correct_step`` as ``o3viz answers FILE --json`` reports it (on a copy: the CLI saves
    its stated answers into the file it reads)."""
    copy = trace_file.with_name("cli_copy.o3trace.json.gz")
    shutil.copyfile(trace_file, copy)
    out = subprocess.run(
        [sys.executable, "-m", "o3viz", "answers", str(copy), "--json"],
        env={**os.environ, "O3VIZ_HOME": str(home)},
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return json.loads(out.stdout.splitlines()[0])["first_correct_step"]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from o3viz.importers import import_trace

    samples = tmp_path_factory.mktemp("lane_samples")
    path = samples / "r1_math500_9.o3trace.json.gz"
    import_trace(R1, record=RECORD).save(path)
    home = tmp_path_factory.mktemp("lane_home")
    first = _cli_first_correct(path, tmp_path_factory.mktemp("cli_home"))
    with serve_app({"O3VIZ_SAMPLES": str(samples), "O3VIZ_HOME": str(home)}) as url:
        yield url, content_key(path.read_bytes()), first


@pytest.fixture(scope="module")
def page(app):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b.new_page(viewport={"width": 1280, "height": 720})
        b.close()


def _first_right(page) -> dict:
    """The mark, from whichever frame draws the view (Inspect's iframe, or the page itself)."""
    deadline_ms, waited = LOAD_MS, 0
    while waited <= deadline_ms:
        for frame in page.frames:
            try:
                found = frame.evaluate(_FIRST_RIGHT)
            except Exception:  # a frame navigating away: look again
                found = None
            if found:
                return found
        page.wait_for_timeout(500)
        waited += 500
    raise AssertionError("no lane with a first-right mark was drawn in Inspect")


def test_the_first_right_mark_sits_at_the_step_the_cli_reports(app, page):
    url, key, first = app
    assert first == "step:0:283", first  # the CLI's own answer on this trace (a guard on the data)
    page.goto(f"{url}/inspect?trace={key}")
    mark = _first_right(page)
    assert mark["step"] == first
    page.wait_for_timeout(800)  # let the last draw settle before the picture
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "answer_lane.png"))
