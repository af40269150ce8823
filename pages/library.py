"""Library (home): every trace in the persistent store (samples, runs, uploads, imported datasets)
as a searchable, filterable, paged table; uploads (whole datasets too) with a one-line error per
bad file; selected rows open in Inspect or Compare, or go to the Dataset page."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from o3viz.app import (
    FIELD_ROLES,
    STEP_TYPES,
    STORE_COLUMNS,
    UPLOAD_TYPES,
    ImportJob,
    ImportOptions,
    O3vizError,
    Query,
    import_dataset,
    import_outcome,
    preview_import,
    store_rows,
)
from o3viz.figures import STEP_TYPE_LABELS, VERDICT_COLORS, escape_markdown
from pages.common.jobs import follow_job, start_job
from pages.common.state import take
from pages.common.ui import load_upload, pin, require_router, show_load_errors, store

COUNT_CAP = 10_000  # a search counts its matches up to here ("10,000+")
SORTS = {
    "newest": ("id", True),
    "oldest": ("id", False),
    "most steps": ("steps", True),
    "fewest steps": ("steps", False),
    "most backtracks": ("backtracks", True),
    "most claim errors": ("claim_errors", True),
    "most tokens after the first right answer": ("tokens_after_correct", True),
    "most answer flips": ("answer_flips", True),
    "name": ("name", False),
}


COLUMNS = {
    "name": st.column_config.TextColumn("name", width=250, help="hover a cell for the whole name"),
    "match": st.column_config.TextColumn("match", width=260, help="the words around the search's match"),
    "dataset": st.column_config.TextColumn("dataset", width=100),
    "model": st.column_config.TextColumn("model", width=150),
    "correct": st.column_config.TextColumn(
        "graded",
        width=62,
        help="The final answer, graded by the source where it has a grade, else by o3viz's answer check: "
        "✓ correct, ✗ wrong, — ungraded",
    ),
    "steps": st.column_config.NumberColumn("steps", width=56),
    "backtracks": st.column_config.NumberColumn("backtracks", width=82),
    "claim errors": st.column_config.NumberColumn("claim errors", width=92, help="wrong arithmetic claims"),
    "verdict": st.column_config.TextColumn(
        "o3viz verdict",
        width=100,
        help="o3viz's verdict on the last round (its answer check and claim checks): pass, fail or unverifiable",
    ),
    "source": st.column_config.TextColumn("source", width=64),
    "first right": st.column_config.TextColumn(
        "first right",
        width=72,
        help="where the running answer (stated, or forced by a probe) is first right, as a share of the "
        "reasoning's tokens; — never right, or ungraded",
    ),
    "converged": st.column_config.TextColumn(
        "converged", width=76, help="where the running answer last changed, as a share of the tokens"
    ),
    "flips": st.column_config.TextColumn(
        "flips", width=48, help="times the running answer went right → wrong or wrong → right; — none found"
    ),
    "tokens after right": st.column_config.TextColumn(
        "tokens after right",
        width=110,
        help="tokens spent after the first right answer (estimated from the source's count for an import)",
    ),
    "overthinking": st.column_config.TextColumn(
        "overthinking",
        width=92,
        help="harmless: right at the first correct point and at the end; harmful: right, then wrong at the end",
    ),
    "tokens": st.column_config.TextColumn(
        "tokens", width=64, help="— where the trace has no tokens (an import)"
    ),
}
# What a first look needs at 1280x720 comes first (the answer's grade, its size); where it came
# from and when scroll in from the right.
ORDER = (
    "name", "match", "dataset", "model", "correct", "steps", "tokens", "verdict",
    "first right", "flips", "overthinking", "converged", "tokens after right",
    "backtracks", "claim errors", "self-checks", "source", "added",
)  # fmt: skip
_MARK_STYLE = {
    "✓": f"color: {VERDICT_COLORS['correct']}; font-weight: 700",
    "✗": f"color: {VERDICT_COLORS['wrong']}; font-weight: 700",
}


def library_table(rows: list[dict], search: str):
    """The page of rows as the table shows it: ✓/✗ in the palette's green/red and, for a search,
    the words around each match."""
    frame = pd.DataFrame(store_rows(rows))
    if search:
        found = store().snippets(search, [r["key"] for r in rows])
        frame.insert(1, "match", [" ".join(found.get(r["key"], "").split()) for r in rows])
    return frame.style.map(lambda v: _MARK_STYLE.get(v, ""), subset=["correct"])


def selection_hint(picked: list[str]) -> str:
    """What the buttons do with the selection (they are disabled until it fits)."""
    if not picked:
        return "Select one row to inspect it, two to compare them."
    if len(picked) == 1:
        return "1 selected: Inspect it, or select one more to compare."
    if len(picked) == 2:
        return "2 selected: Compare them."
    return f"{len(picked)} selected: select one to inspect, two to compare."


AUTOMATIC = "(automatic)"


def field_mapping(path, ds: str) -> ImportOptions:
    """Which field holds the text, question, reference, id and model (found automatically unless
    chosen), with how the first records read under that choice; open by itself when none would."""
    pv = preview_import(path, ImportOptions(ds))
    choices = [AUTOMATIC, *pv.fields]
    with st.expander(
        f"Fields · {escape_markdown(pv.summary())}", expanded=not pv.readable, icon=":material/table_view:"
    ):
        cols = st.columns(len(FIELD_ROLES))
        picked = {}
        for col, role in zip(cols, FIELD_ROLES, strict=True):
            v = col.selectbox(role, choices, key=f"ds_field_{role}_{path.name}")
            picked[f"{role}_field"] = None if v == AUTOMATIC else v
        opts = ImportOptions(ds, **picked)
        if any(picked.values()):
            pv = preview_import(path, opts)
        st.dataframe(pd.DataFrame(pv.rows()), hide_index=True, width="stretch")
    if not pv.readable:
        st.error(
            escape_markdown(
                f"None of the first records would import: {pv.summary()}. Choose the text field above."
            ),
            icon=":material/error:",
        )
    return opts


def dataset_panel(name: str, path, n: int) -> None:
    """A multi-record upload: how its first records read (and which field is what), then import
    all records as a dataset, or pick one. Once imported it folds to one line, so the table stays
    on the first screen."""
    started = st.session_state.staged_uploads
    if path.name in started:
        c1, c2 = st.columns([5, 1], vertical_alignment="center")
        c1.caption(escape_markdown(f"{name}: its {n} records were imported (shown below)."))
        if c2.button("Import again", key=f"ds_again_{path.name}", help="adds only what is not there yet"):
            started.pop(path.name)
            st.rerun()
        return
    st.info(escape_markdown(f"{name} holds {n} records."), icon=":material/dataset:")
    c1, c2, c3, c4 = st.columns([2.2, 1.6, 1, 1.4], vertical_alignment="bottom")
    ds = c1.text_input("Dataset name", value=name.split(".")[0], key=f"ds_name_{path.name}")
    opts = field_mapping(path, ds.strip() or name)
    if c2.button(
        f"Import all {n} records", type="primary", key=f"ds_all_{path.name}", icon=":material/upload:"
    ):
        started[path.name] = n
        start_job("import_job", lambda: ImportJob(path, store(), opts, workers=2, file_name=name))
    line = c3.number_input("Line", min_value=1, max_value=n, value=1, key=f"ds_line_{path.name}")
    if c4.button("Import this record", key=f"ds_one_{path.name}"):
        rep = import_dataset(path, store(), opts, workers=0, only={int(line)}, file_name=name)
        pin(rep.keys)
        for err in rep.errors:
            st.error(escape_markdown(f"{name}: {err}"), icon=":material/error:")
        if rep.duplicates and not rep.traces:
            st.info(
                escape_markdown(f"{name} line {line} is already in the library; nothing was added."),
                icon=":material/info:",
            )
        elif rep.keys or rep.duplicates:
            st.success(
                escape_markdown(f"{name} line {line}: {rep.summary()}"), icon=":material/check_circle:"
            )


def import_ended(job: ImportJob) -> None:
    st.session_state.import_message = job.error or job.result


def show_import_message() -> None:
    msg = take("import_message")
    if isinstance(msg, str):
        st.error(escape_markdown(f"The import stopped: {msg}"), icon=":material/error:")
        st.caption("The traces it had finished are in the library; importing the file again completes it.")
    elif msg is not None:
        outcome = import_outcome(msg)  # nothing imported is an error, never a green success
        show = {"error": st.error, "warning": st.warning, "success": st.success}[outcome.kind]
        show(escape_markdown(outcome.line), icon=":material/error:" if outcome.kind == "error" else None)
        if msg["errors"]:
            with st.expander(f"{len(msg['errors'])} bad records (skipped)"):
                st.code("\n".join(msg["errors"][:500]), language=None)
        if outcome.kind != "error":
            st.session_state.lib_dataset = [msg["dataset"]]


def uploads_section(where) -> None:
    uploads = where.file_uploader(
        "Upload traces or a dataset",
        type=None,  # any file: one the app cannot read is refused in words on the page, not on hover
        accept_multiple_files=True,
        key="uploads",
        help="Trace files (.o3trace.json, .o3trace.json.gz), reasoning to import (.txt, .json, .md), "
        "or a whole dataset (.jsonl or a JSON array, an Inspect AI .eval log, a .parquet file: one "
        f"trace per record, grouped under a dataset name). Reads: {', '.join('.' + t for t in UPLOAD_TYPES)}.",
    )
    for f in uploads or []:
        data = f.getvalue()
        up = load_upload(f.name, data)  # recognised, staged or stored by the worker
        if up.dataset is not None:
            dataset_panel(f.name, up.dataset, up.records)
            continue
        added = st.session_state.added_uploads
        if up.key and f.file_id not in added:
            added.add(f.file_id)
            pin([up.key])
            done = st.success if up.added else st.info
            done(
                escape_markdown(up.message()),
                icon=":material/check_circle:" if up.added else ":material/info:",
            )
        show_load_errors([up.error] if up.error else [], f.file_id, empty=not data)


def filters() -> Query:
    s = store()
    c = st.columns([2.4, 1.7, 1.7, 1.1, 1.1], vertical_alignment="bottom")
    search = c[0].text_input("Search the steps", key="lib_search", placeholder="words in the reasoning")
    dataset = c[1].multiselect(
        "Dataset", [v for v, _ in s.distinct("dataset")], key="lib_dataset", placeholder="all"
    )
    model = c[2].multiselect("Model", [v for v, _ in s.distinct("model")], key="lib_model", placeholder="all")
    correct = c[3].selectbox(
        "Graded",
        ("any", "correct", "wrong", "ungraded"),
        key="lib_correct",
        help="the source's grade where it has one, else o3viz's answer check",
    )
    with c[4].popover("More", icon=":material/tune:", help="verdict, step type, sorting"):
        verdict = st.multiselect("Verdict", [v for v, _ in s.distinct("verdict")], key="lib_verdict")
        types = st.multiselect(
            "Has a step of type",
            STEP_TYPES,
            key="lib_types",
            format_func=lambda t: STEP_TYPE_LABELS.get(t, t),
        )
        disagree = st.toggle(
            "Only where the gradings disagree",
            key="lib_disagree",
            help="the source's grade and o3viz's answer check say different things",
        )
        overthinking = st.multiselect(
            "Overthinking",
            ("harmful", "harmless", "none"),
            key="lib_overthinking",
            help="harmful: the running answer was right, then wrong at the end; harmless: right early and "
            "at the end",
        )
        sort, desc = SORTS[st.selectbox("Sort", list(SORTS), key="lib_sort")]
    return Query(
        search, dataset, model, [], verdict, correct, types, sort=sort, descending=desc, disagree=disagree,
        overthinking=overthinking,
    )  # fmt: skip


require_router()
head, upload_col = st.columns([1.25, 1], vertical_alignment="center")
head.title("Trace library")
job = st.session_state.import_job
if job is not None:
    follow_job("import_job", job, import_ended, stop_label="Stop the import")
show_import_message()
uploads_section(upload_col)
for err in st.session_state.sample_errors:
    st.warning(escape_markdown(f"sample {err}"))

q = filters()
try:
    total = store().count(q, cap=COUNT_CAP if q.search else None)
except (O3vizError, ValueError) as exc:
    st.error(escape_markdown(f"That search cannot run: {exc}"))
    st.stop()
if total == 0:
    if store().count() == 0:
        st.info("No traces yet. Upload a trace file or a dataset above, or make one on the Run page.")
    else:
        st.info("No traces match these filters. Clear the search or a filter to see more.")
    st.stop()
size = 50
pages = max(1, math.ceil(total / size))
page = min(st.session_state.get("lib_page", 1), pages)
q.limit, q.offset = size, (page - 1) * size
rows = store().rows(q, STORE_COLUMNS)
keys = [r["key"] for r in rows]
actions = st.container()
table = st.dataframe(
    library_table(rows, q.search),
    hide_index=True,
    key="library_table",
    on_select="rerun",
    selection_mode="multi-row",
    width="stretch",
    height=min(38 + 35 * len(rows), 390),
    column_config=COLUMNS,
    column_order=[c for c in ORDER if c != "match" or q.search],
)
picked = [keys[i] for i in table.selection.rows] if table and table.selection else []

actions.caption(selection_hint(picked))
c = actions.columns([1.15, 1.25, 1.5, 1.1, 1.6, 0.9], vertical_alignment="center")
inspect_help = "open the selected trace" if len(picked) == 1 else "select exactly one row to inspect it"
compare_help = (
    "compare the two selected traces" if len(picked) == 2 else "select exactly two rows to compare them"
)
if c[0].button(
    "Inspect", disabled=len(picked) != 1, type="primary", icon=":material/account_tree:", help=inspect_help
):
    pin(picked)
    st.session_state.inspect_key, st.session_state.inspect_node = picked[0], None
    st.switch_page("pages/inspect.py")
if c[1].button("Compare", disabled=len(picked) != 2, icon=":material/compare_arrows:", help=compare_help):
    pin(picked)
    st.session_state.compare_a, st.session_state.compare_b = picked[0], picked[1]
    st.switch_page("pages/compare.py")
if c[2].button("Dataset", icon=":material/bar_chart:", help=f"figures over the {total:,} matching traces"):
    st.session_state.dataset_query = q
    st.switch_page("pages/dataset.py")
with c[3].popover("Delete", icon=":material/delete:", disabled=not picked):
    st.write(f"Delete {len(picked)} selected trace(s) from the store? Their files go too.")
    if st.button("Delete", type="primary", key="lib_delete_confirm"):
        store().delete(picked)
        st.rerun()
more = "+" if q.search and total >= COUNT_CAP else ""
c[4].caption(f"{q.offset + 1}–{q.offset + len(rows)} of {total:,}{more} traces; page")
c[5].number_input(
    "Page", min_value=1, max_value=pages, value=page, key="lib_page", label_visibility="collapsed"
)
if len(picked) == 1:
    st.download_button(
        "Download the selected trace",
        data=lambda k=picked[0]: store().trace_file_bytes(k),
        file_name=f"{picked[0]}.o3trace.json.gz",
        mime="application/gzip",
        on_click="ignore",
        icon=":material/download:",
    )
