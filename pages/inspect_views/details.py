"""What only the server can do for the node selected on Inspect, under the view component (which
shows the node's text, checks, every verifier's verdict and attention itself, in the browser): for
a step, its labels, a branch from it and its decision points (the token-level detail, only for
the opened step) with where that token's attention went."""

from __future__ import annotations

import streamlit as st

from o3viz.app import Trace, first_wrong_by, parse_id, reference_last_held, step_ref
from o3viz.figures import (
    STEP_TYPE_COLORS,
    STEP_TYPE_LABELS,
    escape_markdown,
    node_details,
    share_bar,
    step_decisions,
    token_attention,
    token_facts,
)
from pages.common.ui import fmt, proxy_note, show_figure
from pages.inspect_views.branch import branch_panel
from pages.inspect_views.labels import label_controls


def _round(trace: Trace, r: int):
    return next((x for x in trace.rounds if x.index == r), None)


def _step(trace: Trace, s) -> None:
    color = STEP_TYPE_COLORS.get(s.type, "#BBBBBB")
    label = STEP_TYPE_LABELS.get(s.type, s.type) + (" (type inferred)" if s.inferred else "")
    st.html(
        f'<div style="font-weight:600;font-size:15px"><span style="color:{color}">●</span> '
        f"Step {s.index} · {label}</div>"
    )
    wrong = first_wrong_by(trace, st.session_state.get("inspect_verifier"))
    if wrong is not None and (wrong.round, wrong.step) == (s.round, s.index):
        st.markdown(f":red-badge[first wrong step] {escape_markdown(wrong.reason)}")
    held = reference_last_held(trace)  # a heuristic, shown as one: no check failed there
    if held is not None and (held.round, held.step) == (s.round, s.index):
        st.markdown(f":gray-badge[reference last held here] {escape_markdown(held.line)}")
    label_controls(trace, s)
    rnd = _round(trace, s.round)
    step = next(x for x in rnd.steps if x.index == s.index)
    facts = [
        f"round {s.round}",
        f"kind {s.kind}" + (f" (branches from step {s.parent})" if s.parent is not None else ""),
        token_facts(rnd, step, s.confidence),
        f"importance {fmt(s.importance)}",
    ]
    if s.depends_on:
        facts.append("depends on steps " + ", ".join(map(str, s.depends_on)))
    st.caption(escape_markdown(" · ".join(facts)))
    branch_panel(st.session_state.inspect_key, trace, step_ref(s.round, s.index), step.text)
    decisions = step_decisions(rnd, step)
    target = None
    if decisions:
        st.markdown(f"**Decision points in this step** ({len(decisions)})")
        st.dataframe(decisions, hide_index=True, height=min(36 + 35 * len(decisions), 180))
        options = [None, *(d["token #"] for d in decisions)]
        target = st.selectbox(
            "Attention of",
            options,
            format_func=lambda t: "the whole step" if t is None else f"token #{t} (a decision point)",
            key=f"details_att_{s.id}",
        )
    proxy_note(trace)
    if target is not None:  # (the whole step's attention is in the view's details)
        show_figure(
            share_bar(token_attention(rnd, target), f"Where token #{target}'s attention went"),
            f"details_tok_fig_{s.id}",
        )


def details_panel(trace: Trace, outline, G, node: str | None) -> None:
    """``G`` is a callable returning the run graph (built only for nodes the outline lacks)."""
    item = outline.find(node) if node is not None else None
    nid = parse_id(node) if node is not None else None
    with st.container(border=True, key="details_panel"):
        if nid is not None and nid.kind == "step" and item is not None:
            _step(trace, item)
        elif (
            node is not None and item is None
        ):  # other graph nodes (segments, decision points, …) opened by a link
            det = node_details(trace, G(), node)
            st.markdown(f"**{escape_markdown(det.kind)} · {escape_markdown(node)}**")
            st.text(det.text)
        else:
            st.caption(
                "Select a step on the map or in the outline: its text, checks and attention show beside "
                "the map at once; here you can label it, branch from it and open its decision points."
            )
