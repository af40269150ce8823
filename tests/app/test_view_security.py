"""Security of what the app serves (a red team's findings). No other site may frame the app or its
pages (``X-Frame-Options``, CSP ``frame-ancestors``, on every response of ``streamlit run
app.py``); Inspect's in-page views listen for no message and never turn one into script; their
data is served from a private folder that no other user can have planted; and a
trace's storage note is drawn as text, never as an image or a link the browser fetches."""

from __future__ import annotations

import os
import re
import stat
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

import pages.common.trace_view as tv
from o3viz.app.headers import CSP, SecurityHeaders
from o3viz.figures import escape_markdown
from o3viz.paths import REPO_ROOT
from o3viz.testing.browser import serve_app
from o3viz.testing.synthetic import make_trace

APP = str(REPO_ROOT / "app.py")
HOSTILE = b'{"kind": "trace", "pwned": "<img src=x onerror=window.__o3pwned=1>"}'
EVIL = "http://evil.test"  # another site, named by the forged messages


# ----- headers: the middleware alone, then the real server ------------------------------------


def _call(middleware, scope_type: str = "http") -> list[dict]:
    import asyncio

    async def app(scope, receive, send):
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"x-frame-options", b"ALLOW")]}
        )
        await send({"type": "http.response.body", "body": b"ok"})

    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    asyncio.run(middleware(app)({"type": scope_type}, None, send))
    return sent


def test_the_middleware_sets_the_headers_on_every_http_response_and_replaces_the_apps():
    start = _call(SecurityHeaders)[0]
    headers = dict(start["headers"])
    assert headers[b"x-frame-options"] == b"SAMEORIGIN"  # the app's own ALLOW is gone, not doubled
    assert [k for k, _ in start["headers"]].count(b"x-frame-options") == 1
    assert b"frame-ancestors 'self'" in headers[b"content-security-policy"]
    assert "frame-ancestors 'self'" in CSP and "img-src 'self' data: blob:" in CSP
    assert dict(_call(SecurityHeaders, "websocket")[0]["headers"]) == {b"x-frame-options": b"ALLOW"}


def test_streamlit_run_app_py_serves_the_app_through_an_st_app_with_the_headers():
    """``streamlit run app.py`` (and ``o3viz app``) serves the ``st.App`` that app.py names, and
    Streamlit finds it by reading app.py: should an upgrade stop finding it, or rename what is
    looked for, this fails here rather than the headers silently going."""
    from streamlit.web.server.app_discovery import discover_asgi_app

    found = discover_asgi_app(Path(APP))
    assert found.is_asgi_app and found.import_string == "app:app", found


def _headers(url: str) -> dict[str, str]:
    """The headers of the response to GET ``url`` (an HTTP error's too: a 404 keeps sites out)."""
    try:
        with urllib.request.urlopen(url, timeout=30) as r:  # noqa: S310 (our own local server)
            return {k.lower(): v for k, v in r.headers.items()}
    except urllib.error.HTTPError as e:
        return {k.lower(): v for k, v in e.headers.items()}


def assert_kept_out(headers: dict[str, str], what: str) -> None:
    """``headers`` (lower-case names) forbid framing by any other origin."""
    assert headers.get("x-frame-options") == "SAMEORIGIN", (what, headers)
    assert "frame-ancestors 'self'" in headers.get("content-security-policy", ""), (what, headers)


@pytest.mark.server
def test_every_response_of_the_real_server_keeps_other_sites_out(tmp_path):
    home = tmp_path / "home"
    with serve_app({"O3VIZ_HOME": str(home), "O3VIZ_SAMPLES": str(tmp_path)}) as url:
        for path in (
            "/",
            "/inspect",
            "/_stcore/health",
            "/app/static/none.js",
            "/component/x/index.html",
            f"{tv.ROUTE}/data/{'0' * 24}.json",
        ):
            assert_kept_out(_headers(f"{url}{path}"), path)


# ----- the served folder: private, checked, never someone else's -------------------------------


@pytest.fixture
def tmpdir_(tmp_path, monkeypatch):
    """A temp folder of the test's own, as ``tempfile.gettempdir()``."""
    t = tmp_path / "tmp"
    t.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(t))
    return t


def predictable(t: Path) -> Path:
    return t / tv._folder_name()


def plant(root: Path, *, data: bytes = HOSTILE, mode: int = 0o777) -> None:
    """The served folder as someone else would leave it at the predictable name: a data/ folder
    holding ``data`` under a view data file's name, and the folder's ``mode``."""
    root.mkdir()
    (root / "data").mkdir()
    (root / "data" / ("0" * 24 + ".json")).write_bytes(data)
    root.chmod(mode)


def _ours(served: Path) -> None:
    info = os.lstat(served)
    assert stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) == 0o700
    assert (served / "data").is_dir() and stat.S_IMODE(os.lstat(served / "data").st_mode) == 0o700
    assert not (served / "data" / ("0" * 24 + ".json")).exists()


def test_the_served_folder_is_private_and_reused_by_the_next_server(tmpdir_):
    first = tv._served()
    assert first == predictable(tmpdir_)
    _ours(first)
    assert tv._served() == first  # the view data published before is found again


@pytest.mark.parametrize("mode", [0o777, 0o755, 0o750])
def test_a_planted_folder_at_the_predictable_name_is_never_served(tmpdir_, mode):
    """World-writable, readable or enterable by others: not used, left as it is, and the app
    serves a fresh private folder of its own."""
    root = predictable(tmpdir_)
    plant(root, mode=mode)
    served = tv._served()
    assert served != root
    _ours(served)
    assert (root / "data" / ("0" * 24 + ".json")).read_bytes() == HOSTILE


def test_a_folder_of_another_user_is_never_served(tmpdir_, monkeypatch):
    """Private, but owned by someone else (another uid: chowned where the test runs as root, else
    this process pretends to be another user)."""
    if os.geteuid() == 0:
        root = predictable(tmpdir_)
        plant(root, mode=0o700)
        os.chown(root, 65534, 65534)
    else:
        real = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: real + 1)
        root = predictable(tmpdir_)
        plant(root, mode=0o700)
    served = tv._served()
    assert served != root and not (served / "data" / ("0" * 24 + ".json")).exists()


def test_a_link_at_the_predictable_name_is_never_followed(tmpdir_, tmp_path):
    """A symlink to a folder that looks exactly right (private, ours) is still not ours to trust:
    whoever made the link chose where it points."""
    elsewhere = tmp_path / "elsewhere"
    plant(elsewhere, mode=0o700)
    root = predictable(tmpdir_)
    root.symlink_to(elsewhere, target_is_directory=True)
    served = tv._served()
    assert served != root and not served.is_symlink()
    _ours(served)


def test_a_data_folder_others_may_enter_spoils_the_folder(tmpdir_):
    root = tv._served()
    (root / "data").chmod(0o777)
    served = tv._served()
    assert served != root
    _ours(served)


# ----- the views: in the page, hearing only Streamlit (and in Chromium:
# test_browser_view_security.py) ------------------------------------------------------------


def test_the_views_have_no_message_listener_and_take_no_bundle_from_their_data():
    """What can be read from the source: no script of the views listens for messages or posts
    one (the components v1 bridge did both), and the bundles they warm come from the server's
    ``O3`` constant, never from a component's data (test_browser_view_security.py checks the
    behaviour)."""
    for js in (tv.MAP_JS, tv.FIGURES_JS):
        assert not re.search(r"""addEventListener\(\s*['"]message""", js)
        assert "onmessage" not in js and "postMessage" not in js
        assert "a.warm" not in js and "a.chart" not in js and "data.warm" not in js


def test_the_data_route_serves_only_view_data_files(tmp_path, monkeypatch):
    """The app's route (``view_routes``) answers a view data file's name and nothing else: no
    path out of the folder, no file that is not private."""
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    monkeypatch.setattr(tv, "SERVED", tmp_path)
    good = "a" * 24 + ".json"
    (data / good).write_text('{"ok": 1}')
    (data / good).chmod(0o600)
    (tmp_path / "secret.json").write_text("{}")
    client = TestClient(Starlette(routes=tv.view_routes()))
    assert client.get(f"{tv.ROUTE}/data/{good}").json() == {"ok": 1}
    for bad in ("..%2Fsecret.json", "secret.json", "A" * 24 + ".json", good + ".js"):
        assert client.get(f"{tv.ROUTE}/data/{bad}").status_code == 404, bad
    (data / good).chmod(0o666)  # others may write it: not served
    assert client.get(f"{tv.ROUTE}/data/{good}").status_code == 404


# ----- text from a trace file is drawn as text ---------------------------------------------------

NOTE = "![x](http://evil/p.png) and [a](http://evil) [j](javascript:alert(1)) <img src=http://evil/q.png> :red[r] $x$"


def _rendered(md: str) -> list[str]:
    """The kinds of inline node CommonMark makes of ``md`` (what a markdown renderer draws)."""
    tokens = MarkdownIt("commonmark").parseInline(md)
    return [t.type for tok in tokens for t in (tok.children or [])]


def test_the_attention_tab_draws_a_storage_note_from_the_file_as_text(tmp_path, monkeypatch):
    trace = make_trace(12, seed=1, daa_mode="off", compression=False)
    trace.final.attention.info["storage"] = {"note": NOTE}
    trace.save(tmp_path / "hostile.o3trace.json")
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))
    monkeypatch.setenv("O3VIZ_HOME", str(tmp_path / "home"))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/inspect.py")
    at.session_state["inspect_view"] = "Attention"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    kept = [c.value for c in at.caption if "Kept at this length" in c.value]
    assert len(kept) == 1, [c.value for c in at.caption]
    kinds = set(_rendered(kept[0]))
    assert kinds <= {"text", "softbreak"}, kinds  # no image, link or HTML: the note as written
    assert kept[0] == escape_markdown(f"Kept at this length: {NOTE}.")
