"""Agreement of the rule-based step types with human/LLM labels (the thought-anchors file's
``chunks_labeled[].function_tags``), aligned by chunk text: each labelled chunk is located in the
imported round's text and takes the type of the step that overlaps it most.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from o3viz.text.classify import TYPES


@dataclass
class TypeAgreement:
    """Accuracy over aligned chunks, per-class precision/recall, and the majority-class baseline."""

    n: int
    accuracy: float
    baseline: float  # accuracy of always predicting the most frequent label
    per_class: dict[str, dict[str, float]] = field(
        default_factory=dict
    )  # label -> precision, recall, support
    unaligned: int = 0  # labelled chunks not found in the imported text


def _best_step(steps, s: int, e: int):
    best, overlap = None, 0
    for st in steps:
        o = min(e, st.end) - max(s, st.start)
        if o > overlap:
            best, overlap = st, o
    return best


def aligned_pairs(path: str | Path) -> tuple[list[tuple[str, str]], int]:
    """``[(label, predicted type)]`` for every labelled chunk found, and the count not found."""
    from o3viz.importers import import_trace
    from o3viz.importers.formats import read_input

    pairs, missing = [], 0
    raw = read_input(Path(path))
    for n, rec in enumerate(raw.data):
        chunks = rec.get("chunks_labeled") or []
        trace = import_trace(raw, record=n, claims=False)
        text, steps, pos = trace.final.text, trace.final.steps, 0
        for ch in chunks:
            label = (ch.get("function_tags") or ["unknown"])[0]
            i = text.find(ch.get("chunk", "").strip(), pos)
            if label not in TYPES or i < 0 or not ch.get("chunk", "").strip():
                missing += label in TYPES
                continue
            pos = i + len(ch["chunk"].strip())
            st = _best_step(steps, i, pos)
            pairs.append((label, st.type if st is not None else "none"))
    return pairs, missing


def measure_type_agreement(path: str | Path) -> TypeAgreement:
    pairs, missing = aligned_pairs(path)
    n = len(pairs)
    labels = Counter(lab for lab, _ in pairs)
    preds = Counter(p for _, p in pairs)
    hits = Counter(lab for lab, p in pairs if lab == p)
    per_class = {
        t: {
            "precision": hits[t] / preds[t] if preds[t] else 0.0,
            "recall": hits[t] / labels[t] if labels[t] else 0.0,
            "support": labels[t],
        }
        for t in TYPES
    }
    return TypeAgreement(
        n=n,
        accuracy=sum(hits.values()) / n if n else 0.0,
        baseline=max(labels.values()) / n if n else 0.0,
        per_class=per_class,
        unaligned=missing,
    )
