"""The real-browser test of the app: Debian's Chromium driven by Playwright against
``streamlit run app.py``, at 1280×720 and 1440×900, over every page and seven real sample traces
(a short run, a 3-round solve, an R1 import, the 2k-token prompt, a compressed run, and one prompt
with DAA off and allocating for Compare) plus a synthetic trace full of hostile text.

It checks what a first-time user would stumble on: no page shows "DeltaGenerator" or a traceback;
the final answer's label is inside the reasoning map's plotted area by default; clicking a step
puts its details inside the viewport; the selection survives a page switch; a URL with a trace and
a node opens that node; hostile text renders as text. Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from o3viz.paths import REPO_ROOT
from o3viz.store.store import content_key
from o3viz.testing.browser import CHROMIUM
from o3viz.testing.browser import CHROMIUM_ARGS as ARGS
from o3viz.testing.synthetic import HOSTILE, make_trace

ROOT = REPO_ROOT

ARTIFACTS = ROOT / "test-artifacts"
SAMPLES = {
    "short": "humaneval_function.o3trace.json.gz",
    "solve": "solve_code_humaneval.o3trace.json.gz",
    "r1": "import_r1_math500_3.o3trace.json.gz",
    "prompt2k": "long_prompt_2k.o3trace.json.gz",
    "compress": "long_redundant_compress.o3trace.json.gz",
    "gsm8k": "gsm8k_word_problem.o3trace.json.gz",  # the same prompt with DAA off and allocating:
    "gsm8k_daa": "gsm8k_word_problem_daa_allocate.o3trace.json.gz",  # the pair shown on Compare
}
VIEWPORTS = ((1280, 720), (1440, 900))
LOAD_MS = 120_000  # the machine may be busy: generous waits, never a timing assertion

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium; .ci/run does)"
    ),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("browser")
    samples = tmp / "samples"
    samples.mkdir()
    keys = {}
    for tag, name in SAMPLES.items():
        shutil.copy(ROOT / "sample_traces" / name, samples / name)
        keys[tag] = content_key((samples / name).read_bytes())
    # gzipped, as the store keeps it: the store keys a trace by its stored (gzip) bytes
    make_trace(9, seed=3, hostile=True).save(samples / "hostile.o3trace.json.gz")
    keys["hostile"] = content_key((samples / "hostile.o3trace.json.gz").read_bytes())
    upload = tmp / "upload" / "longer_run.o3trace.json.gz"
    upload.parent.mkdir()
    make_trace(24, seed=5, rounds=2, daa_mode="observe").save(upload)
    port = _free_port()
    # a store of its own: the home store may already hold the upload (then it says "already in the library")
    env = {**os.environ, "O3VIZ_SAMPLES": str(samples), "O3VIZ_HOME": str(tmp / "home")}
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)]
    cmd += ["--server.headless", "true", "--server.address", "127.0.0.1"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).status == 200:
                    break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("streamlit did not start: " + proc.stderr.read1(4000).decode(errors="replace"))
        yield url, keys, upload
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


def _no_errors(page, where: str) -> None:
    text = page.locator("body").inner_text()
    for bad in ("DeltaGenerator", "Traceback", "StreamlitAPIException"):
        assert bad not in text, f"{where}: the page shows {bad!r}"


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.wait_for_timeout(600)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


# Issue 39: Inspect's map, outline and details live in its view component (in the page, issue 52).
VIEW = ".o3v-map"


def _view(page):
    return page  # (the view is in the page: no frame of its own)


def _details(page):
    return page.locator(VIEW).locator("#details .dtitle")


def _wait_map(page) -> None:
    frame = page.locator(VIEW)
    frame.get_by_text("What happened").first.wait_for(timeout=LOAD_MS)
    frame.locator(".js-plotly-plot g.textpoint text").first.wait_for(timeout=LOAD_MS)


def _answer_label_inside_plot(page) -> bool:
    """The final answer's label (SVG text) lies within the map's plotted area (its drag layer)."""
    return _view(page).evaluate(
        """() => {
        const gd = document.querySelector('.o3v-map .js-plotly-plot');
        const area = gd.querySelector('.nsewdrag').getBoundingClientRect();
        const label = gd.querySelector('g.textpoint text').getBoundingClientRect();
        return label.width > 0 && label.left >= area.left - 1 && label.right <= area.right + 1
            && label.top >= area.top - 1 && label.bottom <= area.bottom + 1;
    }"""
    )


def _click_step(page, nth: int) -> None:
    """Click the ``nth`` step marker on the map (SVG points, clicked at their pixel position)."""
    xy = _view(page).evaluate(
        """(nth) => {
        const gd = document.querySelector('.o3v-map .js-plotly-plot');
        const L = gd._fullLayout, r = gd.getBoundingClientRect();
        const pts = [];
        gd._fullData.forEach(t => { if (String(t.name).startsWith('step:'))
            t.x.forEach((x, i) => pts.push([x, t.y[i]])); });
        pts.sort((a, b) => a[0] - b[0]);
        const [x, y] = pts[Math.min(nth, pts.length - 1)];
        return [r.left + L._size.l + L.xaxis.l2p(x), r.top + L._size.t + L.yaxis.l2p(y)];
    }""",
        nth,
    )
    x, y = xy  # (the view's pixels are the page's)
    page.mouse.move(x, y)
    page.wait_for_timeout(300)
    page.mouse.click(x, y)


def _details_in_viewport(page, height: int) -> bool:
    box = page.locator(VIEW).locator("#details").bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height + 1


def _nav(page, name: str, wait_text: str) -> None:
    page.get_by_role("link", name=name).first.click()
    page.get_by_text(wait_text).first.wait_for(timeout=LOAD_MS)


@pytest.mark.parametrize(("width", "height"), VIEWPORTS, ids=[f"{w}x{h}" for w, h in VIEWPORTS])
def test_every_page_and_sample_reads_at_a_glance(server, browser, width, height):
    """The full walk at 1280×720; at 1440×900 the map checks, selection and Compare (kept short)."""
    url, keys, _ = server
    tag = f"{width}x{height}"
    full = (width, height) == VIEWPORTS[0]
    page = browser.new_page(viewport={"width": width, "height": height})
    for name in ("solve", "short", "r1", "prompt2k") if full else ("solve", "r1"):
        page.goto(f"{url}/inspect?trace={keys[name]}")
        _wait_map(page)
        _no_errors(page, f"inspect {name}")
        assert _answer_label_inside_plot(page), f"{name}: the answer's label is outside the map"
        _shot(page, f"inspect_map_{name}_{tag}")

    # A shared link opens that trace at that node, with its details beside the map.
    page.goto(f"{url}/inspect?trace={keys['r1']}&node=step:0:3")
    _wait_map(page)
    _details(page).get_by_text("Step 3 of round").first.wait_for(timeout=LOAD_MS)

    # Clicking a step opens its details, in view.
    _click_step(page, 5)
    _details(page).get_by_text("Step 5 of round").first.wait_for(timeout=LOAD_MS)
    assert _details_in_viewport(page, height), "the details panel is not inside the viewport"
    page.wait_for_function(
        "() => decodeURIComponent(location.search).includes('node=step:0:5')", timeout=30_000
    )
    _shot(page, f"inspect_selected_{tag}")

    # Leaving and coming back keeps the trace and the selection.
    _nav(page, "Compare", "What changed")
    page.locator(".js-plotly-plot").nth(1).wait_for(timeout=LOAD_MS)
    _no_errors(page, "compare")
    page.get_by_role("link", name="Inspect").first.click()
    _details(page).get_by_text("Step 5 of round").first.wait_for(timeout=LOAD_MS)

    # A Compare link opens that pair: the same prompt with DAA off (A) and allocating (B).
    page.goto(f"{url}/compare?trace={keys['gsm8k']}&b={keys['gsm8k_daa']}")
    page.get_by_text("What changed").first.wait_for(timeout=LOAD_MS)
    page.locator(".js-plotly-plot").nth(1).wait_for(timeout=LOAD_MS)
    _no_errors(page, "compare")
    _shot(page, f"compare_{tag}")
    if not full:
        page.close()
        return

    for view, wait_text, name in (
        ("Attention", "Where each step", "prompt2k"),
        ("Compression", "Which segments became pointers", "compress"),
        ("Verification", "claims highlighted", "r1"),
        ("Tokens", "Colour by", "short"),
    ):
        page.goto(f"{url}/inspect?trace={keys[name]}&view={view}&node=step:0:2")
        # (Attention's figures are drawn in the browser, by a view of their own)
        where = page.locator(".o3v-fig").first if view == "Attention" else page
        where.get_by_text(wait_text).first.wait_for(timeout=LOAD_MS)
        page.wait_for_timeout(800)
        _no_errors(page, f"{view} {name}")
        _shot(page, f"inspect_{view.lower()}_{name}_{tag}")

    for name, wait_text in (("Library", "Trace library"), ("Run", "Task source"), ("Labels", "Labels ·")):
        _nav(page, name, wait_text)
        page.wait_for_timeout(800)
        _no_errors(page, name)
        _shot(page, f"{name.lower()}_{tag}")
    page.close()


def test_upload_then_hostile_text_renders_as_text(server, browser):
    url, keys, upload = server
    dialogs: list[str] = []
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(url)
    page.get_by_text("Trace library").first.wait_for(timeout=LOAD_MS)
    page.set_input_files("input[type=file]", str(upload))
    page.get_by_text("Added longer_run.o3trace.json.gz").wait_for(timeout=LOAD_MS)
    page.goto(f"{url}/inspect?trace={keys['hostile']}&node=step:0:0")
    _wait_map(page)
    # The hostile sample's first step holds a <script> tag: it must show as text.
    page.locator(VIEW).locator("#details").get_by_text(HOSTILE[0], exact=False).first.wait_for(
        timeout=LOAD_MS
    )
    page.goto(f"{url}/inspect?trace={keys['hostile']}&view=Tokens")
    page.locator("span.tok").first.wait_for(timeout=LOAD_MS)
    assert page.locator("span.tok", has_text=HOSTILE[0]).count() > 0
    assert dialogs == [], f"a dialog fired: {dialogs}"
    assert page.locator("img[src=x]").count() == 0
    assert page.locator("script:text('alert(1)')").count() == 0
    page.close()
