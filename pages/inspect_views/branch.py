"""Branching from Inspect's details panel: "Edit this step" (its text in an editor, then "Continue
from here") and "What else could come here" (K continuations from the reply before the step: the
answers they reach against the trace's own, their first sentences grouped by meaning, each
rollout openable as its own branch). Both run as background jobs with progress and Stop, and the
branch enters the store linked to its parent."""

from __future__ import annotations

import streamlit as st

from o3viz.app import BranchJob, Progress, Trace, branch_step_offset, parse_step_ref
from o3viz.app.running import (
    MAX_EDIT_CHARS,
    Continuer,
    RolloutCache,
    Sampling,
    add_branch,
    branches_of,
    edit_and_continue,
    find_fork,
    measured_cost,
    resample_from,
    rollout_branch,
)
from o3viz.figures import Fork, branch_answers_figure, escape_markdown
from pages.common.jobs import follow_job, start_job
from pages.common.state import take
from pages.common.ui import get_model, pin, show_figure, store

RESAMPLE_TOKENS = 64  # an edit's budget is the parent's remaining length (``Fork.default_budget``)
LOCAL = "local:*"  # the speed log's name for any local model, before one is loaded


def _job(key: str, trace: Trace, make) -> BranchJob:
    model, tok = get_model(None)  # the copy the Run page uses: one model in memory
    local = Continuer(model=model, tokenizer=tok)

    def work(report, should_stop):
        branch = make(local, report, should_stop)
        branch.parent.key = key
        return branch

    return BranchJob(
        work, name=lambda t, stopped: "branch", store=store(), start=Progress(0, 0, "continuing…")
    )


def _edit(key: str, trace: Trace, step: str, text: str) -> BranchJob:
    def make(local, report, should_stop):
        def on_token(index: int, piece: str, total: int) -> None:
            report(Progress(index + 1, total, f"continuing after the edit: token {index + 1}/{total}"))

        return edit_and_continue(
            trace, step, text, local, parent_key=key, max_new_tokens=None,
            on_token=on_token, should_stop=should_stop,
        )  # fmt: skip

    return _job(key, trace, make)


def _resample(key: str, trace: Trace, step: str, k: int) -> BranchJob:
    def make(local, report, should_stop):
        def progress(done: int, total: int) -> None:
            report(Progress(done, total, f"resampling: {done}/{total} continuations"))

        return resample_from(
            trace, step, k, local, Sampling(max_tokens=RESAMPLE_TOKENS), RolloutCache(),
            on_progress=progress, should_stop=should_stop,
        )  # fmt: skip

    return _job(key, trace, make)


def _ended(job: BranchJob) -> None:
    if job.error:
        st.session_state.branch_message = ("error", job.error)
        return
    if job.key is None:
        return
    pin([job.key])
    branch = job.trace
    if branch.parent.kind == "edit":
        st.session_state.inspect_key, st.session_state.inspect_node = job.key, None
    else:
        st.session_state.branch_results[(branch.parent.key, branch.parent.step)] = job.key
    st.session_state.branch_message = (
        "ok",
        f"{branch.parent.kind} branch at step {branch.parent.step}: {job.name}",
    )


def _open_rollout(resampled: Trace, i: int) -> None:
    new = add_branch(store(), rollout_branch(resampled, i))
    pin([new])
    st.session_state.inspect_key, st.session_state.inspect_node = new, None


def _rollouts(key: str, trace: Trace, step: str) -> None:
    found = st.session_state.branch_results.get((key, step))
    if found is None:
        return
    res = store().trace(found)
    info = res.parent.info
    kept = trace.rounds[parse_step_ref(step).round].answer
    show_figure(
        branch_answers_figure(step, kept, info.get("answers", {}), trace.task.reference),
        f"branch_ans_{key}_{step}",
    )
    groups: dict[int, list[int]] = {}
    for i, r in enumerate(res.rounds):
        groups.setdefault(int(r.info.get("group", i)), []).append(i)
    st.caption(f"{len(groups)} meanings among the first sentences of {len(res.rounds)} continuations")
    for members in groups.values():
        first = res.rounds[members[0]]
        with st.expander(f"{len(members)} × {escape_markdown(first.text.strip()[:70]) or '(empty)'}"):
            for i in members:
                st.text(res.rounds[i].text.strip()[:600])
                st.button(
                    "Open as a branch", key=f"branch_open_{found}_{i}", on_click=_open_rollout, args=(res, i)
                )


def branch_panel(key: str, trace: Trace, step: str, text: str) -> None:
    """The two branch actions for step ``step`` ("R:I") of trace ``key`` (its text ``text``)."""
    running = st.session_state.branch_job
    if running is not None and running[0] == (key, step):
        follow_job("branch_job", running[1], _ended)
        return
    if (msg := take("branch_message")) is not None:
        (st.success if msg[0] == "ok" else st.error)(escape_markdown(msg[1]))
    busy = running is not None
    with st.expander("Edit this step", icon=":material/edit:"):
        new = st.text_area(
            "What the step should say", value=text, max_chars=MAX_EDIT_CHARS, key=f"branch_text_{key}_{step}"
        )
        budget = find_fork(trace, step).default_budget  # the parent's remaining length
        st.caption(
            f"Cost: {measured_cost(1, budget, LOCAL, 'edit').line()} · the parent's remaining length · "
            "the trace's own settings (capture, DAA, checks)"
        )
        if st.button("Continue from here", key=f"branch_go_{key}_{step}", type="primary", disabled=busy):
            start_job("branch_job", lambda: ((key, step), _edit(key, trace, step, new)))
    with st.expander("What else could come here", icon=":material/call_split:"):
        k = st.number_input("Continuations (K)", 1, 16, 4, key=f"branch_k_{key}_{step}")
        st.caption(
            f"Cost: {measured_cost(int(k), RESAMPLE_TOKENS, LOCAL, 'resample').line()} "
            "(batched; cached rollouts are reused)"
        )
        if st.button(f"Resample {int(k)} continuations", key=f"branch_rs_{key}_{step}", disabled=busy):
            start_job("branch_job", lambda: ((key, step), _resample(key, trace, step, int(k))))
        _rollouts(key, trace, step)


def forks_of(key: str, trace: Trace) -> list[Fork]:
    """The trace's branches (its own list, then the store's links) as forks for the map."""
    out = []
    for b in branches_of(store(), key, trace):
        node = parse_step_ref(b.step)
        if node is not None:
            out.append(Fork(node.id, b.kind, b.label, b.answer, b.verdict))
    return out


def _compare_with_parent(parent: str, key: str) -> None:
    pin([parent, key])
    st.session_state.compare_a, st.session_state.compare_b = parent, key


def _open_parent(parent: str) -> None:
    pin([parent])
    st.session_state.inspect_key, st.session_state.inspect_node = parent, None


def branch_header(key: str, trace: Trace) -> None:
    """A branch reads as one: where it forked, the parent's steps before the fork (greyed, numbered
    as in the parent), a link to the parent and "Compare with parent"."""
    p = trace.parent
    if p is None or not trace.rounds:
        return
    offset = branch_step_offset(trace) or 0
    known = bool(p.key) and store().row(p.key) is not None
    c1, c2, c3 = st.columns([4, 1, 1.3], vertical_alignment="center")
    c1.caption(
        escape_markdown(
            f"A {p.kind} branch of trace {p.key[:8] or '(not stored)'} at step {p.step}. Its own steps "
            f"continue the parent's: its step 0 is the parent's step {offset}."
        )
    )
    c2.button(
        "Open parent", key="branch_open_parent", disabled=not known, on_click=_open_parent, args=(p.key,)
    )
    if c3.button(
        "Compare with parent",
        key="branch_compare_parent",
        disabled=not known,
        icon=":material/compare_arrows:",
    ):
        _compare_with_parent(p.key, key)
        st.switch_page("pages/compare.py")
    n = int(trace.final.info.get("reply_prefix_chars") or 0)
    prefix = trace.final.rendered_prompt[-n:] if n else ""
    steps = p.info.get("prefix_steps") or []
    if prefix and steps:
        with st.expander(f"The parent's steps 0–{offset - 1} before the fork (inherited, greyed)"):
            for i, a, z in steps[:200]:
                st.markdown(f":gray[**{int(i)}** · {escape_markdown(prefix[int(a) : int(z)])}]")
            if p.edited is not None:
                st.markdown(f"**{offset - 1}** · (edited) {escape_markdown(p.edited)}")
