"""Token colouring and safe text: the generated text as escaped HTML spans coloured by probability
or entropy (decision points marked), claim highlighting, and markdown escaping for trace text.

Everything from a trace passes through ``html.escape`` here; the app renders only these strings.
"""

from __future__ import annotations

import html
import math
import re

from o3viz.figures._style import BAD_COLOR, GOOD_COLOR, TOKEN_RGB, tint
from o3viz.trace import Round

MAX_TOKENS_HTML = 3000  # tokens per rendered window: keeps the page payload small
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|$<>~&:])")


def escape_markdown(text: str) -> str:
    """Text that ``st.markdown`` shows literally: markdown, LaTeX ``$`` and HTML are all escaped.

    >>> escape_markdown("**bold** $x$")
    '\\\\*\\\\*bold\\\\*\\\\* \\\\$x\\\\$'
    """
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def _rgb(value: float, mode: str) -> str:
    """Background colour: low probability / high entropy is a deeper blue, confident is clear
    (blue, not red: red means a wrong claim)."""
    v = max(0.0, min(1.0, value))
    alpha = (1.0 - v) * 0.6 if mode == "probability" else v * 0.6
    return f"rgba({TOKEN_RGB[0]},{TOKEN_RGB[1]},{TOKEN_RGB[2]},{alpha:.2f})"


def tokens_html(
    rnd: Round,
    *,
    color_by: str = "probability",
    start: int = 0,
    count: int = MAX_TOKENS_HTML,
    max_entropy: float = 4.0,
) -> str:
    """The generated tokens ``[start, start+count)`` as escaped spans with a tooltip each."""
    dps = {p.token_index for p in rnd.decision_points}
    parts = []
    for i, tok in enumerate(rnd.tokens[start : start + count], start=start):
        prob = math.exp(tok.logprob) if tok.logprob is not None else None
        ent = tok.entropy
        value = prob if color_by == "probability" else (ent or 0.0) / max_entropy
        style = f"background:{_rgb(value, color_by)}" if value is not None else ""
        if i in dps:
            style += ";border-bottom:3px solid #f59e0b"
        alts = ", ".join(f"{a.text!r} {a.prob:.2f}" for a in tok.top[:5])
        tip = f"#{i} p={prob:.3f}" if prob is not None else f"#{i}"
        tip += (f" H={ent:.2f}" if ent is not None else "") + (f" | {alts}" if alts else "")
        parts.append(
            f'<span class="tok" style="{style}" title="{html.escape(tip, quote=True)}">'
            f"{html.escape(tok.text)}</span>"
        )
    return (
        '<div style="font-family:ui-monospace,monospace;font-size:13px;line-height:1.9;white-space:pre-wrap;'
        'word-break:break-word">' + "".join(parts) + "</div>"
    )


def claims_html(rnd: Round) -> str:
    """The round's text with each checked claim highlighted: green correct, red wrong (with the
    correct value), grey unverifiable. All text is escaped."""
    spans = sorted(
        (c for c in rnd.checks if c.span and 0 <= c.span[0] < c.span[1] <= len(rnd.text)),
        key=lambda c: c.span[0],
    )
    out, pos = [], 0
    colors = {"correct": tint(GOOD_COLOR, 0.18), "wrong": tint(BAD_COLOR, 0.2), "unverifiable": "#f1f5f9"}
    for c in spans:
        s, e = c.span
        if s < pos:
            continue  # overlapping claims: the first one wins
        out.append(html.escape(rnd.text[pos:s]))
        bg = colors.get(c.verdict, "#f1f5f9")
        tip = html.escape(f"{c.verdict}: {c.message or c.rule or ''}", quote=True)
        mark = f'<mark style="background:{bg};padding:1px 2px;border-radius:3px" title="{tip}">{html.escape(rnd.text[s:e])}</mark>'
        if c.verdict == "wrong" and c.computed is not None:
            mark += (
                f'<sup style="color:{BAD_COLOR};font-weight:600"> ✗ should be {html.escape(c.computed)}</sup>'
            )
        out.append(mark)
        pos = e
    out.append(html.escape(rnd.text[pos:]))
    return '<div style="white-space:pre-wrap;line-height:1.7;font-size:14px">' + "".join(out) + "</div>"
