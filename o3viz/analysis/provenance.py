"""Where a trace's numbers come from, as the sentences every page shows: a trace's label in a
picker (names are labels, the content key is the identity), its two gradings (the source's and
o3viz's own check) and whether they disagree, a proxy reader's attention, a run cut at its token
limit. One function makes each sentence, so every page says it in the same words.

>>> disagreement_line(0, 1)
"The source graded this wrong; o3viz's answer check says correct. The two gradings disagree."
>>> disagreement_line(1, 1) is None
True
>>> trace_label({"key": "ab12cd34ef56ab78", "name": "thinking.txt", "source": "upload", "steps": 433})
'thinking.txt · upload · 433 steps · ab12cd34'
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from o3viz.trace import Round, Trace
from o3viz.verify.cut_short import LIMIT_REASONS, cut_short, limit_line, limit_tokens  # noqa: F401

GRADE_WORD = {1: "correct", 0: "wrong", None: "ungraded"}
GRADE_NAMES = {"source": "the source's grade", "check": "o3viz's answer check"}


def trace_label(row: dict) -> str:
    """A trace's label in a picker: its name, source, steps, date added and the head of its key, so
    two traces with one name (two ``thinking.txt`` uploads) read differently and never collide."""
    parts = [str(row.get("name") or row["key"]), str(row.get("source") or "")]
    if row.get("steps") is not None:
        parts.append(f"{row['steps']} step{'s' if row['steps'] != 1 else ''}")
    if row.get("added_at"):
        parts.append(time.strftime("%Y-%m-%d %H:%M", time.localtime(float(row["added_at"]))))
    parts.append(str(row["key"])[:8])
    return " · ".join(p for p in parts if p)


def _as_int(value) -> int | None:
    return None if value is None else int(bool(value))


def disagreement_line(source, check) -> str | None:
    """The one sentence every page shows where the source's grade and o3viz's check disagree
    (1/0/True/False, None = not graded); None where they agree or one is missing."""
    s, c = _as_int(source), _as_int(check)
    if s is None or c is None or s == c:
        return None
    return (
        f"The source graded this {GRADE_WORD[s]}; o3viz's answer check says {GRADE_WORD[c]}. "
        "The two gradings disagree."
    )


@dataclass
class Grading:
    """Both gradings of a trace, each named: ``source`` is the imported file's own label
    (``is_correct``) with the answer it extracted; ``check`` is o3viz's answer check against the
    reference (None where there is no reference, or the reply was cut short: ``not_graded`` says
    why, by the one rule of ``o3viz.verify.cut_short``)."""

    source: int | None = None
    source_answer: str | None = None
    check: int | None = None
    check_answer: str | None = None
    reference: str | None = None
    limit: int | None = None  # the token limit the final round stopped at, where it did
    not_graded: str | None = None  # why the check did not grade: "stopped by hand", …

    @property
    def disagree(self) -> bool:
        return disagreement_line(self.source, self.check) is not None

    def lines(self) -> list[str]:
        """One line per grading that exists, naming it, then the disagreement sentence."""
        out = []
        if self.source is not None:
            said = f" (its answer: {self.source_answer})" if self.source_answer else ""
            out.append(f"Source's grade: {GRADE_WORD[self.source]}{said}")
        if self.check is not None:
            out.append(f"o3viz's answer check: {GRADE_WORD[self.check]}")
        elif self.not_graded is not None:
            out.append(f"o3viz's answer check: not graded, {self.not_graded}")
        line = disagreement_line(self.source, self.check)
        return out + ([line] if line else [])


def stopped_at_limit(rnd: Round) -> int | None:
    """The token limit a round stopped at (its generated tokens), else None."""
    return limit_tokens(rnd)


def check_grade(trace: Trace) -> int | None:
    """o3viz's own grade: the final round's answer check against the reference (code: its tests),
    1/0; None where ungraded or where the reply was cut short (at its token limit, or by hand)."""
    if not trace.rounds or cut_short(trace.final) is not None:
        return None
    answer = next((c for c in reversed(trace.final.checks) if c.kind == "answer"), None)
    if answer is not None and answer.verdict in ("correct", "wrong"):
        return int(answer.verdict == "correct")
    if trace.final.verdict in ("pass", "fail") and trace.task.kind == "code":
        return int(trace.final.verdict == "pass")
    return None


def grading(trace: Trace) -> Grading:
    """Both gradings of ``trace`` (see ``Grading``)."""
    said = trace.info.get("file_is_correct")
    answer = trace.info.get("file_answer")
    return Grading(
        source=int(said) if isinstance(said, bool) else None,
        source_answer=answer if isinstance(answer, str) else None,
        check=check_grade(trace),
        check_answer=trace.final.answer if trace.rounds else None,
        reference=trace.task.reference,
        limit=stopped_at_limit(trace.final) if trace.rounds else None,
        not_graded=cut_short(trace.final) if trace.rounds else None,
    )


def proxy_reader(trace: Trace) -> str | None:
    """The local model that read an imported trace (teacher-forced enrichment), short name; None
    when the trace's attention and token probabilities are the writer's own."""
    enrich = trace.info.get("enrichment")
    if not isinstance(enrich, dict):
        return None
    reader = str(enrich.get("model_id") or "a local model").split(" (")[0]
    writer = trace.provenance.model_id or str(trace.provenance.source.get("source_model", ""))
    return None if writer and writer == reader else reader


def proxy_line(trace: Trace, what: str = "attention") -> str | None:
    """The label of a borrowed signal: "attention read by SmolLM2-135M-Instruct, not by the model
    that wrote this trace (deepseek-reasoner)"; None when the writer's own."""
    reader = proxy_reader(trace)
    if reader is None:
        return None
    writer = trace.provenance.model_id or trace.provenance.source.get("source_model")
    return f"{what} read by {reader}, not by the model that wrote this trace" + (
        f" ({writer})" if writer else ""
    )
