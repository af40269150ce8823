"""Figures of the paired comparison (``o3viz.analysis.paired.PairedResult``): which of A and B is
more often right and by how much (``paired_accuracy_figure``), and what changed in the reasoning
(``paired_measures_figure``: every measure's mean paired difference B − A with its 95% interval).
A and B keep Compare's two colours; every mark names its n on hover.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from o3viz.analysis.dataset import wilson
from o3viz.figures._style import A_COLOR, B_COLOR, base_layout, empty_figure

DIFF_COLOR = "#111827"
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
    for name, k, color, label in rows:
        lo, hi = wilson(k, n)
        fig.add_scatter(
            x=[100 * k / n], y=[f"accuracy {name}"], mode="markers", name=label,
            marker={"color": color, "size": 12},
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


def _panel(fig: go.Figure, m, col: int, relative: bool) -> None:
    scale = np.where(relative, 100 / m["mean_a"].where(m["mean_a"] != 0), 100.0)
    x, lo, hi = (m[c].astype(float) * scale for c in ("diff", "lo", "hi"))
    unit = "% of A" if relative else " points"
    fig.add_scatter(
        x=x, y=m["what"], mode="markers", row=1, col=col, showlegend=False,
        marker={"color": DIFF_COLOR, "size": 9},
        error_x={"type": "data", "symmetric": False, "array": (hi - x).fillna(0), "arrayminus": (x - lo).fillna(0),
                 "color": DIFF_COLOR, "thickness": 1.5},
        customdata=np.stack([m["n"], m["mean_a"], m["mean_b"]], axis=1),
        hovertemplate=f"%{{y}}: %{{x:+.1f}}{unit} (A %{{customdata[1]:.3g}}, B %{{customdata[2]:.3g}}; "
        "n = %{customdata[0]} pairs)<extra></extra>",
    )  # fmt: skip
    fig.add_vline(x=0, line={"color": "#9ca3af", "width": 1}, row=1, col=col)


def paired_measures_figure(r) -> go.Figure:
    """Each measure's mean paired change B − A with its 95% interval: counts as a percent of A's
    mean (left), shares and positions in percentage points (right)."""
    title = f"What changed in the reasoning? (B − A per question, 95% CI; n = {r.n:,} pairs)"
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
