"""Run: make a new trace with the model (capture, or the verify/optimize loop for several rounds),
stream its tokens, stop it, and add it to the library. The model loads here and nowhere else."""

from __future__ import annotations

import streamlit as st

from o3viz.app import (
    CompressionConfig,
    RunJob,
    UsageError,
    limit_line,
    one_line,
    run_name,
    stopped_at_limit,
)
from o3viz.app.running import DAA_MODES, CaptureConfig, DAAConfig, RunRequest, execute, parse_layers
from o3viz.figures import escape_markdown
from pages.common.jobs import follow_job, start_job
from pages.common.paired_run import render_paired
from pages.common.state import take
from pages.common.steer import follow_pair, open_pair_when_done, start_pair, steer_form
from pages.common.ui import get_model, pin, require_router, store

SOURCES = {
    "Free prompt": None,
    "GSM8K": "gsm8k:{}",
    "HumanEval": "humaneval:HumanEval/{}",
    "MBPP+": "mbppplus:Mbpp/{}",
}


@st.cache_data(max_entries=64, show_spinner=False)
def task_prompt(spec: str) -> str:
    from o3viz.app import load_task

    return load_task(spec).prompt


@st.cache_resource(show_spinner="Checking the sandbox…")
def isolation_note() -> str:
    from o3viz.app import available_isolation, describe_isolation

    modes = available_isolation()
    return (
        f"Generated code runs in a sandbox ({modes[0]}). " + describe_isolation(modes[0])
        if modes
        else "No sandbox mode works on this machine: code tasks cannot be verified here."
    )


def settings_form() -> tuple[str, RunRequest, DAAConfig | None, str | None]:
    """Every input of a run: (task source, the run's ``RunRequest``, the steering the inputs mark
    or None, a problem with the inputs or None)."""
    c1, c2 = st.columns([2, 1])
    source = c2.selectbox("Task source", list(SOURCES), key="run_source")
    task_id, prompt, problem = None, "", None
    if SOURCES[source] is None:
        prompt = c1.text_area(
            "Prompt",
            "Natalia sold clips to 48 of her friends in April, and then she sold half as many "
            "clips in May. How many clips did Natalia sell altogether in April and May?",
            key="run_prompt",
        )
    else:
        n = c2.number_input("Task number", 0, 2000, 0, key="run_task_n")
        task_id = SOURCES[source].format(n)
        try:
            c1.text(task_prompt(task_id))
        except Exception as exc:  # a missing dataset or package: say which, one line
            c1.error(escape_markdown(f"{task_id}: {one_line(exc)}"))
            task_id = None
    with st.expander("Model, attention and DAA", expanded=False):
        m1, m2 = st.columns(2)
        model = m1.text_input(
            "Model (empty = embedded SmolLM2-135M-Instruct; or a local path)", "", key="run_model"
        )
        max_new = m2.slider("Max new tokens", 16, 1024, 192, key="run_max_new")
        layers = m1.text_input(
            "Layers kept per head (auto, all, none or e.g. 0,15,29)", "auto", key="run_layers"
        )
        explore = m2.number_input("Explore K decision points", 0, 8, 0, key="run_explore")
        daa = m1.selectbox("DAA mode", DAA_MODES, key="run_daa", help="steer: mark spans below")
        strength = m2.slider(
            "DAA strength λ", 0.0, 4.0, 1.0, 0.1, key="run_strength", disabled=daa != "allocate"
        )
    with st.expander("Steer attention to part of the prompt (PASTA)", expanded=False):
        steer, steer_problem = steer_form(prompt if task_id is None else _shown_prompt(task_id))
    with st.expander("Verification and compression", expanded=False):
        v1, v2 = st.columns(2)
        rounds = v1.slider("Verification rounds", 1, 5, 1, key="run_rounds")
        confidence = v2.slider("Confidence threshold", 0.0, 1.0, 0.9, 0.05, key="run_conf")
        compress = v1.toggle("Compression", False, key="run_compress")
        hi = v2.slider("Compress at score ≥", 0.0, 1.0, 0.7, 0.05, key="run_hi", disabled=not compress)
        lo = v2.slider("Expand at score ≤", 0.0, 1.0, 0.3, 0.05, key="run_lo", disabled=not compress)
    with st.expander("Inside the layers: MoE routing and the logit lens", expanded=False):
        internals, lens_problem = internals_form()
    try:
        layer_spec = parse_layers(layers)
    except UsageError as exc:  # said next to the Run button, which stays disabled
        layer_spec, problem = "auto", f"Layers kept per head: {exc}"
    try:
        compression = CompressionConfig(compress_threshold=hi, expand_threshold=lo) if compress else None
    except UsageError as exc:
        compression, problem = None, problem or f"Compression: {exc}"
    req = RunRequest(
        prompt=prompt,
        task_id=task_id,
        model=model.strip() or None,
        max_new_tokens=max_new,
        capture=CaptureConfig(layers=layer_spec, **internals),
        daa=steer if daa == "steer" and steer is not None else DAAConfig(mode=daa, strength=strength),
        explore=int(explore),
        rounds=rounds,
        confidence_threshold=confidence,
        compression=compression,
    )
    if daa == "steer" and steer is None:
        steer_problem = steer_problem or "Steering: mark a sentence or a span of the prompt first."
    return source, req, steer, problem or lens_problem or steer_problem


def _shown_prompt(task_id: str) -> str:
    try:
        return task_prompt(task_id)
    except Exception:  # said above, next to the task picker
        return ""


def internals_form() -> tuple[dict, str | None]:
    """CaptureConfig fields for routing, MoEfication and the logit lens (all off by default), and a
    problem with the inputs or None."""
    i1, i2 = st.columns(2)
    moefy = i1.toggle(
        "Split the dense model into experts (MoEfication)",
        False,
        key="run_moefy",
        help="Each MLP's neurons are grouped into E experts by co-activation on real text; each token "
        "uses the k experts with the largest activation mass. k = E is exactly the dense model.",
    )
    experts = i1.select_slider("Experts E", [4, 8, 16, 32], 16, key="run_moefy_e", disabled=not moefy)
    k = i1.slider(
        "Experts per token k", 1, int(experts), min(12, int(experts)), key="run_moefy_k", disabled=not moefy
    )
    routing = i1.toggle("Record routing (MoE models)", moefy, key="run_routing", disabled=moefy) or moefy
    lens = i2.text_input(
        "Logit-lens layers (empty = off; e.g. 0,10,20,29)",
        "",
        key="run_lens",
        help="Each chosen layer's residual goes through the final norm and the unembedding at every token.",
    )
    problem = None
    try:
        lens_layers = parse_layers(lens)  # the one layer parser; auto/all/none mean nothing here
    except UsageError as exc:
        lens_layers, problem = [], str(exc)
    if isinstance(lens_layers, str):
        lens_layers, problem = (
            [],
            "Logit-lens layers: give layer numbers separated by commas, e.g. 0,10,20,29.",
        )
    fields = {
        "routing": routing,
        "moefy": (int(experts), int(k)) if moefy else None,
        "logit_lens": lens_layers,
    }
    return fields, problem


def start_run(req: RunRequest) -> RunJob:
    """Check the settings, then start the run in the background: the model loads (cached) in the
    job's thread, so the page shows a status and Stop from the click on. The run is numbered now,
    so the name the page reports is the name it is stored under."""
    req.validate()  # bad settings fail here, before the model loads
    st.session_state.runs += 1
    n = st.session_state.runs
    return RunJob(
        lambda loaded, **callbacks: execute(*loaded, req, **callbacks),
        req.max_new_tokens,
        name=lambda trace, stopped: run_name(trace, n),
        store=store(),
        load=lambda: get_model(req.model),
    )


def run_ended(job: RunJob) -> None:
    """The run is in the store (its job put it there); make it this session's and open it."""
    if job.error:
        st.session_state.run_message = ("error", job.error)
    elif job.key is None:
        st.session_state.run_message = ("stopped", "Stopped before the first token: nothing was added.")
    else:
        pin([job.key])
        st.session_state.inspect_key, st.session_state.inspect_node = job.key, None
        why = job.trace.final.info.get("not_graded") if job.trace.rounds else None  # the one rule
        limit = stopped_at_limit(job.trace.final) if job.trace.rounds else None
        why = why or (limit_line(limit) if limit is not None else None)
        said = f" — {why}, so its answer is not graded" if why else ""
        st.session_state.run_message = ("ok", job.name + (" (stopped early)" if job.stopped else "") + said)


def show_outcome() -> None:
    """How the last run ended, on the first screen (above the settings): a finished run with its
    link to Inspect, a stop, or the error."""
    msg = take("run_message")
    if msg and msg[0] == "ok":
        c1, c2 = st.columns([4, 1], vertical_alignment="center")
        c1.success(escape_markdown(f"Finished: {msg[1]}. It is in the library."))
        c2.page_link("pages/inspect.py", label="Inspect it", icon=":material/account_tree:")
    elif msg and msg[0] == "stopped":
        st.info(escape_markdown(msg[1]), icon=":material/stop:")
    elif msg:
        st.error(escape_markdown(f"The run failed: {msg[1]}"))


require_router()
st.title("Run")
MODES = {"one": "One run", "pair": "Compare two settings"}
mode = st.segmented_control(
    "What to run",
    list(MODES),
    format_func=MODES.get,
    default="one",
    key="run_mode",
    label_visibility="collapsed",
)
if mode == "pair":
    render_paired()
    st.stop()
st.caption("Generate with the instrumented model; the run's trace joins the library.")
show_outcome()
source, request, steering, problem = settings_form()
if open_pair_when_done():
    st.stop()
if source in ("HumanEval", "MBPP+"):
    st.info(escape_markdown(isolation_note()), icon=":material/shield:")
if problem:
    st.error(escape_markdown(problem))
job = st.session_state.run_job
if job is not None:
    follow_job("run_job", job, run_ended, text=lambda: job.text, live=True)
follow_pair(follow_job, run_ended)
b1, b2 = st.columns([1, 3])
no_prompt = not (request.task_id or (request.prompt or "").strip())
if b1.button("Run", type="primary", icon=":material/play_arrow:", disabled=bool(problem) or no_prompt):
    start_job("run_job", lambda: start_run(request))
if b2.button(
    "Run with and without steering",
    icon=":material/compare_arrows:",
    disabled=bool(problem) or no_prompt or steering is None,
    help="Two runs of these settings, unsteered and steered, opened side by side in Compare",
):
    start_job("steer_job_on", lambda: start_pair(request, steering, start_run))
