"""Samples: where do N samples of one question part ways? Pick a sample set (``?set=NAME``); the
first screen has the question, the majority answer with its interval, the share reaching the
reference, the tree (left to right, edge width = samples, colour = reference share) and the top
forks with both sides' step. A click on a node lists its samples (Inspect links) and offers
"Resample from here"; a fork opens one sample of each side in Compare, at the fork. Splits with too
few samples a side to decide get "Firm up": K continuations after each side's first step. With no set,
a form samples one on the embedded model (a job with progress and Stop)."""

from __future__ import annotations

import streamlit as st

from o3viz.app import Query, SampleRequest, list_sets, read_set
from o3viz.app.sampling import (
    MAX_FIRM_NODES,
    MAX_RESAMPLE,
    TOP_FORKS,
    FirmUpJob,
    ResampleNodeJob,
    SampleSetJob,
    build_tree,
    resample_point,
    sample_tree_figure,
    undecided,
)
from o3viz.figures import clip_label, counted, escape_markdown
from pages.common.jobs import follow_job, start_job
from pages.common.sample_tree import cli_line, forks_panel, interval, node_panel, pct, sample_request
from pages.common.state import take
from pages.common.ui import get_model, require_router, show_figure, store, sync_url, url_state

TREE_HEIGHT = 430  # px: the tree and the panel beside it fill the first screen at 1280×720


@st.cache_resource(max_entries=6, show_spinner="Building the tree…")
def tree_of(root: str, name: str, n: int):
    """The set, its tree and figure, once per set and size (a grown set is a new entry)."""
    s = read_set(store(), name)
    tree = build_tree(s.traces)
    return s, tree, sample_tree_figure(tree, height=TREE_HEIGHT)


def _when(added: float | None) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M", time.localtime(added)) if added else "—"


def _node_of(tree, sel: dict | None, name: str) -> int | None:
    """The selected node in this tree: the one holding the selected sample at the selected step."""
    if not sel or sel.get("set") != name:
        return None
    i, d = sel["sample"], sel["depth"]
    for n in tree.nodes:
        if i in n.members and (
            n.depth == d if n.parent is None else n.depth <= d < n.depth + max(n.steps, 1)
        ):
            return n.id
    return None


def _select(tree, name: str, node_id: int | None) -> None:
    n = tree.nodes[node_id] if node_id is not None else None
    st.session_state.samples_node = (
        None if n is None else {"set": name, "sample": n.members[0], "depth": n.depth}
    )


def _clicked(tree, name: str, key: str) -> None:
    points = st.session_state[key].selection.points
    ids = [p.get("customdata") for p in points if isinstance(p.get("customdata"), int)]
    if ids and 0 <= ids[0] < len(tree.nodes):
        _select(tree, name, ids[0])


def _ended(job) -> None:
    r = job.result
    if job.error:
        st.session_state.samples_message = ("error", job.error)
    else:
        st.session_state.samples_message = ("stopped" if r.stopped else "ok", r.line)
        if r.name:
            st.session_state.samples_set = r.name


def show_message() -> None:
    msg = take("samples_message")
    if msg:
        icon = {"ok": ":material/check_circle:", "stopped": ":material/stop:"}.get(msg[0], ":material/error:")
        {"ok": st.success, "stopped": st.info}.get(msg[0], st.error)(escape_markdown(msg[1]), icon=icon)


def new_set_form(first: bool) -> None:
    """Sample a new set on the embedded model, as a job (progress and Stop)."""
    job = st.session_state.samples_job
    if job is not None:
        follow_job("samples_job", job, _ended, live=True)
        return
    req, problem = sample_request()
    b1, b2 = st.columns([1, 4], vertical_alignment="center")
    if b1.button(
        f"Sample {req.n}",
        type="primary" if first else "secondary",
        disabled=bool(problem),
        icon=":material/casino:",
    ):
        start_job("samples_job", lambda: SampleSetJob(req, get_model, store()))
    b2.caption(escape_markdown(problem) if problem else "On the command line: `" + cli_line(req) + "`")


def headline(s, tree) -> None:
    root, m = tree.nodes[0], tree.majority
    st.caption(escape_markdown(clip_label(f"Question: {s.question}", 240)))
    parts = [f"n = {s.n}" + (" (a stopped draw: a smaller set)" if s.stopped else "")]
    if m.tied:
        parts.append(f"no majority: a {len(m.tied) + 1}-way tie at {counted(m.count, 'sample')} each")
    elif m.answer is not None:
        ok = {True: " (:green[the reference])", False: " (:red[not the reference])", None: ""}[m.correct]
        parts.append(
            f"majority **{escape_markdown(clip_label(m.answer, 30))}**{ok}: {m.count} of {m.n} "
            f"({pct(m.share)}, {interval(m.interval)})"
        )
    else:
        parts.append("no sample reached an answer")
    if root.graded:
        ref = escape_markdown(clip_label(tree.reference or "", 30))
        parts.append(
            f"**{pct(root.reference_share)}** reach the reference {ref} ({root.correct} of {root.graded} graded, "
            f"{interval(root.interval)})"
        )
    else:
        parts.append(":gray[no reference: nothing is graded]")
    st.markdown(" · ".join(parts))


def _drawn_with(s) -> dict:
    """The new tokens and temperature the set was drawn with: more samples of the same distribution."""
    info, d = s.info, SampleRequest()
    return {
        "max_new_tokens": int(info.get("max_new_tokens") or d.max_new_tokens),
        "temperature": float(info.get("temperature") or d.temperature),
    }


def resample_box(s, tree, node_id: int) -> None:
    """ "Resample from here": K more continuations of this node's prefix, added to the set."""
    job = st.session_state.samples_resample_job
    if job is not None:
        follow_job("samples_resample_job", job, _ended, live=True)
        return
    sample, through = resample_point(tree, node_id)
    c1, c2 = st.columns([1, 2], vertical_alignment="bottom")
    k = c1.number_input("K", 1, MAX_RESAMPLE, 4, key="smp_k")
    where = "from the question" if through < 0 else f"after step {through} of {tree.samples[sample].name}"
    if c2.button("Resample from here", icon=":material/call_split:", help=f"K continuations {where}"):
        start_job(
            "samples_resample_job",
            lambda: ResampleNodeJob(
                store(), s.name, node_id, int(k), get_model, expect_n=s.n, **_drawn_with(s)
            ),
        )
    st.caption(escape_markdown(f"Continues {where} with the embedded model; the set and the tree grow."))


def firm_up_box(s, tree) -> None:
    """ "Firm up": K continuations after each side of every undecided split, added to the set."""
    job = st.session_state.samples_firm_job
    if job is not None:
        follow_job("samples_firm_job", job, _ended, live=True)
        return
    todo = min(len(undecided(tree)), MAX_FIRM_NODES)
    if not todo:
        return
    c1, c2 = st.columns([1, 2], vertical_alignment="bottom")
    k = int(c1.number_input("K a side", 1, MAX_RESAMPLE, 4, key="smp_firm_k"))
    if c2.button(
        f"Firm up {todo} undecided split{'s' if todo > 1 else ''}",
        icon=":material/query_stats:",
        help="Too few samples a side to tell the sides apart: draws K continuations after each side's "
        "first step with the embedded model, adds them to the set and tests again.",
    ):
        start_job(
            "samples_firm_job",
            lambda: FirmUpJob(store(), s.name, k, get_model, expect_n=s.n, splits=todo, **_drawn_with(s)),
        )
    st.caption(
        f"{todo} split{'s have' if todo > 1 else ' has'} two sides of 2+ graded samples that differ too "
        f"little to call a fork: firming up draws {2 * todo * k} continuations."
    )


def pick_set(sets) -> str:
    names = [x.name for x in sets]
    by = {x.name: x for x in sets}
    url_state({"set": "samples_set"}, traces=())
    if st.session_state.samples_set not in by:
        st.session_state.samples_set = names[0]
    st.session_state.smp_pick = st.session_state.samples_set

    def label(name: str) -> str:
        x = by[name]
        return f"{name} · {x.n} samples · {clip_label(x.question, 70)} · {_when(x.added)}"

    st.selectbox(
        "Sample set", names, format_func=label, key="smp_pick", label_visibility="collapsed",
        on_change=lambda: st.session_state.update(samples_set=st.session_state.smp_pick),
    )  # fmt: skip
    sync_url(set=st.session_state.samples_set)
    return st.session_state.samples_set


require_router()
sets = list_sets(store())
show_message()
if not sets:
    st.subheader("Where do samples part ways?")
    st.info(
        "No sample sets yet. A set is N answers to one question; its tree shows where they split and "
        "which way leads to the right answer. Sample one below with the embedded model, or on the "
        "command line: `o3viz sample --task gsm8k:3 --n 16 --set g3`, or make sets from a stored "
        "dataset that asks questions several times: `o3viz sample --group-dataset NAME`.",
        icon=":material/account_tree:",
    )
    new_set_form(first=True)
    st.stop()

name = pick_set(sets)
n_now = store().count(Query(dataset=[name]))
s, tree, fig = tree_of(str(store().root), name, n_now)
headline(s, tree)
node_id = _node_of(tree, st.session_state.samples_node, name)
left, right = st.columns([3, 2])
with left:
    key = f"smp_tree_{name}_{s.n}"
    show_figure(
        fig, key, download=False, on_select=lambda: _clicked(tree, name, key), selection_mode="points"
    )
with right, st.container(height=TREE_HEIGHT, border=False):
    if node_id is None:
        forks_panel(s, tree, TOP_FORKS, lambda fid: _select(tree, name, fid))
        firm_up_box(s, tree)
        st.caption("Click a node in the tree to list its samples and resample from it.")
    else:
        node_panel(
            s,
            tree,
            tree.nodes[node_id],
            lambda: _select(tree, name, None),
            lambda: resample_box(s, tree, node_id),
        )
with st.expander("Sample a new set", expanded=st.session_state.samples_job is not None):
    new_set_form(first=False)
