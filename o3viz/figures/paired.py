"""Figures of the paired comparison (``o3viz.analysis.paired.PairedResult``): which of A and B is
more often right and by how much (``paired_accuracy_figure``), and what changed in the reasoning
(``paired_measures_figure``: every measure's mean paired difference B − A with its 95% interval).
A and B keep Compare's two colours; every measure names its n in its label, and a thin one (fewer
than ``MIN_N`` pairs, or a count or share resting on fewer than ``MIN_EVENTS`` events) is drawn
hollow and faded with "thin: n = 4" in its label.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from o3viz.analysis.dataset import wilson
from o3viz.analysis.paired_measures import MIN_EVENTS, MIN_N, THIN_RULE
from o3viz.figures._style import A_COLOR, B_COLOR, base_layout, empty_figure

DIFF_COLOR = "#111827"
THIN_COLOR = "#9ca3af"  # a thin measure: faded and hollow
COUNTS = ("steps", "backtracks", "self_checks", "tokens", "labelled_wrong")  # relative change


def paired_accuracy_figure(r) -> go.Figure:
    """Accuracy of A and of B (Wilson 95%) and B − A (paired 95%), in percent, on one axis."""
    title = f"Which is more often right? (n = {r.graded:,} questions graded on both sides)"
    if r.diff is None:
        return empty_figure(title, r.too_small() or "No question is graded on both sides.")
    t, n = r.table, r.graded
    rows = [
        ("A", t.both + t.a_only, A_COLOR, r.request.a.label),
        ("B", t.both + t.b_only, B_COLOR, r.request.b.label),
    ]
    fig = go.Figure()
    symbol = "circle-open" if n < MIN_N else "circle"  # thin: hollow
    for name, k, color, label in rows:
        lo, hi = wilson(k, n)
        fig.add_scatter(
            x=[100 * k / n], y=[f"accuracy {name}"], mode="markers", name=label,
            marker={"color": color, "size": 12, "symbol": symbol},
            error_x={"type": "data", "symmetric": False, "array": [100 * (hi - k / n)],
                     "arrayminus": [100 * (k / n - lo)], "color": color, "thickness": 2},
            hovertemplate=f"{label}: %{{x:.1f}}% ({k:,} of {n:,}; 95% CI {100 * lo:.1f}–{100 * hi:.1f}%)<extra></extra>",
        )  # fmt: skip
    d, lo, hi = r.diff
    fig.add_scatter(
        x=[100 * d], y=["B − A"], mode="markers", name="B − A (paired)",
        marker={"color": DIFF_COLOR, "size": 12, "symbol": "diamond"},
        error_x={"type": "data", "symmetric": False, "array": [100 * (hi - d)], "arrayminus": [100 * (d - lo)],
                 "color": DIFF_COLOR, "thickness": 2},
        hovertemplate=f"B − A: %{{x:+.1f}} points (95% CI {100 * lo:+.1f} to {100 * hi:+.1f}; "
        f"McNemar exact p = {r.p_mcnemar:.2g})<extra></extra>",
    )  # fmt: skip
    fig.add_vline(x=0, line={"color": "#9ca3af", "width": 1})
    base_layout(fig, title, height=230, showlegend=False, margin={"l": 90, "r": 20, "t": 40, "b": 40})
    fig.update_xaxes(title_text="percent of questions (B − A in points)", ticksuffix="%")
    fig.update_yaxes(categoryorder="array", categoryarray=["B − A", "accuracy B", "accuracy A"])
    return fig


def measure_label(what: str, n: int, thin: str) -> str:
    """A measure's axis label with its n, or its thin note.

    >>> measure_label("steps", 1319, ""), measure_label("self-checks", 20, "thin: 1 event")
    ('steps (n = 1,319)', 'self-checks (thin: 1 event)')
    """
    return f"{what} ({thin or f'n = {n:,}'})"


def _panel(fig: go.Figure, m, col: int, relative: bool) -> None:
    """One panel's measures: solid marks for those that rest on enough, hollow faded ones for thin."""
    for thin, part in ((False, m[m["thin"] == ""]), (True, m[m["thin"] != ""])):
        if part.empty:
            continue
        scale = np.where(relative, 100 / part["mean_a"].where(part["mean_a"] != 0), 100.0)
        x, lo, hi = (part[c].astype(float) * scale for c in ("diff", "lo", "hi"))
        unit = "% of A" if relative else " points"
        color = THIN_COLOR if thin else DIFF_COLOR
        events = part["events"].map(lambda e: "" if np.isnan(e) else f"; {e:,.0f} events")
        fig.add_scatter(
            x=x, y=[measure_label(w, n, t) for w, n, t in zip(part["what"], part["n"], part["thin"], strict=True)],
            mode="markers", row=1, col=col, showlegend=False, name="thin" if thin else "measures",
            marker={"color": color, "size": 9, "symbol": "circle-open" if thin else "circle"},
            error_x={"type": "data", "symmetric": False, "array": (hi - x).fillna(0), "arrayminus": (x - lo).fillna(0),
                     "color": color, "thickness": 1.5},
            customdata=np.stack([part["n"], part["mean_a"], part["mean_b"], events], axis=1),
            hovertemplate=f"%{{y}}: %{{x:+.1f}}{unit} (A %{{customdata[1]:.3g}}, B %{{customdata[2]:.3g}}; "
            "n = %{customdata[0]} pairs%{customdata[3]})"
            + (f"<br>{THIN_RULE}" if thin else "") + "<extra></extra>",
        )  # fmt: skip
    fig.add_vline(x=0, line={"color": "#9ca3af", "width": 1}, row=1, col=col)


def paired_measures_figure(r) -> go.Figure:
    """Each measure's mean paired change B − A with its 95% interval: counts as a percent of A's
    mean (left), shares and positions in percentage points (right)."""
    title = f"What changed in the reasoning? (B − A per question, 95% CI; hollow = thin: n < {MIN_N} or < {MIN_EVENTS} events)"
    m = r.measures.dropna(subset=["lo", "hi"])
    if m.empty:
        return empty_figure(title, "Fewer than 2 paired questions have any measure on both sides.")
    # a count A never has (mean 0) has no relative change: it stays in the table, not the figure
    counts = m[m["measure"].isin(COUNTS) & (m["mean_a"] != 0)]
    rest = m[~m["measure"].isin(COUNTS)]
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.28,
                        subplot_titles=("counts: change in % of A's mean", "shares and positions: change in points"))  # fmt: skip
    if not counts.empty:
        _panel(fig, counts, 1, True)
    if not rest.empty:
        _panel(fig, rest, 2, False)
    base_layout(fig, title, height=max(260, 40 + 24 * max(len(counts), len(rest))))
    fig.update_layout(margin={"l": 150, "r": 20, "t": 70, "b": 30})
    fig.update_yaxes(autorange="reversed", automargin=True)
    return fig
