"""Inspect on a long R1-style import (through the store, as the app gets it): the map opens on
episodes, the outline lists episodes, an episode opens from the URL and the URL keeps it, and a
step of imported text says it has no token data."""

from __future__ import annotations

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


def _figure_titles(at) -> list[str]:
    import json

    return [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]


def test_a_long_trace_opens_on_episodes_and_an_episode_from_the_url_opens_its_steps(long_sample):
    at = long_sample
    at.switch_page("pages/inspect.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Where did the reasoning turn?" in t for t in _figure_titles(at))
    at.query_params["episode"] = "2"
    at.run()
    titles = _figure_titles(at)
    assert any(t.startswith("Whole trace") for t in titles)
    assert any(t.startswith("Episode 2: steps") for t in titles)
    assert at.session_state["inspect_episode"] == "2" and at.query_params["episode"] == "2"
    at.button(key="ep_nav_Overview").click().run()
    assert at.session_state["inspect_episode"] is None and "episode" not in at.query_params
    assert any("Where did the reasoning turn?" in t for t in _figure_titles(at))


def test_a_step_of_imported_text_says_it_has_no_token_data(long_sample):
    at = long_sample
    at.switch_page("pages/inspect.py")
    at.session_state["inspect_node"] = "step:0:3"
    at.run()
    captions = [c.value.replace("\\", "") for c in at.caption]
    assert any("no token data (imported text)" in c for c in captions)
    assert not any("tokens 0–0" in c for c in captions)
