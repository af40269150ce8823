"""Published step-importance labels as a named importance source: the Thought Anchors data
(``chunks_labeled[]`` with ``function_tags``, ``depends_on``, ``counterfactual_importance_*`` and
``resampling_importance_*`` per chunk).

``steps_from_chunks`` makes the labelled chunks the round's steps (so every measure is compared
chunk for chunk); ``published_importance`` reads the labels onto the round's steps, chunk ``c``
onto the step that overlaps it most (several chunks on one step: their mean).
"""

from __future__ import annotations

from typing import Any

from o3viz.errors import UsageError
from o3viz.text.classify import TYPES
from o3viz.trace import Round, Step
from o3viz.trace.importance import ImportanceRecord

SERIES = (
    "counterfactual_importance_accuracy",
    "counterfactual_importance_kl",
    "resampling_importance_accuracy",
    "resampling_importance_kl",
    "accuracy",
)
SOURCE = "thought-anchors"


def locate_chunks(text: str, chunks: list[dict]) -> list[tuple[int, int] | None]:
    """Each chunk's [start, end) in ``text``, searched in order (None where not found)."""
    out: list[tuple[int, int] | None] = []
    pos = 0
    for ch in chunks:
        needle = str(ch.get("chunk", "")).strip()
        i = text.find(needle, pos) if needle else -1
        if i < 0:
            out.append(None)
            continue
        out.append((i, i + len(needle)))
        pos = i + len(needle)
    return out


def steps_from_chunks(rnd: Round, chunks: list[dict]) -> None:
    """Replace ``rnd.steps`` with the labelled chunks found in its text (types from
    ``function_tags``); token ranges are recomputed from the round's tokens where it has them."""
    from o3viz.text.spans import token_ranges

    spans = [s for s in locate_chunks(rnd.text, chunks) if s is not None]
    found = [c for c, s in zip(chunks, locate_chunks(rnd.text, chunks), strict=True) if s is not None]
    if not spans:
        raise UsageError("none of the labelled chunks occurs in the trace's text")
    offsets = [(t.start, t.end) for t in rnd.tokens]
    ranges = token_ranges(spans, offsets) if offsets else [(0, 0)] * len(spans)
    rnd.steps = [
        Step(i, rnd.text[s:e], s, e, a, b, type=_tag(c))
        for i, ((s, e), (a, b), c) in enumerate(zip(spans, ranges, found, strict=True))
    ]
    rnd.importance = []  # older records were aligned to the old steps


def _tag(chunk: dict) -> str | None:
    tags = chunk.get("function_tags") or []
    return tags[0] if tags and tags[0] in TYPES else None


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and x == x else None


def published_importance(rnd: Round, chunks: list[dict], *, source: str = SOURCE) -> ImportanceRecord:
    """The labels as one record on ``rnd``'s steps (scores: ``counterfactual_importance_kl``)."""
    spans = locate_chunks(rnd.text, chunks)
    step_of = [_best_step(rnd.steps, s) if s is not None else None for s in spans]
    series: dict[str, list[float | None]] = {}
    for name in SERIES:
        acc: dict[int, list[float]] = {}
        for ch, st in zip(chunks, step_of, strict=True):
            v = _num(ch.get(name))
            if st is not None and v is not None:
                acc.setdefault(st, []).append(v)
        series[name] = [sum(acc[i]) / len(acc[i]) if i in acc else None for i in range(len(rnd.steps))]
    edges = _edges(chunks, step_of)
    return ImportanceRecord(
        method="published",
        source=source,
        scores=series["counterfactual_importance_kl"],
        series=series,
        depends_on=edges,
        params={
            "score": "counterfactual_importance_kl",
            "chunks": len(chunks),
            "aligned": sum(s is not None for s in step_of),
        },
        model={"model_id": "published labels (Thought Anchors, arXiv 2506.19143)", "proxy": False},
        info={"depends_on": "the labels' own depends_on lists, weight 1"},
    )


def _best_step(steps: list[Step], span: tuple[int, int]) -> int | None:
    best, overlap = None, 0
    for st in steps:
        o = min(span[1], st.end) - max(span[0], st.start)
        if o > overlap:
            best, overlap = st.index, o
    return best


def _edges(chunks: list[dict], step_of: list[int | None]) -> list[tuple[int, int, float]]:
    by_idx = {int(c.get("chunk_idx", i)): step_of[i] for i, c in enumerate(chunks)}
    edges = set()
    for ch, st in zip(chunks, step_of, strict=True):
        for dep in ch.get("depends_on") or []:
            try:
                ante = by_idx.get(int(dep))
            except (TypeError, ValueError):
                continue
            if st is not None and ante is not None and ante < st:
                edges.add((st, ante, 1.0))
    return sorted(edges)
