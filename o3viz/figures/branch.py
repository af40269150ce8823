"""Branch figures: the answers a step's resampled continuations reached, beside the answer the
trace itself reached (n shown on each side)."""

from __future__ import annotations

import plotly.graph_objects as go

from o3viz.figures._style import BAD_COLOR, GOOD_COLOR, VERDICT_COLORS, base_layout, clip_label, empty_figure


def _color(answer: str, reference: str | None) -> str:
    if reference is None or answer == "—":
        return VERDICT_COLORS["unverifiable"]
    return GOOD_COLOR if answer.strip() == reference.strip() else BAD_COLOR


def branch_answers_figure(
    step: str, kept: str | None, counts: dict[str, int], reference: str | None = None
) -> go.Figure:
    """Bars of the share of rollouts reaching each answer, "as written" (the trace's own answer,
    n = 1) against "resampled" (the K rollouts from the reply before ``step``). Green/red when the
    reference is known, grey otherwise.

    >>> fig = branch_answers_figure("0:2", "102", {"84": 2, "102": 1}, reference="84")
    >>> [t.name for t in fig.data]
    ['84', '102']
    """
    title = f"Which answers follow when step {step} is resampled?"
    n = sum(counts.values())
    if not n:
        return empty_figure(title, "No rollouts yet: resample the step to see where it leads.", height=220)
    answers = list(dict.fromkeys([*counts, kept or "—"]))
    rows = ["as written (n = 1)", f"resampled (n = {n})"]
    fig = go.Figure()
    for a in answers:
        shares = [1.0 if (kept or "—") == a else 0.0, counts.get(a, 0) / n]
        fig.add_bar(
            y=rows,
            x=shares,
            orientation="h",
            name=clip_label(a, 20),
            marker={"color": _color(a, reference), "line": {"color": "white", "width": 1.5}},
            text=[clip_label(a, 12) if s >= 0.12 else "" for s in shares],
            textposition="inside",
            hovertemplate=f"answer {clip_label(a, 60)}: %{{x:.0%}}<extra></extra>",
        )
    fig.update_xaxes(title="share of continuations", range=[0, 1], tickformat=".0%")
    return base_layout(
        fig,
        title,
        height=220,
        barmode="stack",
        showlegend=False,
        margin={"l": 130, "r": 20, "t": 50, "b": 40},
    )
