"""Plotly builders for compression: the prompt strip (which segments became pointers, arcs to their
sources), the compression map (segments x generation steps: state, score, pointer arcs), the score trace with the compress/expand threshold lines, and memory in tokens over steps.

Each builder takes a ``CompressionRecord`` (or its ``to_dict()``) and returns a ``go.Figure``;
``compression_map_data`` gives the plain arrays behind the map. Column ``-1`` is the state before
the model (pointer compression); columns ``0..G-1`` are generation steps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from o3viz.trace.compression import SEGMENT_STATES, CompressionRecord

# Okabe-Ito: no green/red, which mean pass/fail elsewhere.
STATE_COLORS = {"kept": "#d9d9d9", "compressed": "#0072B2", "expanded": "#E69F00", "released": "#CC79A7"}
POINTER_COLOR = STATE_COLORS["compressed"]  # a pointer's line to its source: one blue in every figure
STATE_NAMES = {"kept": "kept", "compressed": "pointer", "expanded": "expanded", "released": "released"}
_AFTER_EVENT = {"compress": "compressed", "expand": "expanded", "release": "released"}


@dataclass
class MapData:
    """The compression map as arrays: ``states`` (S, G+1) indices into ``SEGMENT_STATES``,
    ``scores`` (S, G+1), ``steps`` (G+1,) with -1 first, and ``edges`` (copy, source, kind)."""

    states: np.ndarray
    scores: np.ndarray
    steps: np.ndarray
    edges: list[tuple[int, int, str]]
    labels: list[str]


def _as_record(record: CompressionRecord | dict) -> CompressionRecord:
    return (
        record
        if isinstance(record, CompressionRecord)
        else CompressionRecord.from_dict(record, "compression")
    )


def _n_steps(rec: CompressionRecord) -> int:
    g = len(rec.step_scores or rec.memory_tokens or [])
    return max([g] + [e.step + 1 for e in rec.events])


def compression_map_data(record: CompressionRecord | dict) -> MapData:
    """States and scores of every segment before the model and after each generation step."""
    rec = _as_record(record)
    S, G = len(rec.segments), _n_steps(rec)
    code = {name: i for i, name in enumerate(SEGMENT_STATES)}
    states = np.zeros((S, G + 1), dtype=np.int8)
    scores = np.zeros((S, G + 1))
    for i, seg in enumerate(rec.segments):
        states[i, :] = code.get(seg.get("state", "kept"), 0)
        scores[i, :] = seg.get("score", 0.0)
    if rec.step_scores:
        sc = np.asarray(rec.step_scores, dtype=float).T  # (S, G)
        scores[: sc.shape[0], 1 : sc.shape[1] + 1] = sc[:S]
    before_release = {}
    for e in sorted((e for e in rec.events if e.step >= 0), key=lambda e: e.step):
        if not 0 <= e.segment < S:
            continue
        if e.kind == "release":
            before_release[e.segment] = states[e.segment, e.step + 1]
        new = (
            before_release.pop(e.segment, code["kept"]) if e.kind == "restore" else code[_AFTER_EVENT[e.kind]]
        )
        states[e.segment, e.step + 1 :] = new
    edges = [
        (i, int(s["pointer_to"]), s.get("kind", ""))
        for i, s in enumerate(rec.segments)
        if s.get("pointer_to") is not None
    ]
    labels = [f"§{s.get('index', i)}" for i, s in enumerate(rec.segments)]
    return MapData(states, scores, np.arange(-1, G), edges, labels)


def _arcs(edges: list[tuple[int, int, str]], x0: float, max_arcs: int = 2000) -> tuple[list, list]:
    """One polyline per pointer, bulging left of ``x0`` by an amount that grows with its span."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    t = np.linspace(0, 1, 12)
    for copy, src, _kind in edges[:max_arcs]:
        bulge = 0.3 + 0.08 * np.sqrt(abs(copy - src))
        xs += (x0 - bulge * 4 * t * (1 - t)).tolist() + [None]
        ys += (copy + (src - copy) * t).tolist() + [None]
    return xs, ys


def changed_segments(data: MapData) -> list[int]:
    """Segments whose state changes during generation (released, restored, expanded)."""
    if data.states.shape[1] < 2:
        return []
    return [i for i in range(len(data.states)) if (data.states[i, 1:] != data.states[i, :-1]).any()]


def build_compression_map(
    record: CompressionRecord | dict, *, title: str = "Compression map", only: list[int] | None = None
) -> go.Figure:
    """Heatmap of segment states over generation steps (hover: state and score) with pointer arcs
    on the left; ``only`` keeps those segments (e.g. ``changed_segments``: the story over time)."""
    data = compression_map_data(record)
    if only is not None:
        keep = np.asarray(only, dtype=int)
        data = MapData(
            data.states[keep],
            data.scores[keep],
            data.steps,
            [],
            [data.labels[i] for i in keep],
        )
    n = len(SEGMENT_STATES)
    scale = []
    for i, name in enumerate(SEGMENT_STATES):
        scale += [[i / n, STATE_COLORS[name]], [(i + 1) / n, STATE_COLORS[name]]]
    names = np.asarray(SEGMENT_STATES, dtype=object)[data.states]
    fig = go.Figure(
        go.Heatmap(
            z=data.states + 0.5,
            x=data.steps,
            y=data.labels,
            zmin=0,
            zmax=n,
            colorscale=scale,
            customdata=np.dstack([names, np.round(data.scores, 3)]),
            hovertemplate="segment %{y}, generation step %{x}<br>%{customdata[0]}, score %{customdata[1]}<extra></extra>",
            colorbar={
                "tickvals": [i + 0.5 for i in range(n)],
                "ticktext": [STATE_NAMES[s] for s in SEGMENT_STATES],
                "title": "state",
                "thickness": 12,
            },
            xgap=1,
            ygap=1,
        )
    )
    if data.edges:
        xs, ys = _arcs(data.edges, -1.5)
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                line={"color": POINTER_COLOR, "width": 1},
                name="pointer → source",
                hoverinfo="skip",
            )
        )
    fig.update_layout(
        title=title,
        xaxis_title="generation step (token index; -1 = before the model)",
        yaxis_title="prompt segment",
        yaxis={"autorange": "reversed", "type": "category", "tickfont": {"size": 11}},
        xaxis={"tickfont": {"size": 11}},
        legend={"orientation": "h", "y": -0.25},
        height=int(np.clip(160 + 18 * len(data.labels), 300, 800)),
        template="plotly_white",
    )
    return fig


def build_prompt_strip(record: CompressionRecord | dict, *, title: str | None = None) -> go.Figure:
    """Which segments became pointers: the prompt as one strip along its original token positions,
    each segment coloured by its state before the model, with an arc from every pointer back to
    the segment it stands in for."""
    rec = _as_record(record)
    segs = rec.segments
    if not segs:
        return go.Figure().update_layout(title="No segments were recorded.", template="plotly_white")
    x0 = np.array([s.get("token_start", 0) for s in segs], dtype=float)
    x1 = np.array([max(s.get("token_end", 0), s.get("token_start", 0) + 1) for s in segs], dtype=float)
    states = [s.get("state", "kept") for s in segs]
    fig = go.Figure()
    for state in dict.fromkeys(states):
        idx = [i for i, st in enumerate(states) if st == state]
        fig.add_trace(
            go.Bar(
                x=x1[idx] - x0[idx],
                base=x0[idx],
                y=["prompt"] * len(idx),
                orientation="h",
                marker={"color": STATE_COLORS.get(state, "#999"), "line": {"width": 0.5, "color": "white"}},
                name=STATE_NAMES.get(state, state),
                customdata=np.array(
                    [
                        [
                            segs[i].get("index", i),
                            segs[i].get("pointer_to"),
                            round(segs[i].get("score", 0.0), 2),
                        ]
                        for i in idx
                    ],
                    dtype=object,
                ),
                hovertemplate="segment §%{customdata[0]}: tokens %{base}–%{x}<br>pointer to §%{customdata[1]} · score %{customdata[2]}<extra>%{fullData.name}</extra>",
            )
        )
    xs, ys = [], []
    mid = (x0 + x1) / 2
    by_index = {s.get("index", i): i for i, s in enumerate(segs)}
    for i, s in enumerate(segs[:4000]):
        src = by_index.get(s.get("pointer_to"))
        if src is None:
            continue
        t = np.linspace(0, 1, 16)
        xs += (mid[i] + (mid[src] - mid[i]) * t).tolist() + [None]
        ys += (
            0.45 + 1.6 * 4 * t * (1 - t) * min(1.0, 0.25 + abs(mid[i] - mid[src]) / max(x1.max(), 1))
        ).tolist() + [None]
    if xs:
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                line={"color": POINTER_COLOR, "width": 1},
                name="pointer → source",
                hoverinfo="skip",
                yaxis="y2",
            )
        )
    n_ptr = sum(s.get("pointer_to") is not None for s in segs)
    fig.update_layout(
        title=title
        or f"Which segments became pointers: {n_ptr} of {len(segs)} segments, {rec.original_tokens} → {rec.compressed_tokens} prompt tokens",
        barmode="stack",
        template="plotly_white",
        height=300,
        xaxis={"title": "position in the original prompt (tokens)", "tickfont": {"size": 11}},
        yaxis={"showticklabels": False, "domain": [0, 0.35]},
        yaxis2={"domain": [0.35, 1], "range": [0.4, 2.2], "visible": False},
        legend={"orientation": "h", "y": 1.02, "x": 1, "xanchor": "right", "yanchor": "bottom"},
        margin={"l": 20, "r": 20, "t": 60, "b": 50},
    )
    return fig


def build_score_trace(
    record: CompressionRecord | dict, *, segments: list[int] | None = None, max_segments: int = 12
) -> go.Figure:
    """Score of each segment over steps, with the compress (0.7) and expand (0.3) threshold lines."""
    rec = _as_record(record)
    data = compression_map_data(rec)
    chosen = segments if segments is not None else _most_varied(data.scores, max_segments)
    fig = go.Figure()
    for s in chosen:
        fig.add_trace(go.Scatter(x=data.steps, y=data.scores[s], mode="lines", name=data.labels[s]))
    hi = float(rec.info.get("compress_threshold", 0.7))
    lo = float(rec.info.get("expand_threshold", 0.3))
    fig.add_hline(y=hi, line_dash="dash", line_color="#4c78a8", annotation_text=f"compress ≥ {hi}")
    fig.add_hline(y=lo, line_dash="dash", line_color="#f58518", annotation_text=f"expand ≤ {lo}")
    fig.update_layout(
        title="Segment scores",
        xaxis_title="generation step (token index; -1 = before the model)",
        yaxis_title="segment score (0–1)",
        yaxis={"range": [0, 1.05]},
    )
    return fig


def _most_varied(scores: np.ndarray, k: int) -> list[int]:
    """The ``k`` segments whose scores move most (then the first ones), in index order."""
    if len(scores) <= k:
        return list(range(len(scores)))
    spread = scores.max(axis=1) - scores.min(axis=1)
    return sorted(np.argsort(-spread, kind="stable")[:k].tolist())


def build_memory_chart(record: CompressionRecord | dict) -> go.Figure:
    """KV-cache entries after each step, against the original and compressed prompt sizes."""
    rec = _as_record(record)
    mem = rec.memory_tokens or []
    fig = go.Figure(
        go.Scatter(
            x=list(range(len(mem))),
            y=mem,
            mode="lines+markers",
            name="KV-cache entries",
            hovertemplate="generation step %{x}: %{y} tokens in the KV cache<extra></extra>",
        )
    )
    fig.add_hline(
        y=rec.original_tokens,
        line_dash="dot",
        annotation_text=f"original prompt: {rec.original_tokens} tokens",
    )
    fig.add_hline(
        y=rec.compressed_tokens,
        line_dash="dash",
        annotation_text=f"compressed prompt: {rec.compressed_tokens} tokens",
        annotation_position="bottom right",
    )
    for e in rec.events:
        if e.kind in ("release", "restore") and 0 <= e.step < len(mem):
            fig.add_annotation(
                x=e.step,
                y=mem[e.step],
                text=f"{e.kind} §{e.segment}",
                showarrow=True,
                arrowhead=1,
                font={"size": 11},
            )
    top = max([rec.original_tokens, *mem]) if mem or rec.original_tokens else 1
    fig.update_layout(
        title="Memory: KV-cache entries after each generation step",
        xaxis_title="generation step (token index)",
        yaxis_title="KV-cache entries (tokens)",
        yaxis={"range": [0, top * 1.1]},
        template="plotly_white",
        height=320,
    )
    return fig
