"""Labels: the annotation queue of a dataset (the next step this labeller has not labelled, skip,
progress, traces dealt to several labellers with overlap), how well the labellers agree: κ per
pair, Krippendorff's α, the automatic labellers against each person, and where they disagree,
each row a link to the step on Inspect; and the labelled steps as a download (the golden set
``o3viz labels export`` writes). The labeller's name is the session's, given once here or on Inspect."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from o3viz.app import (
    O3vizError,
    dataset_agreement,
    label_count,
    label_export,
    label_queue,
    make_id,
    parse_step_ref,
    step_ref,
)
from o3viz.figures import escape_markdown
from pages.common.ui import pin, require_router, store

require_router()


@st.cache_data(max_entries=4, show_spinner="Comparing the labellers…")
def _agreement(root: str, dataset: str | None, stamp: int):
    return dataset_agreement(store(), dataset)


@st.cache_data(max_entries=4, show_spinner="Collecting the labelled steps…")
def _export(root: str, dataset: str | None, fmt: str, agreed: bool, stamp: int):
    return label_export(store(), dataset, fmt, agreed=agreed)


def _open(key: str, r: int, i: int) -> None:
    pin([key])
    st.session_state.inspect_key, st.session_state.inspect_node = key, make_id("step", r, i)
    st.session_state.inspect_view = None
    st.switch_page("pages/inspect.py")


def queue(dataset: str | None) -> None:
    """Where this labeller stands, and the buttons that open the next step or skip it."""
    name = st.session_state.labeller
    c = st.columns([2, 3, 1], vertical_alignment="bottom")
    if name:  # given here or on Inspect: never asked again, only changed on request
        with c[0].popover(f"Labelling as {name}", icon=":material/person:", help="change the name"):
            typed = st.text_input("Your name", value=name, max_chars=100, key="labels_name")
    else:
        typed = c[0].text_input("Your name", max_chars=100, key="labels_name")
    if typed.strip() and typed.strip() != name:
        st.session_state.labeller = name = typed.strip()
    crew = c[1].text_input(
        "Deal the traces to (names, comma-separated; empty: all to you)", key="labels_crew"
    )
    overlap = c[2].number_input("Labellers per trace", 1, 5, 2, key="labels_overlap")
    if not name:
        st.caption("Give your name to start: each label is filed under it.")
        return
    people = [p.strip() for p in crew.split(",") if p.strip()]
    state = label_queue(store(), dataset, name, labellers=people, overlap=int(overlap),
                        skip=st.session_state.label_skipped)  # fmt: skip
    b = st.columns([3, 1, 1], vertical_alignment="center")
    b[0].progress(state.done / state.total if state.total else 0.0,
                  text=f"{name}: {state.progress} steps labelled · {state.traces} traces dealt to you")  # fmt: skip
    if state.next is None:
        b[1].caption("Nothing left to label.")
        return
    key, r, i = state.next
    b[1].button("Label the next step", type="primary", on_click=_open, args=state.next, key="labels_next")
    if b[2].button("Skip it", key="labels_skip"):
        st.session_state.label_skipped.add(state.next)
        st.rerun()
    at = f"step {step_ref(r, i)} of {key}"
    st.caption(escape_markdown(f"next: {at}; on Inspect, c / w / u label it and n moves on"))


def agreement(dataset: str | None) -> None:
    try:
        table = _agreement(str(store().root), dataset, label_count(store()))
    except O3vizError as exc:
        st.info(escape_markdown(str(exc)), icon=":material/info:")
        return
    st.markdown("**How well the labellers agree** (κ with a 95% bootstrap interval over traces; "
                "precision and recall of the automatic labeller's *wrong* against the person's)")  # fmt: skip
    st.dataframe(pd.DataFrame(table.rows()), hide_index=True, width="stretch")
    notes = (
        [
            f"Krippendorff's α over {len(table.people)} labellers: {table.alpha.text()} (n = {table.alpha.n} steps)"
        ]
        if table.alpha
        else []
    )
    notes += [f"{n}: type accuracy {e.text()} (n = {e.n})" for n, e in table.types]  # fmt: skip
    for line in notes:
        st.caption(escape_markdown(line))
    rows = [{"labellers": f"{p.a} · {p.b}", "trace": k, "step": s, "first says / second says": f"{a} / {b}",
             "open": f"/inspect?trace={k}&node={parse_step_ref(s).id}"} for p in table.pairs for k, s, a, b in p.disagree[:50]]  # fmt: skip
    if rows:
        st.markdown(f"**Where they disagree** ({len(rows)} shown)")
        df = pd.DataFrame(rows)[["labellers", "trace", "step", "first says / second says", "open"]]
        st.dataframe(df, hide_index=True, width="stretch", height=min(240, 38 + 35 * len(df)),
                     column_config={"open": st.column_config.LinkColumn("open", display_text="Inspect")})  # fmt: skip


def export(dataset: str | None) -> None:
    """The labelled steps as a file to download (JSONL golden records, or one Parquet row per label)."""
    c = st.columns([1, 1.2, 2], vertical_alignment="bottom")
    fmt = c[0].selectbox("Export as", ("jsonl", "parquet"), key="labels_export_format")
    agreed = c[1].toggle("Only steps two labellers agree on", key="labels_export_agreed")
    try:
        data, traces, labels = _export(str(store().root), dataset, fmt, agreed, label_count(store()))
    except O3vizError as exc:
        c[2].caption(escape_markdown(f"Nothing to export: {exc}"))
        return
    c[2].download_button(
        f"Download {labels} labels on {traces} traces",
        data=data,
        file_name=f"labels-{dataset or 'all'}.{fmt}",
        mime="application/json" if fmt == "jsonl" else "application/octet-stream",
        on_click="ignore",
        icon=":material/download:",
        key="labels_download",
    )


def labels_page() -> None:
    st.markdown("#### Labels · people judge steps, and the automatic labels are held against them")
    datasets = [v for v, _ in store().distinct("dataset")]
    dataset = st.selectbox("Dataset", [None, *datasets], key="labels_dataset",
                           format_func=lambda d: "every trace" if d is None else d)  # fmt: skip
    queue(dataset)
    agreement(dataset)
    export(dataset)


labels_page()
