"""Issue 39: Inspect's view writes ``node`` into the URL from the browser (no rerun), so the URL the
server reads next differs from what it last wrote in that one parameter. ``url_state`` took that
for a new link and re-applied every parameter, ``view`` too, which still named the tab of before
a switch: a switch to Attention made right after a click on the map went back to the map (the
benchmark's tab switch waited five minutes for a figure that never showed). Now only the changed
parameters are applied, and the open tab (``view``) only from a fresh session or with a new trace:
a rerun asked for while the server's last URL write was on its way carries the URL of before it."""

from __future__ import annotations

import shutil

from streamlit.testing.v1 import AppTest

from o3viz.paths import REPO_ROOT
from o3viz.store.store import content_key

APP = str(REPO_ROOT / "app.py")
SAMPLE = REPO_ROOT / "sample_traces" / "solve_math_gsm8k.o3trace.json.gz"


def test_a_node_written_by_the_view_does_not_undo_a_tab_switch(tmp_path, monkeypatch):
    shutil.copyfile(SAMPLE, tmp_path / SAMPLE.name)
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))
    monkeypatch.setenv("O3VIZ_HOME", str(tmp_path / "home"))
    key = content_key(SAMPLE.read_bytes())
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/inspect.py")
    at.query_params["trace"] = key
    at.run()
    assert not at.exception
    assert at.session_state["inspect_view"] == "Reasoning map"
    assert at.query_params["view"] == "Reasoning map"  # what the server wrote
    # the reader clicks a step (the view puts it in the URL itself), then the Attention tab (its
    # callback sets the view); the URL still names the map until this run writes it
    at.query_params["node"] = "step:0:2"
    at.session_state["inspect_view"] = "Attention"
    at.run()
    assert not at.exception
    assert at.session_state["inspect_view"] == "Attention"  # before: back to "Reasoning map"
    assert at.session_state["inspect_node"] == "step:0:2"  # the node the URL brought is applied
    assert at.query_params["view"] == "Attention"
    # a rerun asked for while that URL write was on its way carries the URL of before it: the
    # tab it names is an echo of the page's own, not a link
    at.query_params["view"] = "Reasoning map"
    at.run()
    assert at.session_state["inspect_view"] == "Attention"
    # a link in a fresh session opens the tab it names
    fresh = AppTest.from_file(APP, default_timeout=120)
    fresh.run()
    fresh.switch_page("pages/inspect.py")
    fresh.query_params["trace"] = key
    fresh.query_params["view"] = "Tokens"
    fresh.run()
    assert fresh.session_state["inspect_view"] == "Tokens"
