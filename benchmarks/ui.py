"""The app beside the standalone view in Chromium, action by action.

Inspect's first map, a click on a step until the details change, a tab switch, an episode zoom
and the Library's first rows, each against the same action in the standalone view
(``save_view``) of the same trace, on R1-style imports of about 200 and 2,000 sentences built from real DeepSeek-R1 MATH-500 sentences (``o3viz.testing.long_r1``) and
a captured run with attention from ``sample_traces/``, all put in a temporary ``O3VIZ_HOME`` the
way the app gets them.

First, for each trace, the Inspect first render through AppTest (server side) and the payload the
page sends. Then in headless Chromium (``/usr/bin/chromium`` through Playwright, never a browser
download), at 1280×720, against ``streamlit run`` and against the standalone page opened with
``file://`` in the same browser: the first map (median of 3 loads; the view may sit in a component
iframe, so every frame is searched), the marks it draws, opening episode 3 from the outline until
the map shows its steps (a long trace), Next ▶ until the next one shows, whether Next, Next, Prev
clicked 100 ms apart end where they lead (``no_click_lost``), a click on a step in the outline
until the details panel shows it (median of 3), a switch to the Attention tab until its first figure
is drawn (where both have one: right after those clicks, back to the map until it shows,
``tab_back_to_map``, and again on a fresh load after reading the map for ``READ_MS``,
``tab_switch_after_reading``; each also timed from the click's event in the page until the
first figure appears, or the map shows again, ``*_drawn``, without Playwright's checks and polling), the map again after going to the Library and back by the app's own navigation
(``first_map_in_app``: no page load, the way a reader returns to a trace), the app's floor for any
page (``page_floor``: the navigation's start until the page's first element with text, Streamlit's own load), the first map on a Streamlit page that holds
nothing but Inspect's view component on the same view data (``component_floor_first_map``: what no
Streamlit page hosting the view can beat; ``first_map_vs_component_floor`` is what Inspect adds to
it), and the Library's first table rows (beside the standalone view's first outline
rows: the view has no library). Each app figure is printed as a ratio to the standalone one
(``_vs_standalone``), and each trace's first map and marks as a ratio to the ~200-step trace's. It
fails loudly when a page does not show the trace it was asked for. Streamlit and Playwright are
imported only inside ``run``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CAPTURED = ROOT / "sample_traces" / "solve_math_gsm8k.o3trace.json.gz"
MAP_TITLES = ("What happened", "Where did the reasoning turn?")
# Is the trace view's map drawn in this frame? Inspect's component and the standalone view share
# one script (o3viz/notebook/static/view.js): the overview (#overview, a long trace) or the map
# (#map); the Inspect of before the component drew titled Streamlit charts. Returns the marks drawn
# in the visible map, or 0.
_MAP_MARKS = """(titles) => {
  const shown = (e) => e && e.offsetParent !== null;
  const view = [document.querySelector('#overview'), document.querySelector('#map')].find(
    (e) => shown(e) && e.querySelector('.scatterlayer .point, .barlayer .point'));
  const gd = view || [...document.querySelectorAll('.js-plotly-plot')].find((g) =>
    titles.some((t) => (g.querySelector('.gtitle')?.textContent || '').startsWith(t))
    && g.querySelector('.scatterlayer .point, .barlayer .point'));
  return gd ? gd.querySelectorAll('.point, .textpoint, .js-line').length : 0;
}"""
COUNTS = ("marks", "no_click_lost")
MAP_TAB, ALONE_TAB = {"map": "Reasoning map"}, {"map": "Map"}  # the first view's tab, in each
READ_MS = 3000  # ``tab_switch_after_reading``: the map is read this long before the tab is switched  # printed as whole numbers
GOALS = {
    "r1_2000_episode_next_vs_standalone": "≤ 1.5×",
    "r1_2000_app_no_click_lost": "1 (Next, Next, Prev 100 ms apart end one episode on)",
    "captured_step_click_vs_standalone": "≤ 1.5×",
    "r1_2000_step_click_vs_standalone": "≤ 1.5×",
    "captured_tab_switch_vs_standalone": "≤ 1.5×",
    "captured_tab_switch_after_reading_vs_standalone": "≤ 1.5×",
    "captured_tab_back_to_map_vs_standalone": "≤ 1.5×",
    "captured_tab_switch_after_reading_drawn_vs_standalone": "≤ 1.5×",
    "captured_tab_back_to_map_drawn_vs_standalone": "≤ 1.5×",
    "r1_2000_episode_zoom_vs_standalone": "≤ 1.5×",
    "captured_first_map_vs_standalone": "≤ 1.2×",
    "r1_2000_first_map_vs_standalone": "≤ 1.2×",
    "r1_2000_first_map_vs_r1_200": "≤ 1.2×",
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--steps",
        type=int,
        nargs="+",
        default=[200, 2000],
        help="R1-style import sizes (the first is the base)",
    )
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


def _view_frame(page, timeout: float = 300.0):
    """The frame where the trace view's map is drawn (any frame: Inspect's component is an
    iframe), polled until it is; returns (frame, marks)."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        for frame in page.frames:
            try:
                marks = frame.evaluate(_MAP_MARKS, list(MAP_TITLES))
            except Exception:  # a frame navigating away, or not ready
                continue
            if marks:
                return frame, marks
        page.wait_for_timeout(20)
    raise RuntimeError("the trace view's map was never drawn")


# The app's floor for any page: seconds from the navigation's start until the page shows its
# first element from the script, one with text (Streamlit's skeleton has none): Streamlit's scripts
# loaded, its websocket open, the first run's first delta drawn. A first map can be no quicker than
# this; ``page_floor_vs_standalone`` says how much of the first-map ratio Streamlit takes before the
# page's own work begins.
_FIRST_ELEMENT = """if (window === window.top) { window.__o3first = 0;
  new MutationObserver((_, mo) => {
    const els = document.querySelectorAll('[data-testid="stMain"] [data-testid="stElementContainer"]');
    if ([...els].some((e) => e.innerText.trim())) {
      window.__o3first = performance.now() / 1000; mo.disconnect(); } }).observe(document, {childList: true, subtree: true}); }"""


# Streamlit's floor for a first map: a page that holds nothing but Inspect's view component on the
# same view data (``streamlit run`` on this script, from a folder whose static/ holds the app's
# plotly.js, so the component loads it as in the app). What no Streamlit page with the component
# can beat; ``first_map_vs_component_floor`` is what the app adds to it.
_FLOOR_PAGE = """import re, sys
sys.path.insert(0, {root!r})
import streamlit as st
from pages.common.trace_view import trace_view
st.set_page_config(layout="wide")
url, height = st.query_params.get("url", ""), int(st.query_params.get("h", "560"))
if not re.fullmatch(r"data/[0-9a-f]+[.]json", url):
    st.error("no view data url")
    st.stop()
trace_view(url, key="floor", push={{"n": 0, "id": None, "episode": None}}, height=height)
"""


def _floor_page(folder: Path) -> Path:
    """The component-only page in ``folder`` (with the app's static plotly.js beside it)."""
    static = folder / "static"
    static.mkdir(exist_ok=True)
    for f in (ROOT / "static").glob("o3viz-plotly-*.min.js"):
        shutil.copyfile(f, static / f.name)
    script = folder / "floor.py"
    script.write_text(_FLOOR_PAGE.format(root=str(ROOT)), encoding="utf-8")
    return script


def _view_args(page) -> tuple[str, int]:
    """The view data URL and height of the trace view Inspect shows now."""
    frame, _ = _view_frame(page)
    url = frame.evaluate("document.body.dataset.url")
    height = page.evaluate("document.querySelector('iframe[src*=\"o3view\"]').clientHeight")
    return url, int(height) - 4


def _first_map(page, url: str) -> tuple[float, object, int]:
    t0 = time.perf_counter()
    page.goto(url)
    frame, marks = _view_frame(page)
    return time.perf_counter() - t0, frame, marks


def _episode_zoom(frame, k: int = 3) -> float | None:
    """Open episode ``k`` from the outline until the map shows its steps (a long trace only)."""
    row = frame.locator(f"#outline .row[data-id='episode:{k}']")
    if not row.count():
        return None
    t0 = time.perf_counter()
    row.click()
    frame.wait_for_function(
        f"document.body.dataset.episode === '{k}' && !!document.querySelector('#map .scatterlayer .point')",
        timeout=300_000,
    )
    return time.perf_counter() - t0


def _episode_next(frame) -> tuple[float, int]:
    """Next ▶ from the open episode until the map shows the next one; then Next, Next, Prev
    clicked 100 ms apart (a reader paging), and whether the view ended where they lead (1) or
    lost a click (0)."""
    k = int(frame.evaluate("document.body.dataset.episode"))
    t0 = time.perf_counter()
    frame.locator("#epnext").click()
    frame.wait_for_function(f"document.body.dataset.episode === '{k + 1}'", timeout=300_000)
    seconds = time.perf_counter() - t0
    for button in ("#epnext", "#epnext", "#epprev"):
        frame.locator(button).click()
        frame.wait_for_timeout(100)
    frame.wait_for_timeout(3000)  # any answer from the server has come back
    return seconds, int(frame.evaluate("document.body.dataset.episode") == str(k + 2))


def _step_click(frame, nth: int = 3) -> float:
    """Click a step in the outline until the details panel shows it."""
    rows = frame.locator("#outline .row.step:visible")
    n = rows.count()
    if n < 2:
        raise RuntimeError("the outline shows fewer than two steps")
    row = rows.nth(nth % n)
    node = row.get_attribute("data-id")
    if node == frame.evaluate("document.body.dataset.selected"):  # a step that is not selected yet
        row = rows.nth((nth + 1) % n)
        node = row.get_attribute("data-id")
    before = frame.locator("#details").inner_text()
    t0 = time.perf_counter()
    row.click()
    frame.wait_for_function(
        """([id, before]) => document.body.dataset.selected === id
          && document.querySelector('#details').innerText !== before""",
        arg=[node, before],
        timeout=300_000,
    )
    return time.perf_counter() - t0


# Before a tab switch: the time of the click's event in the page (``__o3click``), and, in each
# document where the opened tab draws, the time its first figure appears (``__o3drawn``). The switch
# is then also measured from the click to the drawing (``*_drawn``), without Playwright's checks
# before a click or the polling after it, which wait for the page's thread (in the app, busy with the
# switch's rerun once the figure is drawn).
_CLICK_WATCH = """() => { window.__o3click = 0; document.addEventListener('click', () => {
  if (!window.__o3click) window.__o3click = performance.timeOrigin + performance.now(); }, {capture: true, once: true}); }"""
_DRAWN_WATCH = """(sel) => { window.__o3drawn = 0; const top = window.parent;
  const f = window.frameElement;  // a figure drawn unseen in a closed tab counts when its tab shows
  const seen = () => !!document.querySelector(sel) && (!f || f.checkVisibility({visibilityProperty: true}));
  const mark = () => { if (!window.__o3drawn && top.__o3click && seen()) {
      window.__o3drawn = performance.timeOrigin + performance.now(); mo.disconnect(); clearInterval(poll); } };
  const mo = new MutationObserver(mark);
  mo.observe(document.body, {childList: true, subtree: true});
  const poll = setInterval(mark, 4); setTimeout(() => clearInterval(poll), 60000); }"""


def _drawn_after_click(page, frames) -> float | None:
    """Seconds from the click's event to the first figure drawn in ``frames`` (None: not seen)."""
    click = page.evaluate("window.__o3click")
    drawn = [d for d in (f.evaluate("window.__o3drawn") for f in frames) if d]
    return (min(drawn) - click) / 1000 if click and drawn else None


def _app_tab(page, title: str) -> float | None:
    """Switch Inspect to the tab ``title`` until its panel shows its first figure (a chart of the
    page's, or one drawn in a view component's frame in the panel: the map, the Attention heatmap),
    or an alert saying the trace has no data for it; a caption or a widget alone does not count."""
    tab = page.locator("[role='tab']", has_text=title)
    if not tab.count():
        return None
    # the frames where the tab draws: the map's, or the figure frames (Attention)
    to_map = title == MAP_TAB["map"]
    figs = [f for f in page.frames if ("o3view" if to_map else "o3fig") in f.url]
    page.evaluate(_CLICK_WATCH)
    for f in figs:
        f.evaluate(_DRAWN_WATCH, "#map .point, #overview .point" if to_map else ".fig .main-svg")
    t0 = time.perf_counter()
    tab.first.click()
    page.wait_for_function(
        """(title) => { const t = [...document.querySelectorAll("[role='tab']")].find(
            (x) => x.innerText.trim().startsWith(title));
          if (!t || t.getAttribute('aria-selected') !== 'true') return false;
          const p = document.getElementById(t.getAttribute('aria-controls'))
            || [...document.querySelectorAll("[role='tabpanel']")].find((x) => x.offsetParent !== null);
          if (!p || p.offsetParent === null) return false;
          if (p.querySelector('.js-plotly-plot .main-svg, [data-testid="stAlert"]')) return true;
          return [...p.querySelectorAll('iframe')].some((f) => f.checkVisibility({visibilityProperty: true})
            && !!f.contentDocument
            && !!f.contentDocument.querySelector('.fig .main-svg, #map .point, #overview .point')); }""",
        arg=title,
        timeout=300_000,
    )
    seconds = time.perf_counter() - t0
    if figs:
        page.wait_for_timeout(300)
        _DRAWN[title] = _drawn_after_click(page, figs)
    return seconds


_DRAWN: dict[str, float | None] = {}  # the last switch to each tab, click to drawing (see above)


def _standalone_tab(frame, title: str) -> float | None:
    button = frame.locator("nav button", has_text=title)
    if not button.count():
        return None
    frame.evaluate(_CLICK_WATCH)
    frame.evaluate(_DRAWN_WATCH, ".panel.on .main-svg")
    t0 = time.perf_counter()
    button.click()
    frame.wait_for_function(
        """(title) => { const b = [...document.querySelectorAll('nav button')].find((x) => x.textContent === title);
          const p = b && document.getElementById(b.dataset.tab);
          return !!p && p.offsetParent !== null && !!p.querySelector('.main-svg'); }""",
        arg=title,
        timeout=300_000,
    )
    seconds = time.perf_counter() - t0
    frame.wait_for_timeout(300)
    _DRAWN[title] = _drawn_after_click(frame, [frame])
    return seconds


def _actions(page, url: str, tab_click, repeat: int = 3) -> dict[str, float]:
    """The first map (median of ``repeat`` loads), an episode zoom (a long trace), a click on a
    step until the details show it (median of ``repeat`` steps) and a tab switch
    (``tab_click(page, frame, title)``: Inspect's tabs, or the standalone view's)."""
    loads, floors = [], []
    for _ in range(repeat):
        loads.append(_first_map(page, url))
        floors.append(page.evaluate("window.__o3first || 0"))
    frame = loads[-1][1]
    out: dict[str, float] = {"first_map": statistics.median(t for t, _, _ in loads), "marks": loads[-1][2]}
    if all(floors):  # the app: when the page showed its first element, whatever the page
        out["page_floor"] = statistics.median(floors)
    zoom = _episode_zoom(frame)
    if zoom is not None:
        out["episode_zoom"] = zoom
        out["episode_next"], out["no_click_lost"] = _episode_next(frame)
    out["step_click"] = statistics.median(_step_click(frame, k) for k in (3, 1, 4)[:repeat])
    _DRAWN.clear()
    tab = tab_click(page, frame, "Attention")
    if tab is not None:
        out["tab_switch"] = tab
        drawn = _DRAWN.get("Attention")
        out["tab_back_to_map"] = tab_click(page, frame, "map")
        back = _DRAWN.get(MAP_TAB["map"], _DRAWN.get(ALONE_TAB["map"]))
        # a reader's pace: the page opened afresh, the map read for a few seconds, then the tab
        frame = _first_map(page, url)[1]
        page.wait_for_timeout(READ_MS)
        _DRAWN.clear()
        out["tab_switch_after_reading"] = tab_click(page, frame, "Attention")
        for k, v in (
            ("tab_switch_drawn", drawn),
            ("tab_back_to_map_drawn", back),
            ("tab_switch_after_reading_drawn", _DRAWN.get("Attention")),
        ):
            if v is not None:
                out[k] = v
    return out


def _in_app_map(page, repeat: int = 3) -> float:
    """Back to Inspect from the Library inside the running app, by its navigation link (no page
    load: Streamlit's scripts are up, the session keeps the trace), until the map is drawn; the
    median of ``repeat``. The way a reader comes back to a trace, beside the cold ``first_map``."""
    page.locator("[role='tab']", has_text="Reasoning map").first.click()  # the session keeps the open tab
    _view_frame(page)
    times = []
    for _ in range(repeat):
        page.get_by_role("link", name="Library").first.click()
        page.locator("[data-testid='stDataFrame']").first.wait_for(timeout=300_000)
        page.wait_for_timeout(500)  # the Library settled
        t0 = time.perf_counter()
        page.get_by_role("link", name="Inspect").first.click()
        _view_frame(page)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _library_rows(page, url: str) -> float:
    t0 = time.perf_counter()
    page.goto(url)
    page.locator("[data-testid='stDataFrame']").first.wait_for(timeout=300_000)
    page.wait_for_function(
        "() => !!document.querySelector(\"[data-testid='stDataFrame'] canvas, [data-testid='stDataFrame'] table\")"
    )
    return time.perf_counter() - t0


def _outline_rows(page, url: str) -> float:
    t0 = time.perf_counter()
    page.goto(url)
    page.locator("#outline .row").first.wait_for(timeout=300_000)
    return time.perf_counter() - t0


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
            pages = _standalone_pages(Path(home), traces, Path(empty))
            _chromium(traces, base, pages)
        print(f"load_average: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


def _component_floor(browser, views: dict[str, tuple[str, int, int]], fresh) -> dict[str, float]:
    """Each trace's first map on the component-only page (median of 3 loads, after one untimed),
    which must draw as many marks as Inspect drew."""
    from o3viz.testing.browser import serve_app

    out = {}
    with tempfile.TemporaryDirectory() as folder:
        script = _floor_page(Path(folder))
        with serve_app({}, script=script, options=("--server.enableStaticServing", "true")) as url:
            for name, (data, height, marks) in views.items():
                page = fresh(browser)
                target = f"{url}/?url={data}&h={height}"
                _first_map(page, target)  # the server's first run of this page: not timed
                loads = [_first_map(page, target) for _ in range(3)]
                page.close()
                if {m for _, _, m in loads} != {marks}:
                    raise RuntimeError(f"the component-only page drew {loads[-1][2]} marks, Inspect {marks}")
                out[name] = statistics.median(t for t, _, _ in loads)
    return out


def _standalone_pages(home: Path, traces: dict[str, tuple[str, int]], folder: Path) -> dict[str, Path]:
    """Each trace's standalone view (``save_view``: one page, plotly.js inlined), from the store."""
    import o3viz
    from o3viz.store.store import Store

    store = Store(home)
    return {
        name: o3viz.save_view(o3viz.show(store.trace(key), widget=False), folder / f"{name}.html")
        for name, (key, _) in traces.items()
    }


def _chromium(traces: dict[str, tuple[str, int]], base: str, pages: dict[str, Path]) -> None:
    from playwright.sync_api import sync_playwright

    from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS, serve_app

    def fresh(browser):
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.add_init_script(_FIRST_ELEMENT)
        return page

    with serve_app({}) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = fresh(browser)
        _first_map(page, f"{url}/inspect?trace={traces[base][0]}")  # the server's first run: not timed
        _first_map(page, pages[base].as_uri())  # nor the browser's first plotly.js parse
        page.close()
        app, alone, views = {}, {}, {}
        for name, (key, steps) in traces.items():
            page = fresh(browser)
            app[name] = _actions(
                page, f"{url}/inspect?trace={key}", lambda pg, _f, t: _app_tab(pg, MAP_TAB.get(t, t))
            )
            if f"{steps} steps" not in page.locator("body").inner_text():
                raise RuntimeError(f"Chromium: Inspect did not show trace {key} ({steps} steps)")
            app[name]["first_map_in_app"] = _in_app_map(page)
            views[name] = (*_view_args(page), app[name]["marks"])
            if f"{steps} steps" not in page.locator("body").inner_text():
                raise RuntimeError(f"Chromium: back on Inspect, it did not show trace {key} ({steps} steps)")
            page.close()
            page = fresh(browser)
            alone[name] = _actions(
                page, pages[name].as_uri(), lambda _p, f, t: _standalone_tab(f, ALONE_TAB.get(t, t))
            )
            page.close()
            page = fresh(browser)
            app[name]["library_rows"] = _library_rows(page, url)
            page.close()
            page = fresh(browser)
            alone[name]["library_rows"] = _outline_rows(page, pages[name].as_uri())
            page.close()
        floor = _component_floor(browser, views, fresh)
        for name in traces:
            for k, v in app[name].items():
                print(f"{name}_app_{k}: {v:.3f}" if k not in COUNTS else f"{name}_app_{k}: {v}")
            for k, v in alone[name].items():
                print(f"{name}_standalone_{k}: {v:.3f}" if k not in COUNTS else f"{name}_standalone_{k}: {v}")
            print(f"{name}_component_floor_first_map: {floor[name]:.3f}")
        for name in traces:
            for k in (
                "first_map",
                "step_click",
                "tab_switch",
                "tab_switch_after_reading",
                "tab_switch_drawn",
                "tab_switch_after_reading_drawn",
                "tab_back_to_map",
                "tab_back_to_map_drawn",
                "episode_zoom",
                "episode_next",
                "library_rows",
            ):
                if k in app[name] and k in alone[name]:
                    print(f"{name}_{k}_vs_standalone: {app[name][k] / alone[name][k]:.2f}")
            print(
                f"{name}_first_map_in_app_vs_standalone: {app[name]['first_map_in_app'] / alone[name]['first_map']:.2f}"
            )
            print(f"{name}_component_floor_vs_standalone: {floor[name] / alone[name]['first_map']:.2f}")
            print(f"{name}_first_map_vs_component_floor: {app[name]['first_map'] / floor[name]:.2f}")
            if "page_floor" in app[name]:
                print(
                    f"{name}_page_floor_vs_standalone: {app[name]['page_floor'] / alone[name]['first_map']:.2f}"
                )
        for name in traces:
            if name != base:
                print(f"{name}_first_map_vs_{base}: {app[name]['first_map'] / app[base]['first_map']:.2f}")
                print(f"{name}_marks_vs_{base}: {app[name]['marks'] / app[base]['marks']:.2f}")
        browser.close()
