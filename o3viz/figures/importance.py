"""Figures for step importance (Thought Anchors measures): each step's scores by method, the
step × step matrix a record came from, and the receiver heads (kurtosis by layer and head).

Scores of different methods have different units (attention mass, KL in nats, accuracy change),
so the overview ranks each method's scores across the steps (0 = least, 1 = most important) and
shows the raw value on hover.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from o3viz.figures._style import DIFF_SCALE, HEAT_SCALE, STEP_TYPE_LABELS, base_layout, clip_label, readable
from o3viz.trace import Step
from o3viz.trace.importance import ImportanceRecord, rank_scores

METHOD_LABELS = {
    "receiver": "receiver heads",
    "suppression": "attention suppression",
    "resample": "counterfactual resampling",
    "published": "published labels",
}


def record_label(rec: ImportanceRecord) -> str:
    """e.g. ``receiver heads (proxy: SmolLM2…)``."""
    name = METHOD_LABELS.get(rec.method, rec.method)
    if rec.source not in (rec.method, "thought-anchors"):
        name += f" · {rec.source}"
    if rec.source == "thought-anchors":
        name = "Thought Anchors labels"
    return name + (" · proxy reader" if rec.model.get("proxy") else "")


def ranked(scores: list[float | None]) -> list[float | None]:
    """Scores replaced by their rank among the scored steps, scaled to [0, 1].

    >>> ranked([0.3, None, 5.0, 0.1])
    [0.5, None, 1.0, 0.0]
    """
    scored = sorted((v, i) for i, v in enumerate(scores) if v is not None)
    out: list[float | None] = [None] * len(scores)
    for r, (_, i) in enumerate(scored):
        out[i] = r / (len(scored) - 1) if len(scored) > 1 else 1.0
    return out


def _hover(rec: ImportanceRecord, steps: list[Step]) -> list[str]:
    notes = rec.info.get("step_notes") or {}  # resampling: why a step has no score, in its words
    return [
        f"step {i} · {st.type or 'untyped'}<br>{clip_label(readable(' '.join(st.text.split())), 90)}"
        f"<br>{record_label(rec)}: {'—' if v is None else f'{v:.3g}'}"
        + (f"<br>{clip_label(str(notes[str(i)]), 160)}" if str(i) in notes else "")
        for i, (st, v) in enumerate(zip(steps, rec.scores, strict=False))
    ]


def _under_floor(rec: ImportanceRecord, n: int) -> list[bool]:
    floor = rec.series.get("clears_floor") or []
    return [i < len(floor) and floor[i] == 0.0 for i in range(n)]


def importance_scores_figure(
    records: list[ImportanceRecord], steps: list[Step], *, height: int = 300
) -> go.Figure:
    """One row per record, one column per step: rank of the step's score (hover: the raw score and
    the sentence and its type); a step under its noise floor is drawn as least important and ringed."""
    n = len(steps)
    z = [rank_scores(r, n) for r in records]
    text = [_hover(r, steps) for r in records]
    fig = go.Figure(
        go.Heatmap(
            z=[[np.nan if v is None else v for v in row] for row in z],
            x=list(range(n)),
            y=[record_label(r) for r in records],
            text=text,
            hovertemplate="%{text}<extra></extra>",
            colorscale=HEAT_SCALE,
            zmin=0,
            zmax=1,
            colorbar={"title": {"text": "rank", "side": "right"}, "thickness": 12, "len": 0.8},
            xgap=1,
            ygap=2,
        )
    )
    under = [(i, record_label(r)) for r in records for i, u in enumerate(_under_floor(r, n)) if u]
    if under:
        fig.add_trace(
            go.Scatter(
                x=[i for i, _ in under],
                y=[y for _, y in under],
                mode="markers",
                # white rings read on every colour of the scale, from dark purple to yellow
                marker={"symbol": "circle-open", "size": 14, "color": "#ffffff", "line": {"width": 2.5}},
                name="under its noise floor",
                hovertemplate="step %{x}: under its noise floor (drawn as least important)<extra></extra>",
            )
        )
        fig.update_layout(legend={"orientation": "h", "y": -0.25, "x": 0})
    base_layout(
        fig,
        "Which steps mattered? Each method's ranking of the steps"
        "<br><span style='font-size:11px;color:#64748b'>blank: no score (receiver: no step far enough "
        "after it; suppression: past the tokens read; resampling: hover the step for why)</span>",
        height=height,
        margin={"l": 50, "r": 20, "t": 64, "b": 40},
    )
    ticks = (
        [f"{i} {STEP_TYPE_LABELS.get(st.type, '')}".strip() for i, st in enumerate(steps)]
        if n <= 40
        else None
    )
    fig.update_xaxes(
        title_text="step (number and type)" if ticks else "step",
        showgrid=False,
        **({"tickmode": "array", "tickvals": list(range(n)), "ticktext": ticks} if ticks else {}),
    )
    fig.update_yaxes(automargin=True, showgrid=False)
    return fig


def step_matrix_figure(
    rec: ImportanceRecord, steps: list[Step], *, log: bool = False, height: int = 420
) -> go.Figure:
    """The record's (S, S) matrix, later step (row) × earlier step (column), lower triangle.

    Resampling's matrix is signed (kept minus resampled), so it is drawn on a diverging scale
    centred at 0 and ``log`` does not apply to it."""
    m = np.asarray(rec.matrix, dtype=np.float64)
    n = m.shape[0]
    m = np.where(np.tri(n, k=-1, dtype=bool), m, np.nan)
    signed = rec.method == "resample"
    log = log and not signed
    z = np.log10(np.maximum(m, 1e-9)) if log else m
    what = {
        "suppression": "suppression KL (nats)",
        "resample": "reappears: kept − resampled",
    }.get(rec.method, "attention")
    hover = [
        [f"step {j} ← step {i}<br>{what}: {'—' if np.isnan(m[j, i]) else f'{m[j, i]:.3g}'}" for i in range(n)]
        for j in range(n)
    ]
    top = float(np.nanmax(np.abs(m))) if signed and np.isfinite(m).any() else None
    fig = go.Figure(
        go.Heatmap(
            z=z,
            text=hover,
            hovertemplate="%{text}<extra></extra>",
            colorscale=DIFF_SCALE if signed else HEAT_SCALE,
            **({"zmid": 0.0, "zmin": -(top or 1.0), "zmax": top or 1.0} if signed else {}),
            colorbar={"title": {"text": _bar_title(what, log), "side": "top"}, "thickness": 12},
        )
    )
    title = {
        "suppression": "How much does each later step depend on each earlier one? (masking the column step)",
        "resample": "Which later steps come back only when an earlier step is kept? (resampling)",
    }.get(rec.method, "Where do later steps look? Receiver heads' attention between steps")
    base_layout(fig, title, height=height)
    fig.update_xaxes(title_text="earlier step (cause)", showgrid=False, automargin=True)
    fig.update_yaxes(title_text="later step (effect)", autorange="reversed", showgrid=False, automargin=True)
    return fig


def _bar_title(what: str, log: bool) -> str:
    """A colour-bar title that fits a half-width column: the quantity, unit and scale on short lines."""
    short = {"suppression KL (nats)": "KL (nats)", "reappears: kept − resampled": "kept −<br>resampled"}
    text = short.get(what, what)
    return f"{text}<br>(log10)" if log else text


def head_kurtosis_figure(rec: ImportanceRecord, *, height: int = 360) -> go.Figure:
    """Kurtosis of each head's vertical scores (layer × head); receiver heads are ringed."""
    k = np.asarray(rec.head_kurtosis, dtype=np.float64)
    fig = go.Figure(
        go.Heatmap(
            z=k.T,
            x=list(range(k.shape[0])),
            y=list(range(k.shape[1])),
            colorscale=HEAT_SCALE,
            hovertemplate="layer %{x} · head %{y}<br>kurtosis %{z:.2f}<extra></extra>",
            colorbar={"title": {"text": "kurtosis", "side": "right"}, "thickness": 12},
        )
    )
    if rec.receiver_heads:
        fig.add_trace(
            go.Scatter(
                x=[layer for layer, _ in rec.receiver_heads],
                y=[head for _, head in rec.receiver_heads],
                mode="markers",
                # white rings, not red: a receiver head is no failure
                marker={"symbol": "circle-open", "size": 13, "color": "#ffffff", "line": {"width": 2}},
                name=f"receiver heads (top {len(rec.receiver_heads)})",
                hovertemplate="receiver head: layer %{x} · head %{y}<extra></extra>",
            )
        )
    base_layout(fig, "Which heads focus on a few steps? Kurtosis of vertical scores", height=height)
    fig.update_xaxes(title_text="layer", showgrid=False)
    fig.update_yaxes(title_text="head", showgrid=False)
    return fig


def resample_interval_figure(rec: ImportanceRecord, steps: list[Step], *, height: int = 260) -> go.Figure:
    """Each resampled step's score with its bootstrap interval, beside its noise floor: filled
    where the score clears the floor, hollow where the noise could explain it."""
    s, n = rec.series, len(steps)
    notes = rec.info.get("step_notes") or {}
    xs = [i for i in range(n) if i < len(rec.scores) and rec.scores[i] is not None]
    lo, hi, floor = (s.get(k) or [None] * n for k in ("ci_low", "ci_high", "noise_floor"))
    clear = _under_floor(rec, n)
    y = [rec.scores[i] for i in xs]
    level = round(100 * rec.params.get("level", 0.9))
    unit = "accuracy change" if rec.params.get("score") == "counterfactual_accuracy" else "KL (nats)"
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=list(range(n)), y=[np.nan if v is None else v for v in floor[:n]], mode="lines",
            line={"shape": "hvh", "color": "#94a3b8", "dash": "dot"}, name="noise floor",
            hovertemplate="step %{x}: noise floor %{y:.3g}<extra></extra>",
        )
    )  # fmt: skip
    fig.add_trace(
        go.Scatter(
            x=xs, y=y, mode="markers", name=f"score, {level}% interval",
            marker={"size": 8, "color": ["#ffffff" if clear[i] else "#2563eb" for i in xs],
                    "line": {"width": 1.5, "color": "#2563eb"}},
            error_y={"type": "data", "symmetric": False, "color": "#93c5fd",
                     "array": [(hi[i] - rec.scores[i]) if hi[i] is not None else 0 for i in xs],
                     "arrayminus": [(rec.scores[i] - lo[i]) if lo[i] is not None else 0 for i in xs]},
            text=[f"step {i}: {rec.scores[i]:.3g} [{_g(lo[i])}, {_g(hi[i])}], floor {_g(floor[i])}"
                  + (" — under its floor" if clear[i] else " — clears its floor")
                  + (f"<br>{notes[str(i)]}" if str(i) in notes else "") for i in xs],
            hovertemplate="%{text}<extra></extra>",
        )
    )  # fmt: skip
    how = (
        "Newcombe–Wilson interval"
        if "Wilson" in str(rec.params.get("interval", ""))
        else "bootstrap interval"
    )
    base_layout(
        fig, f"Which resampled steps stand out from the noise? Score, {level}% interval, noise floor"
        f"<br><span style='font-size:11px;color:#64748b'>interval: {how}, always around the score; "
        "floor: the step's own rollouts pooled and split at random</span>",
        height=height, margin={"l": 50, "r": 20, "t": 64, "b": 40},
    )  # fmt: skip
    fig.update_xaxes(title_text="step", showgrid=False, range=[-0.5, n - 0.5])
    fig.update_yaxes(title_text=unit)
    fig.update_layout(legend={"orientation": "h", "y": 1.02, "x": 1, "xanchor": "right", "yanchor": "bottom"})
    return fig


def _g(v: float | None) -> str:
    return "—" if v is None else f"{v:.3g}"
