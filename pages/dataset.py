"""Dataset: what holds across many traces (a dataset, a filter or a search): correctness against
length, the step-type mix of correct and wrong traces, backtracking and self-checking, where the
first wrong claim sits, claim-error rates, importance by step type, when the running answer was
right (beside the published figures), and the outliers. Clicking a bar lists its traces; a listed
trace opens in Inspect."""

from __future__ import annotations

import io
import json
from dataclasses import replace

import pandas as pd
import streamlit as st

from o3viz.app import (
    ANSWER_MEASURES,
    GRADE_LABELS,
    GRADED_BY,
    GRADES,
    OUTLIER_RULE,
    Query,
    answer_rows,
    dataset_summary,
    rate_text,
    select_frame,
)
from o3viz.app import DATASET_COLUMNS as COLUMNS
from o3viz.app import dataset_frame as frame
from o3viz.app import select_rows as select
from o3viz.figures import (
    answer_dataset_figure,
    claim_rates_figure,
    escape_markdown,
    first_wrong_figure,
    importance_figure,
    length_figure,
    rates_figure,
    type_mix_figure,
)
from pages.common.state import take
from pages.common.ui import pin, require_router, show_figure, store

MAX_TRACES = 200_000


@st.cache_data(max_entries=8, show_spinner="Aggregating…")
def _aggregate(root: str, query_key: str, stamp: tuple, _query: Query, grade: str):
    # the columnar copy through DuckDB when it is fresh, else SQLite (o3viz.store.columnar)
    rows = select_frame(store(), replace(_query, limit=MAX_TRACES, offset=0), COLUMNS, max_rows=MAX_TRACES)
    df = frame(rows, grade=grade)
    return df, dataset_summary(df), answer_rows(df)


@st.cache_resource(max_entries=8, show_spinner=False)
def _figures(root: str, query_key: str, stamp: tuple, grade: str, _summary) -> list:
    """The six figures of one scope, built once: a bar click (or a row picked in a table) reruns
    the page, and rebuilding them was most of that rerun's time. Shared, read-only figures (a
    resource: ``st.plotly_chart`` and the download only read them)."""
    return [
        ("ds_length", length_figure(_summary.length)),
        ("ds_types", type_mix_figure(_summary.type_mix)),
        ("ds_rates", rates_figure(_summary.rates)),
        ("ds_first_wrong", first_wrong_figure(_summary.first_wrong)),
        ("ds_claims", claim_rates_figure(_summary.claim_rates)),
        ("ds_importance", importance_figure(_summary.importance)),
    ]


@st.cache_resource(max_entries=8, show_spinner=False)
def _answer_figures(root: str, query_key: str, stamp: tuple, _answers) -> list:
    """The four running-answer figures of one scope, kept as the six above are."""
    return [(f"ds_answer_{m}", answer_dataset_figure(m, _answers.bars[m])) for m in ANSWER_MEASURES]


def scope() -> Query:
    s = store()
    given = take("dataset_query")
    datasets = [v for v, _ in s.distinct("dataset")]
    if given is not None:
        st.session_state.ds_datasets = [d for d in given.dataset if d in datasets]
        st.session_state.ds_models = list(given.model)
        st.session_state.ds_search = given.search
        st.session_state.ds_rest = replace(given, dataset=[], model=[], search="")
    elif "ds_datasets" not in st.session_state:
        st.session_state.ds_datasets = datasets[:1]
    c = st.columns([2, 2, 2, 2], vertical_alignment="bottom")
    ds = c[0].multiselect("Dataset (none: every trace)", datasets, key="ds_datasets")
    models = c[1].multiselect("Model", [v for v, _ in s.distinct("model")], key="ds_models")
    search = c[2].text_input("Search the steps", key="ds_search")
    c[3].selectbox(
        GRADED_BY,
        list(GRADES),
        format_func=GRADE_LABELS.__getitem__,
        key="ds_grade",
        help="Which grading the figures use. The data's choice: o3viz's answer check where it and the "
        "source's grade disagree on more than 2% of the traces graded by both, else the source's where "
        "it has one and o3viz's otherwise. Or name one: the imported file's own label, o3viz's check "
        "against the reference, or the source's where it has one and o3viz's otherwise.",
    )
    only = st.toggle("Only traces whose two gradings disagree", key="ds_disagree")
    rest = st.session_state.ds_rest or Query()
    return replace(rest, dataset=ds, model=models, search=search, limit=MAX_TRACES, offset=0, disagree=only)


def _traces(n: int) -> str:
    return f"{n:,} trace{'s' if n != 1 else ''}"


def _have(n: int) -> str:
    return "has" if n == 1 else "have"


def headline(df: pd.DataFrame, summary) -> None:
    """The headline numbers, each with its n (and a Wilson interval where it is a proportion)."""
    cols = st.columns([1, 1, 2.2, 1, 2])
    cols[0].metric("Traces", f"{summary.n:,}")
    cols[1].metric("Graded", f"{summary.graded:,}")
    acc = summary.accuracy
    cols[2].metric(
        "Correct", "—" if acc is None else f"{acc:.0%}", help=rate_text(summary.correct, summary.graded)
    )
    cols[2].caption(rate_text(summary.correct, summary.graded) if summary.graded else "no graded traces")
    cols[3].metric("Median steps", f"{df['steps'].median():.0f}" if len(df) else "—")
    k = int((df["backtracks"] > 0).sum())
    cols[4].metric("With a backtrack", f"{k / len(df):.0%}" if len(df) else "—")
    cols[4].caption(rate_text(k, len(df)).split(" ", 1)[1] if len(df) else "")


def clicked(event) -> str | None:
    try:
        points = event.selection.points
    except AttributeError:
        return None
    for p in points or []:
        cd = p.get("customdata")
        if isinstance(cd, str) and cd.startswith("{"):
            return cd
    return None


ANSWER_LIST = {  # the running-answer columns a running-answer bar's list shows
    "first_correct_frac": "first right at",
    "convergence_frac": "settled at",
    "answer_losses": "right → wrong",
    "tokens_after_correct": "tokens after first right",
}


def trace_list(df: pd.DataFrame, sel: str) -> None:
    part = select(df, sel)
    st.subheader(f"{_traces(len(part))} behind that bar")
    shown = part.head(500)
    cols = ["name", "dataset", "model", "group", "steps", "backtracks", "self_checks", "claim_errors"]
    view = shown[cols]
    if "measure" in json.loads(sel):  # one dataset · model: its running-answer columns instead
        view = shown[["name", "group", "steps", *ANSWER_LIST]].copy()
        for c in ("first_correct_frac", "convergence_frac"):
            view[c] = pd.to_numeric(view[c], errors="coerce") * 100  # shown as "56%"
    table = st.dataframe(
        view.rename(
            columns={
                "group": "correct",
                "self_checks": "self-checks",
                "claim_errors": "claim errors",
                **ANSWER_LIST,
            }
        ),
        hide_index=True,
        on_select="rerun",
        selection_mode="single-row",
        key="ds_pick_table",
        height=min(38 + 35 * len(shown), 300),
        column_config={
            c: st.column_config.NumberColumn(format="%.0f%%") for c in ("first right at", "settled at")
        },
    )
    rows = table.selection.rows if table and table.selection else []
    if st.button(
        "Inspect the selected trace", disabled=not rows, type="primary", icon=":material/account_tree:"
    ):
        open_in_inspect(shown.iloc[rows[0]]["key"])


def outlier_table(summary) -> None:
    st.subheader("Outliers: the traces furthest from the rest", anchor="outliers")
    out = summary.outliers
    st.caption(escape_markdown(f"Rule: {OUTLIER_RULE}."))
    if out.empty:
        st.info(
            "No outliers: fewer than 3 traces in this scope."
            if summary.n < 3
            else "No trace stands out by this rule.",
            icon=":material/info:",
        )
        return
    table = st.dataframe(
        out.drop(columns=["key"]),
        hide_index=True,
        on_select="rerun",
        selection_mode="single-row",
        key="ds_outliers",
        height=min(38 + 35 * len(out), 320),
        column_config={"name": st.column_config.TextColumn("name", width=230)},
    )
    rows = table.selection.rows if table and table.selection else []
    c0, c1, c2, _ = st.columns([1.3, 1, 1, 2])
    if c0.button("Inspect the selected outlier", disabled=not rows, icon=":material/account_tree:"):
        open_in_inspect(out.iloc[rows[0]]["key"])
    c1.download_button(
        "Table as CSV", out.to_csv(index=False), "o3viz_outliers.csv", "text/csv", icon=":material/download:"
    )
    c2.download_button(
        "Table as Parquet",
        lambda: _parquet(out),  # written when asked for, not on every rerun
        "o3viz_outliers.parquet",
        "application/octet-stream",
        on_click="ignore",
        icon=":material/download:",
    )


def _parquet(out: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    out.to_parquet(buf, index=False)
    return buf.getvalue()


def figure_rows(df: pd.DataFrame, figures: list, listed: bool) -> bool:
    """``figures`` two to a row; a clicked bar's traces are listed right under its row (once on
    the page: ``listed`` says one was already). Returns whether one is listed now."""
    for i in range(0, len(figures), 2):
        picks = []
        for col, (key, fig) in zip(st.columns(2), figures[i : i + 2], strict=False):
            with col:
                picks.append(clicked(show_figure(fig, key, on_select="rerun", selection_mode="points")))
        pick = next((p for p in picks if p), None)
        if pick and not listed:
            trace_list(df, pick)
            listed = True
    return listed


def answer_caption(answers) -> bool:
    """What the running-answer figures count, and the traces they leave out; False when no trace
    here has the figures (nothing to draw)."""
    if answers.not_indexed >= answers.traces:
        st.info(
            f"None of these {_traces(answers.traces)} has running-answer figures yet: they were indexed "
            "before o3viz computed them. Run `o3viz library reindex --full` to add them.",
            icon=":material/update:",
        )
        return False
    gaps = []
    if answers.not_indexed:
        gaps.append(
            f"{_traces(answers.not_indexed)} {_have(answers.not_indexed)} no running-answer figures "
            "(indexed before o3viz computed them: run `o3viz library reindex --full`)"
        )
    if answers.ungraded:
        gaps.append(
            f"{_traces(answers.ungraded)} {_have(answers.ungraded)} no graded running answer "
            "(no reference, or no answer stated) and count in no bar"
        )
    st.caption(
        "The running answer: what each step states (or a probe forced), checked against the reference "
        "by o3viz, not by *Graded by*. One bar per dataset · model, with its 95% interval and n; dashed: "
        "the paper's figure, measured its own way. Early = right before the last 10% of the reasoning; "
        "positions are shares of its tokens (of its characters for an import). A step states an answer "
        'when it marks one (boxed, "the answer is") or concludes about what the question asks; where it '
        "settles and right → wrong count only answers read with confidence, never an intermediate result."
        + "".join(f" {g}." for g in gaps)
    )
    return True


def open_in_inspect(key: str) -> None:
    pin([key])
    st.session_state.inspect_key, st.session_state.inspect_node = key, None
    st.switch_page("pages/inspect.py")


require_router()
st.title("Dataset")
q = scope()
s = store()
# the generation counts every write (a ``reindex --full`` too), so its new figures show on the next run
stamp = (s.count(), s.conn.execute("SELECT max(id) FROM traces").fetchone()[0], s.generation())
grade = st.session_state.get("ds_grade") or "auto"
df, summary, answers = _aggregate(str(s.root), repr(q), stamp, q, grade)
if summary.n == 0:
    st.info("No traces in this scope. Pick a dataset, or import one on the Library page.")
    st.page_link("pages/library.py", label="Go to the library", icon=":material/folder_open:")
    st.stop()
headline(df, summary)
choice = summary.grade_choice
used = choice.grade if choice is not None else grade
st.caption(
    escape_markdown(
        f"Correct = {GRADES[used][1]}"
        + (f" ({GRADE_LABELS['auto']})" if grade == "auto" else "")
        + (
            f"; {_traces(summary.n - summary.graded)} without that grade count in the totals only "
            "(the figures that need no grade show them as ungraded)"
            if summary.n > summary.graded
            else ""
        )
        + ". Bars over fewer than 5 traces are drawn hollow. Click a bar to list its traces."
    )
    + " Further down: [When did it know?](#when-did-it-know) · [Outliers](#outliers)."
)
if choice is not None and choice.split:  # both figures, which one is used, and why
    st.warning(escape_markdown(" ".join(choice.lines())), icon=":material/rule:")
elif summary.disagree:
    st.caption(
        escape_markdown(
            f"{_traces(summary.disagree)} here where the source's grade and o3viz's answer check disagree; "
            "switch on the toggle above to see only those."
        )
    )
listed = figure_rows(df, _figures(str(s.root), repr(q), stamp, grade, summary), listed=False)
st.subheader("When did it know?", anchor="when-did-it-know")
if answer_caption(answers):
    figure_rows(df, _answer_figures(str(s.root), repr(q), stamp, answers), listed=listed)
outlier_table(summary)
