"""Importance of aligned steps in a comparison: for each row of ``align_steps`` (A's step beside
B's), each side's importance (ranked within its own trace, 0..1) and B − A."""

from __future__ import annotations

from o3viz.trace import Round
from o3viz.trace.importance import pick_record, step_view


def aligned_importance(
    rows, a: Round, b: Round
) -> list[tuple[float | None, float | None, float | None]] | None:
    """``(A, B, B − A)`` per aligned row, or None when neither round has importance records.
    ``rows`` are ``AlignedStep``s (``a_index``/``b_index`` are step indices or None)."""
    if not a.importance and not b.importance:
        return None
    ia, _ = step_view(a.importance, len(a.steps))
    ib, _ = step_view(b.importance, len(b.steps))
    out = []
    for r in rows:
        va = ia[r.a_index] if r.a_index is not None and r.a_index < len(ia) else None
        vb = ib[r.b_index] if r.b_index is not None and r.b_index < len(ib) else None
        out.append((va, vb, None if va is None or vb is None else round(vb - va, 4)))
    return out


def importance_source(rnd: Round) -> str:
    """What the Compare column shows for a round, e.g. ``suppression`` or ``—``."""
    rec = pick_record(rnd.importance)
    return rec.source if rec is not None else "—"
