"""One-line facts about a trace (``python -m o3viz info`` and the app's library table)."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field

from o3viz.trace import SCHEMA_VERSION, Trace
from o3viz.verify.cut_short import graded_verdict


@dataclass
class TraceSummary:
    """Counts and headline facts of one trace."""

    model: str
    task: str
    source: str
    rounds: int
    prompt_tokens: int
    tokens: int | None  # generated tokens; None for an import that has none and whose source gives no count
    steps: int
    decision_points: int
    branches: int
    verdicts: dict[str, int] = field(default_factory=dict)
    final_verdict: str | None = None
    answer: str | None = None
    daa_mode: str = "off"
    has_attention: bool = False
    compression_ratio: float | None = None
    created_at: str | None = None
    schema_version: int = SCHEMA_VERSION
    file_bytes: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def summarize(trace: Trace, *, file_bytes: int | None = None) -> TraceSummary:
    """Headline facts of ``trace`` (over all rounds for counts, the final round for the answer)."""
    rounds = trace.rounds
    verdicts = Counter(c.verdict for r in rounds for c in r.checks)
    att = trace.attention
    task = trace.task.id or trace.task.question.strip().splitlines()[0][:80] if trace.task.question else ""
    return TraceSummary(
        model=trace.provenance.model_id or trace.provenance.source.get("source_model", ""),
        task=task,
        source=trace.task.source,
        rounds=len(rounds),
        prompt_tokens=sum(len(r.prompt_tokens) for r in rounds),
        tokens=_generated_tokens(trace),
        steps=sum(len(r.steps) for r in rounds),
        decision_points=sum(len(r.decision_points) for r in rounds),
        branches=sum(len(r.branches) for r in rounds),
        verdicts=dict(sorted(verdicts.items())),
        final_verdict=graded_verdict(trace.final) if rounds else None,  # cut short: ungraded
        answer=trace.final.answer if rounds else None,
        daa_mode=_daa_mode(att),
        has_attention=any(r.attention is not None for r in rounds),
        compression_ratio=trace.compression.ratio if trace.compression is not None else None,
        created_at=trace.provenance.created_at,
        schema_version=trace.schema_version,
        file_bytes=file_bytes,
    )


def _generated_tokens(trace: Trace) -> int | None:
    """Tokens generated over all rounds; for an import without tokens, the count its source gives
    (``source_info.generated_tokens``), else None: unknown, never 0."""
    n = sum(len(r.tokens) for r in trace.rounds)
    if n or not trace.info.get("imported"):
        return n
    given = (trace.info.get("source_info") or {}).get("generated_tokens")
    return given if isinstance(given, int) and not isinstance(given, bool) and given >= 0 else None


def _daa_mode(att) -> str:
    """off | observe | allocate | steer (a steered run records a ``SteerRecord``, not a ``DAARecord``)."""
    if att is not None and att.steer is not None:
        return "steer"
    return att.daa.mode if att is not None and att.daa is not None else "off"
