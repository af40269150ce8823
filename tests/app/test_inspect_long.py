"""Inspect on a long R1-style import (through the store, as the app gets it): the map opens on
episodes, the outline lists episodes, an episode opens from the URL and the URL keeps it, and a
step of imported text says it has no token data."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from o3viz.paths import REPO_ROOT

APP = str(REPO_ROOT / "app.py")


@pytest.fixture
def long_sample(tmp_path, monkeypatch, shared_data):
    from o3viz.testing.long_r1 import long_r1_trace

    long_r1_trace(400).save(tmp_path / "long_r1.o3trace.json.gz")
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _view(at):
    """The args Inspect gave its view component and the view data they name."""
    from pages.common.trace_view import published

    args = json.loads(at.get("bidi_component")[0].proto.json)
    return args, published(args["url"])


def test_a_long_trace_opens_on_episodes_and_an_episode_from_the_url_opens_its_steps(long_sample):
    # (issue 39: the map, the strip and Prev/Next/Overview are drawn by the view component in the
    # browser, so this reads what the server hands it; tests/app/test_browser_inspect_client.py
    # clicks them)
    at = long_sample
    at.switch_page("pages/inspect.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    args, view = _view(at)
    assert "Where did the reasoning turn?" in view["overview"]["layout"]["title"]["text"]
    assert args["push"]["episode"] is None  # the view opens on the overview
    at.query_params["episode"] = "2"
    at.run()
    args, view = _view(at)
    assert view["strip"]["layout"]["title"]["text"].startswith("Whole trace")
    assert view["episodes"][2]["title"].startswith("Episode 2: steps")
    assert args["push"]["episode"] == "2"  # the view opens episode 2
    assert at.session_state["inspect_episode"] == "2" and at.query_params["episode"] == "2"
    rows = [r for r in view["outline"] if r.get("ep") == 2]
    assert rows and all(r["id"] in view["nodes"] for r in rows)  # episode 2's steps, with their details


def test_a_step_of_imported_text_says_it_has_no_token_data(long_sample):
    at = long_sample
    at.switch_page("pages/inspect.py")
    at.session_state["inspect_node"] = "step:0:3"
    at.run()
    captions = [c.value.replace("\\", "") for c in at.caption]
    assert any("no token data (imported text)" in c for c in captions)
    assert not any("tokens 0–0" in c for c in captions)
