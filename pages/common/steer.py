"""The Run page's steering inputs (DAA's steer mode, PASTA) and its "Run with and without
steering" pair: two background runs of one request, one unsteered and one steered, opened side by
side in Compare once both are in the library.

A browser page cannot hand Streamlit a text selection, so spans are marked the closest honest
way: pick whole sentences of the prompt, or type or paste a span's exact text (with which
occurrence, when it appears more than once)."""

from __future__ import annotations

import dataclasses

import streamlit as st

from o3viz.app import RunJob, UsageError
from o3viz.app.running import (
    DAAConfig,
    RunRequest,
    SteerSpan,
    check_spans,
    parse_steer_heads,
    prompt_sentences,
)
from o3viz.figures import clip_label

ALPHAS = [0.001, 0.01, 0.05, 0.1, 0.3, 1.0]


def steer_form(prompt: str) -> tuple[DAAConfig | None, str | None]:
    """The steer-mode settings the inputs describe (None: nothing marked) and a problem or None."""
    sentences = prompt_sentences(prompt) if prompt.strip() else []
    picked = st.multiselect(
        "Sentences to steer towards",
        list(range(len(sentences))),
        format_func=lambda i: f"{i}: {clip_label(sentences[i], 70)}",
        key="run_steer_sentences",
        placeholder="pick sentences of the prompt",
    )
    t1, t2 = st.columns([3, 1])
    text = t1.text_input("…or type or paste a span of the prompt (exact text)", "", key="run_steer_text")
    occ = t2.number_input("Occurrence (0 = it occurs once)", 0, 99, 0, key="run_steer_occ")
    a1, a2 = st.columns(2)
    alpha = a1.select_slider(
        "α: unmarked prompt keys' attention × α", ALPHAS, 0.01, key="run_steer_alpha", help="1 = no steering"
    )
    heads_text = a2.text_input(
        "Heads (all, auto = profiled, or layer.head pairs like 3.1,5.0)", "all", key="run_steer_heads"
    )
    spans = [SteerSpan(segment=f"sentence {i}") for i in picked]
    if text.strip():
        spans.append(SteerSpan(text, int(occ) or None))
    if not spans:
        return None, None
    try:
        cfg = DAAConfig(
            mode="steer", spans=spans, steer_alpha=float(alpha), steer_heads=parse_steer_heads(heads_text)
        )
        cfg.validate()
        check_spans(prompt, spans)
    except UsageError as exc:
        return None, f"Steering: {exc}"
    return cfg, None


def start_pair(req: RunRequest, steer: DAAConfig, start_run) -> RunJob:
    """Start the unsteered and the steered run of ``req`` (``start_run(req) -> RunJob``); returns
    the steered one (for ``start_job("steer_job_on", ...)``), the unsteered one is followed too."""
    steered = dataclasses.replace(req, daa=steer)
    steered.validate()  # both fail before either starts
    st.session_state.steer_pair = {}
    st.session_state.steer_job_off = start_run(dataclasses.replace(req, daa=DAAConfig()))
    return start_run(steered)


def follow_pair(follow_job, run_ended) -> None:
    """Follow both runs; each one that ends joins the library (``run_ended``) and the pair."""
    jobs = (
        ("steer_job_off", st.session_state.steer_job_off, "off"),
        ("steer_job_on", st.session_state.steer_job_on, "on"),
    )
    for state_key, job, side in jobs:
        if job is not None:
            st.caption("Unsteered run" if side == "off" else "Steered run")
            follow_job(
                state_key,
                job,
                lambda j, side=side: _ended(j, side, run_ended),
                text=lambda j=job: j.text,
                live=True,
            )


def _ended(job: RunJob, side: str, run_ended) -> None:
    run_ended(job)
    if job.key is not None:
        st.session_state.steer_pair = {**st.session_state.steer_pair, side: job.key}


def open_pair_when_done() -> bool:
    """Both runs are in the library: open them in Compare (A unsteered, B steered)."""
    pair = st.session_state.steer_pair
    running = st.session_state.steer_job_off is not None or st.session_state.steer_job_on is not None
    if set(pair) != {"off", "on"} or running:
        return False
    st.session_state.steer_pair = {}
    st.session_state.compare_a, st.session_state.compare_b = pair["off"], pair["on"]
    st.switch_page("pages/compare.py")
    return True
