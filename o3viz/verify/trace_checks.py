"""Checks on an imported round: arithmetic claims (through ``o3viz.verify.claims.check``)
and the final answer against the reference. Claims become checks through
``o3viz.verify.policy.claims_to_checks``, shared with ``solve``.
"""

from __future__ import annotations

from o3viz.trace import Check, Round
from o3viz.verify.claims.check import check_claims
from o3viz.verify.policy import claims_to_checks


def claim_checks(rnd: Round) -> tuple[list[Check], str]:
    """Claim checks of a round's text by step, and a status (``ok``)."""
    spans = [(st.start, st.end) for st in rnd.steps]
    return claims_to_checks(check_claims(mask_digitless(rnd.text, spans), steps=spans)), "ok"


def mask_digitless(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with every step that holds no digit blanked to spaces (newlines kept, so offsets and
    lines stay put). Arithmetic claims need numbers; skipping prose makes long traces 1.5x faster."""
    parts, pos = [], 0
    for s, e in spans:
        chunk = text[s:e]
        if not any(c.isdigit() for c in chunk):
            parts += [text[pos:s], "".join("\n" if c == "\n" else " " for c in chunk)]
            pos = e
    parts.append(text[pos:])
    return "".join(parts)
