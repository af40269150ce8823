"""Search on Inspect (issue 22, finding 12): a query selects its first match at once, moves the map
there (on a long trace it opens the episode that holds the match), and a query without a match
says so in one line, with the query shown as typed (escaped, never rendered as markdown)."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from o3viz.app import build_outline, episode_of, find_episodes, search_outline
from o3viz.paths import REPO_ROOT
from o3viz.testing.synthetic import make_trace

APP = str(REPO_ROOT / "app.py")


def _inspect(at: AppTest) -> AppTest:
    at.run()
    at.switch_page("pages/inspect.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _trace(at: AppTest):
    return at.session_state["library"][at.session_state["inspect_key"]].trace


@pytest.fixture
def short(tmp_path, monkeypatch):
    make_trace(12, seed=1, rounds=2).save(tmp_path / "a_short.o3trace.json")
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))
    return _inspect(AppTest.from_file(APP, default_timeout=60))


def test_a_query_selects_its_first_match_and_moves_the_map_there(short):
    at = short
    key = at.session_state["inspect_key"]
    trace = _trace(at)
    word = trace.rounds[1].steps[4].text.split()[0].lower()
    first = search_outline(build_outline(trace), word)[0]
    assert at.session_state["inspect_node"] is None
    at.text_input(key=f"map_search_{key}").input(word).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["inspect_node"] == first
    assert at.session_state["map_focus"] == first
    assert at.selectbox(key=f"map_match_{key}").value == first  # the pick list shows what is selected


def test_a_query_without_a_match_says_no_match_and_keeps_the_selection(short):
    at = short
    key = at.session_state["inspect_key"]
    at.session_state["inspect_node"] = "step:0:2"
    at.run()
    at.text_input(key=f"map_search_{key}").input("**zq_nowhere**").run()
    assert not at.exception, [e.value for e in at.exception]
    said = [c.value for c in at.caption if "no match for" in c.value]
    assert said and "\\*\\*zq\\_nowhere\\*\\*" in said[0]  # escaped: shown as typed, not as bold
    assert at.session_state["inspect_node"] == "step:0:2"
    assert not [b for b in at.selectbox if b.key == f"map_match_{key}"]  # no empty pick list


def test_on_a_long_trace_a_query_opens_the_episode_that_holds_its_first_match(
    tmp_path, monkeypatch, shared_data
):
    from o3viz.testing.long_r1 import long_r1_trace

    long_r1_trace(400).save(tmp_path / "long_r1.o3trace.json.gz")
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))
    at = _inspect(AppTest.from_file(APP, default_timeout=120))
    key = at.session_state["inspect_key"]
    episodes = find_episodes(build_outline(_trace(at)))
    ep = episode_of(episodes, 0, 300)
    assert ep is not None and ep.index > 0 and at.session_state["inspect_episode"] is None
    at.text_input(key=f"map_search_{key}").input("step:0:300").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["inspect_node"] == "step:0:300"
    assert at.session_state["inspect_episode"] == str(ep.index)
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert any(t.startswith(f"Episode {ep.index}: steps") for t in titles)
