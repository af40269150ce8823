"""When did it know, over a dataset: per dataset and per model, the distributions of the running
answer's figures (``o3viz.analysis.answer_figures``), each with its n, a 95% interval, and the
trace keys behind it (a bar's drill-down), beside the published figures named as theirs.

- ``early_correct``: the share of graded traces whose first correct point lies before the final
  10% of the round (``EARLY_BEFORE``), with its Wilson interval;
- ``convergence``: the mean and median position where the running answer last changed (a fraction
  of the round), over traces with an answer, with a bootstrap interval of the mean;
- ``flip_rate``: the share of graded traces whose answer flipped right→wrong at least once
  (Wilson), and the mean flips per trace, both counting only flips between answers read with
  confidence (``o3viz.analysis.running_answer.RULE``: marked, or a conclusion about what the
  question asks; never an intermediate result); ``uncertain_flips``: the share whose running
  answer also flipped on an uncertain reading, shown apart and counted in neither;
- ``saved``: the tokens stopping at the first correct point saves (mean, bootstrap interval; an
  import's tokens are estimated from its characters), over traces that were right somewhere, and
  as a share of the round (mean of 1 - first_correct_fraction).

``answer_rows`` gives the same figures from the store's index rows (``o3viz.analysis.answer_measures``
reads the columns), so the Dataset page draws them without loading a trace.

>>> from o3viz.analysis.answer_figures import AnswerFigures
>>> f = AnswerFigures(first_correct_step="step:0:1", first_correct_fraction=0.5, final_correct=True,
...                   convergence_fraction=0.5, convergence_step="step:0:1")
>>> g = answer_dataset_figures([("k1", "d", "m", f)])[0]
>>> g.early_correct.value, g.early_correct.n, g.early_correct.keys
(1.0, 1, ['k1'])
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from o3viz.analysis import answer_measures
from o3viz.analysis.answer_figures import AnswerFigures, trace_answer_figures
from o3viz.analysis.dataset import wilson
from o3viz.trace import Trace

__all__ = ["PUBLISHED", "AnswerGroup", "AnswerRows", "Figure", "answer_dataset_figures", "answer_rows"]

BOOTSTRAPS = 2000
# over this many values a mean's interval is the normal one (what the bootstrap tends to): a
# (BOOTSTRAPS, n) resample of 200k traces would be 400M draws
BOOTSTRAP_MAX_N = 2000
MAX_KEYS = 10_000  # keys kept behind one figure (a drill-down lists at most this many)
# The papers' figures, as theirs: (measure, value, where it was measured)
PUBLISHED = (
    ("convergence", "≈60% of the steps", "Answer Convergence (arXiv 2506.02536): math, reasoning models"),
    ("early_correct", "75% of samples", "DEER (arXiv 2504.15895): AIME24, a forced answer already right"),
    ("saved", "19–80% shorter", "DEER (arXiv 2504.15895): stopping at the early answer, same accuracy"),
    ("flip_rate", "≈15% flip right→wrong", '"fragile correctness" (as cited in issue 53)'),
)


@dataclass
class Figure:
    """One bar: a value with its n, its 95% interval and the traces behind it."""

    value: float | None = None
    n: int = 0
    low: float | None = None
    high: float | None = None
    keys: list[str] = field(default_factory=list)  # the traces it counts (for a proportion: the hits)
    median: float | None = None  # for a distribution


@dataclass
class AnswerGroup:
    """The figures of one (dataset, model)."""

    dataset: str
    model: str
    traces: int = 0
    early_correct: Figure = field(default_factory=Figure)
    convergence: Figure = field(default_factory=Figure)
    flip_rate: Figure = field(default_factory=Figure)
    mean_flips: float | None = None
    saved_tokens: Figure = field(default_factory=Figure)
    saved_share: Figure = field(default_factory=Figure)
    harmful: Figure = field(default_factory=Figure)  # share of graded traces right then wrong at the end
    uncertain_flips: Figure = field(default_factory=Figure)  # share with a flip on an uncertain reading


def _share(hits: list[str], n: int) -> Figure:
    if n <= 0:
        return Figure()
    lo, hi = wilson(len(hits), n)
    return Figure(len(hits) / n, n, lo, hi, hits[:MAX_KEYS])


def _mean(values: list[float], keys: list[str], seed: int = 0) -> Figure:
    if not values:
        return Figure()
    a = np.asarray(values, dtype=float)
    if len(a) > BOOTSTRAP_MAX_N:
        half = 1.96 * a.std(ddof=1) / np.sqrt(len(a))
        lo, hi = a.mean() - half, a.mean() + half
    else:
        rng = np.random.default_rng(seed)
        means = a[rng.integers(0, len(a), (BOOTSTRAPS, len(a)))].mean(axis=1)
        lo, hi = np.quantile(means, [0.025, 0.975])
    return Figure(float(a.mean()), len(a), float(lo), float(hi), keys[:MAX_KEYS], float(statistics.median(a)))


def _group(dataset: str, model: str, items: list[tuple[str, AnswerFigures]]) -> AnswerGroup:
    graded = [(k, f) for k, f in items if f.final_correct is not None or f.first_correct_step is not None]
    g = AnswerGroup(dataset, model, traces=len(items))
    g.early_correct = _share([k for k, f in graded if f.early_correct], len(graded))
    g.flip_rate = _share([k for k, f in graded if f.flips_right_to_wrong > 0], len(graded))
    g.harmful = _share([k for k, f in graded if f.overthinking == "harmful"], len(graded))
    g.uncertain_flips = _share([k for k, f in graded if f.flips_uncertain > 0], len(graded))
    g.mean_flips = statistics.fmean(f.flips for _, f in graded) if graded else None
    conv = [(k, f.convergence_fraction) for k, f in items if f.convergence_fraction is not None]
    g.convergence = _mean([v for _, v in conv], [k for k, _ in conv])
    right = [(k, f) for k, f in graded if f.first_correct_fraction is not None]
    tok = [(k, f.tokens_after_first_correct) for k, f in right if f.tokens_after_first_correct is not None]
    g.saved_tokens = _mean([float(v) for _, v in tok], [k for k, _ in tok])
    g.saved_share = _mean([1.0 - f.first_correct_fraction for _, f in right], [k for k, _ in right])  # type: ignore[operator]
    return g


def answer_dataset_figures(items: Iterable[tuple[str, str, str, Trace | AnswerFigures]]) -> list[AnswerGroup]:
    """One ``AnswerGroup`` per (dataset, model) of ``items`` (key, dataset, model, and the trace or
    its figures), in the order first seen."""
    groups: dict[tuple[str, str], list[tuple[str, AnswerFigures]]] = {}
    for key, dataset, model, x in items:
        f = x if isinstance(x, AnswerFigures) else trace_answer_figures(x)
        groups.setdefault((dataset, model), []).append((key, f))
    return [_group(d, m, v) for (d, m), v in groups.items()]


@dataclass
class AnswerRows:
    """The Dataset view's bars from index rows: per measure (``answer_measures.MEASURES``) one row
    per (dataset, model), each a dict ``group`` ("dataset · model"), ``dataset``, ``model``,
    ``value``, ``lo``, ``hi`` (95% interval), ``n``, ``hits`` (a share's numerator, else None),
    ``median`` (a mean's, else None) and ``sel`` (the JSON selection of the traces it stands for,
    which ``o3viz.analysis.dataset.select`` reads) — the rows ``answer_dataset_figure`` draws."""

    bars: dict[str, list[dict]]
    traces: int = 0
    not_indexed: int = 0  # traces with steps whose row predates the running-answer columns
    ungraded: int = 0  # traces with figures but no graded answer (no reference, or none stated)


def _bar(part: pd.DataFrame, measure: str) -> Figure:
    n, hits = answer_measures.counted(part, measure)
    if hits is not None:
        k, total = int((n & hits).sum()), int(n.sum())
        return Figure() if total == 0 else Figure(k / total, total, *wilson(k, total))
    return _mean(answer_measures.values(part, measure).tolist(), [])


def answer_rows(df: pd.DataFrame) -> AnswerRows:
    """The running-answer bars of ``df`` (index rows with ``dataset``, ``model`` and
    ``answer_measures.INDEX_COLUMNS``), per (dataset, model) in the order first seen: the values,
    n and intervals ``answer_dataset_figures`` gives for the same traces."""
    losses = pd.to_numeric(df["answer_losses"], errors="coerce") if len(df) else pd.Series(dtype=float)
    flips = pd.to_numeric(df["answer_flips"], errors="coerce") if len(df) else pd.Series(dtype=float)
    steps = pd.to_numeric(df["steps"], errors="coerce").fillna(0) if "steps" in df.columns else 1
    out = AnswerRows(
        bars={m: [] for m in answer_measures.MEASURES},
        traces=len(df),
        not_indexed=int((losses.isna() & (steps > 0)).sum()),
        ungraded=int((losses.notna() & flips.isna()).sum()),
    )
    if df.empty:
        return out
    for (dataset, model), part in df.groupby(["dataset", "model"], sort=False, dropna=False):
        for measure in answer_measures.MEASURES:
            f = _bar(part, measure)
            if f.value is None:
                continue
            share = measure in answer_measures.SHARES
            out.bars[measure].append(
                {
                    # the model's name without its organisation: the bar's label is short
                    "group": f"{dataset or '—'} · {str(model).rsplit('/', 1)[-1] or '—'}",
                    "dataset": dataset,
                    "model": model,
                    "value": f.value,
                    "lo": f.low,
                    "hi": f.high,
                    "n": f.n,
                    "hits": int(answer_measures.listed(part, measure).sum()) if share else None,
                    "median": f.median,
                    "sel": json.dumps(
                        {"dataset": dataset, "model": model, "measure": measure}, sort_keys=True
                    ),
                }
            )
    return out
