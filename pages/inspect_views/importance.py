"""Inspect's Importance view: which steps mattered (Thought Anchors measures). Each step's scores
by method (a step under its noise floor drawn as least important), the methods' agreement, each
resampled step's interval against its noise floor, the step × step matrix (receiver attention or
suppression KL), and the receiver heads.
"Analyse with the local model" runs receiver heads + suppression, and "Resample with the local
model" counterfactual resampling (cost shown first), in the background with progress and Stop,
and stores the analysed copy in the trace's place (a sample's beside it)."""

from __future__ import annotations

import streamlit as st

from o3viz.app import Progress, SpeedLog, Trace, TraceJob
from o3viz.app.running import LocalResample, agreement
from o3viz.figures import (
    escape_markdown,
    head_kurtosis_figure,
    importance_scores_figure,
    record_label,
    resample_interval_figure,
    step_matrix_figure,
)
from pages.common.jobs import follow_job, start_job
from pages.common.state import take
from pages.common.ui import get_model, library, pin, show_figure, store


def _start(
    key: str, trace: Trace, methods=("receiver", "suppression"), resample=None
) -> tuple[str, TraceJob]:
    """Analyse a copy of the trace in the background; once it has scores, the analysed copy
    takes the trace's place in the store (its dataset, record, name, labels and branches; a
    sample's copy goes beside it, named after it)."""
    from o3viz.app.running import analyse_locally

    model, tok = get_model(None)  # the copy the Run page uses: one model in memory
    copy = Trace.from_dict(trace.to_dict())
    entry = library()[key]
    added = "resampling" if resample is not None else "importance: receiver heads, suppression"

    def work(report, should_stop) -> Trace:
        def progress(method: str, done: int, total: int) -> None:
            report(Progress(done, total, f"{method}: {done}/{total}"))

        return analyse_locally(
            copy,
            model,
            tok,
            methods=methods,
            retokenize=True,
            resample=resample,
            on_progress=progress,
            should_stop=should_stop,
        )

    job = TraceJob(
        work,
        name=lambda t, stopped: f"{entry.name} + {added}" + (" (stopped early)" if stopped else ""),
        source=entry.source,
        store=store(),
        keep=lambda t: bool(t.final.importance),
        start=Progress(0, 0, "reading the trace with the local model…"),
        replaces=key,  # in place: the dataset's trace shows the scores
    )
    return key, job


def _ended(job: TraceJob) -> None:
    if job.error:
        st.session_state.importance_message = ("error", job.error)
    elif job.key is not None:
        pin([job.key])
        st.session_state.inspect_key, st.session_state.inspect_node = job.key, None
        st.session_state.importance_message = ("ok", job.name)


def _analyse_button(key: str, trace: Trace, *, again: bool) -> None:
    running = st.session_state.importance_job
    if running is not None and running[0] == key:
        follow_job("importance_job", running[1], _ended)
        return
    label = "Analyse again with the local model" if again else "Analyse with the local model"
    if st.button(
        label,
        icon=":material/psychology:",
        key=f"imp_go_{key}",
        type="secondary" if again else "primary",
        help="Receiver heads and attention suppression, with the embedded model reading the text. "
        "Runs in the background; you can stop it.",
    ):
        start_job("importance_job", lambda: _start(key, trace))


def _resample_controls(key: str, trace: Trace) -> None:
    """Counterfactual resampling from the app: the settings, the cost before it starts, then the
    same background job (progress, Stop) as the white-box analysis."""
    done = any(r.method == "resample" for r in trace.final.importance)
    with st.expander("Counterfactual resampling with the local model (black-box, slow)", expanded=False):
        c1, c2, c3 = st.columns(3)
        k = c1.number_input("Rollouts per step (K)", 1, 32, 4, key=f"imp_k_{key}")
        n = c2.number_input("Tokens per rollout", 16, 1024, 128, step=16, key=f"imp_tok_{key}")
        cap = c3.number_input("Cap on new rollouts (0: none)", 0, 1_000_000, 0, key=f"imp_cap_{key}")
        opts = LocalResample(k=int(k), max_new_tokens=int(n), max_rollouts=int(cap) or None)
        cost, speed = opts.cost(trace), SpeedLog().tokens_per_s("local:*", "resample")
        minutes = opts.minutes(trace, speed)
        when = (
            f"at most about {max(minutes, 1):.0f} min at this machine's measured {speed:.0f} tokens/s"
            if minutes is not None
            else "time not measured on this machine yet (the first run measures it)"
        )
        st.caption(  # no user text here: the command renders as code
            f"Before it starts: {cost.prefixes} prefixes × K = {cost.rollouts} rollouts, at most "
            f"{cost.max_new_tokens:,} new tokens, {when} (the K rollouts of a step decode as one "
            "batch; rollouts already in the cache are reused). For big models: "
            "`o3viz importance TRACE --method resample --base-url …` with an OpenAI-compatible server."
        )
        label = "Resample again" if done else "Resample with the local model"
        if st.button(label, icon=":material/casino:", key=f"imp_rs_{key}"):
            start_job("importance_job", lambda: _start(key, trace, ("resample",), opts))


def _message() -> None:
    msg = take("importance_message")
    if msg and msg[0] == "ok":
        st.success(escape_markdown(f"Analysed: {msg[1]} is in the library and open here."))
    elif msg:
        st.error(escape_markdown(f"The analysis failed: {msg[1]}"))


def _proxy_note(records) -> None:
    for r in records:
        if r.model.get("proxy"):
            reader = str(r.model.get("model_id") or "a local model").split(" (")[0]
            writer = r.model.get("writer")
            st.caption(
                ":material/info: "
                + escape_markdown(
                    f"{record_label(r)}: attention read by {reader}, not by the model that wrote this trace"
                    + (f" ({writer})" if writer else "")
                    + "."
                )
            )
            return


def _trust(key: str, trace: Trace) -> None:
    """How far the scores can be trusted: the methods' agreement, and each resampled step's
    interval against its noise floor."""
    records = trace.final.importance
    if len(records) > 1:
        ag = agreement(records)
        pairs = " · ".join(f"{a} ~ {b} {'—' if v is None else f'{v:+.2f}'}" for (a, b), v in ag.pairs.items())
        w = "—" if ag.w is None else f"{ag.w:.2f}"
        st.caption(  # source names come from the file: escaped
            escape_markdown(
                f"Agreement between methods: Kendall's W {w} (1 = same ranking, 0 = none) over the "
                f"{ag.steps} steps all of them scored; Spearman ρ: {pairs or '—'}"
            )
        )
    res = next((r for r in records if r.method == "resample" and "noise_floor" in r.series), None)
    if res is not None:
        show_figure(resample_interval_figure(res, trace.final.steps), f"imp_ci_{key}")


def importance_view(key: str, trace: Trace) -> None:
    _message()
    rnd = trace.final
    records = rnd.importance
    if not records:
        st.info(
            "No importance scores yet. Analyse with the local model (receiver heads and attention "
            "suppression), or from the command line: `o3viz importance TRACE --method resample` "
            "for counterfactual resampling."
        )
        _analyse_button(key, trace, again=False)
        if st.session_state.importance_job is None:
            _resample_controls(key, trace)
        return
    show_figure(importance_scores_figure(records, rnd.steps), f"imp_scores_{key}")
    _proxy_note(records)
    _trust(key, trace)
    with_matrix = [r for r in records if r.matrix is not None]
    left, right = st.columns(2)
    if with_matrix:
        with left:
            names = [record_label(r) for r in with_matrix]
            pick = st.selectbox("Step × step matrix", names, key=f"imp_matrix_{key}")
            log = st.toggle("Log scale", value=True, key=f"imp_log_{key}")
            rec = with_matrix[names.index(pick)]
            show_figure(step_matrix_figure(rec, rnd.steps, log=log), f"imp_matrix_fig_{key}")
    receiver = next((r for r in records if r.head_kurtosis is not None), None)
    if receiver is not None:
        with right:
            show_figure(head_kurtosis_figure(receiver), f"imp_heads_{key}")
    _analyse_button(key, trace, again=True)
    if st.session_state.importance_job is None:
        _resample_controls(key, trace)
