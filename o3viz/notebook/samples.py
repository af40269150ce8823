"""``o3viz.show(sample_set)``: a sample set (a ``SampleSet``, or the name of a set in the store) as
one self-contained page: the question, the majority answer with its interval, the share reaching
the reference, the tree figure (``o3viz.figures.sample_tree``) and the top forks with both sides'
step. The figure travels as JSON and is drawn by the paired page's small script, so it shares
plotly.js with the other views of a notebook (``o3viz.notebook.page``).
"""

from __future__ import annotations

import html
import json

import plotly.io as pio

from o3viz.errors import UsageError
from o3viz.samples.sets import SampleSet, read_set
from o3viz.store.store import Store
from o3viz.view.page import plotly_head, script_json
from o3viz.view.paired import CSS, DRAW

__all__ = ["HEIGHT", "as_sample_set", "tree_data", "tree_page"]

HEIGHT = 760  # px of the notebook output


def as_sample_set(a, b=None, store: Store | None = None) -> SampleSet | None:
    """``a`` as a sample set: itself, or the set a name names (None: ``a`` is no set, or ``b`` is
    given, so ``o3viz.show`` pairs two datasets instead)."""
    if isinstance(a, SampleSet):
        return a
    if b is not None or not isinstance(a, str):
        return None
    try:
        return read_set(store or Store(), a)
    except UsageError:
        return None


def _pct(x) -> str:
    return "—" if x is None else f"{x:.0%}"


def tree_data(s: SampleSet) -> dict:
    """What the page shows of set ``s``: its headline, forks (text) and the figure (JSON)."""
    from o3viz.figures.sample_tree import sample_tree_figure
    from o3viz.samples.tree import build_tree
    from o3viz.samples.view_data import tree_view_data

    tree = build_tree(s.traces)
    data = tree_view_data(tree)
    m, root = data["majority"], tree.nodes[0]
    head = [f"{s.name}: n = {s.n}" + (" (a stopped draw: a smaller set)" if s.stopped else "")]
    if m.get("tied"):  # several answers share the top count: no majority to name
        each = f"{m['count']} sample{'s' if m['count'] != 1 else ''} each"
        head.append(f"no majority: a {len(m['tied']) + 1}-way tie at {each}")
    elif m["answer"] is not None:
        lo, hi = m["interval"]
        ok = {True: " (the reference)", False: " (not the reference)", None: ""}[m["correct"]]
        head.append(f"majority {m['answer']}{ok}: {_pct(m['share'])}, 95% {lo:.0%}–{hi:.0%}")
    if root.graded:
        lo, hi = root.interval
        head.append(
            f"{_pct(root.reference_share)} of {root.graded} reach the reference {tree.reference} (95% {lo:.0%}–{hi:.0%})"
        )
    forks = []
    for k, f in enumerate(data["forks"], 1):
        lo, hi = f["gap_interval"]
        sides = [f"{_pct(x['reference_share'])} of {x['samples']}: {x['text'][:140]}" for x in f["sides"]]
        forks.append(
            (
                f"Fork {k}: reaching the reference differs by {_pct(f['gap'])} (95% {lo:.0%} to {hi:.0%})",
                sides,
            )
        )
    fig = json.loads(pio.to_json(sample_tree_figure(tree, height=HEIGHT - 200)))
    return {"name": s.name, "question": s.question, "head": " · ".join(head), "forks": forks, "figs": [fig]}


def tree_page(data: dict, *, shared: bool = False) -> str:
    """The page of ``tree_data``; ``shared``: without plotly.js, borrowing the notebook's copy."""
    e = html.escape
    forks = (
        "".join(
            f"<p class='head'>{e(title)}</p><p>▲ {e(sides[0])}<br>▼ {e(sides[1])}</p>"
            for title, sides in data["forks"]
        )
        or "<p class='note'>No fork: no two branches of 2+ graded samples differ beyond chance.</p>"
    )
    body = (
        f"<p class='note'>{e(data['question'][:400])}</p><p class='head'>{e(data['head'])}</p>"
        f'<div id="o3-fig0"></div>{forks}'
    )
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>o3viz · {e(data["name"])}</title>'
        f"<style>{CSS}</style>{plotly_head(shared)}</head><body>{body}"
        f'<script type="application/json" id="o3-figs">{script_json(data["figs"])}</script><script>{DRAW}</script>'
        "</body></html>"
    )
