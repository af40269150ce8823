"""Verification figures: a rounds × checks grid coloured by verdict, and the checks as table rows."""

from __future__ import annotations

import html

import plotly.graph_objects as go

from o3viz.figures._style import VERDICT_COLORS, VERDICT_ORDER, base_layout, clip_label, empty_figure
from o3viz.trace import Trace
from o3viz.verify.trace_checks import check_label

_CODE = {v: i for i, v in enumerate(VERDICT_ORDER)}
# one legend entry per colour: a test's pass and an answer's correct are one green, fail and wrong
# one red, so two entries of one colour read as two meanings where there is one
LEGEND = (("pass", "correct"), ("fail", "wrong"), ("error", "timeout"), ("unverifiable",))


def checks_figure(trace: Trace) -> go.Figure:
    """One row per round, one cell per check; colour = verdict, hover = name and message."""
    n = max((len(r.checks) for r in trace.rounds), default=0)
    if n == 0:
        return empty_figure("Verification", "No checks were recorded for this trace.")
    z, hover = [], []
    for r in trace.rounds:
        z.append([_CODE[c.verdict] for c in r.checks] + [None] * (n - len(r.checks)))
        hover.append(
            [
                html.escape(f"{c.kind} · {clip_label(c.name, 40)} · {c.verdict}: {clip_label(c.message, 80)}")
                for c in r.checks
            ]
            + [""] * (n - len(r.checks))
        )
    k = len(VERDICT_ORDER) - 1
    scale = [[i / k, VERDICT_COLORS[v]] for i, v in enumerate(VERDICT_ORDER)]
    columns = [_column_label(trace, j) for j in range(n)]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=list(range(n)),
            y=[f"round {r.index} ({r.verdict or '—'})" for r in trace.rounds],
            zmin=0,
            zmax=k,
            colorscale=scale,
            text=hover,
            xgap=2,
            ygap=2,
            hovertemplate="%{y}<br>%{text}<extra></extra>",
            showscale=False,
        )
    )
    seen = {c.verdict for r in trace.rounds for c in r.checks}
    for names in LEGEND:  # one entry per colour (heatmaps have no legend of their own), as present
        if not seen & set(names):
            continue
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=" / ".join(names),
                marker={"color": VERDICT_COLORS[names[0]], "size": 10, "symbol": "square"},
            )
        )
    fig.update_yaxes(autorange="reversed")
    return base_layout(
        fig,
        "Verification: rounds × checks",
        height=160 + 40 * len(trace.rounds),
        plot_bgcolor="white",
        # each column named by its check, not a number axis (−0.5, 0, 0.5, …) nobody can read; no
        # axis title: the names say what a column is, and a title sat on tilted names
        xaxis={
            "tickmode": "array",
            "tickvals": list(range(n)),
            "ticktext": columns,
            "showgrid": False,
            "automargin": True,
        },
    )


def _column_label(trace: Trace, j: int) -> str:
    """Column ``j``'s tick: its check's kind and name where every round that has a ``j``-th check
    agrees on them, else its number."""
    seen = {(r.checks[j].kind, r.checks[j].name) for r in trace.rounds if j < len(r.checks)}
    if len(seen) != 1:
        return f"check {j + 1}"
    kind, name = seen.pop()
    return html.escape(clip_label(f"{kind}: {name}", 28))


def check_rows(trace: Trace) -> list[dict]:
    """Every check of every round, for a dataframe (plain text: the app shows it as data)."""
    return [
        {
            "round": r.index,
            "kind": c.kind,
            "name": c.name,
            "verdict": c.verdict,
            "tested": check_label(c)[1],
            "step": c.step,
            "expression": c.expression,
            "stated": c.stated,
            "computed": c.computed,
            # a rule named for a mismatch does not label a claim that matched
            "rule": None if c.verdict == "correct" and (c.rule or "").endswith("_mismatch") else c.rule,
            "message": c.message,
        }
        for r in trace.rounds
        for c in r.checks
    ]
