"""Inspect's view component (``pages/common/o3view/``): the outline, the reasoning map and the
details of one trace in one Streamlit custom component, so a click, a hover, an episode and
Prev/Next are answered in the browser, not after a rerun. Its script is the notebook view's
(``o3viz/notebook/static/view.js``); plotly.js is the plotly package's own file, loaded once per
frame from the component's folder (nothing from the network).

The folder Streamlit serves is assembled once per version of those files and user, in the temp
folder (index.html, bridge.js and the styles, view.js, plotly.min.js), private to this user and
checked before it is used (``_served``), and each trace's view data is a JSON file in it named by
its content hash: the component's args stay small (the file's name and
the server's selection push), so a rerun sends almost nothing and never redraws
the view."""

from __future__ import annotations

import atexit
import hashlib
import html
import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

import streamlit.components.v1 as components

from o3viz.app import PLOTLY_JS, VIEW_STATIC

HERE = Path(__file__).parent / "o3view"
_FILES = {
    "index.html": HERE / "index.html",
    "bridge.js": HERE / "bridge.js",
    "o3view.css": HERE / "o3view.css",
    "view.js": VIEW_STATIC / "view.js",
    "view.css": VIEW_STATIC / "view.css",
}


APP_ROOT = Path(__file__).resolve().parents[2]  # app.py's folder: its static/ is served at app/static/


def _static_plotly() -> str | None:
    """plotly.js as the app's own static file (``<app>/static/``, served at ``app/static/`` when
    ``server.enableStaticServing`` is on, as ``.streamlit/config.toml`` sets it), and its URL from
    the component's page; None where that is off or the folder can't be written (the component's
    own copy is used). Streamlit serves a component's files with neither Last-Modified nor an ETag,
    so the browser fetched and compiled the 4.6 MB file at every Inspect load (about 0.8 s here);
    a static file has both, so the browser keeps the file and its compiled code between loads."""
    import streamlit as st

    if not st.get_option("server.enableStaticServing"):
        return None
    name = f"o3viz-plotly-{hashlib.sha256(PLOTLY_JS.read_bytes()).hexdigest()[:16]}.min.js"
    target = APP_ROOT / "static" / name
    if not target.exists():
        try:
            target.parent.mkdir(exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".part")
            os.close(fd)
            shutil.copy2(PLOTLY_JS, tmp)  # (its modification time too: the browser's freshness)
            os.replace(tmp, target)
        except OSError:
            return None
    return f"../../app/static/{name}"  # from component/<name>/index.html


# Streamlit's lazily loaded bundles that Inspect's other tabs need and its first view does not.
# The Attention tab's widgets (``WARM``: a few ms each to evaluate) are loaded once the map is drawn
# and the reader pauses. The plotly chart (``CHART``: 4.7 MB, plotly.js inside) only when the reader
# presses a tab whose panel holds no view frame (a tab drawn with ``st.plotly_chart``): evaluating it
# holds the page's thread for 0.7-1 s here, and loaded in a pause it landed on the reader's next
# click (back to the map right after Attention waited for it). Pressed, it loads while the tab's run
# is on the server.
WARM = ("NumberInput", "Slider", "Checkbox", "Radio", "DownloadButton")
CHART = "PlotlyChart"


def _warm_chunks(names: tuple[str, ...] = WARM) -> list[str]:
    """The file names of Streamlit's bundles in ``names`` (``static/js/<Name>.<hash>.js``), those
    this Streamlit has exactly one of. Without the widgets' the first switch to the Attention tab
    waited for them before anything showed."""
    import streamlit

    js = Path(streamlit.__file__).parent / "static" / "static" / "js"
    found = [sorted(js.glob(f"{name}.*.js")) for name in names]
    return [f[0].name for f in found if len(f) == 1]


def _contents(plotly_src: str | None, warm: list[str], chart: str | None) -> dict[str, bytes]:
    """The served folder's files (name: bytes). Its page loads plotly.js from ``plotly_src`` (None:
    the copy in the folder), and names the bundles of Streamlit's that the view warms (``warm``,
    ``chart``): the view reads them from its own page, never from a message."""
    files = {name: path.read_bytes() for name, path in _FILES.items()}
    page = files["index.html"].decode("utf-8")
    metas = {
        "o3-plotly": ("plotly.min.js", plotly_src),
        "o3-warm": ("", " ".join(warm)),
        "o3-chart": ("", chart),
    }
    for meta, (default, value) in metas.items():
        if value:
            old = f'<meta name="{meta}" content="{default}">'
            page = page.replace(old, f'<meta name="{meta}" content="{html.escape(value)}">')
    files["index.html"] = page.encode("utf-8")
    files["plotly.min.js"] = PLOTLY_JS.read_bytes()
    return files


def _private(path: Path, *, folder: bool) -> bool:
    """Whether ``path`` is this user's own folder (or file), itself and not a link to one, that no
    one else may change (a folder: no one else may even enter it)."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    kind = stat.S_ISDIR(info.st_mode) if folder else stat.S_ISREG(info.st_mode)
    return kind and info.st_uid == os.getuid() and not info.st_mode & (0o077 if folder else 0o022)


def _as_expected(root: Path, files: dict[str, bytes]) -> bool:
    """Whether ``root`` is a private folder holding exactly ``files`` (its data/ private too)."""
    if not _private(root, folder=True):
        return False
    for name, content in files.items():
        if not _private(root / name, folder=False) or (root / name).read_bytes() != content:
            return False
    return not (root / "data").exists() or _private(root / "data", folder=True)


def _assemble(files: dict[str, bytes]) -> Path:
    """A new private folder (mode 0700) holding ``files`` and an empty data/."""
    tmp = Path(tempfile.mkdtemp(prefix="o3viz-view-", dir=tempfile.gettempdir()))
    for name, content in files.items():
        (tmp / name).write_bytes(content)
        (tmp / name).chmod(0o600)  # whatever the umask: ``_private`` holds for each file
    (tmp / "data").mkdir(mode=0o700)
    return tmp


def _folder_name(files: dict[str, bytes]) -> str:
    """The served folder's name in the temp folder: this user's, for this version of ``files``."""
    h = hashlib.sha256()
    for name, content in sorted(files.items()):
        h.update(name.encode() + b"\0" + hashlib.sha256(content).digest())
    return f"o3viz-view-{os.getuid()}-{h.hexdigest()[:16]}"


def _served(plotly_src: str | None, warm: list[str], chart: str | None) -> Path:
    """The folder the component is served from: one per version of its files and user, found by
    name in the temp folder so that data published by earlier servers is reused. The name is
    predictable, so anyone may have made it first: it is used only where it is this user's,
    private (0700) and holds exactly these files; otherwise a fresh private folder is, for this
    process only."""
    files = _contents(plotly_src, warm, chart)
    root = Path(tempfile.gettempdir()) / _folder_name(files)
    if not _as_expected(root, files):
        tmp = _assemble(files)
        try:
            os.rename(tmp, root)  # atomic; fails where the name is taken (an empty folder of ours aside)
        except OSError:
            if not _as_expected(root, files):  # not assembled by another server of this user meanwhile
                # someone else's, or not as it should be: serve from the fresh folder, never from it
                atexit.register(shutil.rmtree, tmp, ignore_errors=True)
                return tmp
            shutil.rmtree(tmp, ignore_errors=True)
    (root / "data").mkdir(mode=0o700, exist_ok=True)
    return root


PLOTLY_SRC = _static_plotly()
WARM_CHUNKS = _warm_chunks()
CHART_CHUNK = (_warm_chunks((CHART,)) or [None])[0]
SERVED = _served(PLOTLY_SRC, WARM_CHUNKS, CHART_CHUNK)
_component = components.declare_component("o3view", path=str(SERVED))
# the same files, as the component that draws one step-level figure in a tab (``figure_view``);
# its own name keeps its frame apart from the map's (``iframe[src*='o3fig']``)
_figure = components.declare_component("o3fig", path=str(SERVED))


def publish(data: dict) -> str:
    """Write ``data`` (a view's data, ``o3viz.app.inspect_view``) into the served folder, once per
    content, and return its URL relative to the component's page."""
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
    return f"data/{name}"


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


def trace_view(url: str, *, key: str, push: dict, height: int, on_change=None):
    """Draw the component on ``url``'s data. ``push`` ({n, id, episode}) moves the view's selection
    when ``n`` changes (the server selected something); the view reports the user's selection as
    ``{id, episode, seq}`` in ``st.session_state[key]`` (``on_change`` runs first)."""
    return _component(
        url=url,
        push=push,
        height=height,
        key=key,
        default=None,
        on_change=on_change,
    )


def published(url: str) -> dict:
    """The view data behind a ``url`` that ``publish`` returned (the tests read what the view got)."""
    name = url.removeprefix("data/")
    if "/" in name or not name.endswith(".json"):
        raise ValueError(f"not a view data url: {url[:60]}")
    return json.loads((SERVED / "data" / name).read_text(encoding="utf-8"))


def figure_view(
    url: str, *, key: str, selected: str | None, height: int, preload: bool = True, on_change=None
):
    """Draw the figure behind ``url`` (``o3viz.app.figure_view_data``, published) in the browser.
    Drawn in every run, also while its tab is closed: the frame waits hidden, loads plotly.js
    once the map is drawn and the browser idle, and draws when its tab is shown, so the switch to
    it needs no rerun first (``preload=False``: figures below the tab's fold load plotly.js only
    when the reader scrolls to them). ``selected`` (a node id) is outlined where it is one of the
    figure's steps; a click on a step reports ``{id, seq}`` in ``st.session_state[key]``."""
    return _figure(
        url=url,
        mode="figure",
        preload=preload,
        selected=selected,
        height=height,
        key=key,
        default=None,
        on_change=on_change,
    )
