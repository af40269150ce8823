"""Inspect's first view: the outline (left), the reasoning map (centre) and the selection's details
(right), all in one row so the details are in view at desktop widths. Selecting in the outline, on
the map, by search or by URL selects the same node everywhere (``pages.common.ui.select_node``).

A trace longer than ``OVERVIEW_FROM`` steps opens on its episodes (``o3viz.find_episodes``): the
map shows one bar per episode and the outline lists episodes. Clicking an episode (on the map, in
the outline or in the picker) opens its steps at full detail under a one-row strip of the whole
trace; the open episode is ``inspect_episode`` and lives in the URL (``&episode=N``)."""

from __future__ import annotations

import streamlit as st

from o3viz.app import (
    OVERVIEW_FROM,
    Trace,
    episode_of,
    episode_outline,
    first_wrong_by,
    parse_id,
    parse_index,
    search_outline,
    verifier_names,
)
from o3viz.figures import (
    clip_label,
    episode_items,
    episode_map_figure,
    escape_markdown,
    outline_items,
    reasoning_map_figure,
)
from pages.common.derived import episodes_of, graph_of, outline_of
from pages.common.ui import select_node, selected_node, show_figure
from pages.inspect_views.branch import forks_of
from pages.inspect_views.details import details_panel
from pages.inspect_views.labels import marked_map, marked_rows
from pages.inspect_views.outline import outline_list

MAP_HEIGHT = 430
STRIP_HEIGHT = 96  # the whole-trace strip above an open episode


def _step_of(node: str, outline) -> tuple[int, int] | None:
    """(round, step) that holds ``node`` on the map: a step itself, a check's judged step, or a
    round's answer and whole-round checks, which sit after its last step."""
    nid = parse_id(node)
    if nid is None or nid.kind not in ("step", "check", "answer"):
        return None  # (a round or the task: no one episode holds it)
    if nid.kind == "step":
        return nid.round, nid.index
    item = outline.find(node) if outline is not None else None
    if getattr(item, "step", None) is not None:  # a check that judged one step
        return nid.round, item.step
    rnd = next((r for r in outline.rounds if r.index == nid.round), None) if outline is not None else None
    return (rnd.index, len(rnd.steps) - 1) if rnd is not None and rnd.steps else None


def _pick(node: str, episodes, outline=None) -> None:
    """A click anywhere on the map or the outline: an episode opens (or closes, when it is the
    open one); a node is selected, and on a long trace the episode that holds it opens."""
    if node.startswith("episode:"):
        k = node.split(":", 1)[1]
        st.session_state.inspect_episode = None if st.session_state.inspect_episode == k else k
        return
    select_node(node)
    at = _step_of(node, outline) if episodes else None
    ep = episode_of(episodes, *at) if at is not None else None
    if ep is not None:
        st.session_state.inspect_episode = str(ep.index)


def _on_map_click(chart_key: str, episodes=(), outline=None) -> None:
    points = (st.session_state.get(chart_key) or {}).get("selection", {}).get("points", [])
    ids = [p.get("customdata") for p in points if isinstance(p.get("customdata"), str)]
    if ids:
        _pick(ids[0], episodes, outline)


def _on_outline_click(list_key: str, episodes=(), outline=None) -> None:
    picked = (st.session_state.get(list_key) or {}).get("select")
    if isinstance(picked, str):
        _pick(picked, episodes, outline)


def _on_search(box_key: str, episodes=(), outline=None) -> None:
    if st.session_state.get(box_key):
        _pick(st.session_state[box_key], episodes, outline)
        st.session_state.map_focus = st.session_state[box_key]


def _on_query(key: str, outline, episodes=()) -> None:
    """A new query selects its first match at once (and opens the episode that holds it); the
    pick list below then offers the others."""
    query = st.session_state.get(f"map_search_{key}") or ""
    matches = search_outline(outline, query) if query.strip() else []
    if matches:
        st.session_state[f"map_match_{key}"] = matches[0]
        _on_search(f"map_match_{key}", episodes, outline)


def _search(key: str, outline, episodes=()) -> list[str]:
    query = st.text_input(
        "Find a step",
        key=f"map_search_{key}",
        placeholder="Find a step: text or id (wait, step:0:3)",
        label_visibility="collapsed",
        on_change=_on_query,
        args=(key, outline, episodes),
    )
    matches = search_outline(outline, query) if query.strip() else []
    if query.strip() and not matches:
        st.caption(f"no match for “{escape_markdown(clip_label(query, 40))}”")
    elif matches:
        st.selectbox(
            f"{len(matches)} match{'es' if len(matches) != 1 else ''}",
            matches,
            index=0,  # the first match, which the query selected
            key=f"map_match_{key}",
            format_func=lambda n: outline.label(n),
            on_change=_on_search,
            args=(f"map_match_{key}", episodes, outline),
            label_visibility="collapsed",
        )
    return matches


def query_open(key: str) -> bool:
    return bool(st.session_state.get(f"map_search_{key}"))


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


def _episode_bar(episodes, ep) -> None:
    """Back to the overview, the previous and next episode, and where this one sits."""
    back, prev, nxt, where = st.columns([1.2, 1, 1, 3.4], vertical_alignment="center")
    for col, label, target in (
        (back, "Overview", None),
        (prev, "◀ Prev", ep.index - 1 if ep.index > 0 else None),
        (nxt, "Next ▶", ep.index + 1 if ep.index + 1 < len(episodes) else None),
    ):
        if col.button(label, key=f"ep_nav_{label}", disabled=label != "Overview" and target is None):
            st.session_state.inspect_episode = None if target is None else str(target)
            st.rerun()
    where.caption(
        f"Episode {ep.index} of {len(episodes)} · steps {ep.start}–{ep.end} ({ep.length}) · "
        f"opens with {ep.opens_with.replace('_', '-')}"
    )


def _long_map(key: str, outline, episodes, first_wrong, node, matches) -> None:
    """The overview of episodes, or the open episode's steps under the whole-trace strip."""
    ep = open_episode(episodes)
    if ep is None:
        fig = episode_map_figure(outline, episodes, selected=node, first_wrong=first_wrong, height=MAP_HEIGHT)
        chart_key = f"overview_{key}_{node}"
        show_figure(
            fig,
            chart_key,
            on_select=lambda: _on_map_click(chart_key, episodes, outline),
            selection_mode="points",
        )
        return
    _episode_bar(episodes, ep)
    strip = episode_map_figure(
        outline, episodes, selected=node, first_wrong=first_wrong, open_episode=ep.index, strip=True
    )
    strip_key = f"strip_{key}_{ep.index}_{node}"
    show_figure(
        strip,
        strip_key,
        download=False,
        on_select=lambda: _on_map_click(strip_key, episodes, outline),
        selection_mode="points",
    )
    sub = episode_outline(outline, ep)
    dep_min = _dep_min(key, outline)
    height = MAP_HEIGHT - STRIP_HEIGHT - 44 - (76 if outline.has_dependencies else 0)
    fig = reasoning_map_figure(
        sub,
        selected=node,
        highlight=matches,
        lanes=[*outline.types(), "checks", "answer"],
        height=max(height, 260),
        dep_min=dep_min,
        show_answer=sub.rounds[0].answer is not None,
        title=f"Episode {ep.index}: steps {ep.start}–{ep.end} of {len(outline.steps)}",
    )
    chart_key = f"map_{key}_{ep.index}_{node}"
    show_figure(
        fig, chart_key, on_select=lambda: _on_map_click(chart_key, episodes, outline), selection_mode="points"
    )


def _verifier_switch(key: str, trace: Trace) -> str | None:
    """Whose verdicts mark the first wrong step: the checks, or a verifier the trace holds
    (``o3viz verify``); shown only when the trace holds one. ``None`` means the checks."""
    names = verifier_names(trace)
    if not names:
        st.session_state.inspect_verifier = None
        return None
    choice = st.segmented_control(
        "First wrong step by",
        ["checks", *names],
        default="checks",
        key=f"verifier_{key}",
        help="Which verifier marks the first wrong step on the map and in the details",
    )
    st.session_state.inspect_verifier = None if choice in (None, "checks") else choice
    return st.session_state.inspect_verifier


def map_view(key: str, trace: Trace) -> None:
    outline = outline_of(key, trace)
    node = selected_node()
    if node is not None and outline.find(node) is None and node not in graph_of(key, trace):
        node = None  # (the graph is built only for ids the outline does not know)
    long = len(outline.steps) > OVERVIEW_FROM
    episodes, first_wrong = episodes_of(key, trace) if long else ([], None)
    if not long:
        wrong = first_wrong_by(trace, _verifier_switch(key, trace))
        first_wrong = wrong.node if wrong else None
    left, centre, right = st.columns([1.25, 2.45, 1.5], gap="small")
    with left:
        matches = _search(key, outline, episodes)
        list_key = f"outline_{key}"
        ep = open_episode(episodes) if long else None
        outline_list(
            marked_rows(
                episode_items(outline, episodes, ep.index if ep else None, first_wrong)
                if long
                else outline_items(outline, first_wrong)
            ),
            node,
            key=list_key,
            height=MAP_HEIGHT - 100 if query_open(key) else MAP_HEIGHT - 52,
            on_select=lambda: _on_outline_click(list_key, episodes, outline),
        )
    with centre:
        if long:
            _long_map(key, outline, episodes, first_wrong, node, matches)
        else:
            focus = node if st.session_state.map_focus == node else None
            dep_min = _dep_min(key, outline)
            height = MAP_HEIGHT - 76 if outline.has_dependencies else MAP_HEIGHT  # the slider's room
            fig = reasoning_map_figure(
                outline,
                selected=node,
                highlight=matches,
                focus=focus,
                height=height,
                dep_min=dep_min,
                first_wrong=first_wrong,
                forks=forks_of(key, trace),
            )
            chart_key = f"map_{key}_{node}"
            show_figure(
                marked_map(fig),
                chart_key,
                on_select=lambda: _on_map_click(chart_key),
                selection_mode="points",
            )
    with right:
        details_panel(trace, outline, lambda: graph_of(key, trace), node)
