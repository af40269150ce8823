"""Branching from Inspect's details panel: "Edit this step" (its text in an editor, then "Continue
from here") and "What else could come here" (K continuations from the reply before the step: the
answers they reach against the trace's own, their first sentences grouped by meaning, each
rollout openable as its own branch). Both run as background jobs with progress and Stop, and the
branch enters the store linked to its parent."""

from __future__ import annotations

import streamlit as st

from o3viz.app import BranchJob, Progress, Trace, make_id, parse_id
from o3viz.app.running import (
    MAX_EDIT_CHARS,
    BranchCost,
    Continuer,
    RolloutCache,
    Sampling,
    add_branch,
    branches_of,
    edit_and_continue,
    resample_from,
    rollout_branch,
)
from o3viz.figures import Fork, branch_answers_figure, escape_markdown
from pages.common.jobs import follow_job, start_job
from pages.common.state import take
from pages.common.ui import get_model, pin, show_figure, store

EDIT_TOKENS = 96  # new tokens of an edit's continuation in the app (the CLI takes --max-new-tokens)
RESAMPLE_TOKENS = 64


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
            trace, step, text, local, parent_key=key, max_new_tokens=EDIT_TOKENS,
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
    kept = trace.rounds[parse_id(f"step:{step}").round].answer
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
        st.caption(
            f"Cost: {BranchCost(1, EDIT_TOKENS).line()} · the trace's own settings (capture, DAA, checks)"
        )
        if st.button("Continue from here", key=f"branch_go_{key}_{step}", type="primary", disabled=busy):
            start_job("branch_job", lambda: ((key, step), _edit(key, trace, step, new)))
    with st.expander("What else could come here", icon=":material/call_split:"):
        k = st.number_input("Continuations (K)", 1, 16, 4, key=f"branch_k_{key}_{step}")
        st.caption(
            f"Cost: {BranchCost(int(k), RESAMPLE_TOKENS).line()} (batched; cached rollouts are reused)"
        )
        if st.button(f"Resample {int(k)} continuations", key=f"branch_rs_{key}_{step}", disabled=busy):
            start_job("branch_job", lambda: ((key, step), _resample(key, trace, step, int(k))))
        _rollouts(key, trace, step)


def forks_of(key: str, trace: Trace) -> list[Fork]:
    """The trace's branches (its own list, then the store's links) as forks for the map."""
    out = []
    for b in branches_of(store(), key, trace):
        node = parse_id(f"step:{b.step}")
        if node is not None:
            out.append(Fork(make_id("step", node.round, node.index), b.kind, b.label, b.answer, b.verdict))
    return out
