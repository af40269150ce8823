"""Comparing two traces: headline metrics with deltas, the steps aligned as a diff, per-step curves
(token entropy, confidence, attention on the prompt), a difference heatmap where the shapes allow,
and the differences in verdicts and compression. Works for traces of any lengths, models and
sources; what cannot be compared is reported with a reason, never faked. The steps are aligned by
``o3viz.analysis.align`` (exactly when short, by episode first when long).

>>> from o3viz.testing.synthetic import make_trace
>>> c = compare_traces(make_trace(8, seed=1), make_trace(12, seed=2))
>>> c.metrics[0].name, c.metrics[0].a, c.metrics[0].b
('steps (all rounds)', 8, 12)
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from o3viz.analysis.align import (  # noqa: F401 (re-exported)
    FORK,
    SHARED,
    AlignedStep,
    Alignment,
    align_at_fork,
    align_rounds,
    align_steps,
    branch_step_offset,
    fork_step,
)
from o3viz.analysis.summary import summarize
from o3viz.trace import Round, Trace

METRIC_NAMES: dict[str, str] = {  # key -> label; counts say whether they are totals or the final round's
    "steps_all": "steps (all rounds)",
    "steps_final": "steps (final round)",
    "rounds": "rounds",
    "tokens_all": "generated tokens (all rounds)",
    "decision_points_all": "decision points (all rounds)",
    "checks_passed_final": "checks passed (final round)",
    "checks_final": "checks (final round)",
    "token_probability_final": "mean token probability (final round)",
    "entropy_final": "mean entropy, nats (final round)",
    "branches_all": "branches (all rounds)",
    "final_verdict": "final verdict",
    "answer": "answer",
    "model": "model",
    "source": "source",
    "daa_mode": "DAA mode",
    "compression_ratio": "compression ratio",
}
PROGRESS_BINS = 40  # steps of two runs are resampled onto this many bins of relative progress
MAX_DIFF_COLS = 200


@dataclass
class MetricRow:
    key: str  # stable identifier that code looks a metric up by ("steps_all"); ``name`` is for people
    name: str
    a: float | int | str | None
    b: float | int | str | None
    delta: float | None = None  # b - a where both are numbers


@dataclass
class DiffMatrix:
    """B − A over (progress bins × shared columns), or why there is none."""

    values: np.ndarray | None  # (PROGRESS_BINS, K) float32
    columns: list[str] = field(default_factory=list)
    what: str = ""
    reason: str = ""


@dataclass
class Comparison:
    a_name: str
    b_name: str
    metrics: list[MetricRow]
    steps: list[AlignedStep]
    similarity: float  # difflib's ratio of the aligned step sequences, 0..1
    curves: dict[str, tuple[list[float], list[float]]]  # per-step series of A and of B
    diff: DiffMatrix
    verdicts: dict[str, tuple[int, int]]
    checks: list[dict]  # checks whose verdict differs between the final rounds (matched by name)
    compression: list[MetricRow]
    alignment: Alignment | None = None  # how the steps were aligned, and what it cost
    offsets: tuple[int, int] = (0, 0)  # added to A's / B's own step numbers: a branch numbered as its parent

    def shown(self, row: AlignedStep) -> tuple[int | None, int | None]:
        """A row's step numbers as shown: a branch's numbered as in its parent, so one position
        reads the same on both sides; the shared prefix and the fork row take the parent's number
        on the branch's side too (it continued from them)."""
        a = None if row.a_index is None else row.a_index + self.offsets[0]
        b = None if row.b_index is None else row.b_index + self.offsets[1]
        if row.tag in (SHARED, FORK):
            a, b = (a, a) if a is not None else (b, b)
        return a, b

    def table_rows(self) -> list[dict]:
        """The aligned steps as table rows, numbered as shown, "—" where a side has no step."""
        out = []
        for r in self.steps:
            a, b = self.shown(r)
            tag = {SHARED: "shared prefix", FORK: "fork (edited)"}.get(r.tag, r.tag)
            out.append(
                {"": tag, "A step": "—" if a is None else str(a), "A": r.a_text or "—",
                 "B step": "—" if b is None else str(b), "B": r.b_text or "—"}
            )  # fmt: skip
        return out

    @property
    def first_divergence(self) -> AlignedStep | None:
        """The first aligned row of the final rounds where A and B differ, or None."""
        return next((s for s in self.steps if s.tag not in ("equal", SHARED, FORK)), None)

    @property
    def fork(self) -> AlignedStep | None:
        """The fork row (the edited step) when B is A's branch, else None."""
        return next((s for s in self.steps if s.tag == FORK), None)

    def metric(self, key: str) -> MetricRow | None:
        """The metric with this ``key`` (one of ``METRIC_NAMES``), or None."""
        return next((m for m in self.metrics if m.key == key), None)

    def summary(self) -> list[str]:
        """What changed, in a few short phrases: answer, verdict, steps, first divergence.

        >>> from o3viz.testing.synthetic import make_trace
        >>> t = make_trace(6, seed=1)
        >>> compare_traces(t, t).summary()[-1]
        'no divergence: the final rounds have the same steps'
        """
        out = []
        for key, label in (("answer", "answer"), ("final_verdict", "verdict")):
            m = self.metric(key)
            a, b = _short(m.a), _short(m.b)
            out.append(f"{label} {a} → {b}" if a != b else f"same {label} ({a})")
        m = self.metric("steps_all")
        out.append(f"steps {m.a} → {m.b} (all rounds)" if m.a != m.b else f"same number of steps ({m.a})")
        d = self.first_divergence
        shared = sum(r.tag == SHARED for r in self.steps)
        if shared or self.fork is not None:
            out.append(f"forked at step {shared}: the {shared} steps before it are shared")
        if d is None:
            out.append("no divergence: the final rounds have the same steps")
        else:
            a, b = self.shown(d)
            if a is not None and b is not None:
                out.append(f"first divergence: A step {a} vs B step {b} (final rounds)")
            else:
                side, idx = ("A", a) if a is not None else ("B", b)
                out.append(f"first divergence: only {side} has step {idx} (final rounds)")
        return out


def _mean(xs) -> float | None:
    xs = [x for x in xs if x is not None]
    return float(sum(xs) / len(xs)) if xs else None


def _metric(key: str, a, b, name: str | None = None) -> MetricRow:
    num = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))
    return MetricRow(key, name or METRIC_NAMES.get(key, key), a, b, (b - a) if num else None)


def _token_stats(t: Trace) -> tuple[float | None, float | None]:
    toks = t.tokens
    return (_mean(math.exp(x.logprob) for x in toks if x.logprob is not None), _mean(x.entropy for x in toks))


def _metrics(a: Trace, b: Trace) -> list[MetricRow]:
    sa, sb = summarize(a), summarize(b)
    (pa, ea), (pb, eb) = _token_stats(a), _token_stats(b)
    passed = lambda t: sum(c.verdict in ("pass", "correct") for c in t.final.checks)  # noqa: E731
    return [
        _metric("steps_all", sa.steps, sb.steps),
        _metric("steps_final", len(a.steps), len(b.steps)),
        _metric("rounds", sa.rounds, sb.rounds),
        _metric("tokens_all", sa.tokens, sb.tokens),
        _metric("decision_points_all", sa.decision_points, sb.decision_points),
        _metric("checks_passed_final", passed(a), passed(b)),
        _metric("checks_final", len(a.final.checks), len(b.final.checks)),
        _metric("token_probability_final", pa, pb),
        _metric("entropy_final", ea, eb),
        _metric("branches_all", sa.branches, sb.branches),
        _metric("final_verdict", sa.final_verdict, sb.final_verdict),
        _metric("answer", sa.answer, sb.answer),
        _metric("model", sa.model, sb.model),
        _metric("source", sa.source, sb.source),
        _metric("daa_mode", sa.daa_mode, sb.daa_mode),
        _metric("compression_ratio", sa.compression_ratio, sb.compression_ratio),
    ]


def _short(v, n: int = 40) -> str:
    if v is None:
        return "—"
    text = " ".join(f"{v:.2f}".split() if isinstance(v, float) else str(v).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def step_series(rnd: Round) -> dict[str, list[float]]:
    """Per-step series: mean token entropy, mean token probability, share of attention on the prompt."""
    out: dict[str, list[float]] = {"entropy": [], "confidence": [], "attention on prompt": []}
    for s in rnd.steps:
        toks = rnd.tokens[s.token_start : s.token_end]
        out["entropy"].append(_mean(t.entropy for t in toks) or 0.0)
        out["confidence"].append(_mean(math.exp(t.logprob) for t in toks if t.logprob is not None) or 0.0)
    att = rnd.attention
    if att is not None and att.step_alloc is not None:
        seg_cols = [k for k, lab in enumerate(att.alloc_labels) if lab.startswith("seg ")]
        out["attention on prompt"] = att.step_alloc[:, seg_cols].astype(np.float32).sum(axis=1).tolist()
    return out


def _progress_bins(m: np.ndarray, bins: int = PROGRESS_BINS) -> np.ndarray:
    """Resample rows onto ``bins`` bins of relative position (0..1) by averaging."""
    idx = np.minimum((np.arange(m.shape[0]) * bins) // max(m.shape[0], 1), bins - 1)
    out = np.zeros((bins, m.shape[1]), dtype=np.float32)
    np.add.at(out, idx, m)
    counts = np.bincount(idx, minlength=bins).astype(np.float32)[:, None]
    filled = counts[:, 0] > 0
    out[filled] /= counts[filled]
    if not filled.all():  # short runs: carry the last filled bin forward
        for i in range(1, bins):
            if not filled[i]:
                out[i] = out[i - 1]
    return out


def attention_diff(a: Round, b: Round) -> DiffMatrix:
    """B − A of attention on the prompt over relative progress, when both prompts line up."""
    xa, xb = a.attention, b.attention
    if xa is None or xb is None:
        return DiffMatrix(None, reason="one of the traces has no recorded attention")
    if [t.id for t in a.prompt_tokens] == [t.id for t in b.prompt_tokens] and a.prompt_tokens:
        P = xa.prompt_len

        def rows(rnd: Round) -> np.ndarray:
            per_step = [
                rnd.attention.mean[s.token_start : max(s.token_end, s.token_start + 1), :P]
                .astype(np.float32)
                .mean(axis=0)
                for s in rnd.steps
            ] or [np.zeros(P, np.float32)]
            return _progress_bins(np.stack(per_step))

        cols = [t.text for t in a.prompt_tokens]
        diff = rows(b) - rows(a)
        if diff.shape[1] > MAX_DIFF_COLS:
            starts = np.linspace(0, diff.shape[1], MAX_DIFF_COLS + 1).astype(int)[:-1]
            diff, cols = np.add.reduceat(diff, starts, axis=1), [f"{s}·{cols[s]}" for s in starts]
        return DiffMatrix(diff, cols, "attention on each prompt token (same prompt in both)")
    na = [lab for lab in xa.alloc_labels if lab.startswith("seg ")]
    nb = [lab for lab in xb.alloc_labels if lab.startswith("seg ")]
    if xa.step_alloc is not None and xb.step_alloc is not None and na and na == nb:
        ka, kb = len(na), len(nb)
        diff = _progress_bins(xb.step_alloc[:, :kb].astype(np.float32)) - _progress_bins(
            xa.step_alloc[:, :ka].astype(np.float32)
        )
        return DiffMatrix(diff, na, "share of each step's attention on each prompt segment")
    return DiffMatrix(None, reason="the prompts differ in tokens and in segments, so no cell lines up")


def _compression_rows(a: Trace, b: Trace) -> list[MetricRow]:
    def facts(t: Trace) -> dict:
        c = t.compression
        if c is None:
            return {"compression": "off"}
        kinds = Counter(e.kind for e in c.events)
        return {
            "compression": c.mode,
            "original tokens": c.original_tokens,
            "compressed tokens": c.compressed_tokens,
            "ratio": c.ratio,
            **{f"{k} events": kinds.get(k, 0) for k in ("compress", "expand", "release", "restore")},
        }

    fa, fb = facts(a), facts(b)
    return [_metric(k.replace(" ", "_"), fa.get(k), fb.get(k), k) for k in dict.fromkeys([*fa, *fb])]


def _check_diffs(a: Round, b: Round) -> list[dict]:
    va = {c.name: c for c in a.checks}
    vb = {c.name: c for c in b.checks}
    out = []
    for name in dict.fromkeys([*va, *vb]):
        ca, cb = va.get(name), vb.get(name)
        if (ca.verdict if ca else None) != (cb.verdict if cb else None):
            out.append(
                {
                    "check": name,
                    "A": ca.verdict if ca else "—",
                    "B": cb.verdict if cb else "—",
                    "A message": ca.message if ca else "",
                    "B message": cb.message if cb else "",
                }
            )
    return out


def _offsets(a: Trace, b: Trace) -> tuple[int, int]:
    """A branch compared with its parent is numbered as in the parent (``branch_step_offset``)."""
    if fork_step(a, b) is not None:
        return 0, branch_step_offset(b) or 0
    if fork_step(b, a) is not None:
        return branch_step_offset(a) or 0, 0
    return 0, 0


def _align(a: Trace, b: Trace) -> Alignment:
    """A branch against its parent is aligned at the fork (either side may be the branch)."""
    if (i := fork_step(a, b)) is not None:
        return align_at_fork(a.final, b.final, i, b.parent.edited)
    if (i := fork_step(b, a)) is not None:
        al = align_at_fork(b.final, a.final, i, a.parent.edited)
        flip = {"insert": "delete", "delete": "insert"}
        al.rows = [
            AlignedStep(flip.get(r.tag, r.tag), r.b_index, r.b_text, r.a_index, r.a_text) for r in al.rows
        ]
        return al
    return align_rounds(a.final, b.final)


def compare_traces(a: Trace, b: Trace, *, a_name: str = "A", b_name: str = "B") -> Comparison:
    """Everything the Compare page shows, computed from the two traces' final rounds."""
    al = _align(a, b)
    sa, sb = step_series(a.final), step_series(b.final)
    curves = {k: (sa[k], sb[k]) for k in sa if sa[k] or sb[k]}
    va = Counter(c.verdict for r in a.rounds for c in r.checks)
    vb = Counter(c.verdict for r in b.rounds for c in r.checks)
    verdicts = {v: (va.get(v, 0), vb.get(v, 0)) for v in sorted(set(va) | set(vb))}
    return Comparison(
        a_name,
        b_name,
        _metrics(a, b),
        al.rows,
        al.similarity,
        curves,
        attention_diff(a.final, b.final),
        verdicts,
        _check_diffs(a.final, b.final),
        _compression_rows(a, b),
        al,
        _offsets(a, b),
    )


def shown_delta(a: float | None, b: float | None, digits: int = 2) -> float | None:
    """B − A from the values as shown (rounded to ``digits``), so "0.75 → 0.88 · +0.13" adds up.

    >>> shown_delta(0.7449, 0.8849)
    0.14
    >>> shown_delta(0.751, 0.879)  # shown as 0.75 → 0.88, not +0.128 rounded to 0.13 by chance
    0.13
    """
    if (
        not isinstance(a, int | float)
        or not isinstance(b, int | float)
        or isinstance(a, bool)
        or isinstance(b, bool)
    ):
        return None
    return round(round(b, digits) - round(a, digits), digits)


def same_question(a, b) -> bool:
    """Whether two traces answer one question (whitespace and case aside)."""
    norm = lambda t: " ".join(t.task.question.split()).casefold()  # noqa: E731
    return norm(a) == norm(b)
