"""The pages' one way to run background work (``o3viz.app.jobs``): start a job into a declared
session-state key, follow it (a Stop button, a progress bar drawn from its ``Progress``, the text
it streams), and hand it back once when it ended. A job outlives its page run: switching pages or
reloading leaves it running, and the page picks it up again from session state."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from o3viz import one_line
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
) -> None:
    """Draw Stop and the job's progress (and ``text()``, the streamed output) until it ends; then
    clear ``state_key``, call ``on_end(job)`` once and rerun. A Stop click reruns the page, whose
    next follow shows "stopping…" until the job stops between two units of work."""
    st.button(stop_label, on_click=job.stop, icon=":material/stop:", type="primary", key=f"{state_key}_stop")
    bar = st.progress(job.progress.fraction, job.progress.label or "starting…")
    box = st.empty() if text is not None else None
    while not job.wait(POLL_S):
        p = job.progress
        bar.progress(p.fraction, (p.label or "working…") + (" · stopping…" if job.stopped else ""))
        if box is not None:
            box.text(text()[-4000:])
    st.session_state[state_key] = None
    on_end(job)
    st.rerun()
