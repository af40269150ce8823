"""Issue 38, finding 13: a hostile ``?episode=`` (a digit ``int`` cannot read, 5,000 digits, out of
range) opens the overview on Inspect, never a traceback: the page reads it with
``o3viz.trace.ids.parse_index``."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from o3viz.paths import REPO_ROOT
from o3viz.trace.ids import parse_index

APP = str(REPO_ROOT / "app.py")


@pytest.mark.parametrize("raw", ["²", "9" * 5000, "-1", " 1", "1e3"])
def test_parse_index_refuses_what_is_not_a_plain_position(raw):
    assert parse_index(raw, 10) is None  # before: int("²") raised, int("9" * 5000) raised


def test_a_hostile_episode_in_the_url_opens_the_overview(tmp_path, monkeypatch, shared_data):
    from o3viz.testing.long_r1 import long_r1_trace

    long_r1_trace(400).save(tmp_path / "long_r1.o3trace.json.gz")
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/inspect.py")
    at.run()
    for raw in ("²", "9" * 5000, "999"):
        at.query_params["episode"] = raw
        at.run()
        assert not at.exception, (raw[:10], [e.value for e in at.exception])  # before: ValueError
