"""Inspect's attention, compression, verification and token views. Each reads its widgets, calls
o3viz builders, and renders."""

from __future__ import annotations

import streamlit as st

from o3viz import Trace
from o3viz.figures import (
    MAX_TOKEN_ROWS,
    build_compression_map,
    build_memory_chart,
    build_score_trace,
    check_rows,
    checks_figure,
    claims_html,
    escape_markdown,
    layer_head_heatmap,
    relevance_figure,
    step_allocation_heatmap,
    token_heatmap,
    tokens_html,
)
from pages._ui import show_figure


def _round_pick(trace: Trace, key: str):
    if len(trace.rounds) == 1:
        return trace.rounds[0]
    idx = st.selectbox(
        "Round", list(range(len(trace.rounds))), index=len(trace.rounds) - 1, key=f"att_round_{key}"
    )
    return trace.rounds[idx]


def _selected_step(rnd) -> int:
    node = st.session_state.get("inspect_node") or ""
    parts = node.split(":")
    if parts[0] == "step" and len(parts) == 3 and parts[1] == str(rnd.index) and parts[2].isdigit():
        return min(int(parts[2]), max(len(rnd.steps) - 1, 0))
    return 0


def attention_tab(key: str, trace: Trace) -> None:
    rnd = _round_pick(trace, key)
    att = rnd.attention
    if att is None or not rnd.steps:
        st.info(
            "This trace has no recorded attention (imports get attention only when enriched with a local model)."
        )
        return
    S, G = len(rnd.steps), att.num_generated
    st.markdown("##### Step level: where each step's attention went")
    s0, s1 = 0, S
    if S > 60:
        s0, s1 = st.slider("Steps shown", 0, S, (0, min(S, 300)), key=f"att_steps_{key}")
    show_figure(step_allocation_heatmap(rnd, s0, max(s1, s0 + 1)), "att_steps")
    st.markdown("##### Token level: a window of generated tokens × the context")
    c1, c2, c3, c4 = st.columns(4)
    step = c1.number_input("From step", 0, S - 1, _selected_step(rnd), key=f"att_from_{key}")
    width = c2.slider("Tokens", 8, MAX_TOKEN_ROWS, min(64, MAX_TOKEN_ROWS), key="att_width")
    layer = c3.selectbox(
        "Layer",
        [None, *att.layers],
        format_func=lambda x: "mean of all layers" if x is None else f"layer {x}",
        key=f"att_layer_{key}",
    )
    head = c4.selectbox(
        "Head",
        [None, *range(att.num_heads)],
        format_func=lambda x: "mean of heads" if x is None else f"head {x}",
        key=f"att_head_{key}",
        disabled=layer is None,
    )
    g0 = min(rnd.steps[int(step)].token_start, max(G - 1, 0))
    g1 = min(G, g0 + int(width))
    show_figure(token_heatmap(rnd, g0, g1, layer=layer, head=None if layer is None else head), "att_tokens")
    c1, c2 = st.columns(2)
    with c1:
        s = rnd.steps[int(step)]
        show_figure(
            layer_head_heatmap(
                rnd,
                s.token_start,
                max(s.token_end, s.token_start + 1),
                title=f"Layer × head for step {s.index}: share on the prompt",
            ),
            "att_layer_head",
        )
    with c2:
        show_figure(relevance_figure(rnd, g0, g1), "att_daa")


def compression_tab(key: str, trace: Trace) -> None:
    if trace.compression is None:
        st.info("This run did not use compression.")
        return
    c = trace.compression
    cols = st.columns(4)
    cols[0].metric("Mode", c.mode)
    cols[1].metric("Original tokens", c.original_tokens)
    cols[2].metric("Compressed tokens", c.compressed_tokens)
    cols[3].metric("Ratio", f"{c.ratio:.2f}")
    for build in (build_compression_map, build_score_trace, build_memory_chart):
        show_figure(build(c), f"comp_{build.__name__}")
    st.dataframe(c.segments, hide_index=True)
    st.dataframe([e.to_dict() for e in c.events], hide_index=True)


def verification_tab(key: str, trace: Trace) -> None:
    rows = check_rows(trace)
    if not rows:
        st.info("No checks were recorded for this trace.")
        return
    show_figure(checks_figure(trace), "verify_grid")
    st.dataframe(rows, hide_index=True)
    for rnd in trace.rounds:
        with st.expander(
            f"Round {rnd.index}: claims highlighted ({escape_markdown(rnd.verdict or 'no verdict')})",
            expanded=rnd is trace.final,
        ):
            if rnd.feedback:
                st.text(f"feedback → next round: {rnd.feedback}")
            st.html(claims_html(rnd))


def tokens_tab(key: str, trace: Trace) -> None:
    rnd = _round_pick(trace, f"tok_{key}")
    if not rnd.tokens:
        st.info(
            "This trace has no tokens (an import that was not enriched with a local model); its text follows."
        )
        st.text(rnd.text)
        return
    c1, c2 = st.columns([1, 3])
    mode = c1.radio("Colour by", ["probability", "entropy"], key="tok_mode", horizontal=True)
    n = len(rnd.tokens)
    start = 0
    if n > 3000:
        start = c2.slider("First token", 0, n - 1, 0, step=100, key=f"tok_start_{key}")
    st.caption(
        "Red = "
        + ("low probability" if mode == "probability" else "high entropy")
        + "; an amber underline marks a decision point; hover a token for its alternatives."
    )
    st.html(tokens_html(rnd, color_by=mode, start=start))
