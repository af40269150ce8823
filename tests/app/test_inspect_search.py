"""Search on Inspect (issue 22, finding 12; since issue 39 it runs in the browser, in the view
component: tests/app/test_browser_inspect_client.py types a query, sees its first match selected,
the others ringed, "no match for …" shown as typed, and on a long trace the episode that holds the
match opened). Here: the view's search index finds what ``search_outline`` finds, and every match
on a long trace knows the episode that holds it."""

from __future__ import annotations

import pytest

from o3viz.app import build_outline, episode_of, find_episodes, inspect_view_data, search_outline
from o3viz.testing.synthetic import make_trace


def _found(view: dict, query: str) -> list[str]:
    """What view.js's search keeps: ids whose id or lower-cased text holds the query (first 50)."""
    q = query.strip().lower()
    return [i for i, text in view["find"] if q in i or q in text][:50] if q else []


@pytest.mark.parametrize("query", ["step:0:3", "STEP:1:", "check", "zq_nowhere", "  "])
def test_the_views_search_finds_what_search_outline_finds(query):
    trace = make_trace(12, seed=1, rounds=2)
    word = trace.rounds[1].steps[4].text.split()[0]
    view = inspect_view_data(trace)
    for q in (query, word, word.upper()):
        assert _found(view, q) == search_outline(build_outline(trace), q)


def test_on_a_long_trace_a_match_knows_the_episode_that_holds_it(shared_data):
    from o3viz.testing.long_r1 import long_r1_trace

    trace = long_r1_trace(400)
    view = inspect_view_data(trace)
    ep = episode_of(find_episodes(build_outline(trace)), 0, 300)
    assert ep is not None and ep.index > 0
    assert _found(view, "step:0:300") == ["step:0:300"]
    assert view["node_ep"]["step:0:300"] == ep.index  # the view opens it when the match is selected
