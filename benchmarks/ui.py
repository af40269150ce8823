"""The app beside the standalone view in Chromium, action by action.

Inspect's first map, a click on a step until the details change, a tab switch, an episode zoom
and the Library's first rows, each against the same action in the standalone view
(``save_view``) of the same trace, on R1-style imports of about 200 and 2,000 sentences built from real DeepSeek-R1 MATH-500 sentences (``o3viz.testing.long_r1``) and
a captured run with attention from ``sample_traces/``, all put in a temporary ``O3VIZ_HOME`` the
way the app gets them.

First, for each trace, the Inspect first render through AppTest (server side) and the payload the
page sends. Then in headless Chromium (``/usr/bin/chromium`` through Playwright, never a browser
download), at 1280×720, against ``streamlit run`` and against the standalone page opened with
``file://`` in the same browser: the first map (median of 3 loads; every frame is searched, though Inspect's view
now sits in the page itself), the marks it draws, opening episode 3 from the outline until
the map shows its steps (a long trace), Next ▶ until the next one shows, whether Next, Next, Prev
clicked 100 ms apart end where they lead (``no_click_lost``), a click on a step in the outline
until the details panel shows it (median of 3), a switch to the Attention tab until its first figure
is drawn (where both have one: right after those clicks, back to the map until it shows,
``tab_back_to_map``, and again on a fresh load after reading the map for ``READ_MS``,
``tab_switch_after_reading``; each also timed from the click's event in the page until the
first figure appears, or the map shows again, ``*_drawn``, without Playwright's checks and polling), the map again after going to the Library and back by the app's own navigation
(``first_map_in_app``: no page load, the way a reader returns to a trace), the app's floor for any
page (``page_floor``: the navigation's start until the page's first element with text, Streamlit's own load), where the app's
first map goes after that (``first_map_{mount,data,plotly,drawn}_at``: the view's component
mounted, its data fetched, plotly.js loaded, the map drawn, each from the navigation's start), the first map on a Streamlit page that holds
nothing but Inspect's view component on the same view data (``component_floor_first_map``: what no
Streamlit page hosting the view can beat; ``first_map_vs_component_floor`` is what Inspect adds to
it), the first map on a page that holds nothing but the same figure drawn by ``st.plotly_chart``
(``plotly_chart_floor_first_map``: Streamlit's start and one plotly.js, nothing of ours;
``first_map_vs_plotly_chart_floor`` is all the app adds, on a reload), the same two on a first
visit (``first_visit_first_map``: each load in a browser context of its own, nothing cached, the
way the issue's baseline of 1.85 s for that page was measured; the goal is on this ratio), and the Library's first table rows (beside the standalone view's first outline
rows: the view has no library). Each app figure is printed as a ratio to the standalone one
(``_vs_standalone``), and each trace's first map and marks as a ratio to the ~200-step trace's. It
fails loudly when a page does not show the trace it was asked for. Streamlit and Playwright are
imported only inside ``run``. The pages it measures beside Inspect are in ``_ui_pages.py``, what it
does and times in a page in ``_ui_measure.py``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from benchmarks._ui_measure import (
    ALONE_TAB,
    MAP_TAB,
    ROOT,
    _actions,
    _app_tab,
    _first_map,
    _in_app_map,
    _library_rows,
    _outline_rows,
    _standalone_tab,
    _view_args,
)
from benchmarks._ui_pages import (
    _FIRST_ELEMENT,
    _chart_floor,
    _component_floor,
    _standalone_pages,
    _store_traces,
    cold_first_map,
)

COUNTS = ("marks", "no_click_lost")
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
    "captured_first_visit_first_map_vs_plotly_chart_floor": "≤ 1.2×",
    "r1_200_first_visit_first_map_vs_plotly_chart_floor": "≤ 1.2×",
    "r1_2000_first_visit_first_map_vs_plotly_chart_floor": "≤ 1.2×",
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
            app[name]["first_visit_first_map"] = cold_first_map(
                browser, f"{url}/inspect?trace={key}", marks=app[name]["marks"]
            )
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
        chart, chart_cold = _chart_floor(browser, views, fresh)
        for name in traces:
            for k, v in app[name].items():
                print(f"{name}_app_{k}: {v:.3f}" if k not in COUNTS else f"{name}_app_{k}: {v}")
            for k, v in alone[name].items():
                print(f"{name}_standalone_{k}: {v:.3f}" if k not in COUNTS else f"{name}_standalone_{k}: {v}")
            print(f"{name}_component_floor_first_map: {floor[name]:.3f}")
            print(f"{name}_plotly_chart_floor_first_map: {chart[name]:.3f}")
            print(f"{name}_plotly_chart_floor_first_visit_first_map: {chart_cold[name]:.3f}")
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
            print(f"{name}_plotly_chart_floor_vs_standalone: {chart[name] / alone[name]['first_map']:.2f}")
            print(f"{name}_first_map_vs_plotly_chart_floor: {app[name]['first_map'] / chart[name]:.2f}")
            cold = app[name]["first_visit_first_map"] / chart_cold[name]
            print(f"{name}_first_visit_first_map_vs_plotly_chart_floor: {cold:.2f}")
            if "page_floor" in app[name]:
                print(
                    f"{name}_page_floor_vs_standalone: {app[name]['page_floor'] / alone[name]['first_map']:.2f}"
                )
        for name in traces:
            if name != base:
                print(f"{name}_first_map_vs_{base}: {app[name]['first_map'] / app[base]['first_map']:.2f}")
                print(f"{name}_marks_vs_{base}: {app[name]['marks'] / app[base]['marks']:.2f}")
        browser.close()
