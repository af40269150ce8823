"""Every session-state key the app uses, declared once with its default. ``app.py`` (the router)
calls ``init_state`` on every run; pages read and write these keys and no others, besides their
own widgets' ``key=`` (which Streamlit manages). ``tests/app/test_state.py`` reads the sources and
fails on a key that is not declared here."""

from __future__ import annotations

import copy

import streamlit as st

STATE: dict[str, object] = {
    # the session library and what it was built from
    "library": {},  # key -> StoredEntry: the stored traces this session has (samples, uploads, runs, opened)
    "samples_loaded": False,  # the samples are in the store and pinned
    "sample_errors": [],  # one line per unreadable sample, shown on the Library page
    "upload_results": {},  # upload content key -> o3viz.app.uploads.Upload, taken once in a worker process
    "staged_uploads": {},  # staged dataset file name -> records, once its "Import all" was clicked
    "added_uploads": set(),  # upload file ids already added to the library (a rerun adds nothing)
    "_shown_load_errors": set(),  # (upload, error) pairs already shown: each error shows once
    # what the pages show (they survive page switches; Inspect and Compare also write the URL)
    "inspect_key": None,  # the trace shown on Inspect
    "inspect_node": None,  # the node selected on Inspect (map, outline, search or URL)
    "inspect_view": None,  # the open Inspect tab (its title; None = the first view)
    "inspect_episode": None,  # the episode open on a long trace's map ("N", as in ?episode=N; None = overview)
    "inspect_verifier": None,  # whose verdicts mark the first wrong step on Inspect (None = the checks)
    "inspect_push": 0,  # raised when the server moves Inspect's view selection (pages/common/trace_view.py)
    "inspect_reported": None,  # (node, episode) the view last showed, as it reported or was pushed
    "compare_a": None,  # the traces shown on Compare
    "compare_b": None,
    "compare_mode": "traces",  # Compare shows two traces ("traces") or two datasets paired ("datasets")
    "compare_mode_url": None,  # the ?mode= this session last saw or wrote (a different one is a link)
    "compare_sets": None,  # the paired datasets' picks: {"da", "ma", "db", "mb", "grade"} (None = defaults)
    "compare_at": None,  # the step Compare was opened at ("N", as in ?at=N: a fork of the Samples page)
    # the Samples page (pages/samples.py)
    "samples_set": None,  # the sample set shown (its name, as in ?set=NAME)
    "samples_node": None,  # the node selected in its tree: {"set", "sample", "depth"}, kept as the set grows
    "samples_job": None,  # the sampling job in progress (o3viz.app.sampling.SampleSetJob)
    "samples_resample_job": None,  # the "Resample from here" job in progress (ResampleNodeJob)
    "samples_firm_job": None,  # the "Firm up undecided splits" job in progress (FirmUpJob)
    "samples_message": None,  # ("ok" | "stopped" | "error", line) of the last sampling job, shown once
    "dataset_query": None,  # a Library filter handed to the Dataset page (read once)
    "ds_rest": None,
    # people's step labels (pages/inspect_views/labels.py, pages/labels.py)
    "labeller": None,  # this session's labeller name, asked once
    "label_error": None,  # the last label the store refused (one line, shown once)
    "label_skipped": set(),  # (key, round, step) the labeller skipped in the annotation queue
    # background jobs (o3viz.app.jobs) and what they said when they ended (shown once)
    "runs": 0,  # runs started in this session (names them: run 1, run 2, ...)
    "run_job": None,  # the run in progress (RunJob)
    "run_message": None,  # ("ok", name) or ("error", line)
    "steer_job_off": None,  # the unsteered run of a "Run with and without steering" pair (RunJob)
    "steer_job_on": None,  # the steered run of that pair (RunJob)
    "steer_pair": {},  # "off"/"on" -> the stored key of each finished run of the pair
    "paired_job": None,  # the Run page's "Compare two settings" job in progress (PairedRunJob)
    # ("ok", summary, (dataset A, dataset B), grading note or None), ("stopped", line) or ("error", line)
    "paired_message": None,
    "importance_job": None,  # (trace key, TraceJob): the importance analysis in progress
    "importance_message": None,  # ("ok", name) or ("error", line)
    "branch_job": None,  # ((trace key, step "R:I"), BranchJob): the branch being made
    "branch_message": None,  # ("ok", name) or ("error", line)
    "branch_results": {},  # (trace key, step "R:I") -> store key of that step's latest resample branch
    "import_job": None,  # the dataset import in progress (ImportJob)
    "import_message": None,  # the import's report (dict) or its error line
    # the router and the URL
    "_resume": None,  # (page script, query) to resume after pages.common.ui.require_router's detour
    "_url_written": None,  # the query this session last wrote: a different one is a new link
}


def init_state() -> None:
    """Give every declared key its default where the session has none yet (a fresh copy of
    mutable defaults, so sessions never share one)."""
    for key, value in STATE.items():
        if key not in st.session_state:
            st.session_state[key] = copy.copy(value)


def take(key: str):
    """A key's value, read once: it goes back to its default (messages, hand-overs)."""
    value = st.session_state[key]
    st.session_state[key] = copy.copy(STATE[key])
    return value
