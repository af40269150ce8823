"""Compare two traces: metrics with deltas, the steps aligned as a diff, both decision trees, per-step
curves overlaid, the attention difference where shapes allow, and verdict/compression differences."""

from __future__ import annotations

import streamlit as st

from o3viz import compare_traces
from o3viz.figures import (
    alignment_figure,
    curves_figure,
    default_shown,
    diff_heatmap,
    tree_figure,
    verdicts_figure,
    view_graph,
)
from pages._inspect_map import graph_of
from pages._ui import library, need_traces, pick_trace, require_router, show_figure, sync_url, url_state


@st.cache_resource(max_entries=8, show_spinner="Comparing…")
def comparison_of(ka: str, kb: str, _a, _b, na: str, nb: str):
    return compare_traces(_a, _b, a_name=na, b_name=nb)


def _swap() -> None:
    st.session_state.compare_a, st.session_state.compare_b = (
        st.session_state.compare_b,
        st.session_state.compare_a,
    )


require_router()
st.title("Compare")
if not need_traces(2):
    st.stop()
lib = library()
keys = list(lib)
url_state({"trace": "compare_a", "b": "compare_b"}, traces=("trace", "b"))
if st.session_state.compare_b not in lib or st.session_state.compare_b == st.session_state.compare_a:
    st.session_state.compare_b = next(k for k in keys if k != (st.session_state.compare_a or keys[0]))
c1, c2, c3 = st.columns([5, 1.4, 5], vertical_alignment="bottom")
ka = pick_trace("Trace A", "compare_a", "compare_pick_a", reset=(), container=c1)
c2.button("Swap", on_click=_swap, icon=":material/swap_horiz:")
kb = pick_trace("Trace B", "compare_b", "compare_pick_b", reset=(), container=c3)
sync_url(trace=ka, b=kb)
a, b = lib[ka].trace, lib[kb].trace
comp = comparison_of(ka, kb, a, b, lib[ka].name, lib[kb].name)

st.subheader("Metrics")
numeric = [m for m in comp.metrics if m.delta is not None][:6]
for col, m in zip(st.columns(len(numeric) or 1), numeric, strict=False):
    col.metric(
        m.name, f"{m.b:.3g}" if isinstance(m.b, float) else m.b, delta=round(m.delta, 4), help=f"A: {m.a}"
    )
st.dataframe(
    [{"metric": m.name, "A": str(m.a), "B": str(m.b), "B − A": m.delta} for m in comp.metrics],
    hide_index=True,
)

st.subheader(f"Steps aligned (similarity {comp.similarity:.0%})")
st.dataframe(
    [{"": s.tag, "A step": s.a_index, "A": s.a_text, "B step": s.b_index, "B": s.b_text} for s in comp.steps],
    hide_index=True,
    height=320,
)
show_figure(alignment_figure(comp), "cmp_align")

st.subheader("Decision trees")
left, right = st.columns(2)
for col, k, t, tag in ((left, ka, a, "A"), (right, kb, b, "B")):
    with col:
        G = graph_of(k, t)
        show_figure(
            tree_figure(view_graph(G, default_shown(G)), title=f"{tag}: decision tree", labels=False),
            f"cmp_tree_{tag}",
        )

st.subheader("Attention and confidence")
show_figure(curves_figure(comp), "cmp_curves")
show_figure(diff_heatmap(comp), "cmp_diff")

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
    st.dataframe([{"": m.name, "A": str(m.a), "B": str(m.b)} for m in comp.compression], hide_index=True)
