"""The details of the node selected on Inspect, shown beside the map: a step's text, type, checks,
decision points (the token-level detail, only for the opened step) and where its attention went
(or, for a chosen decision point, where that token's attention went); a check's verdict and
message; a round's verdict and feedback; an answer and its verdict."""

from __future__ import annotations

import streamlit as st

from o3viz.app import Trace, first_wrong_by, grading, parse_id, reference_last_held, step_verdicts
from o3viz.figures import (
    STEP_TYPE_COLORS,
    STEP_TYPE_LABELS,
    escape_markdown,
    node_details,
    share_bar,
    step_decisions,
    step_targets,
    token_attention,
    token_facts,
)
from pages.common.ui import check_md, fmt, proxy_note, show_figure, verdict_md
from pages.inspect_views.branch import branch_panel
from pages.inspect_views.labels import label_controls

PANEL_HEIGHT = 430


def _round(trace: Trace, r: int):
    return next((x for x in trace.rounds if x.index == r), None)


def _checks(checks, trace: Trace) -> None:
    for c in checks:
        nid = parse_id(getattr(c, "id", None))  # an outline's check: read its trace check (its rule)
        if nid is not None and nid.kind == "check" and (rnd := _round(trace, nid.round)) is not None:
            c = rnd.checks[nid.index] if nid.index < len(rnd.checks) else c
        st.markdown(check_md(c) + (f" · {escape_markdown(c.message[:300])}" if c.message else ""))


_VERDICT_COLOR = {"ok": "green", "wrong": "red"}


def _verdicts(rnd, step: int) -> None:
    """Every verifier's verdict on the step (``o3viz verify``), side by side."""
    rows = step_verdicts(rnd, step)
    if rows:
        st.markdown("**Verifiers**")
    for v in rows:
        word = v.verdict or "not judged"
        badge = f":{_VERDICT_COLOR.get(v.verdict or '', 'gray')}-badge[{word}]"
        score = f" · score {v.score:.2f}" if v.score is not None else ""
        st.markdown(f"{badge} **{escape_markdown(v.verifier)}** · {escape_markdown(v.kind)}{score}")


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
    st.text(s.text)
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
    branch_panel(st.session_state.inspect_key, trace, f"{s.round}:{s.index}", step.text)
    _checks(s.checks, trace)
    _verdicts(rnd, s.index)
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
    if target is None:
        pairs = step_targets(rnd, s.index)
        show_figure(share_bar(pairs, f"Where step {s.index}'s attention went"), f"details_att_fig_{s.id}")
    else:
        show_figure(
            share_bar(token_attention(rnd, target), f"Where token #{target}'s attention went"),
            f"details_tok_fig_{s.id}",
        )


def details_panel(trace: Trace, outline, G, node: str | None) -> None:
    """``G`` is a callable returning the run graph (built only for nodes the outline lacks)."""
    with st.container(height=PANEL_HEIGHT, border=True, key="details_panel"):
        if node is None:
            st.markdown("**Details**")
            st.caption(
                "Click a step on the map or in the outline to see its text, checks, decision points and attention."
            )
            final = outline.rounds[-1] if outline.rounds else None
            if final is not None:
                st.markdown(f"**Final answer** {verdict_md(final.verdict)}")
                st.text(final.answer or "(no answer)")
                g = grading(trace)
                for line in g.lines():
                    st.caption(escape_markdown(line))
                wrong = first_wrong_by(trace, st.session_state.get("inspect_verifier"))
                if wrong is not None:
                    st.markdown(f"**First wrong step:** step {wrong.step} · {escape_markdown(wrong.reason)}")
                held = reference_last_held(trace)
                if held is not None:
                    st.caption(escape_markdown(held.line[0].upper() + held.line[1:] + "."))
                _checks(final.checks, trace)
            return
        item = outline.find(node)
        nid = parse_id(node)
        kind = nid.kind if nid is not None else None
        if kind == "step" and item is not None:
            _step(trace, item)
        elif kind == "check" and item is not None:
            c = _round(trace, nid.round).checks[nid.index]
            st.markdown(f"**Check · {escape_markdown(item.kind)}**")
            st.markdown(check_md(c))
            if item.message:
                st.text(item.message)
            st.caption(
                escape_markdown(
                    " · ".join(
                        f"{k} {fmt(v)}"
                        for k, v in (
                            (
                                "rule",
                                None
                                if c.verdict == "correct" and (c.rule or "").endswith("_mismatch")
                                else c.rule,
                            ),
                            ("expression", c.expression),
                            ("stated", c.stated),
                            ("computed", c.computed),
                            ("step", c.step),
                        )
                        if v is not None
                    )
                )
            )
        elif kind == "answer" and item is not None:
            st.markdown(f"**Answer of round {item.index}** {verdict_md(item.verdict)}")
            st.text(item.answer or "")
            _checks(item.checks, trace)
        elif kind == "round" and item is not None:
            st.markdown(f"**Round {item.index}** {verdict_md(item.verdict)}")
            st.caption(escape_markdown(f"{len(item.steps)} steps · action {fmt(item.action)}"))
            if item.feedback:
                st.markdown("**Feedback to the next round**")
                st.text(item.feedback)
            _checks(item.checks, trace)
        else:  # other graph nodes (segments, decision points, …) opened by a link
            det = node_details(trace, G(), node)
            st.markdown(f"**{escape_markdown(det.kind)} · {escape_markdown(node)}**")
            st.text(det.text)
