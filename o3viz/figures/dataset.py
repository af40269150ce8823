"""Figures of the Dataset page: what holds across many traces. Each takes a frame of
``o3viz.analysis.dataset.DatasetSummary`` and returns a ``go.Figure`` whose bars carry, in
``customdata``, the selection (JSON) that names their traces, so a click can list them.

Green is correct and red is wrong, as everywhere in o3viz.
"""

from __future__ import annotations

import json

import pandas as pd
import plotly.graph_objects as go

from o3viz.figures._style import (
    STEP_TYPE_COLORS,
    STEP_TYPE_LABELS,
    VERDICT_COLORS,
    base_layout,
    clip_label,
    empty_figure,
)

GROUP_COLORS = {
    "correct": VERDICT_COLORS["correct"],
    "wrong": VERDICT_COLORS["wrong"],
    "ungraded": VERDICT_COLORS["unverifiable"],
}
HEIGHT = 330


def _label(t: str) -> str:
    return STEP_TYPE_LABELS.get(t, t.replace("_", " "))


def _with_group(sel: str, group: str) -> str:
    return json.dumps({**json.loads(sel), "group": group}, sort_keys=True)


def _groups(frame: pd.DataFrame) -> list[str]:
    """The groups a grade-free figure draws: correct and wrong, and ungraded traces where the
    frame has them (data without a reference still has claims, steps and backtracks)."""
    present = set(frame["group"]) if "group" in frame.columns else set()
    return ["correct", "wrong"] + (["ungraded"] if "ungraded" in present else [])


def _pct(v) -> float | None:
    return None if v is None or pd.isna(v) else 100 * float(v)


def length_figure(length: pd.DataFrame) -> go.Figure:
    title = "Are longer traces more often wrong?"
    if length.empty:
        return empty_figure(title, "No traces match.")
    fig = go.Figure()
    total = (length["correct"] + length["wrong"] + length["ungraded"]).tolist()
    for g in ("correct", "wrong"):
        fig.add_bar(
            x=length["bin"],
            y=length[g],
            name=g,
            # a bin of fewer than 5 traces is drawn hollow: too few to read a rate from
            marker={
                "color": [GROUP_COLORS[g] if n >= 5 else "rgba(0,0,0,0)" for n in total],
                "line": {"color": GROUP_COLORS[g], "width": 2},
            },
            customdata=[_with_group(s, g) for s in length["sel"]],
            hovertemplate=f"%{{x}} steps: %{{y}} {g}<extra></extra>",
        )
    acc = [_pct(v) for v in length["accuracy"]]
    has_ci = {"ci_lo", "ci_hi", "graded"} <= set(length.columns)
    up = [(_pct(h) or 0) - (a or 0) for h, a in zip(length["ci_hi"], acc, strict=True)] if has_ci else None
    down = (
        [(a or 0) - (_pct(lo) or 0) for lo, a in zip(length["ci_lo"], acc, strict=True)] if has_ci else None
    )
    fig.add_scatter(
        x=length["bin"],
        y=acc,
        name="correct (95% CI)",
        yaxis="y2",
        mode="lines+markers",
        line={"color": "#334155"},
        error_y={"type": "data", "array": up, "arrayminus": down, "thickness": 1} if has_ci else None,
        customdata=list(length["graded"]) if has_ci else None,
        hovertemplate="%{x} steps: %{y:.0f}% correct of %{customdata} graded<extra></extra>"
        if has_ci
        else "%{x} steps: %{y:.0f}% correct<extra></extra>",
    )
    fig.update_layout(
        barmode="stack",
        xaxis={"title": "length (steps)", "type": "category"},
        yaxis={"title": "traces"},
        yaxis2={
            "title": "correct (%)",
            "overlaying": "y",
            "side": "right",
            "range": [0, 100],
            "tickvals": [0, 25, 50, 75, 100],
            "showgrid": False,
        },
    )
    return base_layout(fig, title, height=HEIGHT, margin={"l": 50, "r": 50, "t": 50, "b": 40})


def type_mix_figure(mix: pd.DataFrame) -> go.Figure:
    title = "Which step types fill correct and wrong traces?"
    if mix.empty or mix["share"].isna().all():
        return empty_figure(title, "No typed steps in these traces.")
    fig = go.Figure()
    for g in _groups(mix):
        part = mix[mix["group"] == g]
        fig.add_bar(
            y=[_label(t) for t in part["type"]],
            x=[_pct(v) for v in part["share"]],
            name=g,
            orientation="h",
            marker_color=GROUP_COLORS[g],
            customdata=list(part["sel"]),
            text=list(part["traces"]),
            hovertemplate=f"%{{y}}: %{{x:.1f}}% of the steps of {g} traces (in %{{text}} traces)<extra></extra>",
            textposition="none",
        )
    fig.update_layout(
        barmode="group",
        xaxis={"title": "share of a trace's steps (%, mean)"},
        yaxis={"autorange": "reversed"},
    )
    return base_layout(fig, title, height=HEIGHT, margin={"l": 170, "r": 20, "t": 50, "b": 40})


def rates_figure(rates: pd.DataFrame) -> go.Figure:
    title = "How often do traces backtrack or self-check?"
    if rates.empty or rates["traces_with"].isna().all():
        return empty_figure(title, "No traces.")
    if not rates["traces_with"].fillna(0).any():
        n = int(rates["traces"].sum() // 2)
        return empty_figure(title, f"None of these {n:,} traces backtracks or self-checks.")
    fig = go.Figure()
    for g in _groups(rates):
        part = rates[rates["group"] == g]
        fig.add_bar(
            x=list(part["behaviour"]),
            y=[_pct(v) for v in part["traces_with"]],
            name=g,
            marker_color=GROUP_COLORS[g],
            customdata=list(part["sel"]),
            text=[
                f"{int(k)} of {int(n)}"
                for k, n in zip(part.get("with_n", part["traces"] * 0), part["traces"], strict=True)
            ],
            hovertemplate=f"%{{x}}: %{{y:.0f}}% of {g} traces (%{{text}})<extra></extra>",
            textposition="outside",
            error_y={
                "type": "data",
                "array": [
                    (_pct(h) or 0) - (_pct(v) or 0)
                    for h, v in zip(part["ci_hi"], part["traces_with"], strict=True)
                ],
                "arrayminus": [
                    (_pct(v) or 0) - (_pct(lo) or 0)
                    for lo, v in zip(part["ci_lo"], part["traces_with"], strict=True)
                ],
                "thickness": 1,
            }
            if "ci_lo" in part
            else None,
        )
    fig.update_layout(
        barmode="group", yaxis={"title": "traces with at least one (%, 95% Wilson CI)", "range": [0, 115]}
    )
    return base_layout(fig, title, height=HEIGHT)


def first_wrong_figure(first: pd.DataFrame) -> go.Figure:
    title = "Where does the first wrong claim sit in the reasoning?"
    if first.empty or first["traces"].sum() == 0:
        return empty_figure(title, "No wrong arithmetic claims in these traces.")
    fig = go.Figure()
    for g in _groups(first):
        part = first[first["group"] == g]
        fig.add_bar(
            x=[f"{lo:.0%}" for lo in part["lo"]],
            y=list(part["traces"]),
            name=f"{g} answer",
            marker_color=GROUP_COLORS[g],
            customdata=list(part["sel"]),
            hovertemplate=f"from %{{x}} of the way: %{{y}} traces whose final answer is {g}<extra></extra>",
        )
    fig.update_layout(
        barmode="stack",
        xaxis={
            "title": "how far into the steps the first wrong claim sits (bins of 10%)",
            "type": "category",
        },
        yaxis={"title": "traces"},
    )
    return base_layout(fig, title, height=HEIGHT)


def claim_rates_figure(claims: pd.DataFrame, by: str = "model") -> go.Figure:
    title = f"How often are arithmetic claims wrong, per {by}?"
    if claims.empty or claims["claims"].sum() == 0:
        return empty_figure(title, "No checked arithmetic claims in these traces.")
    fig = go.Figure()
    for g in _groups(claims):
        part = claims[claims["group"] == g]
        fig.add_bar(
            x=[clip_label(v, 18) for v in part[by]],
            y=[_pct(v) for v in part["error_rate"]],
            name=f"{g} traces",
            marker_color=GROUP_COLORS[g],
            customdata=list(part["sel"]),
            text=[
                f"{c} claims, {_pct(t) or 0:.0f}% of traces have one wrong"
                for c, t in zip(part["claims"], part["traces_with"], strict=True)
            ],
            hovertemplate="%{x}: %{y:.1f}% of claims wrong (%{text})<extra></extra>",
            textposition="none",
        )
    fig.update_layout(
        barmode="group", yaxis={"title": "wrong claims (% of claims)"}, xaxis={"title": by, "tickangle": 0}
    )
    return base_layout(fig, title, height=HEIGHT)


def importance_figure(imp: pd.DataFrame) -> go.Figure:
    title = "Which step types matter most (mean importance)?"
    if imp.empty:
        return empty_figure(title, "No importance scores in these traces.")
    imp = imp.sort_values("importance", ascending=False)
    colors = [STEP_TYPE_COLORS.get(t, STEP_TYPE_COLORS["untyped"]) for t in imp["type"]]
    fig = go.Figure(
        go.Bar(
            x=[_label(t) for t in imp["type"]],
            y=imp["importance"],
            marker_color=colors,
            text=list(imp["traces"]),
            hovertemplate="%{x}: mean importance %{y:.3f} over %{text} traces<extra></extra>",
            textposition="none",
        )
    )
    fig.update_layout(yaxis={"title": "mean importance"}, showlegend=False)
    return base_layout(fig, title, height=HEIGHT)
