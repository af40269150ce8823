"""Inspect's views in the page: the outline, the reasoning map and the details of one trace
(``trace_view``), and one tab's step-level figures (``figure_view``), each a Streamlit components
v2 component, so a click, a hover, an episode and Prev/Next are answered in the browser, not after
a rerun. The map's script is the shared view script (``o3viz.app.VIEW_STATIC``/view.js) with a
host (``o3view/map.js``) that scopes it to its own element; ``o3view/page.js`` holds what both
components share. plotly.js is loaded once per page, by one script tag (``o3view/plotly.js``), from
the app's static folder (nothing from the network).

Each trace's view data is a JSON file named by its content hash in a private folder of this user's
(``_served``), served by the app's own route (``view_routes``, mounted by ``app.py``): the
components' data stays small (the file's URL and the server's selection push), so a rerun sends
almost nothing and never redraws the view. The components hear only Streamlit, through the data it
gives them: no ``message`` listener, nothing a frame could post to."""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

import streamlit as st

from o3viz.app import PLOTLY_JS, VIEW_STATIC

HERE = Path(__file__).parent / "o3view"
APP_ROOT = Path(__file__).resolve().parents[2]  # app.py's folder: its static/ is served at app/static/
ROUTE = "/o3viz-view"  # the app's route for the view data (and plotly.js where static serving is off)
DATA_NAME = re.compile(r"[0-9a-f]{24}\.json")

# What our scripts read of Streamlit's page (not its API): each is checked against the installed
# Streamlit's frontend by tests/app/test_view_streamlit_internals.py, so an upgrade that moves one
# fails there rather than quietly losing what it tunes.
STREAMLIT_INTERNALS = {
    "tabs": "stTabs",  # data-testid of a tab block (the tab pressed, its panels)
    "tab_panel": "stTabPanel",  # data-testid of a tab's panel (closed ones kept laid out)
    "inactive_panel": "data-st-inactive",  # the attribute a closed tab's panel carries
    "main_script": "/static/js/index.",  # the page's main script: its bundles sit beside it
}
# Streamlit's lazily loaded bundles that Inspect's other tabs need and its first view does not.
# The Attention tab's widgets (``WARM``: a few ms each to evaluate) are loaded once the map is drawn
# and the reader pauses. The plotly chart (``CHART``: 4.7 MB, plotly.js inside) only when the reader
# presses a tab whose panel holds none of our views (a tab drawn with ``st.plotly_chart``):
# evaluating it holds the page's thread for 0.7-1 s, and loaded in a pause it landed on the
# reader's next click. Pressed, it loads while the tab's run is on the server.
WARM = ("NumberInput", "Slider", "Checkbox", "Radio", "DownloadButton")
CHART = "PlotlyChart"


def _static_plotly() -> str:
    """plotly.js's URL from the page: the app's own static file (``<app>/static/``, served at
    ``app/static/`` when ``server.enableStaticServing`` is on, as ``.streamlit/config.toml`` sets
    it), with Last-Modified and an ETag, so the browser keeps the file (``PLOTLY_JS``: plotly's
    1.5 MB cartesian bundle) and its compiled code between loads; the app's route where that is
    off or the folder can't be written."""
    name = f"o3viz-plotly-{hashlib.sha256(PLOTLY_JS.read_bytes()).hexdigest()[:16]}.min.js"
    if not st.get_option("server.enableStaticServing"):
        return f"{ROUTE}/{name}"
    target = APP_ROOT / "static" / name
    if not target.exists():
        try:
            target.parent.mkdir(exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".part")
            os.close(fd)
            shutil.copy2(PLOTLY_JS, tmp)  # (its modification time too: the browser's freshness)
            os.replace(tmp, target)
        except OSError:
            return f"{ROUTE}/{name}"
    return f"app/static/{name}"


def _warm_chunks(names: tuple[str, ...] = WARM) -> list[str]:
    """The file names of Streamlit's bundles in ``names`` (``static/js/<Name>.<hash>.js``), those
    this Streamlit has exactly one of. Without the widgets' the first switch to the Attention tab
    waited for them before anything showed."""
    import streamlit

    js = Path(streamlit.__file__).parent / "static" / "static" / "js"
    found = [sorted(js.glob(f"{name}.*.js")) for name in names]
    return [f[0].name for f in found if len(f) == 1]


# ----- the served folder: private, checked, never someone else's -------------------------------


def _private(path: Path, *, folder: bool) -> bool:
    """Whether ``path`` is this user's own folder (or file), itself and not a link to one, that no
    one else may change (a folder: no one else may even enter it)."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    kind = stat.S_ISDIR(info.st_mode) if folder else stat.S_ISREG(info.st_mode)
    return kind and info.st_uid == os.getuid() and not info.st_mode & (0o077 if folder else 0o022)


def _as_expected(root: Path) -> bool:
    """Whether ``root`` is a private folder whose data/ (where present) is private too."""
    return _private(root, folder=True) and (
        not (root / "data").exists() or _private(root / "data", folder=True)
    )


def _folder_name() -> str:
    """The served folder's name in the temp folder: this user's."""
    return f"o3viz-view-{os.getuid()}-data"


def _served() -> Path:
    """The folder the view data is served from: one per user, found by name in the temp folder so
    that data published by earlier servers is reused. The name is predictable, so anyone may have
    made it first: it is used only where it is this user's and private (0700, not a link);
    otherwise a fresh private folder is, for this process only."""
    root = Path(tempfile.gettempdir()) / _folder_name()
    if not _as_expected(root):
        tmp = Path(tempfile.mkdtemp(prefix="o3viz-view-", dir=tempfile.gettempdir()))  # mode 0700
        (tmp / "data").mkdir(mode=0o700)
        try:
            os.rename(tmp, root)  # atomic; fails where the name is taken (an empty folder of ours aside)
        except OSError:
            if not _as_expected(root):  # not made by another server of this user meanwhile
                # someone else's, or not as it should be: serve from the fresh folder, never from it
                atexit.register(shutil.rmtree, tmp, ignore_errors=True)
                return tmp
            shutil.rmtree(tmp, ignore_errors=True)
    (root / "data").mkdir(mode=0o700, exist_ok=True)
    return root


PLOTLY_SRC = _static_plotly()
WARM_CHUNKS = _warm_chunks()
CHART_CHUNK = (_warm_chunks((CHART,)) or [None])[0]
SERVED = _served()


def publish(data: dict) -> str:
    """Write ``data`` (a view's data, ``o3viz.app.inspect_view``) into the served folder, once per
    content, and return its URL (the app's route)."""
    text = json.dumps(data, separators=(",", ":"))
    name = hashlib.sha256(text.encode()).hexdigest()[:24] + ".json"
    path = SERVED / "data" / name
    if path.exists():
        os.utime(path)  # in use again: the newest to keep when the folder is pruned
    else:
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".part")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
        prune(path.parent, keep=path)
    return f"{ROUTE}/data/{name}"


def published(url: str) -> dict:
    """The view data behind a ``url`` that ``publish`` returned (the tests read what the view got)."""
    name = url.removeprefix(f"{ROUTE}/data/")
    if not DATA_NAME.fullmatch(name):
        raise ValueError(f"not a view data url: {url[:60]}")
    return json.loads((SERVED / "data" / name).read_text(encoding="utf-8"))


MAX_VIEW_FILES = 300  # view data files kept in the served folder (the least recently used go first)
MAX_VIEW_BYTES = 512 * 2**20


def prune(folder: Path, keep: Path, max_files: int = MAX_VIEW_FILES, max_bytes: int = MAX_VIEW_BYTES) -> int:
    """Delete the least recently used view data files in ``folder`` until at most ``max_files``
    files and ``max_bytes`` remain (``keep``, the file just written, stays); the number deleted.
    Without it every trace and option ever opened left a file in the temp folder for good."""
    files = []
    for f in folder.glob("*.json"):
        try:
            info = f.stat()
        except OSError:  # another server pruned it first
            continue
        files.append((info.st_mtime, info.st_size, f))
    files.sort(key=lambda x: x[0], reverse=True)  # newest first
    total, n, gone = 0, 0, 0
    for _, size, f in files:
        total, n = total + size, n + 1
        if f != keep and (n > max_files or total > max_bytes):
            f.unlink(missing_ok=True)
            gone += 1
    return gone


def view_routes() -> list:
    """The app's routes for the views (``st.App(routes=...)`` in app.py): a view data file by its
    name, and plotly.js where the app's static folder is not served. Names are content hashes, so
    the browser may keep what it got."""
    from starlette.responses import FileResponse, Response
    from starlette.routing import Route

    keep = {"Cache-Control": "private, max-age=31536000, immutable"}

    async def data(request):
        name = request.path_params["name"]
        path = SERVED / "data" / name
        if not DATA_NAME.fullmatch(name) or not _private(path, folder=False):
            return Response(status_code=404)
        return FileResponse(path, media_type="application/json", headers=keep)

    async def plotly(request):
        if request.path_params["name"] != PLOTLY_SRC.rsplit("/", 1)[-1]:
            return Response(status_code=404)
        return FileResponse(PLOTLY_JS, media_type="text/javascript", headers=keep)

    return [Route(ROUTE + "/data/{name}", data), Route(ROUTE + "/{name}", plotly)]


# ----- the components ------------------------------------------------------------------------


def _module(*parts: str) -> str:
    """One component's JS module: ``O3`` (what the server tells the scripts), then ``parts``."""
    o3 = {"plotly": PLOTLY_SRC, "warm": WARM_CHUNKS, "chart": CHART_CHUNK, "st": STREAMLIT_INTERNALS}
    return f"const O3 = {json.dumps(o3)};\n" + "\n".join(parts)


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


# the shared view script, run with the host's ``window`` and ``document`` (map.js): it sets
# ``window.o3view`` on an object of its own and finds its parts in its own element only
VIEW = f"const makeView = (window, document) => {{\n{_read(VIEW_STATIC / 'view.js')}\nreturn window.o3view;\n}};\n"
PLOTLY = _read(HERE / "plotly.js")  # plotlyJs(): one script tag per page, whoever asks first
MAP_JS = _module(PLOTLY, _read(HERE / "page.js"), VIEW, _read(HERE / "map.js"))
FIGURES_JS = _module(PLOTLY, _read(HERE / "page.js"), _read(HERE / "figures.js"))
# both style files nested under .o3v: they reach no further than our views
CSS = ".o3v {\n" + _read(VIEW_STATIC / "view.css") + "\n" + _read(HERE / "o3view.css") + "\n}\n"

_map = st.components.v2.component("o3viz.map", css=CSS, js=MAP_JS, isolate_styles=False)
_figures = st.components.v2.component("o3viz.figures", css=CSS, js=FIGURES_JS, isolate_styles=False)


def _reported(key: str, on_change):
    """The callback that copies the view's ``selection`` state into ``st.session_state[key]``
    (where the pages read it), then runs ``on_change``."""

    def copy() -> None:
        st.session_state[key] = st.session_state[f"{key}.v2"].get("selection")
        if on_change is not None:
            on_change()

    return copy


def trace_view(url: str, *, key: str, push: dict, height: int, on_change=None, on_drawn=None):
    """Draw the view on ``url``'s data. ``push`` ({n, id, episode}) moves the view's selection
    when ``n`` changes (the server selected something); the view reports the user's selection as
    ``{id, episode, seq}`` in ``st.session_state[key]`` (``on_change`` runs after). With
    ``on_drawn``, the view also says once, when the map is drawn and the reader pauses, that it
    was drawn: ``on_drawn`` runs (in that rerun's callbacks)."""
    return _map(
        key=f"{key}.v2",
        data={"url": url, "push": push, "height": height, "drawn": on_drawn is None},
        on_selection_change=_reported(key, on_change),
        on_drawn_change=on_drawn or (lambda: None),
    )


def figure_view(
    url: str, *, key: str, selected: str | None, height: int, preload: bool = True, on_change=None
):
    """Draw the figure behind ``url`` (``o3viz.app.figure_view_data``, published) in the browser.
    Drawn in every run, also while its tab is closed: the view waits laid out but unseen, loads
    plotly.js once the map is drawn and the browser idle, and draws when its tab is shown, so the
    switch to it needs no rerun first (``preload=False``: figures below the tab's fold load
    plotly.js only when the reader scrolls to them). ``selected`` (a node id) is outlined where it
    is one of the figure's steps; a click on a step reports ``{id, seq}`` in
    ``st.session_state[key]``."""
    return _figures(
        key=f"{key}.v2",
        data={"url": url, "selected": selected, "preload": preload, "height": height},
        on_selection_change=_reported(key, on_change),
    )
