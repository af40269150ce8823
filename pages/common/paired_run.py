"""The Run page's "Compare two settings" mode: one task list (the first N GSM8K, HumanEval or MBPP+
tasks) run under setting A and setting B as one background job with progress and Stop
(``o3viz.app.running.PairedRunJob``), landing as two datasets; when it ends, a link opens them in
Compare's dataset mode, paired by question."""

from __future__ import annotations

import streamlit as st

from o3viz.app import UsageError
from o3viz.app.running import (
    DAA_MODES,
    PairedRunJob,
    PairedRunRequest,
    RunRequest,
    parse_setting,
    task_ids,
)
from o3viz.figures import escape_markdown
from pages.common.jobs import follow_job, start_job
from pages.common.state import take
from pages.common.ui import get_model, pin, store

LISTS = {"GSM8K": "gsm8k", "HumanEval": "humaneval", "MBPP+": "mbppplus"}
SEGMENTS = ["question", "instruction"]


@st.cache_data(max_entries=32, show_spinner="Reading the task list…")
def _ids(source: str, n: int, start: int) -> list[str]:
    return task_ids(source, n, start)


def _side(col, side: str, mode: str) -> str:
    """One side's inputs as a setting text (``o3viz.run.paired_run.parse_setting``'s syntax, the
    CLI's ``--pair-a``/``--pair-b``), so both say a side the same way."""
    k = side.lower()
    c1, c2 = col.columns(2)
    daa = c1.selectbox(f"{side}: DAA mode", DAA_MODES, DAA_MODES.index(mode), key=f"pr_{k}_daa")
    model = c2.text_input(f"{side}: model (empty = shared)", "", key=f"pr_{k}_model").strip()
    items = [f"daa={daa}"]
    if daa == "allocate":
        lam = col.slider(f"{side}: DAA strength λ", 0.0, 4.0, 1.0, 0.1, key=f"pr_{k}_lam")
        items += [f"strength={lam:g}"] if lam != 1.0 else []  # the default stays out of the name
    if daa == "steer":
        items.append(f"steer={c1.selectbox(f'{side}: steer towards', SEGMENTS, key=f'pr_{k}_seg')}")
        alphas = [0.001, 0.01, 0.05, 0.1, 0.3]
        items.append(
            f"alpha={c2.select_slider(f'{side}: α (unmarked keys × α)', alphas, 0.01, key=f'pr_{k}_alpha')}"
        )
    if model:
        items.append(f"model={model}")
    return ",".join(items)


def paired_form() -> tuple[PairedRunRequest | None, str | None]:
    """The mode's inputs as a validated request, or None and the problem in one line."""
    c1, c2, c3 = st.columns(3)
    source = c1.selectbox("Task list", list(LISTS), key="pr_source")
    n = c2.number_input("Tasks (the first N)", 1, 2000, 5, key="pr_n")
    start = c3.number_input("From task number", 0, 2000, 0, key="pr_start")
    sa, sb = st.columns(2)
    text_a, text_b = _side(sa, "A", "off"), _side(sb, "B", "allocate")
    s1, s2, s3 = st.columns([2, 1.6, 1.6])
    model = s1.text_input("Shared model (empty = embedded SmolLM2-135M-Instruct)", "", key="pr_model")
    max_new = s2.slider(
        "Max new tokens",
        16,
        1024,
        384,
        key="pr_max_new",
        help="A reply cut off at this limit is not graded: at 128 tokens 9 of 10 GSM8K replies of the "
        "embedded model were cut off, so the accuracy comparison had nothing to compare",
    )
    name = s3.text_input("Datasets' name (empty = the task list)", "", key="pr_name")
    try:
        ids = _ids(LISTS[source], int(n), int(start))
        # one round per side: a verify loop's rounds would differ by side (docs/paired-compare.md)
        run = RunRequest(model=model.strip() or None, max_new_tokens=max_new, rounds=1)
        sides = [parse_setting(t) for t in (text_a, text_b)]
        return PairedRunRequest(run, ids, *sides, name.strip()).validate(), None
    except UsageError as exc:
        return None, str(exc)
    except Exception as exc:  # a missing data file or package: one line
        return None, f"{type(exc).__name__}: {exc}"


def paired_ended(job: PairedRunJob) -> None:
    """Say what the job left (its pairs stay in the library, even when stopped)."""
    if job.error:
        st.session_state.paired_message = ("error", job.error)
        return
    res = job.result
    pin([k for k in res.keys_a + res.keys_b if k])
    if res.pairs:
        st.session_state.paired_message = ("ok", res.summary(), res.datasets, res.grading_note())
    elif res.failed:  # nothing kept is never a success
        st.session_state.paired_message = ("error", res.summary())
    else:
        st.session_state.paired_message = (
            "stopped",
            "Stopped before the first task finished: nothing was added.",
        )


def render_paired() -> None:
    """The whole mode: the form, Start, the job's progress and Stop, then the link to Compare."""
    st.caption(
        "Run one task list under two settings, task by task, into two datasets paired by question. "
        "Each side gives its first reply (one round), so only the setting differs. "
        "Stop keeps every finished pair; starting the same list with the same settings resumes it "
        "(other settings need another datasets' name)."
    )
    req, problem = paired_form()
    if problem:
        st.error(escape_markdown(problem))
    job = st.session_state.paired_job
    if job is not None:
        follow_job("paired_job", job, paired_ended, live=True)
    else:
        b1, b2 = st.columns([1, 4], vertical_alignment="center")
        if b1.button(
            "Start both runs", type="primary", icon=":material/compare_arrows:", disabled=req is None
        ):
            start_job("paired_job", lambda: PairedRunJob(req, get_model, store=store()))
        if req is not None:
            b2.caption(escape_markdown(f"into the datasets “{req.dataset('A')}” and “{req.dataset('B')}”"))
    msg = take("paired_message")
    if msg and msg[0] == "ok":
        st.success(escape_markdown(f"Finished: {msg[1]}."))
        if msg[3]:  # pairs went ungraded: why, and about how many a difference needs
            st.warning(escape_markdown(msg[3]), icon=":material/rule:")
        da, db = msg[2]
        st.page_link(
            "pages/compare.py",
            label="Compare the two datasets",
            icon=":material/compare_arrows:",
            query_params={"mode": "datasets", "da": da, "db": db, "grade": "auto"},
        )
    elif msg and msg[0] == "stopped":
        st.info(escape_markdown(msg[1]), icon=":material/stop:")
    elif msg:
        st.error(escape_markdown(f"The paired run failed: {msg[1]}"))
