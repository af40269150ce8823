"""Inspect's "Inside the layers" view: MoE expert routing of the selected step or token and the
logit lens. Reads its widgets, calls o3viz figure builders, and renders."""

from __future__ import annotations

import streamlit as st

from o3viz.app import Trace
from o3viz.figures import (
    answer_depth_summary,
    coactivation_figure,
    escape_markdown,
    expert_load_figure,
    lens_grid_figure,
    lens_window_start,
    routing_entropy_figure,
    routing_heatmap,
    step_routing_figure,
    token_routing_rows,
)
from pages.common.selection import round_pick, selected_step
from pages.common.ui import show_figure

HOW_TO = (
    "This trace has no routing or logit-lens data. Record them with "
    "`o3viz run --prompt ... --moefy 16,4 --logit-lens 0,10,20,29` (or `--routing` with an MoE "
    "`--model`), or tick *Inside the layers* on the Run page."
)
SOURCE_NOTE = {
    "random": "Random-weight model: this routing says nothing about how a trained model routes tokens.",
    "moefied": (
        "MoEfied dense model: the model's own learned MLP weights split into experts after training "
        "(by co-activation); each token goes to the experts with the most activation mass. Not a "
        "router trained with its experts."
    ),
    "model": "The model's own routers.",
}


def internals_view(key: str, trace: Trace) -> None:
    rnd = round_pick(trace, f"int_{key}")
    info = rnd.internals
    if info is None or (info.routing is None and info.lens is None):
        st.info(HOW_TO)
        return
    parts = [p for p, rec in (("Expert routing", info.routing), ("Logit lens", info.lens)) if rec is not None]
    cols = st.columns([2, 2, 2, 4], vertical_alignment="bottom")
    part = parts[0]
    if len(parts) > 1:
        picked = cols[0].segmented_control(
            "Show", parts, default=parts[0], key=f"int_part_{key}", label_visibility="collapsed"
        )
        part = picked or parts[0]
    if part == "Logit lens":
        _lens(key, rnd, cols)
    else:
        _routing(key, rnd, cols)


def _token_start(rnd) -> int | None:
    """The first token of the step selected on the page in this round (None when none)."""
    r, s = selected_step()
    if r != rnd.index or s is None or not rnd.steps:
        return None
    return max(0, rnd.steps[min(s, len(rnd.steps) - 1)].token_start)


def _routing(key: str, rnd, cols) -> None:
    rec = rnd.internals.routing
    g_max = max(rec.num_generated - 1, 0)
    _, c1, c2, c3 = cols
    layer_pos = c1.selectbox(
        "MoE layer",
        range(len(rec.layers)),
        format_func=lambda i: f"layer {rec.layers[i]}",
        index=len(rec.layers) // 2,
        key=f"int_layer_{key}",
    )
    start = _token_start(rnd)
    # keyed on the selection, so picking another step moves the token (a kept widget value would not)
    g = c2.number_input("Token", 0, g_max, min(start or 0, g_max), key=f"int_tok_{key}_{start}")
    c3.caption(
        f"{len(rec.layers)} MoE layers · {rec.num_experts} experts · top-{rec.top_k} · scores: {rec.scoring}. "
        "Squares: each token's strongest chosen experts (dots: the rest of the chosen). A step picked "
        "on the map sets the token."
    )
    note = SOURCE_NOTE.get(rec.source, "")
    if rec.source == "random":
        st.warning(note, icon=":material/science:")
    else:
        st.caption(f":material/science: {note}")
    left, right = st.columns([3, 2])
    with left:
        show_figure(routing_heatmap(rec, rnd, layer_pos, g0=max(0, g - 10)), f"int_heat_{key}")
    with right:
        tok = rnd.tokens[g].text if g < len(rnd.tokens) else ""
        st.markdown(f"**Token {g}** `{escape_markdown(tok.strip() or '·')}` — routing in every MoE layer")
        st.dataframe(token_routing_rows(rec, g), hide_index=True, height=300, key=f"int_rows_{key}")
    a, b = st.columns(2)
    with a:
        show_figure(expert_load_figure(rec), f"int_load_{key}")
    with b:
        show_figure(routing_entropy_figure(rec, rnd, g0=max(0, g - 10)), f"int_ent_{key}")
    a, b = st.columns(2)
    with a:
        show_figure(step_routing_figure(rec, rnd, layer_pos), f"int_steps_{key}")
    with b:
        show_figure(coactivation_figure(rec, layer_pos), f"int_coact_{key}")


def _lens(key: str, rnd, cols) -> None:
    lens = rnd.internals.lens
    g_max = max(lens.token_ids.shape[0] - 1, 0)
    _, c1, _, c2 = cols
    start = _token_start(rnd)
    first = lens_window_start(rnd, lens.token_ids.shape[0], start)  # the selection, else the answer
    g0 = c1.number_input("From token", 0, g_max, first, key=f"lens_from_{key}_{start}")
    c2.caption(
        escape_markdown(answer_depth_summary(lens, rnd))
        + " · Each cell: the token that layer's residual would predict (final norm + unembedding); "
        "hover for the top-k and the generated token's rank. The last layer is the model's output."
    )
    show_figure(lens_grid_figure(lens, rnd, g0=int(g0)), f"lens_grid_{key}")
