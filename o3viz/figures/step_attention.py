"""Where each step's attention went, readable: one row per target (prompt segments named by their
text, earlier steps by theirs), one column per reasoning step, the selected step outlined.

Attention sinks (the chat template with BOS, typically a third of every row) can be left out and
each step renormalised over what is left; the colour scale can be linear, log or quantile so one
outlier does not swamp it. Long prompts show the top targets and group the rest as "other …",
which the page can open with ``only=``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import plotly.graph_objects as go

from o3viz.figures._style import (
    HEAT_SCALE,
    SELECT_COLOR,
    base_layout,
    clip_label,
    empty_figure,
    esc,
    readable,
)
from o3viz.trace import Round

Scale = Literal["linear", "log", "quantile"]
TOP_TARGETS = 12
MAX_ONLY = 60  # rows of a drill-down into "other"
SINK_LABELS = ("template", "bos", "system")


def is_sink(label: str) -> bool:
    """A prompt segment that soaks up attention without content: the chat template (with BOS)."""
    return label.strip().lower().startswith(SINK_LABELS)


@dataclass
class StepAttention:
    """The matrix behind the figure: ``values[t, s]`` = share of step ``steps[s]`` on target ``t``."""

    targets: list[str]  # short names (row labels)
    full: list[str]  # full text of each target (hover)
    steps: list[int]  # step indices (columns)
    step_text: list[str]
    values: np.ndarray  # (T, S) float32, columns sum to 1 over all targets (before grouping)
    other: list[int] = field(default_factory=list)  # alloc columns grouped into "other …" rows
    dropped: list[str] = field(default_factory=list)  # sink segments left out


def _names(rnd: Round) -> tuple[dict[str, str], dict[str, str]]:
    short, full = {}, {}
    for s in rnd.segments:
        text = " ".join(rnd.rendered_prompt[s.start : s.end].split())
        short[f"seg {s.index}"] = f"prompt: {clip_label(readable(text), 26)}"
        full[f"seg {s.index}"] = f"prompt segment {s.index} ({s.label}): {text[:300]}"
    for s in rnd.steps:
        short[f"step {s.index}"] = f"step {s.index}: {clip_label(readable(s.text), 22)}"
        full[f"step {s.index}"] = f"step {s.index}: {s.text[:300]}"
    return short, full


def step_attention(
    rnd: Round,
    s0: int = 0,
    s1: int | None = None,
    *,
    drop_sinks: bool = True,
    top: int = TOP_TARGETS,
    only: list[int] | None = None,
) -> StepAttention | None:
    """The matrix for steps ``[s0, s1)``; None when the round has no step-level allocation."""
    att = rnd.attention
    if att is None or att.step_alloc is None or not att.alloc_labels:
        return None
    S = att.step_alloc.shape[0]
    s1 = min(S if s1 is None else s1, S)
    m = att.step_alloc[s0:s1].astype(np.float32).T  # (K, S)
    labels = att.alloc_labels
    seg_label = {f"seg {s.index}": s.label for s in rnd.segments}
    sinks = [k for k, lab in enumerate(labels) if drop_sinks and is_sink(seg_label.get(lab, ""))]
    if sinks:
        m[sinks] = 0.0
        total = m.sum(axis=0, keepdims=True)
        m = np.divide(m, total, out=np.zeros_like(m), where=total > 0)
    short, full = _names(rnd)
    live = [k for k in range(len(labels)) if k not in sinks and m[k].sum() > 0]
    if only is not None:
        keep, other = [k for k in only if k in live][:MAX_ONLY], []
    else:
        ranked = sorted(live, key=lambda k: -float(m[k].sum()))
        keep, other = sorted(ranked[:top]), sorted(ranked[top:])
    rows = [m[k] for k in keep]
    names = [short.get(labels[k], labels[k]) for k in keep]
    hover = [full.get(labels[k], labels[k]) for k in keep]
    for kind, title in (("seg", "other prompt segments"), ("step", "other earlier steps")):
        group = [k for k in other if labels[k].startswith(kind)]
        if group:
            rows.append(m[group].sum(axis=0))
            names.append(f"{title} ({len(group)})")
            hover.append(f"{len(group)} {title}, summed")
    steps = [s.index for s in rnd.steps[s0:s1]]
    return StepAttention(
        names,
        hover,
        steps,
        [s.text for s in rnd.steps[s0:s1]],
        np.array(rows, dtype=np.float32).reshape(len(rows), len(steps)),
        other,
        [short.get(labels[k], labels[k]) for k in sinks],
    )


def _scaled(v: np.ndarray, scale: Scale) -> tuple[np.ndarray, dict, dict]:
    """(z, colorbar settings, heatmap settings): log10 of the share, its rank (0..1), or the share
    itself with the colour capped at the 99th percentile so one outlier does not swamp the rest."""
    if scale == "log":
        z = np.log10(np.clip(v, 1e-4, None))
        ticks = [-4, -3, -2, -1, 0]
        bar = {"tickvals": ticks, "ticktext": ["0.01%", "0.1%", "1%", "10%", "100%"], "title": "share (log)"}
        return z, bar, {"zmin": -4, "zmax": 0}
    if scale == "quantile":
        flat = v.ravel()
        ranks = flat.argsort().argsort().astype(np.float32) / max(flat.size - 1, 1)
        return ranks.reshape(v.shape), {"title": "rank of share"}, {"zmin": 0, "zmax": 1}
    positive = v[v > 0]
    zmax = float(np.quantile(positive, 0.99)) if positive.size else 1.0
    # small shares (a long context binned to the browser's width) need decimals, or every tick is "0%"
    fmt = ".0%" if zmax >= 0.1 else ".1%" if zmax >= 0.01 else ".2%"
    return v, {"title": "share", "tickformat": fmt}, {"zmin": 0, "zmax": zmax}


def step_attention_heatmap(
    rnd: Round,
    s0: int = 0,
    s1: int | None = None,
    *,
    drop_sinks: bool = True,
    scale: Scale = "linear",
    top: int = TOP_TARGETS,
    only: list[int] | None = None,
    selected: int | None = None,
) -> go.Figure:
    """Targets × steps heatmap of ``step_attention``; the ``selected`` step is outlined."""
    sa = step_attention(rnd, s0, s1, drop_sinks=drop_sinks, top=top, only=only)
    if sa is None or not sa.steps:
        return empty_figure("Where each step's attention went", "This trace has no step-level attention.")
    z, bar, zkw = _scaled(sa.values, scale)
    x = [str(s) for s in sa.steps]
    hover = np.array(
        [[f"{esc(t)}<br>← {esc(clip_label(st, 90))}" for st in sa.step_text] for t in sa.full],
        dtype=object,
    ).reshape(len(sa.full), len(sa.steps))
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=x,
            y=sa.targets,
            customdata=sa.values,
            hovertext=hover,
            hovertemplate="%{hovertext}<br>share %{customdata:.1%}<extra></extra>",
            colorscale=HEAT_SCALE,
            colorbar={"thickness": 12, "title": {"text": bar.pop("title"), "side": "right"}, **bar},
            xgap=1,
            ygap=1,
            **zkw,
        )
    )
    if selected is not None and selected in sa.steps:
        i = sa.steps.index(selected)
        # the selection, as on the map (not red: red means fail): a white halo under a dark line,
        # so it shows on Viridis' dark cells and on its light ones
        for color, width in (("white", 6), (SELECT_COLOR, 2)):
            fig.add_shape(
                type="rect",
                x0=i - 0.5,
                x1=i + 0.5,
                y0=-0.5,
                y1=len(sa.targets) - 0.5,
                line={"color": color, "width": width},
                xref="x",
                yref="y",
            )
    fig.update_xaxes(type="category", title="reasoning step (hover for its text)", tickfont={"size": 11})
    fig.update_yaxes(
        type="category", autorange="reversed", tickfont={"size": 11}, title="attended to", automargin=True
    )
    note = f"left out: {', '.join(sa.dropped)}; rows renormalised" if sa.dropped else "all targets"
    sub = f"<br><span style='font-size:11px;color:#64748b'>{esc(note)} · colour: {scale}</span>"
    return base_layout(
        fig,
        f"Where each step's attention went (round {rnd.index})" + sub,
        height=int(np.clip(150 + 24 * len(sa.targets), 300, 900)),
        margin={"l": 10, "r": 10, "t": 70, "b": 50},
    )
