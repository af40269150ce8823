"""What ``python -m benchmarks ui`` does in a page and times: the first map, an episode zoom and
Next ▶, a click on a step, a tab switch, the map again inside the app, the first table rows. Each
works on the app's Inspect (the view in the page), on the standalone view (``save_view``) and on
the floor pages (``benchmarks/_ui_pages.py``) alike: the view's state is read from its root
(``.o3v-map``) where there is one, else from the page's body (the standalone view)."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CAPTURED = ROOT / "sample_traces" / "solve_math_gsm8k.o3trace.json.gz"
MAP_TITLES = ("What happened", "Where did the reasoning turn?")
# Is the trace view's map drawn in this frame? Inspect's component and the standalone view share
# one script (o3viz/view/static/view.js): the overview (#overview, a long trace) or the map
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
MAP_TAB, ALONE_TAB = {"map": "Reasoning map"}, {"map": "Map"}  # the first view's tab, in each
READ_MS = 3000  # ``tab_switch_after_reading``: the map is read this long before the tab is switched  # printed as whole numbers
# the view's marks (selected, episode, url): its root in the app, the body in the standalone view
STATE = "(document.querySelector('.o3v-map') || document.body).dataset"


def _view_frame(page, timeout: float = 300.0):
    """The frame where the trace view's map is drawn (any frame: the page's own for Inspect's
    in-page view and the standalone view), polled until it is; returns (frame, marks)."""
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


def _view_args(page) -> tuple[str, int]:
    """The view data URL and height of the trace view Inspect shows now."""
    frame, _ = _view_frame(page)
    url = frame.evaluate(f"{STATE}.url")
    height = frame.evaluate(
        "parseInt(getComputedStyle(document.querySelector('.o3v-map')).getPropertyValue('--h'))"
    )
    return url, int(height)


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
        f"{STATE}.episode === '{k}' && !!document.querySelector('#map .scatterlayer .point')",
        timeout=300_000,
    )
    return time.perf_counter() - t0


def _episode_next(frame) -> tuple[float, int]:
    """Next ▶ from the open episode until the map shows the next one; then Next, Next, Prev
    clicked 100 ms apart (a reader paging), and whether the view ended where they lead (1) or
    lost a click (0)."""
    k = int(frame.evaluate(f"{STATE}.episode"))
    t0 = time.perf_counter()
    frame.locator("#epnext").click()
    frame.wait_for_function(f"{STATE}.episode === '{k + 1}'", timeout=300_000)
    seconds = time.perf_counter() - t0
    for button in ("#epnext", "#epnext", "#epprev"):
        frame.locator(button).click()
        frame.wait_for_timeout(100)
    frame.wait_for_timeout(3000)  # any answer from the server has come back
    return seconds, int(frame.evaluate(f"{STATE}.episode") == str(k + 2))


def _step_click(frame, nth: int = 3) -> float:
    """Click a step in the outline until the details panel shows it."""
    rows = frame.locator("#outline .row.step:visible")
    n = rows.count()
    if n < 2:
        raise RuntimeError("the outline shows fewer than two steps")
    row = rows.nth(nth % n)
    node = row.get_attribute("data-id")
    if node == frame.evaluate(f"{STATE}.selected"):  # a step that is not selected yet
        row = rows.nth((nth + 1) % n)
        node = row.get_attribute("data-id")
    before = frame.locator("#details").inner_text()
    t0 = time.perf_counter()
    row.click()
    frame.wait_for_function(
        f"""([id, before]) => {STATE}.selected === id
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
  // a figure drawn unseen in a closed tab counts when its tab shows
  const seen = () => { const e = document.querySelector(sel); return !!e && e.checkVisibility({visibilityProperty: true}); };
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
    page's, or one drawn by one of our in-page views in the panel: the map, the Attention heatmap),
    or an alert saying the trace has no data for it; a caption or a widget alone does not count."""
    tab = page.locator("[role='tab']", has_text=title)
    if not tab.count():
        return None
    # where the tab draws: the page itself (the map's view, or the figure views: Attention)
    to_map = title == MAP_TAB["map"]
    figs = [page.main_frame]
    page.evaluate(_CLICK_WATCH)
    for f in figs:
        f.evaluate(
            _DRAWN_WATCH,
            ".o3v-map #map .point, .o3v-map #overview .point" if to_map else ".o3v-fig .fig .main-svg",
        )
    t0 = time.perf_counter()
    tab.first.click()
    page.wait_for_function(
        """(title) => { const t = [...document.querySelectorAll("[role='tab']")].find(
            (x) => x.innerText.trim().startsWith(title));
          if (!t || t.getAttribute('aria-selected') !== 'true') return false;
          const p = document.getElementById(t.getAttribute('aria-controls'))
            || [...document.querySelectorAll("[role='tabpanel']")].find((x) => x.offsetParent !== null);
          if (!p || p.offsetParent === null) return false;
          // (our views draw in the page: their figures are the panel's plotly charts too)
          return !!p.querySelector('.js-plotly-plot .main-svg, [data-testid="stAlert"]'); }""",
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


# Where the app's first map goes, in seconds from the navigation's start (the view's User Timing
# marks, pages/common/o3view/): its component mounted, its data fetched, plotly.js loaded, the map
# drawn. Beside ``page_floor`` (the page's first element), they split the first map.
_MARKS = ("mount", "data", "plotly", "drawn")
_READ_MARKS = """(names) => names.map((n) => {
  const e = performance.getEntriesByName('o3viz:' + n); return e.length ? e[0].startTime / 1000 : 0; })"""


def _actions(page, url: str, tab_click, repeat: int = 3) -> dict[str, float]:
    """The first map (median of ``repeat`` loads), an episode zoom (a long trace), a click on a
    step until the details show it (median of ``repeat`` steps) and a tab switch
    (``tab_click(page, frame, title)``: Inspect's tabs, or the standalone view's)."""
    loads, floors, marks = [], [], []
    for _ in range(repeat):
        loads.append(_first_map(page, url))
        floors.append(page.evaluate("window.__o3first || 0"))
        marks.append(page.evaluate(_READ_MARKS, list(_MARKS)))
    frame = loads[-1][1]
    out: dict[str, float] = {"first_map": statistics.median(t for t, _, _ in loads), "marks": loads[-1][2]}
    if all(floors):  # the app: when the page showed its first element, whatever the page
        out["page_floor"] = statistics.median(floors)
    for k, name in enumerate(_MARKS):  # the app's view: where its first map went
        if all(m[k] for m in marks):
            out[f"first_map_{name}_at"] = statistics.median(m[k] for m in marks)
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
