"""The paired comparison of two datasets as one self-contained page (``o3viz.show(a, b)`` for two
datasets of the store): the same numbers as Compare's dataset mode and ``o3viz compare``: the
headline, accuracy of A and B with n, the difference with its paired 95% interval, McNemar's exact
p, the 2×2 table, the two figures and the questions that flipped. The figures travel as JSON
(``paired_figures``) and are drawn by a small script; the numbers and tables are plain HTML, so
they read even where the figures can't draw. Written ``shared``, the page borrows plotly.js from
another view on the notebook's page (``o3viz.view.page``).
"""

from __future__ import annotations

import html
import json
import math

import plotly.io as pio

from o3viz.analysis.paired import PairedResult
from o3viz.figures import paired_accuracy_figure, paired_measures_figure
from o3viz.view.page import NO_PLOTLY_TEXT, plotly_head, script_json

MAX_FLIPS = 100  # flipped questions listed (all are counted)
CSS = (
    "body{font-family:system-ui,sans-serif;font-size:13px;color:#111827;margin:8px}"
    "table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #e5e7eb;padding:3px 8px;text-align:right}"
    "td.q{text-align:left;max-width:640px}.head{font-weight:600;font-size:14px}.note{color:#6b7280}"
    ".warn{color:#92400e;background:#fffbeb;border-left:3px solid #d97706;padding:3px 8px}"
)


def _table(r: PairedResult) -> str:
    t = r.table
    return (
        "<table><tr><th></th><th>B right</th><th>B wrong</th></tr>"
        f"<tr><th>A right</th><td>{t.both:,}</td><td>{t.a_only:,}</td></tr>"
        f"<tr><th>A wrong</th><td>{t.b_only:,}</td><td>{t.neither:,}</td></tr></table>"
    )


def _answer(v) -> str:
    """An answer as shown: a missing one (None, NaN, "") is a dash, never ``nan``."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or str(v) == "":
        return "—"
    return str(v)


def _flips(r: PairedResult) -> str:
    flips = r.flips()
    rows = "".join(
        f"<tr><td>{'A' if f == 'A only' else 'B'}</td><td class='q'>{html.escape(str(q or n)[:200])}</td>"
        f"<td>{html.escape(_answer(aa))}</td><td>{html.escape(_answer(ab))}</td></tr>"
        for f, q, n, aa, ab in zip(
            flips["flip"][:MAX_FLIPS], flips["question_a"], flips["name_a"], flips["answer_a"], flips["answer_b"],
            strict=False,
        )
    )  # fmt: skip
    more = f"<p class='note'>… and {len(flips) - MAX_FLIPS:,} more</p>" if len(flips) > MAX_FLIPS else ""
    return (
        f"<p class='head'>Questions that flipped ({len(flips):,})</p><table><tr><th>right only in</th>"
        f"<th>question</th><th>A answer</th><th>B answer</th></tr>{rows}</table>{more}"
    )


# Draws the figures from their JSON; without plotly.js (a shared page whose carrier is not on the
# page) the first figure's place says why, and the numbers and tables above still read.
DRAW = f"""
(function () {{
  var F = JSON.parse(document.getElementById('o3-figs').textContent);
  F.forEach(function (f, k) {{
    var el = document.getElementById('o3-fig' + k);
    if (window.Plotly) Plotly.newPlot(el, f.data, f.layout, {{responsive: true, displaylogo: false}});
    else if (k === 0) el.replaceChildren(Object.assign(document.createElement('p'),
      {{className: 'note', textContent: {json.dumps(NO_PLOTLY_TEXT)}}}));
  }});
}})();
"""


def paired_figures(r: PairedResult) -> list[dict]:
    """The page's figures as the plain dicts plotly.js draws: accuracy of A and B, and the paired
    measures."""
    return [json.loads(pio.to_json(f)) for f in (paired_accuracy_figure(r), paired_measures_figure(r))]


def paired_page(r: PairedResult, *, shared: bool = False) -> str:
    """The paired comparison as one HTML page (plotly.js inlined, nothing from the network);
    ``shared``: without plotly.js, borrowing the notebook's copy (``o3viz.view.page``)."""
    a, b = html.escape(r.request.a.label), html.escape(r.request.b.label)
    parts = [f"<p class='head'>{html.escape(r.headline())}</p>", f"<p>A = {a} · B = {b}</p>"]
    # the same warnings as Compare and ``o3viz compare``: grades that split, a reversal, disagreement
    warnings = [*r.grade_lines(), *r.reversals(), *filter(None, [r.grade_disagreements()])]
    parts += [f"<p class='warn'>{html.escape(w)}</p>" for w in warnings]
    if r.too_small():
        parts.append(f"<p class='note'>{html.escape(r.too_small())}</p>")
    p = r.pairing
    parts.append(_table(r))
    parts.append(
        f"<p class='note'>{r.n:,} questions paired by {p.key_by}; unpaired {p.n_unpaired_a:,} in A, "
        f"{p.n_unpaired_b:,} in B</p>"
    )
    figs = paired_figures(r)
    parts += [f'<div id="o3-fig{k}"></div>' for k in range(len(figs))]
    parts.append(_flips(r))
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>o3viz · {a} vs {b}</title>'
        f"<style>{CSS}</style>{plotly_head(shared)}</head><body>{''.join(parts)}"
        f'<script type="application/json" id="o3-figs">{script_json(figs)}</script><script>{DRAW}</script>'
        "</body></html>"
    )
