"""Attention heatmaps: generated token × context (a window, never the full matrix), the layer ×
head grid of a step, and DAA relevance with the before/after shift; readable step labels.

Every builder slices before it converts, so a 10k-token trace costs only its window, and bins
rows or columns (summing attention mass) when a window is still wider than the browser needs.
"""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from o3viz.figures._style import GAIN_COLOR, HEAT_SCALE, LOSS_COLOR, base_layout, clip_label, empty_figure
from o3viz.trace import AttentionRecord, Round

MAX_TOKEN_ROWS = 256  # generated tokens in one token-level window
MAX_COLS = 600  # context columns sent to the browser (binned beyond)


def bin_axis(m: np.ndarray, max_n: int, axis: int, reduce: str = "sum") -> tuple[np.ndarray, np.ndarray]:
    """Merge neighbouring rows/columns into at most ``max_n`` bins; returns the matrix and bin starts.

    >>> bin_axis(np.ones((1, 10)), 5, axis=1)[0].tolist()
    [[2.0, 2.0, 2.0, 2.0, 2.0]]
    """
    n = m.shape[axis]
    if n <= max_n:
        return m, np.arange(n)
    starts = np.linspace(0, n, max_n + 1).astype(int)[:-1]
    out = np.add.reduceat(m, starts, axis=axis)
    if reduce == "mean":
        sizes = np.diff(np.append(starts, n)).astype(np.float32)
        shape = [1] * m.ndim
        shape[axis] = len(sizes)
        out = out / sizes.reshape(shape)
    return out, starts


def _piece(text: str) -> str:
    return html.escape(clip_label(text.replace("\n", "⏎"), 14)) or "·"


def context_labels(rnd: Round) -> list[str]:
    """One short label per context position: prompt tokens then generated tokens."""
    return [_piece(t.text) for t in rnd.prompt_tokens] + [_piece(t.text) for t in rnd.tokens]


def token_rows(
    att: AttentionRecord, g0: int, g1: int, c1: int, layer: int | None = None, head: int | None = None
) -> np.ndarray:
    """(g1-g0, c1) float32 rows of one window, sliced before converting (cheap on long traces)."""
    if layer is None:
        return att.mean[g0:g1, :c1].astype(np.float32)
    block = att.head_block(layer, g0, g1, c1)  # (g, H, c1): dense rows or top-k pairs, window only
    return block.mean(axis=1) if head is None else block[:, head]


def _sink_columns(rnd: Round, c1: int) -> np.ndarray:
    """Context columns of attention-sink segments (chat template, BOS), below ``c1``."""
    from o3viz.figures.step_attention import is_sink

    cols = [np.arange(s.token_start, min(s.token_end, c1)) for s in rnd.segments if is_sink(s.label)]
    return np.concatenate(cols) if cols else np.zeros(0, dtype=int)


def token_heatmap(
    rnd: Round,
    g0: int = 0,
    g1: int | None = None,
    *,
    layer: int | None = None,
    head: int | None = None,
    title: str | None = None,
    drop_sinks: bool = False,
    scale: str = "linear",
) -> go.Figure:
    """Generated tokens ``[g0, g1)`` (at most MAX_TOKEN_ROWS) × context keys up to the window's end.
    ``drop_sinks`` leaves out the chat-template columns and renormalises each row; ``scale`` is
    linear, log or quantile."""
    from o3viz.figures.step_attention import _scaled

    att = rnd.attention
    if att is None:
        return empty_figure("Token attention", "This trace has no recorded attention.")
    G = att.num_generated
    g1 = min(G if g1 is None else g1, g0 + MAX_TOKEN_ROWS, G)
    if g1 <= g0:
        return empty_figure("Token attention", "The window is empty.")
    c1 = att.prompt_len + g1
    rows = token_rows(att, g0, g1, c1, layer, head)
    labels = context_labels(rnd)
    kept = np.arange(c1)
    if drop_sinks:
        kept = np.setdiff1d(kept, _sink_columns(rnd, c1))
        rows = rows[:, kept]
        total = rows.sum(axis=1, keepdims=True)
        rows = np.divide(rows, total, out=np.zeros_like(rows), where=total > 0)
    cols, starts = bin_axis(rows, MAX_COLS, axis=1)
    pos = kept[starts]
    # Unique category names ("pos·piece"): hover shows them and the JSON carries each label once.
    xlab = [f"{p}·{labels[p] if p < len(labels) else ''}" for p in pos]
    ylab = [
        f"{g0 + i}·{labels[att.prompt_len + g0 + i] if att.prompt_len + g0 + i < len(labels) else ''}"
        for i in range(g1 - g0)
    ]
    which = (
        "all layers and heads"
        if layer is None
        else f"layer {layer}" + ("" if head is None else f", head {head}")
    )
    z, bar, zkw = _scaled(cols, scale)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=xlab,
            y=ylab,
            customdata=cols,
            colorscale=HEAT_SCALE,
            hovertemplate="query %{y}<br>key %{x}<br>attention %{customdata:.4f}<extra></extra>",
            colorbar={"thickness": 12, "title": {"text": bar.pop("title")}, **bar},
            **zkw,
        )
    )
    fig.add_vline(x=_prompt_edge(pos, att.prompt_len), line={"color": "white", "width": 2, "dash": "dot"})
    fig.update_xaxes(type="category", tickfont={"size": 11}, nticks=24)
    fig.update_yaxes(type="category", tickfont={"size": 11}, nticks=30, autorange="reversed")
    binned = f", binned to {len(starts)} columns" if len(starts) < len(kept) else ""
    sinks = "; chat template left out, rows renormalised" if drop_sinks else ""
    sub = f"<br><span style='font-size:11px;color:#64748b'>{which}{binned}{sinks} · colour: {scale}</span>"
    return base_layout(
        fig,
        (title or f"Token attention: generated tokens {g0}–{g1 - 1} × context") + sub,
        height=min(900, 240 + 12 * (g1 - g0)),
        xaxis_title="context token (prompt | generated so far)",
        yaxis_title="generated token",
        margin={"l": 60, "r": 20, "t": 70, "b": 60},
    )


def _prompt_edge(starts: np.ndarray, prompt_len: int) -> float:
    return float(np.searchsorted(starts, prompt_len) - 0.5)


def step_labels(rnd: Round) -> dict[str, str]:
    """Readable names for the allocation labels: ``seg 0`` → ``seg 0 · system``, ``step 3`` → text."""
    names = {
        f"seg {s.index}": f"seg {s.index} · {clip_label(s.label or rnd.rendered_prompt[s.start : s.end], 24)}"
        for s in rnd.segments
    }
    names.update({f"step {s.index}": f"step {s.index} · {clip_label(s.text, 24)}" for s in rnd.steps})
    return {k: html.escape(v, quote=False) for k, v in names.items()}  # Plotly shows &quot; literally


def layer_head_heatmap(rnd: Round, t0: int, t1: int, *, title: str | None = None) -> go.Figure:
    """(L, H) share of attention on the prompt, averaged over generated tokens ``[t0, t1)``."""
    att = rnd.attention
    if att is None or att.layer_head is None:
        return empty_figure("Layer × head", "This trace has no per-head summary.")
    t1 = max(min(t1, att.layer_head.shape[0]), t0 + 1)
    grid = att.layer_head[t0:t1].astype(np.float32).mean(axis=0)  # (L, H)
    fig = go.Figure(
        go.Heatmap(
            z=grid,
            x=[f"h{h}" for h in range(grid.shape[1])],
            y=[f"L{i}" for i in range(grid.shape[0])],
            colorscale=HEAT_SCALE,  # (Magma ran through red, which means fail)
            zmin=0,
            zmax=1,
            hovertemplate="layer %{y}, head %{x}<br>share on prompt %{z:.3f}<extra></extra>",
            colorbar={"title": "on prompt", "thickness": 12},
        )
    )
    fig.update_yaxes(autorange="reversed", title="layer", tickfont={"size": 11})
    fig.update_xaxes(title="attention head", tickfont={"size": 11})
    return base_layout(
        fig,
        title or f"Layer × head: share of attention on the prompt (tokens {t0}–{t1 - 1})",
        height=max(320, 40 + 16 * grid.shape[0]),
    )


def relevance_figure(rnd: Round, g0: int = 0, g1: int | None = None) -> go.Figure:
    """DAA relevance r_j over the context and, in allocate mode, how allocation moved attention."""
    att = rnd.attention
    daa = att.daa if att is not None else None
    if daa is None or daa.relevance is None:
        return empty_figure("DAA relevance", "DAA was off for this run: no relevance was recorded.")
    labels = context_labels(rnd)
    rel, starts = bin_axis(daa.relevance.astype(np.float32)[None, :], MAX_COLS, axis=1, reduce="mean")
    x = [f"{s}·{labels[s] if s < len(labels) else ''}" for s in starts]
    has_shift = daa.before is not None
    fig = make_subplots(
        rows=2 if has_shift else 1,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.16,
        subplot_titles=["relevance r_j (α·cos + (1−α)·proximity)"]
        + (["attention after − before allocation (mean over the window)"] if has_shift else []),
    )
    fig.add_trace(
        go.Bar(
            x=x,
            y=rel[0],
            marker_color="#0ea5e9",
            name="relevance",
            hovertemplate="%{x}<br>r = %{y:.3f}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    if has_shift:
        G = att.num_generated
        g1 = min(G if g1 is None else g1, G)
        c = daa.before.shape[1]
        diff = (att.mean[g0:g1, :c].astype(np.float32) - daa.before[g0:g1].astype(np.float32)).mean(axis=0)
        d, _ = bin_axis(diff[None, :], MAX_COLS, axis=1)
        colors = np.where(d[0] >= 0, GAIN_COLOR, LOSS_COLOR)  # not green/red: no verdict here
        fig.add_trace(
            go.Bar(
                x=x[: d.shape[1]],
                y=d[0],
                marker_color=colors,
                name="shift",
                hovertemplate="%{x}<br>Δ attention %{y:+.4f}<extra></extra>",
            ),
            row=2,
            col=1,
        )
    fig.update_xaxes(type="category", tickfont={"size": 11}, nticks=24)
    title = f"DAA ({html.escape(daa.mode)}, λ={daa.strength:g}, α={daa.alpha:g}, task {html.escape(daa.task_type)})"
    fig.update_annotations(font={"size": 12, "color": "#475569"})  # the subplot titles
    fig.update_xaxes(tickfont={"size": 11}, title_text="context token", row=2 if has_shift else 1, col=1)
    return base_layout(
        fig,
        title,
        height=540 if has_shift else 340,
        showlegend=False,
        margin={"l": 50, "r": 20, "t": 90, "b": 60},
    )
