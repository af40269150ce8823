"""Inspect's first view: the outline (left), the reasoning map (centre) and the selection's details
(right), in one component (``pages.common.trace_view``) that answers clicks, hovers, episodes and
Prev/Next and search in the browser. The server draws the verifier switch and the dependency
slider above it (where the trace has them), and below it what only the server can do for the selected step (labels, a
branch, the decision points' attention: ``details.details_panel``).

The component's data (``o3viz.app.inspect_view_data``) is computed once per content key (and
verifier, slider, branches and labels) and served as a file; the view reports the user's selection
(``inspect_node``, ``inspect_episode``) so the server-side panels and the URL follow it, and the
server moves the view's selection (the first wrong step, a link) by a push: a selection
the view did not report.

A trace longer than ``OVERVIEW_FROM`` steps opens on its episodes (``o3viz.find_episodes``): the
map shows one bar per episode and the outline lists episodes. Clicking an episode (on the map or
in the outline) opens its steps at full detail under a one-row strip of the whole trace; the open
episode is ``inspect_episode`` and lives in the URL (``&episode=N``)."""

from __future__ import annotations

import streamlit as st

from o3viz.app import (
    OVERVIEW_FROM,
    O3vizError,
    Trace,
    inspect_view_data,
    labels_on,
    make_id,
    parse_index,
    verifier_names,
)
from pages.common.derived import episodes_of, graph_of, outline_of
from pages.common.trace_view import publish, trace_view
from pages.common.ui import select_node, selected_node, store
from pages.inspect_views.branch import forks_of
from pages.inspect_views.details import details_panel

MAP_HEIGHT = 410  # px of the component: outline, map and details side by side


def open_episode(episodes):
    """The open episode (``inspect_episode``, as the URL has it), or None for the overview."""
    k = parse_index(st.session_state.inspect_episode, len(episodes))
    return None if k is None else episodes[k]


def _dep_min(key: str, outline) -> float:
    if not outline.has_dependencies:
        return 0.0
    return st.slider(
        "Dependency arcs into steps of importance at least",
        0.0,
        1.0,
        0.0,
        0.05,
        key=f"map_dep_min_{key}",
        help="Importance is each step's rank within the trace (0 to 1). Raise it to keep only "
        "the arcs that lead into the steps that mattered most.",
    )


def _verifier_switch(key: str, trace: Trace) -> str | None:
    """Whose verdicts the map shows (the first wrong step and the checks lane): the checks, or a
    verifier the trace holds (``o3viz verify``); shown only when the trace holds one. ``None``
    means the checks."""
    names = verifier_names(trace)
    if not names:
        st.session_state.inspect_verifier = None
        return None
    choice = st.segmented_control(
        "First wrong step by",
        ["checks", *names],
        default="checks",
        key=f"verifier_{key}",
        help="Which verifier marks the first wrong step (on the map and in the details) and fills "
        "the map's checks lane with its ok / wrong / unsure verdicts",
    )
    st.session_state.inspect_verifier = None if choice in (None, "checks") else choice
    return st.session_state.inspect_verifier


def _on_view(view_key: str) -> None:
    """The view reported the user's selection: the server-side panels and the URL follow it."""
    v = st.session_state.get(view_key)
    if not isinstance(v, dict):
        return
    node = v.get("id") if isinstance(v.get("id"), str) else None
    ep = v.get("episode")
    ep = str(ep) if isinstance(ep, int) and not isinstance(ep, bool) else None
    select_node(node)
    st.session_state.inspect_episode = ep
    st.session_state.inspect_reported = (node, ep)


@st.cache_resource(max_entries=32, show_spinner="Drawing the map…")
def _view_url(
    key: str,
    verifier,
    dep_min: float,
    forks_sig: str,
    labels_sig: tuple,
    height: int,
    _trace,
    _outline,
    _episodes,
    _forks,
    _labels,
) -> str:
    """The view's data for one trace (and verifier, slider, branches, labels), computed once and
    written as a file the component fetches."""
    data = inspect_view_data(
        _trace,
        _outline,
        verifier=verifier,
        episodes=_episodes,
        dep_min=dep_min,
        forks=_forks,
        labels=_labels,
        height=height,
    )
    return publish(data)


def view_url(key: str, trace: Trace, dep_min: float = 0.0, height: int = MAP_HEIGHT) -> str:
    """The URL of ``trace``'s view data as Inspect shows it now (cached per content key)."""
    outline = outline_of(key, trace)
    long = len(outline.steps) > OVERVIEW_FROM
    episodes = episodes_of(key, trace)[0] if long else None
    forks = forks_of(key, trace)
    labels = labels_of(key)
    verifier = st.session_state.inspect_verifier
    return _view_url(
        key,
        verifier,
        dep_min,
        repr(forks),
        tuple(sorted(labels.items())),
        height,
        trace,
        outline,
        episodes,
        forks,
        labels,
    )


def labels_of(key: str) -> dict[str, str]:
    """Node id → verdict of this session's labeller on the trace (everyone's, before a name): the
    glyphs on the map and the outline (as ``labels.marked_map`` draws them)."""
    name = st.session_state.labeller
    try:
        labels = labels_on(store(), key)
    except O3vizError:
        return {}
    return {make_id("step", x.round, x.step): x.verdict for x in labels if name is None or x.labeller == name}


def _push(node: str | None, episode: str | None) -> dict:
    """What the server wants the view to show: raised only when the selection did not come from
    the view itself (search, the first wrong step button, a link), so a rerun after a click never
    moves the view back."""
    want = (node, episode)
    if st.session_state.inspect_reported != want:
        st.session_state.inspect_push += 1
        st.session_state.inspect_reported = want
    return {"n": st.session_state.inspect_push, "id": node, "episode": episode}


MAP_DRAWN = "inspect_map_drawn"  # the map was drawn in this session: the kept tabs draw in every run


def _map_drawn() -> None:
    st.session_state[MAP_DRAWN] = True


def map_view(key: str, trace: Trace) -> None:
    """The first view, drawn in every run (``pages.inspect.KEPT``): while another tab is open,
    Streamlit keeps the component's frame, hidden, with the map drawn, and coming back to the map
    shows it at once."""
    outline = outline_of(key, trace)
    node = selected_node()
    if node is not None and outline.find(node) is None and node not in graph_of(key, trace):
        node = None  # (the graph is built only for ids the outline does not know)
    long = len(outline.steps) > OVERVIEW_FROM
    episodes = episodes_of(key, trace)[0] if long else []
    ep = open_episode(episodes) if long else None
    height = MAP_HEIGHT
    if verifier_names(trace) or outline.has_dependencies:  # a row only where there is a choice
        height -= 72  # (the view stays on the first screen)
        switch, slider = st.columns([2, 3], vertical_alignment="center")
        with switch:
            _verifier_switch(key, trace)
        with slider:
            dep_min = _dep_min(key, outline)
    else:
        _verifier_switch(key, trace)  # (none to show: it says the checks mark the first wrong step)
        dep_min = 0.0
    view_key = f"o3view_{key}"
    trace_view(
        view_url(key, trace, dep_min, height),
        key=view_key,
        push=_push(node, None if ep is None else str(ep.index)),
        height=height,
        on_change=lambda: _on_view(view_key),
        on_drawn=None if st.session_state.get(MAP_DRAWN) else _map_drawn,
    )
    details_panel(trace, outline, lambda: graph_of(key, trace), node)
