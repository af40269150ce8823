"""Compare two traces (or, in its dataset mode, two datasets paired by question:
``pages/compare_views/datasets.py``): what changed in one line (answer, verdict, steps, first divergence), tiles
with A and B and the difference, the attention a steered run and its twin gave the marked spans, the two final rounds as reasoning maps on one scale with aligned
steps one above the other (episode overviews when long), the step alignment, per-step curves,
the attention difference, and verdict/compression differences. Counts say whether they are totals
or the final round's."""

from __future__ import annotations

import streamlit as st

from o3viz.app import compare_traces, proxy_line, same_question, shown_delta, steering_pair
from o3viz.figures import (
    alignment_figure,
    clip_label,
    compare_maps,
    curves_figure,
    diff_heatmap,
    escape_markdown,
    lane_of,
    readable,
    routing_diff_figure,
    steering_figure,
    verdicts_figure,
)
from pages.common.derived import outline_of
from pages.common.ui import (
    fmt,
    library,
    need_traces,
    pick_trace,
    require_router,
    show_figure,
    sync_url,
    url_state,
    verdict_md,
)
from pages.compare_views.datasets import mode_switch, render_datasets

TILES = (  # metric keys (o3viz.analysis.compare.METRIC_NAMES); each tile is captioned with its name
    "final_verdict",
    "steps_all",
    "rounds",
    "checks_passed_final",
    "token_probability_final",
    "tokens_all",
)


@st.cache_resource(max_entries=8, show_spinner="Comparing…")
def comparison_of(ka: str, kb: str, _a, _b, na: str, nb: str):
    return compare_traces(_a, _b, a_name=na, b_name=nb)


def _swap() -> None:
    st.session_state.compare_a, st.session_state.compare_b = (
        st.session_state.compare_b,
        st.session_state.compare_a,
    )


def _tile(col, m) -> None:
    """One metric: A → B, and B − A for numbers (nothing cut off: plain wrapped markdown)."""
    with col.container(border=True):
        st.caption(escape_markdown(m.name))
        if m.key == "final_verdict":
            st.markdown(f"A {verdict_md(m.a)} → B {verdict_md(m.b)}")
            return
        delta = ""
        d = shown_delta(m.a, m.b)  # from the rounded values shown, so A → B and the difference add up
        if d:
            sign = "+" if d > 0 else "−"
            delta = f" · :gray[{sign}{fmt(abs(d))}]"
        st.markdown(f"A **{fmt(m.a)}** → B **{fmt(m.b)}**{delta}")


def _summary(comp) -> None:
    parts = [escape_markdown(readable(p)) for p in comp.summary()]
    m = comp.metric("final_verdict")
    if m.a != m.b:
        parts[1] = f"verdict {verdict_md(m.a)} → {verdict_md(m.b)}"
    st.markdown("**What changed** · " + " · ".join(parts))
    d = comp.first_divergence
    if d is not None:
        st.caption(
            escape_markdown(
                f"At the first divergence A says “{clip_label(readable(d.a_text), 90) or '—'}” and "
                f"B says “{clip_label(readable(d.b_text), 90) or '—'}”."
            )
        )


def _steps_table(comp, a, b) -> None:
    from o3viz.app.running import aligned_importance, importance_source

    imp = aligned_importance(comp.steps, a.final, b.final)  # None when neither side has importance
    rows = []  # numbered as shown (a branch as its parent), "—" where a side has no step
    for k, row in enumerate(comp.table_rows()):
        row["A"], row["B"] = clip_label(readable(row["A"]), 200), clip_label(readable(row["B"]), 200)
        if imp is not None:
            row["A imp."], row["B imp."], row["Δ imp."] = imp[k]
        rows.append(row)
    if imp is not None:
        st.caption(
            f"Importance of each step, ranked within its own trace (0 = least, 1 = most): "
            f"A by {escape_markdown(importance_source(a.final))}, B by {escape_markdown(importance_source(b.final))}."
        )
    st.dataframe(
        rows,
        hide_index=True,
        height=300,
        column_config={
            "": st.column_config.TextColumn(width=100),
            "A step": st.column_config.TextColumn(width=60),
            "B step": st.column_config.TextColumn(width=60),
            "A": st.column_config.TextColumn(width="large"),
            "B": st.column_config.TextColumn(width="large"),
            "A imp.": st.column_config.NumberColumn(width=60, format="%.2f"),
            "B imp.": st.column_config.NumberColumn(width=60, format="%.2f"),
            "Δ imp.": st.column_config.NumberColumn(width=60, format="%+.2f"),
        },
        width="stretch",
    )


def _at_step(a, b) -> None:
    """Opened at a step (``?at=N``: a fork of the Samples page): both traces' step N, where they part."""
    at = st.session_state.compare_at
    if not (isinstance(at, str) and at.isdigit()):
        return
    i = int(at)
    sa, sb = (
        clip_label(readable(t.final.steps[i].text), 110) if i < len(t.final.steps) else "—" for t in (a, b)
    )
    shared = {0: "", 1: "step 0 is equivalent in both, "}.get(i, f"steps 0–{i - 1} are equivalent in both, ")
    why = " (same results or wording, as the Samples tree merges steps; the table below aligns exact text)"
    st.info(
        escape_markdown(f"At the fork, step {i} ({shared}final rounds): A “{sa}” · B “{sb}”")
        + (f" :gray[{escape_markdown(why)}]" if i else ""),
        icon=":material/call_split:",
    )


require_router()
if mode_switch() == "datasets":  # two datasets paired by question (pages/compare_views/datasets.py)
    render_datasets()
    st.stop()
if not need_traces(2):
    st.stop()
lib = library()
keys = list(lib)
url_state({"trace": "compare_a", "b": "compare_b", "at": "compare_at"}, traces=("trace", "b"))
if st.session_state.compare_b not in lib:
    st.session_state.compare_b = next(k for k in keys if k != (st.session_state.compare_a or keys[0]))
c1, c2, c3 = st.columns([5, 1.2, 5], vertical_alignment="bottom")
ka = pick_trace("Trace A", "compare_a", "compare_pick_a", reset=("compare_at",), container=c1)
c2.button("Swap", on_click=_swap, icon=":material/swap_horiz:")
kb = pick_trace("Trace B", "compare_b", "compare_pick_b", reset=("compare_at",), container=c3)
sync_url(trace=ka, b=kb, at=st.session_state.compare_at)
if ka == kb:
    st.error("Trace B is the same trace as A: pick another trace for B.", icon=":material/block:")
    st.stop()
a, b = lib[ka].trace, lib[kb].trace
if not same_question(a, b):
    st.warning(
        "A and B answer different questions: their steps are compared as text, so a divergence says "
        "little about the reasoning.",
        icon=":material/warning:",
    )
for side, t in (("A", a), ("B", b)):
    if line := proxy_line(t):
        st.caption(escape_markdown(f"{side}: {line}."))
comp = comparison_of(ka, kb, a, b, lib[ka].name, lib[kb].name)
_at_step(a, b)

_summary(comp)
for col, metric_key in zip(st.columns(len(TILES)), TILES, strict=True):
    _tile(col, comp.metric(metric_key))

pair = steering_pair(a, b, lib[ka].name, lib[kb].name)
if pair is not None:  # a steered run and its twin: the answers and the spans' attention first
    st.markdown(
        " · ".join(
            f"**{side}** ({'steered' if x.steered else 'unsteered'}) answered "
            f"“{escape_markdown(clip_label(readable(x.answer or '—'), 60))}” {verdict_md(x.verdict)}"
            for side, x in (("A", pair.a), ("B", pair.b))
        )
    )
    show_figure(steering_figure(pair, height=290), "cmp_steer")

long = comp.alignment is not None and comp.alignment.method == "episodes"
fig_a, fig_b = compare_maps(
    comp,
    outline_of(ka, a),
    outline_of(kb, b),
    height=280 if long else 235,
    answer_lanes=(lane_of(a), lane_of(b)),
)
show_figure(fig_a, "cmp_map_a", download=False)
show_figure(fig_b, "cmp_map_b")

st.subheader(f"Steps of the final rounds, aligned (similarity {comp.similarity:.0%})")
if long:
    al = comp.alignment
    st.caption(
        f"Long traces are aligned by episode first ({len(al.pairs)} episode pairs matched), then step "
        f"by step inside the matched episodes: {al.cells:,} comparisons instead of "
        f"{len(a.final.steps) * len(b.final.steps):,}."
    )
_steps_table(comp, a, b)
show_figure(alignment_figure(comp), "cmp_align")

st.subheader("All metrics")
st.dataframe(
    [
        {"metric": m.name, "A": fmt(m.a), "B": fmt(m.b), "B − A": fmt(shown_delta(m.a, m.b))}
        for m in comp.metrics
    ],
    hide_index=True,
)

st.subheader("Attention and confidence")
show_figure(curves_figure(comp), "cmp_curves")
show_figure(diff_heatmap(comp), "cmp_diff")
ra, rb = (t.final.internals.routing if t.final.internals else None for t in (a, b))
if ra is not None and rb is not None:
    st.subheader("Expert routing")
    show_figure(routing_diff_figure(ra, rb, lib[ka].name, lib[kb].name), "cmp_routing")

st.subheader("Verdicts and compression")
left, right = st.columns(2)
with left:
    show_figure(verdicts_figure(comp), "cmp_verdicts")
with right:
    st.markdown("**Checks whose verdict differs (final rounds)**")
    if comp.checks:
        st.dataframe(comp.checks, hide_index=True)
    else:
        st.caption("None.")
    st.markdown("**Compression**")
    st.dataframe([{"": m.name, "A": fmt(m.a), "B": fmt(m.b)} for m in comp.compression], hide_index=True)
