"""The pages' one way to run background work (``o3viz.app.jobs``): start a job into a declared
session-state key, follow it (a Stop button, a progress bar drawn from its ``Progress``, the text
it streams), and hand it back once when it ended. A job outlives its page run: switching pages or
reloading leaves it running, and the page picks it up again from session state."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import streamlit as st

from o3viz.app import one_line
from o3viz.figures import escape_markdown

POLL_S = 0.25  # how often a followed job's progress is redrawn


def start_job(state_key: str, make: Callable[[], Any]) -> None:
    """``make()`` builds and starts the job (bad settings and a model that fails to load raise
    there, and say so in one line); the job goes to ``state_key`` and the page reruns to follow it."""
    try:
        st.session_state[state_key] = make()
    except Exception as exc:  # model load or bad settings: one line, never a traceback
        st.error(escape_markdown(f"{type(exc).__name__}: {one_line(exc)}"), icon=":material/error:")
    else:
        st.rerun()


def follow_job(
    state_key: str,
    job,
    on_end: Callable[[Any], None],
    *,
    stop_label: str = "Stop",
    text: Callable[[], str] | None = None,
    live: bool = False,
) -> None:
    """Draw Stop and the job's progress (and ``text()``, the streamed output) until it ends; then
    clear ``state_key``, call ``on_end(job)`` once and rerun. A Stop click reruns the page, whose
    next follow shows "stopping…" until the job stops between two units of work.

    ``live``: follow in a fragment that redraws itself every ``POLL_S`` instead of holding the page
    run, so the page's script finishes at once (its other widgets answer, Stop answers within a
    second, and the status shows from the first draw on)."""
    if live:
        st.fragment(lambda: _follow_once(state_key, job, on_end, stop_label, text), run_every=POLL_S)()
        return
    st.button(stop_label, on_click=job.stop, icon=":material/stop:", type="primary", key=f"{state_key}_stop")
    bar = st.progress(job.progress.fraction, status_line(job))
    box = st.empty() if text is not None else None
    while not job.wait(POLL_S):
        bar.progress(job.progress.fraction, status_line(job))
        if box is not None:
            box.text(text()[-4000:])
    st.session_state[state_key] = None
    on_end(job)
    st.rerun()


def _follow_once(state_key: str, job, on_end, stop_label: str, text) -> None:
    if job.wait(0):
        st.session_state[state_key] = None
        on_end(job)
        st.rerun()  # the whole page: the job's result shows outside this fragment
    st.button(stop_label, on_click=job.stop, icon=":material/stop:", type="primary", key=f"{state_key}_stop")
    st.progress(job.progress.fraction, status_line(job))
    if text is not None:
        st.text(text()[-4000:])


def status_line(job) -> str:
    """The job's phase, the seconds since it started (so a slow phase visibly ticks) and, once
    Stop was clicked, what the stop waits for."""
    label = job.progress.label or "working…"
    started = getattr(job, "started", None)
    if started is not None:
        label += f" · {time.monotonic() - started:.0f} s"
    if job.stopped:
        label += " · stopping (after the current step)…"
    return label
