"""Agreement between importance methods on one round, or pooled over many: Kendall's W over the
steps every method scored, and each pair's Spearman ρ.

>>> from o3viz.trace.importance import ImportanceRecord
>>> a = ImportanceRecord("receiver", "receiver", [0.1, 0.2, 0.3, 0.4])
>>> b = ImportanceRecord("suppression", "suppression", [1.0, 2.0, 3.0, 5.0])
>>> agreement([a, b]).w
1.0
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from o3viz.analysis.importance.stats import kendall_w, ranks, spearman
from o3viz.trace.importance import ImportanceRecord

ORDER = ("receiver", "suppression", "resample", "published")


@dataclass
class Agreement:
    """How alike the methods rank the steps."""

    sources: list[str]  # the records compared, in ``ORDER``
    w: float | None  # Kendall's W over the steps every source scored (None: < 2 sources or < 3 steps)
    steps: int  # the steps every source scored
    pairs: dict[tuple[str, str], float | None] = field(default_factory=dict)  # Spearman ρ per pair

    def line(self) -> str:
        w = "—" if self.w is None else f"{self.w:.2f}"
        pairs = ", ".join(f"{a}~{b} {'—' if v is None else f'{v:+.2f}'}" for (a, b), v in self.pairs.items())
        return f"Kendall's W {w} over {self.steps} steps ({', '.join(self.sources)}); ρ: {pairs}"


def _columns(records: list[ImportanceRecord]) -> dict[str, np.ndarray]:
    recs = sorted(records, key=lambda r: ORDER.index(r.method) if r.method in ORDER else len(ORDER))
    return {r.source: np.array([np.nan if v is None else v for v in r.scores], float) for r in recs}


def agreement(records: list[ImportanceRecord]) -> Agreement:
    """The agreement of one round's records."""
    return agreement_of_columns([_columns(records)])


def agreement_of_columns(groups: list[dict[str, np.ndarray]]) -> Agreement:
    """Pooled agreement over several rounds (``{source: scores}`` each): every round's scores are
    first turned into within-round ranks scaled to 0..1, so the rounds' units and lengths do not mix."""
    names = [n for n in dict.fromkeys(k for g in groups for k in g)]
    pooled: dict[str, list[float]] = {n: [] for n in names}
    for g in groups:
        s = max((len(v) for v in g.values()), default=0)
        for n in names:
            col = np.full(s, np.nan)
            v = g.get(n)
            if v is not None:
                col[: len(v)] = v
                ok = np.isfinite(col)
                if ok.sum() > 1:
                    col[ok] = (ranks(col[ok]) - 1) / (ok.sum() - 1)
            pooled[n] += col.tolist()
    cols = {n: np.array(v) for n, v in pooled.items()}
    usable = [n for n in names if np.isfinite(cols[n]).sum() >= 3]
    every = np.logical_and.reduce([np.isfinite(cols[n]) for n in usable]) if usable else np.zeros(0, bool)
    pairs = {(a, b): spearman(cols[a], cols[b]) for i, a in enumerate(usable) for b in usable[i + 1 :]}
    w = kendall_w([cols[n] for n in usable]) if len(usable) > 1 else None
    return Agreement(usable, w, int(every.sum()), pairs)
