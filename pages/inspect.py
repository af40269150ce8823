"""Inspect one trace: the question, the final answer and its verdict, the totals, then one tab per
view. Views are registered in ``VIEWS`` below, one line each: ``(tab title, render)`` where
``render(key, trace)`` draws the view for the library entry ``key`` (``pages.common.ui.selected_node()``
is the node selected anywhere on the page). Only the open tab's view runs, and the views in ``KEPT``
whatever tab is open: they answer in the browser (the map, and the Attention tab's step heatmap),
so a switch shows them at once, and the switch's run sends the page what it already has. The first view (outline,
map and details) is one component that answers clicks in the browser (``pages.common.trace_view``)
and reports the selection back. The trace, the open tab
and the selected node live in session state and in the URL (``?trace=KEY&node=ID&view=TITLE``)."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from o3viz.app import (
    Trace,
    disagreement_line,
    first_wrong_by,
    grading,
    parse_id,
    summarize,
    verifier_names,
)
from o3viz.figures import clip_label, escape_markdown, readable
from pages.common.ui import (
    fmt,
    library,
    need_traces,
    pick_trace,
    require_router,
    select_node,
    sync_url,
    url_state,
    verdict_md,
)
from pages.inspect_views.branch import branch_header
from pages.inspect_views.importance import importance_view
from pages.inspect_views.map import MAP_DRAWN, map_view
from pages.inspect_views.routing_lens import internals_view
from pages.inspect_views.tabs import (
    attention_tab,
    compression_tab,
    tokens_tab,
    verification_tab,
)

View = Callable[[str, Trace], None]
VIEWS: list[tuple[str, View]] = [
    ("Reasoning map", map_view),
    ("Importance", importance_view),
    ("Attention", attention_tab),
    ("Compression", compression_tab),
    ("Verification", verification_tab),
    ("Tokens", tokens_tab),
    ("Inside the layers", internals_view),
]
# The views drawn in every run, their tab open or not (the others wait for their tab to open): they
# answer in the browser, so a switch to their tab shows them at once (their frames load plotly.js
# once the map is drawn and the reader pauses), and as they are the same whatever tab is open, a
# switch between them changes nothing on the page (their server widgets keep their state too).
KEPT = ("Reasoning map", "Attention")
# ... but on a session's first map the others wait for it: the view says when the map is drawn and
# the reader pauses (``MAP_DRAWN``). Drawn in the first run, the Attention tab's widgets held the
# first map back while their bundles loaded (about 0.2 s on the captured sample).
# Views that need data most traces lack: hidden where the trace has none, with the reason in one line.
NEEDS: dict[str, tuple[Callable[[Trace], bool], str]] = {
    "Compression": (lambda t: t.compression is not None, "the run did not use compression"),
    "Inside the layers": (
        lambda t: any(
            r.internals is not None and (r.internals.routing or r.internals.lens) for r in t.rounds
        ),
        "no MoE routing or logit lens was recorded: o3viz run --moefy 16,4 --logit-lens 0,10,20,29, "
        "or the Run page's Inside the layers, records them",
    ),
}


def _views(trace: Trace) -> tuple[list[tuple[str, View]], tuple[str, str] | None]:
    """The views this trace has data for, and (one line naming the hidden ones, why)."""
    shown = [(t, v) for t, v in VIEWS if t not in NEEDS or NEEDS[t][0](trace)]
    hidden = [t for t, _ in VIEWS if t in NEEDS and not NEEDS[t][0](trace)]
    # one short line beside the tabs; the reasons (and how to record the data) on hover
    why = "; ".join(f"{t}: {NEEDS[t][1]}" for t in hidden)
    return shown, (f"Not recorded for this trace: {', '.join(hidden)}", why) if hidden else None


def _node_in(trace: Trace, node: str) -> bool:
    """Whether a node id (from the URL: anyone's text) names a round, step or check of ``trace``."""
    n = parse_id(node)
    if n is None:
        return False
    if n.round is None:
        return n.kind == "task" or (n.kind == "comp" and trace.compression is not None)
    rnd = next((r for r in trace.rounds if r.index == n.round), None)
    if rnd is None:
        return False
    sizes = {"step": len(rnd.steps), "check": len(rnd.checks), "dp": len(rnd.tokens)}
    return n.index is None or n.kind not in sizes or 0 <= n.index < sizes[n.kind]


def _answer_md(trace: Trace, answer: str) -> str:
    """The final answer, its verdict (or that the run stopped at its limit: not graded as if
    complete) and the reference next to it ("expected 18")."""
    g = grading(trace)
    shown = escape_markdown(clip_label(answer, 40)) if answer else "—"
    verdict = verdict_md(trace.final.verdict if trace.rounds else None)
    if g.not_graded is not None:  # cut short (at the limit, or by hand): not graded, and why
        verdict = f":gray-badge[not graded: {escape_markdown(g.not_graded)}]"
    ref = readable(" ".join((trace.task.reference or "").split())).replace("`", "ˋ")
    expected = f" · expected {escape_markdown(clip_label(ref, 24))}" if ref else ""
    return f"**Final answer** · {shown} {verdict}{expected}"


def _chosen_verifier(key: str, trace: Trace) -> str | None:
    """The verifier the map's "First wrong step by" switch names (``None``: the checks), read from
    the switch's own widget state so the header agrees with the map in the same rerun."""
    choice = st.session_state.get(f"verifier_{key}")
    return choice if choice in verifier_names(trace) else None


def _gradings(trace: Trace, verifier: str | None):
    """(the lines naming both gradings and, where they disagree, the sentence saying so; the
    first wrong step by ``verifier`` (the checks when ``None``) or None)."""
    g = grading(trace)
    disagree = disagreement_line(g.source, g.check)
    lines = [escape_markdown(ln) for ln in g.lines() if ln != disagree]
    if disagree:  # one compact line, in the page's warning colour, not a banner over the map
        lines.append(f":orange[:material/rule: **{escape_markdown(disagree)}**]")
    wrong = first_wrong_by(trace, verifier)
    return lines, wrong


def _header(key: str, trace: Trace, question_col, hidden: tuple[str, str] | None) -> None:
    """The question and the final answer with its verdict and the reference (one line each, full
    text on hover), then the totals, labelled as totals."""
    s = summarize(trace)
    q = readable(" ".join(trace.task.question.split())).replace("`", "ˋ")
    question_col.markdown(
        f"**Question** · {escape_markdown(clip_label(q, 150))}", help=q[:2000] if len(q) > 150 else None
    )
    answer = readable(" ".join((s.answer or "").split())).replace("`", "ˋ")
    rounds = " → ".join(r.verdict or "—" for r in trace.rounds)
    conf = trace.final.confidence if trace.rounds else None
    c1, c2 = st.columns([2, 3])
    c1.markdown(_answer_md(trace, answer), help=answer[:2000] if len(answer) > 40 else None)
    totals = escape_markdown(
        f"Totals over all rounds: {s.steps} steps · {s.rounds} round{'s' if s.rounds != 1 else ''} "
        f"({rounds}) · {'—' if s.tokens is None else s.tokens} generated tokens · {s.decision_points} decision points · "
        f"final confidence {fmt(conf)}"
    )
    verifier = _chosen_verifier(key, trace)
    lines, wrong = _gradings(trace, verifier)
    # one caption beside the answer (totals, then both gradings), so the map stays on the first screen
    c2.caption("  \n".join([totals, " · ".join(lines)] if lines else [totals]))
    row = c1.columns([1, 1], vertical_alignment="center") if wrong is not None and hidden else (c1, c1)
    if wrong is not None:
        row[0].button(
            f"First wrong step: {wrong.step}",
            key="go_first_wrong",
            help=wrong.reason,
            icon=":material/error:",
            on_click=select_node,
            args=(wrong.node,),
        )
    if hidden:
        row[1].caption(escape_markdown(hidden[0]), help=hidden[1])


def _remember_view() -> None:
    st.session_state.inspect_view = st.session_state.inspect_tab


require_router()
if not need_traces(1):
    st.stop()
if not url_state(
    {"trace": "inspect_key", "node": "inspect_node", "view": "inspect_view", "episode": "inspect_episode"},
    reset="inspect_node",
    titles=[t for t, _ in VIEWS],
    echoes=("view",),
):  # the link names a trace this library lacks: say so (url_state did) and open nothing else
    st.page_link("pages/library.py", label="Go to the library", icon=":material/folder_open:")
    st.stop()
top = st.columns([2, 3], vertical_alignment="center")
key = pick_trace(
    "Inspect trace",
    "inspect_key",
    "inspect_pick",
    reset=("inspect_node", "inspect_episode"),
    container=top[0],
    collapsed=True,
)
trace = library()[key].trace
node = st.session_state.inspect_node
if node and not _node_in(trace, node):
    st.warning(
        escape_markdown(f"The linked node {clip_label(node, 24)} is not in this trace; nothing is selected."),
        icon=":material/link_off:",
    )
    st.session_state.inspect_node = None
views, hidden = _views(trace)
_header(key, trace, top[1], hidden)
branch_header(key, trace)
titles = [t for t, _ in views]
if st.session_state.inspect_view not in titles:
    st.session_state.inspect_view = titles[0]
# The open tab is set through the widget's state, never as ``default``: the default is part of the
# tab block's identity, and a new identity made the browser rebuild every tab's content (the map's
# and the Attention heatmap's frames reloaded) at each switch.
if st.session_state.get("inspect_tab") != st.session_state.inspect_view:  # a link, the first run
    st.session_state["inspect_tab"] = st.session_state.inspect_view
tabs = st.tabs(titles, default=titles[0], key="inspect_tab", on_change=_remember_view)
drawn = st.session_state.get(MAP_DRAWN) or st.session_state.inspect_view != titles[0]
for tab, (title, render) in zip(tabs, views, strict=True):
    if tab.open is not False or (title in KEPT and (title == titles[0] or drawn)):
        with tab:
            render(key, trace)
sync_url(
    trace=key,
    node=st.session_state.inspect_node,
    view=st.session_state.inspect_view,
    episode=st.session_state.inspect_episode,
)
