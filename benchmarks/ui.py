"""UI speed and payload of Inspect on realistic traces, put in the store the way the app gets them:
a temporary ``O3VIZ_HOME`` (``Store.add``), with R1-style imports of about 200, 2,000 and 5,000
sentences built from real DeepSeek-R1 MATH-500 sentences (``o3viz.testing.long_r1``) and a captured
run from ``sample_traces/``.

For each trace it prints: the Inspect first render through AppTest (server side) and the payload
the page sends; then in headless Chromium (``/usr/bin/chromium`` through Playwright, never a
browser download) against ``streamlit run``, the time from opening ``/inspect?trace=KEY`` until
the map is drawn, the marks the map draws, and, on a long trace, the time to zoom into an episode.
Each time and mark count is also printed as a ratio against the 200-step trace measured in the
same run. It fails loudly when a page does not show the trace it was asked for. Streamlit and
Playwright are imported only inside ``run``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CAPTURED = ROOT / "sample_traces" / "solve_math_gsm8k.o3trace.json.gz"
MAP_TITLES = ("What happened", "Where did the reasoning turn?")
_MAP_DRAWN = """(titles) => [...document.querySelectorAll('.js-plotly-plot')].some(gd =>
    titles.some(t => (gd.querySelector('.gtitle')?.textContent || '').startsWith(t))
    && gd.querySelector('.scatterlayer .point, .barlayer .point'))"""
_MARKS = """(titles) => { const gd = [...document.querySelectorAll('.js-plotly-plot')].find(g =>
    titles.some(t => (g.querySelector('.gtitle')?.textContent || '').startsWith(t)));
    return gd.querySelectorAll('.point, .textpoint, .js-line').length; }"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--steps", type=int, nargs="+", default=[200, 2000, 5000], help="R1-style import sizes")
    p.add_argument("--no-browser", action="store_true", help="AppTest only (no Chromium)")


def _payload(at) -> int:
    """Bytes of every element proto on the page (what the browser receives, before compression)."""
    total, stack = 0, [at._tree]
    while stack:
        node = stack.pop()
        proto = getattr(node, "proto", None)
        if proto is not None and hasattr(proto, "ByteSize"):
            total += proto.ByteSize()
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            stack.extend(children.values())
    return total


def _apptest(key: str, steps: int) -> tuple[float, int]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()  # the library page (not timed)
    at.switch_page("pages/inspect.py")
    at.query_params["trace"] = key
    t0 = time.perf_counter()
    at.run()
    seconds = time.perf_counter() - t0
    if at.exception:
        raise RuntimeError(f"Inspect raised: {at.exception[0].value}")
    shown = " ".join(c.value for c in at.caption)
    if at.session_state["inspect_key"] != key or f"{steps} steps" not in shown:
        raise RuntimeError(f"Inspect did not show trace {key} ({steps} steps); it showed: {shown[:200]}")
    return seconds, _payload(at)


def _browser(url: str, page, key: str, steps: int) -> dict[str, float]:
    t0 = time.perf_counter()
    page.goto(f"{url}/inspect?trace={key}")
    page.wait_for_function(_MAP_DRAWN, arg=list(MAP_TITLES), timeout=300_000)
    out = {"map_s": time.perf_counter() - t0, "marks": page.evaluate(_MARKS, list(MAP_TITLES))}
    if f"{steps} steps" not in page.locator("body").inner_text():
        raise RuntimeError(f"Chromium: Inspect did not show trace {key} ({steps} steps)")
    bars = page.evaluate("() => document.querySelectorAll('.barlayer .point').length")
    if bars:  # the overview: zoom into an episode by clicking its bar
        box = page.locator(".barlayer .point").nth(min(3, bars - 1)).bounding_box()
        t0 = time.perf_counter()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.get_by_text("Whole trace").first.wait_for(timeout=300_000)
        page.wait_for_function(
            "() => [...document.querySelectorAll('.gtitle')].some(t => t.textContent.startsWith('Episode '))"
        )
        out["zoom_s"] = time.perf_counter() - t0
    return out


def _store_traces(home: Path, sizes: list[int]) -> dict[str, tuple[str, int]]:
    from o3viz.store.store import Store
    from o3viz.testing.long_r1 import long_r1_trace
    from o3viz.trace import load_trace

    store, out = Store(home), {}
    for n in sizes:
        trace = long_r1_trace(n)
        out[f"r1_{n}"] = (store.add(trace, source="import", name=f"r1_style_{n}.txt"), len(trace.final.steps))
    captured = load_trace(CAPTURED)
    out["captured"] = (store.add_file(CAPTURED, source="run"), sum(len(r.steps) for r in captured.rounds))
    return out


def run(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as empty:
        os.environ["O3VIZ_HOME"], os.environ["O3VIZ_SAMPLES"] = home, empty  # only these traces
        traces = _store_traces(Path(home), args.steps)
        base = f"r1_{args.steps[0]}"
        _apptest(*traces[base])  # imports, plotly validators and streamlit's first run are not timed
        server = {}
        for name, (key, steps) in traces.items():
            server[name] = _apptest(key, steps)
            print(f"{name}_steps: {steps}")
            print(f"{name}_apptest_first_render_s: {server[name][0]:.3f}")
            print(f"{name}_payload_mb: {server[name][1] / 1e6:.3f}")
        for name in traces:
            print(f"{name}_apptest_ratio_vs_{base}: {server[name][0] / server[base][0]:.2f}")
        if not args.no_browser:
            _chromium(traces, base)
    return 0


def _chromium(traces: dict[str, tuple[str, int]], base: str) -> None:
    from playwright.sync_api import sync_playwright

    from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS, serve_app

    with serve_app({}) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        _browser(url, page, *traces[base])  # the server's first run (imports, caches) is not timed
        got = {}
        for name, (key, steps) in traces.items():
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            got[name] = _browser(url, page, key, steps)
            page.close()
            for k, v in got[name].items():
                print(f"{name}_chromium_{k}: {v:.3f}" if k != "marks" else f"{name}_chromium_marks: {v}")
        for name, m in got.items():
            print(f"{name}_chromium_map_ratio_vs_{base}: {m['map_s'] / got[base]['map_s']:.2f}")
            print(f"{name}_chromium_marks_ratio_vs_{base}: {m['marks'] / got[base]['marks']:.2f}")
        browser.close()
