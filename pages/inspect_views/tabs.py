"""Inspect's attention, compression, verification and token views. Each reads its widgets, calls
o3viz builders, and renders."""

from __future__ import annotations

from collections import Counter

import streamlit as st

from o3viz.app import Trace, ViewFigure, figure_view_data, storage_note
from o3viz.figures import (
    MAX_TOKEN_ROWS,
    build_compression_map,
    build_memory_chart,
    build_prompt_strip,
    build_score_trace,
    changed_segments,
    check_rows,
    checks_figure,
    claims_html,
    compression_map_data,
    escape_markdown,
    layer_head_heatmap,
    relevance_figure,
    step_attention,
    step_attention_heatmap,
    token_heatmap,
    tokens_html,
)
from pages.common.selection import round_pick, selected_step
from pages.common.trace_view import figure_view, publish
from pages.common.ui import download_figure, fmt, proxy_note, select_node, selected_node, show_figure


def _selected_step(rnd) -> int:
    r, s = selected_step()
    if r == rnd.index and s is not None:
        return min(s, max(len(rnd.steps) - 1, 0))
    return 0


@st.cache_resource(max_entries=64, show_spinner=False)
def _published(what: tuple, _rows, round_index: int) -> tuple[str, int]:
    """Figures published for the figure component once per ``what`` (the trace's content key and
    every setting they were drawn with); (its URL, the height the frame needs)."""
    data = figure_view_data(_rows(), round_index)
    return publish(data), data["height"]


def _on_figure(fig_key: str) -> None:
    """A click on a step in the heatmap selects it, for every view (the map opens its episode)."""
    v = st.session_state.get(fig_key)
    if isinstance(v, dict) and isinstance(v.get("id"), str):
        select_node(v["id"])


def _figures(what: tuple, rows, rnd, fig_key: str, *, preload: bool = True) -> None:
    """Draw ``rows()`` (lists of ``ViewFigure``) in the browser, in a figure component that stays
    in the page while the tab is closed (``preload``: it gets ready then, as the tab's first
    figures should)."""
    url, height = _published(what, rows, rnd.index)
    figure_view(
        url,
        key=fig_key,
        selected=selected_node(),
        height=height,
        preload=preload,
        on_change=lambda: _on_figure(fig_key),
    )


def _step_level(key: str, rnd, controls) -> None:
    """The step-level heatmap, with its controls (in ``controls``: three columns). Drawn in every
    run, the tab open or not: the heatmap is a figure component, which draws in the browser when
    the tab is shown."""
    S = len(rnd.steps)
    c1, c2, c3 = controls
    drop = c1.toggle(
        "Leave out attention sinks",
        value=True,
        key="att_drop_sinks",
        help="The chat template (with BOS) takes about a third of every row whatever the step says; "
        "leave it out and renormalise each step over the rest.",
    )
    scale = c2.radio("Colour scale", ["linear", "log", "quantile"], horizontal=True, key="att_scale")
    s0, s1 = 0, S
    if S > 60:
        s0, s1 = c3.slider("Steps shown", 0, S, (0, min(S, 120)), key=f"att_steps_{key}")
    s1 = max(s1, s0 + 1)

    def heatmap():
        return step_attention_heatmap(rnd, s0, s1, drop_sinks=drop, scale=scale)

    what = ("steps", key, rnd.index, s0, s1, drop, scale)
    _figures(what, lambda: [[ViewFigure(heatmap(), steps=True)]], rnd, f"att_fig_{key}_{rnd.index}")
    download_figure(heatmap, "att_steps")
    slot = st.container()  # in every run, so what follows keeps its place whether it is filled or not
    sa = step_attention(rnd, s0, s1, drop_sinks=drop)
    if sa is not None and sa.other:
        r, sel = selected_step()
        sel = sel if r == rnd.index else None
        other = slot.expander(
            f"Open the {len(sa.other)} targets grouped as “other”", key="att_other", on_change="rerun"
        )
        with other:
            if not other.open:
                return
            show_figure(
                step_attention_heatmap(
                    rnd, s0, s1, drop_sinks=drop, scale=scale, only=sa.other, selected=sel
                ),
                "att_steps_other",
            )


def _token_level(key: str, rnd) -> None:
    """A window of generated tokens × the context, and the chosen step's layer × head shares and
    the window's DAA relevance: a figure component too, drawn in every run."""
    att, S, G = rnd.attention, len(rnd.steps), rnd.attention.num_generated
    st.markdown("##### Token level: a window of generated tokens × the context")
    c1, c2, c3, c4 = st.columns(4)
    step = int(c1.number_input("From step", 0, S - 1, _selected_step(rnd), key=f"att_from_{key}"))
    width = int(c2.slider("Tokens", 8, MAX_TOKEN_ROWS, min(64, MAX_TOKEN_ROWS), key="att_width"))
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
    head = None if layer is None else head
    drop = st.session_state.get("att_drop_sinks", True)
    scale = st.session_state.get("att_scale", "linear")
    g0 = min(rnd.steps[step].token_start, max(G - 1, 0))
    g1 = min(G, g0 + width)
    s = rnd.steps[step]

    def tokens():
        return token_heatmap(rnd, g0, g1, layer=layer, head=head, drop_sinks=drop, scale=scale)

    def layer_head():
        return layer_head_heatmap(
            rnd,
            s.token_start,
            max(s.token_end, s.token_start + 1),
            title=f"Layer × head for step {s.index}: share on the prompt",
        )

    def daa():
        return relevance_figure(rnd, g0, g1)

    what = ("tokens", key, rnd.index, step, g0, g1, layer, head, drop, scale)

    def rows():
        return [[ViewFigure(tokens())], [ViewFigure(layer_head()), ViewFigure(daa())]]

    _figures(what, rows, rnd, f"att_tok_{key}_{rnd.index}", preload=False)  # below the fold
    d1, d2, d3 = st.columns(3)
    with d1:
        download_figure(tokens, "att_tokens")
    with d2:
        download_figure(layer_head, "att_layer_head")
    with d3:
        download_figure(daa, "att_daa")


def attention_tab(key: str, trace: Trace) -> None:
    """Drawn in every run (``pages.inspect.KEPT``): while the tab is closed, Streamlit keeps its
    figure frames, which wait in the browser and draw before it opens."""
    # the round picker (where there are rounds) in one row with the step level's controls
    one = len(trace.rounds) == 1  # (no picker: no empty column before the controls)
    row = st.columns([2, 2, 3] if one else [2, 2, 2, 3], vertical_alignment="center")
    rnd = round_pick(trace, key, None if one else row[0])
    controls = row if one else row[1:]
    att = rnd.attention
    if att is None or not rnd.steps:
        st.info(
            "This trace has no recorded attention (imports get attention only when enriched with a local model)."
        )
        return
    proxy_note(trace)
    if kept := storage_note(att.info):  # what a long run kept differently, and why
        st.caption(escape_markdown(f"Kept at this length: {kept}."))  # the file's text, shown as it is
    _step_level(key, rnd, controls)
    _token_level(key, rnd)


def compression_tab(key: str, trace: Trace) -> None:
    if trace.compression is None:
        st.info("This run did not use compression.")
        return
    c = trace.compression
    data = compression_map_data(c)
    changed = changed_segments(data)
    kinds = Counter(e.kind for e in c.events if e.step >= 0)
    st.markdown(
        f"**Mode** {escape_markdown(c.mode)} · **prompt** {c.original_tokens} → {c.compressed_tokens} tokens "
        f"(ratio {c.ratio:.2f}) · **during generation** ({len(data.steps) - 1} generation steps): "
        + escape_markdown(
            ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "no segment released or restored"
        )
    )
    show_figure(build_prompt_strip(c), "comp_strip")
    if changed:
        show_figure(
            build_compression_map(c, only=changed, title="Released and restored during generation"),
            "comp_timeline",
        )
    left, right = st.columns(2)
    with left:
        show_figure(build_memory_chart(c), "comp_memory")
    with right:
        show_figure(build_score_trace(c), "comp_scores")
    with st.expander("Segments and events (tables)"):
        st.dataframe([{k: fmt(v) for k, v in seg.items()} for seg in c.segments], hide_index=True)
        st.dataframe([{k: fmt(v) for k, v in e.to_dict().items()} for e in c.events], hide_index=True)


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
    rnd = round_pick(trace, f"tok_{key}")
    if not rnd.tokens:
        st.info(
            "This trace has no tokens (an import that was not enriched with a local model); its text follows."
        )
        st.text(rnd.text)
        return
    proxy_note(trace, "token probabilities")
    c1, c2 = st.columns([1, 3])
    mode = c1.radio("Colour by", ["probability", "entropy"], key="tok_mode", horizontal=True)
    n = len(rnd.tokens)
    start = 0
    if n > 3000:
        start = c2.slider("First token", 0, n - 1, 0, step=100, key=f"tok_start_{key}")
    st.caption(
        "Deeper blue = "
        + ("lower probability (clear = confident)" if mode == "probability" else "higher entropy")
        + "; an amber underline marks a decision point; hover a token for its alternatives."
    )
    st.html(tokens_html(rnd, color_by=mode, start=start))
