"""Figures for what happened inside the layers: MoE routing (token × expert per layer, expert load
and balance, routing entropy, co-activation, per step type, A/B difference) and the logit lens
(layer × token grid of the top prediction). Each takes trace records and returns a ``go.Figure``.

Token axes show a window of at most ``MAX_TOKENS`` generated tokens (``g0`` onwards); the logit
lens shows ``LENS_TOKENS``, starting where ``lens_window_start`` says (the selection, else the answer).
"""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from o3viz.analysis.routing_lens import (
    answer_token_indices,
    coactivation,
    expert_load,
    first_top1_layer,
    routing_by_step_type,
    routing_diff,
    routing_entropy,
)
from o3viz.figures._style import (
    DIFF_SCALE,
    GOOD_COLOR,
    HEAT_SCALE,
    STEP_TYPE_LABELS,
    base_layout,
    clip_label,
    empty_figure,
)
from o3viz.trace import Round
from o3viz.trace.layer_records import LensRecord, RoutingRecord

MAX_TOKENS = 120  # generated tokens per window on a token axis
LENS_TOKENS = 24  # tokens per logit-lens window: few enough to print each cell's top token
LENS_CELL_CHARS = 5  # a cell's label at 11 px in a 24-token window at 1280 px; the rest is in the hover
BOXED_EXPERTS = 3  # chosen experts boxed per token (the rest of the chosen get a dot): with 12 of 16
# chosen, boxing all of them fills the grid
SOURCE_NOTE = {
    "model": "",
    "moefied": " · MoEfied dense model (learned weights split into experts)",
    "random": " · RANDOM weights (not a trained model)",
}


def _label(text: str, n: int = 10) -> str:
    return html.escape(clip_label(text.replace("\n", "⏎"), n)) or "·"


def lens_window_start(rnd: Round, n: int, selected: int | None = None, width: int = LENS_TOKENS) -> int:
    """Where the logit-lens window starts: a few tokens before the selected token, else where the
    answer's tokens sit inside it (a little before the end), else 0. Never past the last window.

    ``n`` is the number of generated tokens; ``selected`` the first token of the selected step.
    """
    last = max(0, n - width)
    if selected is not None:
        return min(max(0, selected - 2), last)
    answer = answer_token_indices(rnd)
    if answer:
        return min(max(0, answer[-1] + 4 - width), last)
    return 0


def _window(rnd: Round, g0: int, n: int, width: int = MAX_TOKENS) -> tuple[int, int, list[str]]:
    g1 = min(n, g0 + width)
    labels = [f"{i}:{_label(rnd.tokens[i].text)}" if i < len(rnd.tokens) else str(i) for i in range(g0, g1)]
    return g0, g1, labels


def routing_source_note(rec: RoutingRecord) -> str:
    """What the routing shows, for titles: a real MoE, a MoEfied dense model or random weights."""
    return SOURCE_NOTE.get(rec.source, "")


def routing_heatmap(rec: RoutingRecord, rnd: Round, layer_pos: int, g0: int = 0) -> go.Figure:
    """Expert (y) × generated token (x) router probabilities of one MoE layer; chosen experts marked."""
    layer = rec.layers[layer_pos]
    title = f"Which experts did each token use? (layer {layer}{', RANDOM weights' if rec.source == 'random' else ''})"
    if rec.top_k > BOXED_EXPERTS:
        title += f"<br><sup>boxed: each token's {BOXED_EXPERTS} strongest of its {rec.top_k} chosen experts; dots: the rest</sup>"
    g0, g1, labels = _window(rnd, g0, rec.num_generated)
    if g1 <= g0:
        return empty_figure(title, "No generated tokens in this window.")
    dist = rec.distribution()
    z = dist[g0:g1, layer_pos].T if dist is not None else np.zeros((rec.num_experts, g1 - g0))
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=list(range(g1 - g0)),
            y=list(range(rec.num_experts)),
            colorscale=HEAT_SCALE,
            zmin=0,
            colorbar={"title": "p", "thickness": 12},
            customdata=np.array([labels] * rec.num_experts),
            hovertemplate="token %{customdata}<br>expert %{y}<br>p = %{z:.3f}<extra></extra>",
        )
    )
    chosen = rec.experts[g0:g1, layer_pos]  # (g, k)
    weights = rec.weights[g0:g1, layer_pos].astype(np.float32)
    top = _top_chosen(chosen, weights, z.T)
    boxed = min(BOXED_EXPERTS, rec.top_k)
    for is_top, name, marker in (
        (
            True,
            f"top {boxed} chosen",
            {"symbol": "square-open", "size": 10, "color": "white", "line": {"width": 2}},
        ),
        (False, "other chosen", {"symbol": "circle", "size": 3, "color": "white"}),
    ):
        xs, ys = np.nonzero((chosen >= 0) & (top == is_top))
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=chosen[xs, ys],
                mode="markers",
                marker=marker,
                name=name,
                customdata=np.stack([np.array(labels)[xs], weights[xs, ys]], -1),
                hovertemplate="token %{customdata[0]}<br>chose expert %{y}, weight %{customdata[1]:.3f}<extra></extra>",
            )
        )
    fig.update_xaxes(
        title="generated token",
        tickvals=list(range(g1 - g0))[:: max(1, (g1 - g0) // 24)],
        ticktext=labels[:: max(1, (g1 - g0) // 24)],
        tickangle=-60,
    )
    fig.update_yaxes(
        title="expert", dtick=1 if rec.num_experts <= 32 else None, range=[-0.5, rec.num_experts - 0.5]
    )
    return base_layout(fig, title, height=380, margin={"l": 60, "r": 20, "t": 70, "b": 90})


def _top_chosen(chosen: np.ndarray, weights: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """(g, k) True for each token's ``BOXED_EXPERTS`` strongest chosen experts: by weight, or by
    router probability where the weights are all equal (MoEfied: chosen experts are summed)."""
    used = chosen >= 0
    g = np.arange(chosen.shape[0])[:, None]
    w = weights[used]
    if w.size and bool((w == w[0]).all()):
        strength = np.where(used, probs[g, np.clip(chosen, 0, None)], -np.inf)
    else:
        strength = np.where(used, weights, -np.inf)
    order = np.argsort(-strength, axis=1, kind="stable")
    rank = np.empty_like(order)
    rank[g, order] = np.arange(chosen.shape[1])[None, :]
    return (rank < BOXED_EXPERTS) & used


def expert_load_figure(rec: RoutingRecord) -> go.Figure:
    """Layer × expert share of choices (×E: 1 = even), with CV and Switch's N·Σf·P per layer."""
    load = expert_load(rec)
    note = routing_source_note(rec).removeprefix(" · ")
    title = "How evenly were the experts used? (load per MoE layer)" + (
        f"<br><sup>{note}</sup>" if note else ""
    )
    if rec.num_generated == 0:
        return empty_figure(title, "No generated tokens.")
    ticks = [
        f"L{x} · CV {c:.2f} · bal {b:.2f}"
        for x, c, b in zip(load.layers, load.cv, load.switch_balance, strict=True)
    ]
    fig = go.Figure(
        go.Heatmap(
            z=load.fraction * rec.num_experts,
            x=list(range(rec.num_experts)),
            y=ticks,
            colorscale=HEAT_SCALE,
            zmin=0,
            colorbar={"title": "load ×E", "thickness": 12},
            hovertemplate="%{y}<br>expert %{x}<br>load %{z:.2f}× even<extra></extra>",
        )
    )
    fig.update_xaxes(title="expert (load ×E: 1 = even share; CV 0 = perfectly even; bal 1 = balanced)")
    return base_layout(
        fig, title, height=max(260, 60 + 16 * len(ticks)), margin={"l": 170, "r": 20, "t": 70, "b": 50}
    )


def routing_entropy_figure(rec: RoutingRecord, rnd: Round, g0: int = 0) -> go.Figure:
    """MoE layer × generated token entropy (nats) of the router distribution: where routing is unsure."""
    title = "How sure was the router? (entropy per token and layer)"
    ent = routing_entropy(rec)
    if ent is None:
        return empty_figure(title, "This router recorded only its chosen experts (no distribution).")
    g0, g1, labels = _window(rnd, g0, rec.num_generated)
    if g1 <= g0:
        return empty_figure(title, "No generated tokens in this window.")
    fig = go.Figure(
        go.Heatmap(
            z=ent[g0:g1].T,
            x=labels,
            y=[f"L{x}" for x in rec.layers],
            colorscale="Cividis",
            zmin=0,
            zmax=float(np.log(rec.num_experts)),
            colorbar={"title": "nats", "thickness": 12},
            hovertemplate="%{x}<br>layer %{y}<br>entropy %{z:.2f}<extra></extra>",
        )
    )
    fig.update_xaxes(title="generated token", tickangle=-60, nticks=24)
    fig.update_yaxes(title="MoE layer", nticks=16)
    return base_layout(fig, title, height=360, margin={"l": 60, "r": 20, "t": 50, "b": 90})


def coactivation_figure(rec: RoutingRecord, layer_pos: int) -> go.Figure:
    """Expert × expert share of tokens that chose both, in one MoE layer."""
    layer = rec.layers[layer_pos]
    m = coactivation(rec, layer_pos)
    fig = go.Figure(
        go.Heatmap(
            z=m,
            x=list(range(rec.num_experts)),
            y=list(range(rec.num_experts)),
            colorscale=HEAT_SCALE,
            zmin=0,
            colorbar={"title": "share", "thickness": 12},
            hovertemplate="experts %{x} and %{y}<br>together on %{z:.1%} of tokens<extra></extra>",
        )
    )
    fig.update_xaxes(title="expert", dtick=1 if rec.num_experts <= 32 else None)
    fig.update_yaxes(title="expert", dtick=1 if rec.num_experts <= 32 else None, autorange="reversed")
    return base_layout(fig, f"Which experts were chosen together in layer {layer}?", height=380)


def step_routing_figure(rec: RoutingRecord, rnd: Round, layer_pos: int | None = None) -> go.Figure:
    """Step type × expert share of choices (one layer, or all layers averaged)."""
    sr = routing_by_step_type(rec, rnd)
    where = "all MoE layers" if layer_pos is None else f"layer {rec.layers[layer_pos]}"
    title = f"Do different kinds of steps use different experts? ({where})"
    if not sr.types:
        return empty_figure(title, "This round has no steps to group tokens by.")
    usage = sr.usage.mean(1) if layer_pos is None else sr.usage[:, layer_pos]
    dist = sr.distance.mean(1) if layer_pos is None else sr.distance[:, layer_pos]
    ticks = [
        f"{STEP_TYPE_LABELS.get(t, t)} ({n} tok, TV {d:.2f})"
        for t, n, d in zip(sr.types, sr.tokens, dist, strict=True)
    ]
    fig = go.Figure(
        go.Heatmap(
            z=usage * rec.num_experts,
            x=list(range(rec.num_experts)),
            y=ticks,
            colorscale=HEAT_SCALE,
            zmin=0,
            colorbar={"title": "use ×E", "thickness": 12},
            hovertemplate="%{y}<br>expert %{x}: %{z:.2f}× even share<extra></extra>",
        )
    )
    fig.update_xaxes(title="expert (TV: distance from the whole run's expert use, 0-1)")
    return base_layout(
        fig, title, height=max(260, 60 + 30 * len(ticks)), margin={"l": 230, "r": 20, "t": 50, "b": 50}
    )


def routing_diff_figure(
    a: RoutingRecord, b: RoutingRecord, a_name: str = "A", b_name: str = "B"
) -> go.Figure:
    """MoE layer × expert load of B minus A (shared scale, diverging), with the distance per layer."""
    d = routing_diff(a, b)
    title = f"Where did {b_name} route differently from {a_name}? (expert load, {b_name} − {a_name})"
    if not d.layers:
        return empty_figure(title, "The two runs have no MoE layer in common.")
    lim = max(float(np.abs(d.diff).max()), 1e-6)
    ticks = [f"L{x} · TV {t:.2f}" for x, t in zip(d.layers, d.distance, strict=True)]
    fig = go.Figure(
        go.Heatmap(
            z=d.diff,
            x=list(range(d.diff.shape[1])),
            y=ticks,
            colorscale=DIFF_SCALE,
            zmin=-lim,
            zmax=lim,
            colorbar={"title": "Δ share", "thickness": 12},
            hovertemplate="%{y}<br>expert %{x}: %{z:+.3f}<extra></extra>",
        )
    )
    fig.update_xaxes(title="expert" + (f" — {d.note}" if d.note else ""))
    return base_layout(
        fig, title, height=max(260, 40 + 16 * len(ticks)), margin={"l": 120, "r": 20, "t": 50, "b": 50}
    )


def lens_grid_figure(lens: LensRecord, rnd: Round, g0: int = 0) -> go.Figure:
    """Lens layer (y) × generated token (x): each cell's top prediction, coloured by its probability;
    hover shows the top-k and the generated token's rank. Answer tokens are boxed at the first
    layer whose top-1 is the token finally generated."""
    title = "What would each layer have predicted? (logit lens, top-1 per token)"
    g0, g1, labels = _window(rnd, g0, lens.token_ids.shape[0], LENS_TOKENS)
    if g1 <= g0:
        return empty_figure(title, "No generated tokens in this window.")
    ids, probs, rank = lens.token_ids[g0:g1], lens.probs[g0:g1].astype(np.float32), lens.rank[g0:g1]
    top = [
        [_label(lens.text_of(ids[g, y, 0]), LENS_CELL_CHARS) for g in range(g1 - g0)]
        for y in range(len(lens.layers))
    ]
    hover = [
        [
            "<br>".join(
                f"{html.escape(repr(lens.text_of(i)))} {p:.2f}"
                for i, p in zip(ids[g, y], probs[g, y], strict=True)
            )
            + f"<br>generated token's rank: {rank[g, y]}"
            for g in range(g1 - g0)
        ]
        for y in range(len(lens.layers))
    ]
    fig = go.Figure(
        go.Heatmap(
            z=probs[:, :, 0].T,
            x=labels,
            y=[f"layer {x}" for x in lens.layers],
            text=top,
            texttemplate="%{text}",
            textfont={"size": 11},
            customdata=hover,
            colorscale=HEAT_SCALE,
            zmin=0,
            zmax=1,
            colorbar={"title": "p(top-1)", "thickness": 12},
            hovertemplate="%{x} · %{y}<br>%{customdata}<extra></extra>",
        )
    )
    _mark_answer(fig, lens, rnd, g0, g1, labels)
    fig.update_xaxes(title="generated token", tickangle=-60)
    fig.update_yaxes(title="lens layer")
    return base_layout(
        fig, title, height=max(280, 120 + 40 * len(lens.layers)), margin={"l": 80, "r": 20, "t": 50, "b": 90}
    )


def _mark_answer(fig: go.Figure, lens: LensRecord, rnd: Round, g0: int, g1: int, labels: list[str]) -> None:
    first = first_top1_layer(lens)
    pts = [(g, first[g]) for g in answer_token_indices(rnd) if g0 <= g < g1 and first[g] >= 0]
    if not pts:
        return
    fig.add_trace(
        go.Scatter(
            x=[labels[g - g0] for g, _ in pts],
            y=[f"layer {layer}" for _, layer in pts],
            mode="markers",
            marker={"symbol": "square-open", "size": 22, "color": GOOD_COLOR, "line": {"width": 3}},
            name="answer first top-1",
            hovertemplate="answer token %{x}<br>first top-1 at %{y}<extra></extra>",
        )
    )


def answer_depth_summary(lens: LensRecord, rnd: Round) -> str:
    """One line: at which lens layer each answer token first became the top prediction."""
    idx = answer_token_indices(rnd)
    if not idx:
        return "No final answer was found in the generated text."
    first = first_top1_layer(lens)
    parts = [
        f"{rnd.tokens[g].text.strip()!r}: "
        + (f"layer {first[g]}" if first[g] >= 0 else "not top-1 in any lens layer")
        for g in idx
    ]
    return f"Answer {rnd.answer!r} — first top-1 per token: " + "; ".join(parts)


def token_routing_rows(rec: RoutingRecord, g: int) -> list[dict]:
    """One row per MoE layer for generated token ``g``: chosen experts with weights, top probability
    and entropy (for the selected-token table beside the heatmap)."""
    ent = routing_entropy(rec)
    rows = []
    unweighted = bool((rec.weights[g] == 1).all())  # e.g. MoEfied: chosen experts are summed as they are
    for pos, layer in enumerate(rec.layers):
        chosen = [
            str(int(e)) if unweighted else f"{int(e)} ({float(w):.2f})"
            for e, w in zip(rec.experts[g, pos], rec.weights[g, pos], strict=True)
            if e >= 0
        ]
        rows.append(
            {
                "layer": layer,
                "chosen experts" + ("" if unweighted else " (weight)"): ", ".join(chosen),
                "entropy (nats)": None if ent is None else round(float(ent[g, pos]), 2),
            }
        )
    return rows
