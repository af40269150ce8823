"""Compare's dataset mode: two datasets (or two models of one) paired by question. It opens on the
two sides that share the most questions (``PairedCompareRequest.suggested``), or says in one line
that no two do. The first screen says which is better, by how much and on which questions: accuracy
of A and B with n, the paired difference with its 95% interval, McNemar's exact p, the 2×2 table,
the same numbers under the other grades (with a warning where one reverses the direction), and the
questions that flipped, listed first (a flip of two equal answers last, with its reason); one click
opens that pair in the two-trace Compare. Below: the figures (thin measures hollow), what changed
in the reasoning with n, the unpaired questions and the downloads."""

from __future__ import annotations

import io
import json

import streamlit as st

from o3viz.app import (
    GRADE_LABELS,
    GRADED_BY,
    O3vizError,
    PairedCompareRequest,
    Query,
    Side,
    compare_datasets,
    dataset_models,
    one_line,
    paired_rows,
    select_frame,
)
from o3viz.figures import (
    clip_label,
    counted,
    escape_markdown,
    paired_accuracy_figure,
    paired_measures_figure,
    readable,
)
from pages.common.ui import pin, show_figure, store, sync_url

MODES = {"traces": "Two traces", "datasets": "Two datasets"}
PARAMS = ("da", "ma", "db", "mb", "grade")
FLIP_WORDS = {"A only": "A", "B only": "B"}  # the "right in" column


def _copy_mode() -> None:
    st.session_state.compare_mode = st.session_state.compare_mode_pick or st.session_state.compare_mode


def mode_switch(container=st) -> str:
    """The Compare page's mode (two traces or two datasets): a link's ``?mode=datasets`` opens the
    dataset mode; the picker switches; the trace mode drops the dataset mode's URL."""
    url_mode = st.query_params.get("mode")
    if url_mode != st.session_state.compare_mode_url:  # a new link (or the URL this page wrote)
        st.session_state.compare_mode_url = url_mode
        if url_mode in MODES:
            st.session_state.compare_mode = url_mode
    if st.session_state.compare_mode not in MODES:
        st.session_state.compare_mode = "traces"
    st.session_state.compare_mode_pick = st.session_state.compare_mode
    container.segmented_control(
        "What to compare", list(MODES), format_func=MODES.__getitem__, key="compare_mode_pick",
        on_change=_copy_mode, label_visibility="collapsed",
    )  # fmt: skip
    if st.session_state.compare_mode == "traces":
        for k in ("mode", *PARAMS):
            if k in st.query_params:
                del st.query_params[k]
        st.session_state.compare_mode_url = None
    return st.session_state.compare_mode


@st.cache_data(max_entries=4, show_spinner="Finding two datasets on the same questions…")
def _suggested(root: str, stamp: tuple) -> dict | None:
    """The sides sharing the most questions (``PairedCompareRequest.suggested``); None if none do."""
    rows = select_frame(store(), Query(sort="id", descending=False), ("dataset", "model", "question"))
    req = PairedCompareRequest.suggested(rows)
    return (
        None
        if req is None
        else {"da": req.a.dataset, "ma": req.a.model, "db": req.b.dataset, "mb": req.b.model}
    )


def _defaults(datasets: list[str], suggested: dict | None) -> dict:
    """The suggested pair; else two datasets when there are two, else two models of the one."""
    if suggested is not None:
        return suggested | {"grade": "auto"}
    if len(datasets) >= 2:
        return {"da": datasets[0], "ma": "", "db": datasets[1], "mb": "", "grade": "auto"}
    models = dataset_models(store(), datasets[0]) + ["", ""]
    return {"da": datasets[0], "ma": models[0], "db": datasets[0], "mb": models[1], "grade": "auto"}


def _select(container, label: str, options: list[str], sets: dict, name: str, fmt=None) -> None:
    """A selectbox whose choice lives in ``sets[name]``; the widget's own choice (this run's click)
    wins over the stored one, and its state is set before it is drawn."""
    key = f"pc_{name}"
    value = st.session_state[key] if key in st.session_state else sets.get(name)
    st.session_state[key] = value if value in options else options[0]
    kw = {"format_func": fmt} if fmt else {}
    sets[name] = container.selectbox(label, options, key=key, **kw)


def _picks(datasets: list[str], suggested: dict | None) -> dict:
    """The sides as picked (the session's, a link's, else the suggested pair), widgets in one row."""
    sets = dict(st.session_state.compare_sets or _defaults(datasets, suggested))
    url = {k: st.query_params.get(k) for k in PARAMS if st.query_params.get(k) is not None}
    if url and url != sets.get("_url"):  # a link: it wins over this session's pickers
        sets |= url
        sets["_url"] = url
        for name in PARAMS:
            key = f"pc_{name}"
            st.session_state.pop(key, None)
    cols = st.columns([2.1, 1.8, 0.3, 2.1, 1.8, 2.1], vertical_alignment="bottom")
    for side, c in (("a", 0), ("b", 3)):
        _select(cols[c], f"Dataset {side.upper()}", datasets, sets, f"d{side}")
        models = ["", *dataset_models(store(), sets[f"d{side}"])]
        _select(cols[c + 1], f"Model {side.upper()}", models, sets, f"m{side}", lambda v: v or "every model")
    cols[2].markdown("vs")
    _select(cols[5], GRADED_BY, list(GRADE_LABELS), sets, "grade", GRADE_LABELS.__getitem__)
    st.session_state.compare_sets = sets
    sync_url(mode="datasets", trace=None, b=None, **{k: sets[k] or None for k in PARAMS})
    sets["_url"] = {k: sets[k] for k in PARAMS if sets[k]}
    st.session_state.compare_mode_url = "datasets"
    return sets


@st.cache_data(max_entries=8, show_spinner="Pairing the questions…")
def _compare(root: str, stamp: tuple, sides: tuple, grade: str):
    (da, ma), (db, mb) = sides
    return compare_datasets(store(), PairedCompareRequest(Side(da, ma), Side(db, mb), grade=grade))


def _open_pair(key_a: str, key_b: str) -> None:
    pin([key_a, key_b])
    st.session_state.compare_a, st.session_state.compare_b = key_a, key_b
    st.session_state.compare_mode = "traces"
    sets = dict(st.session_state.compare_sets or {})
    sets["opened"] = sets.get("opened", 0) + 1  # a fresh flip table next time: no stale selection
    st.session_state.compare_sets = sets
    for k in ("mode", *PARAMS):
        if k in st.query_params:
            del st.query_params[k]
    st.rerun()


def _grades(r) -> None:
    """Beside the chosen grade's accuracies: the same under each other grade ("reverses" where its
    difference goes the other way), and how often the two graders disagree."""
    shown, *others = r.grade_table()
    parts = []
    for g in others:
        same = all(g[k] == shown[k] for k in ("graded", "accuracy_a", "accuracy_b"))
        flag = " :orange[**reverses**]" if g["reverses"] else ""
        parts.append(
            f"{GRADE_LABELS[g['grade']]}: the same"
            if same
            else f"{GRADE_LABELS[g['grade']]}: A {_pct(g['accuracy_a'])}, B {_pct(g['accuracy_b'])} "
            f"(n = {g['graded']:,}){flag}"
        )
    if parts:
        st.markdown("**Other grades** · " + " · ".join(parts))
    if disagree := r.grade_disagreements():
        st.caption(escape_markdown(disagree))


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v:.1%}"


def _summary(r) -> None:
    """The headline, a warning where another grade reverses it, accuracy of A and B with n and the
    other grades beside them, the difference with its interval and McNemar p."""
    t = r.table
    st.markdown(f"**{escape_markdown(r.headline())}**")
    if lines := r.grade_lines():  # the grades split: both figures, which one is used, what reverses
        st.warning(escape_markdown(" ".join([*lines, *r.reversals()])), icon=":material/rule:")
    for line in [] if lines else r.reversals():
        st.warning(escape_markdown(line), icon=":material/swap_horiz:")
    m = st.columns(2)
    m[0].metric(f"Accuracy A (n = {r.graded:,})", _pct(r.acc_a))
    m[1].metric(f"Accuracy B (n = {r.graded:,})", _pct(r.acc_b))
    _grades(r)
    if r.diff is not None:
        d, lo, hi = r.diff
        st.markdown(
            f"B − A **{100 * d:+.1f} points** (paired 95% CI {100 * lo:+.1f} to {100 * hi:+.1f}) · "
            f"McNemar exact p = **{r.p_mcnemar:.2g}** ({counted(t.discordant, 'flip')})"
        )
    small = r.too_small()
    if small and small != r.headline():
        st.info(small, icon=":material/info:")


def _table(r) -> None:
    """The 2×2 table and how the questions were paired (under the flips: its off-diagonal cells)."""
    t, p = r.table, r.pairing
    st.markdown(
        "| | B right | B wrong |\n|---|---:|---:|\n"
        f"| **A right** | {t.both:,} | {t.a_only:,} |\n| **A wrong** | {t.b_only:,} | {t.neither:,} |"
    )
    st.caption(
        f"{r.n:,} questions paired by {p.key_by} · unpaired: {p.n_unpaired_a:,} in A, {p.n_unpaired_b:,} in B"
        + (f" · repeats left out: {p.repeats_a + p.repeats_b:,}" if p.repeats_a or p.repeats_b else "")
    )


def _answer(v) -> str:
    """A final answer for the flip table ("—" for none, never "nan")."""
    return clip_label(readable(v), 20) if isinstance(v, str) and v else "—"


def _flips(r) -> None:
    """The questions that flipped, first; a click opens the pair in the two-trace Compare."""
    rows = r.rows
    flips = rows[rows["flip"].isin(FLIP_WORDS)]
    same = r.same_answer_flips
    if len(flips):
        why = "; ".join(dict.fromkeys(n.removeprefix("same answer; ") for n in flips["flip_note"] if n))
        st.markdown(
            f"**Questions that flipped ({len(flips):,})** · "
            + (f"{same:,} with the same answer on both sides ({why}; listed last) · " if same else "")
            + "click one to open the pair in Compare"
        )
    else:
        st.markdown(f"**No question flipped** · all {len(rows):,} pairs; click one to open it in Compare")
    shown = flips if len(flips) else rows
    table = [
        {
            "right in": FLIP_WORDS.get(f, f),
            "question": clip_label(readable(q or n), 120),
            "A answer": _answer(aa),
            "B answer": _answer(ab),
            "note": "same answer" if note else "",
            "A steps": sa,
            "B steps": sb,
        }
        for f, q, n, aa, ab, note, sa, sb in zip(
            shown["flip"], shown["question_a"], shown["name_a"], shown["answer_a"], shown["answer_b"],
            shown["flip_note"], shown["steps_a"], shown["steps_b"], strict=True,
        )
    ]  # fmt: skip
    if not same:  # no flip of two equal answers: no empty note column
        table = [{k: v for k, v in row.items() if k != "note"} for row in table]
    opened = (st.session_state.compare_sets or {}).get("opened", 0)
    event = st.dataframe(
        table, hide_index=True, height=min(250, 35 * (len(table) + 1) + 3), on_select="rerun", selection_mode="single-row",
        key=f"pc_flips_{opened}", width="stretch",
        column_config={
            "right in": st.column_config.TextColumn(width=60),
            "question": st.column_config.TextColumn(width=210),
            "A answer": st.column_config.TextColumn(width=70),
            "B answer": st.column_config.TextColumn(width=70),
            "note": st.column_config.TextColumn(width=95, help="same answer: graded differently, not answered differently"),
        },
    )  # fmt: skip
    picked = event.selection.rows if event else []
    if picked:
        row = shown.iloc[picked[0]]
        _open_pair(row["key_a"], row["key_b"])


def _details(r) -> None:
    show_figure(paired_accuracy_figure(r), "pc_accuracy")
    show_figure(paired_measures_figure(r), "pc_measures")
    st.subheader("What changed in the reasoning (B − A per question)")
    st.dataframe(
        r.measures.drop(columns=["measure"]).round(3).rename(columns={"what": "measure", "mean_a": "A", "mean_b": "B",
                                                             "diff": "B − A", "lo": "95% CI low", "hi": "95% CI high",
                                                             "thin": "note"}),
        hide_index=True, width="stretch",
    )  # fmt: skip
    st.caption(f"n: pairs with the measure on both sides; events: what a count or share counts, A and B "
               f"together. {r.thin_rule}: drawn hollow, read as a hint.")  # fmt: skip
    for side, names, n in (("A", r.pairing.unpaired_a, r.pairing.n_unpaired_a), ("B", r.pairing.unpaired_b, r.pairing.n_unpaired_b)):  # fmt: skip
        if n:
            with st.expander(f"Only in {side}: {n:,} questions without a partner"):
                st.write([readable(x) for x in names])
    buf = io.BytesIO()
    paired_rows(r).to_parquet(buf, index=False)
    c = st.columns(2)
    c[0].download_button(
        "Paired rows as Parquet", buf.getvalue(), "o3viz_paired.parquet", icon=":material/download:"
    )
    doc = json.dumps(r.to_dict(), ensure_ascii=False, indent=1)
    c[1].download_button(
        "Result as JSON", doc, "o3viz_paired.json", "application/json", icon=":material/download:"
    )


def _nothing_shared(r, suggested: dict | None) -> str:
    """The one line for two sides without a common question: the pair to pick, if the store has one."""
    if suggested is None:
        return (
            "No two datasets in the library share a question, so there is nothing to pair: import two "
            "runs on the same questions (two models, or two settings) to compare them."
        )
    a, b = (Side(suggested[f"d{x}"], suggested[f"m{x}"]).label for x in "ab")
    return escape_markdown(
        f"{r.request.a.label} and {r.request.b.label} share no question ({r.n_a:,} and {r.n_b:,} traces): "
        f"pick two on the same questions, such as {a} and {b}."
    )


def render_datasets() -> None:
    """The whole dataset mode of Compare."""
    s = store()
    datasets = [d for d, _ in s.distinct("dataset")]
    if not datasets:
        st.info("No datasets in the library yet: import one (a JSONL file) on the Library page.")
        st.page_link("pages/library.py", label="Go to the library", icon=":material/folder_open:")
        return
    stamp = (s.count(), s.conn.execute("SELECT max(id) FROM traces").fetchone()[0])
    suggested = _suggested(str(s.root), stamp)
    sets = _picks(datasets, suggested)
    sides = ((sets["da"], sets["ma"]), (sets["db"], sets["mb"]))
    try:
        r = _compare(str(s.root), stamp, sides, sets["grade"])
    except O3vizError as exc:
        st.error(one_line(exc), icon=":material/block:")
        return
    if r.n == 0:  # nothing in common: one line, not a page of zeros
        st.info(_nothing_shared(r, suggested), icon=":material/info:")
        return
    left, right = st.columns([1, 1.5])
    with left:
        _summary(r)
    with right:
        _flips(r)
        _table(r)
    _details(r)
