"""What the trace store's index knows about one trace: the row (``IndexRow``) the Library table and
the Dataset page read, computed from a ``Trace`` alone, plus the text its full-text search covers.

The row is a pure function of the trace and the store's metadata (source, dataset, name, tags), so
``o3viz library reindex`` can rebuild every row from the files. Importance records (Thought
Anchors measures) are optional and read defensively: any shape this module does not recognise
counts as "not present".
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields

from o3viz.analysis.pairing import question_hash
from o3viz.analysis.provenance import grading
from o3viz.store.meta import LATEST_TIME
from o3viz.text.classify import TYPES as STEP_TYPES
from o3viz.trace import Trace
from o3viz.trace.content import content_id
from o3viz.trace.importance import step_view

MAX_FTS_CHARS = 200_000  # step text indexed per trace; longer traces are searched on their head
QUESTION_CHARS = 300


@dataclass
class IndexRow:
    """One trace in the index (one SQLite row). Counts are over all rounds; verdict and answer are
    the final round's. ``correct`` is 1/0/None: the source's own grading where it has one, else
    o3viz's answer check against the reference (``correct_by`` says which); ``source_correct`` and
    ``check_correct`` keep both, so a page can say where they disagree."""

    key: str
    name: str = ""
    source: str = "import"  # run | sample | upload | import
    dataset: str = ""
    record: int | None = None  # 1-based line (JSONL) or position (JSON array) in the source file
    part: str = ""  # the sub-record of a fanned-out record (e.g. "175b_verification")
    line_hash: str = ""  # the source record's hash (duplicate detection); "" outside datasets
    parts: int = 1  # how many traces the source record made
    # a plain import's content (``o3viz.trace.content.content_id``): one trace per record
    content_id: str = ""
    model: str = ""
    task: str = ""
    task_kind: str = ""
    question: str = ""
    tokens: int = 0
    prompt_tokens: int = 0
    steps: int = 0
    chars: int = 0
    rounds: int = 0
    verdict: str | None = None
    answer: str | None = None
    correct: int | None = None
    correct_by: str | None = None  # file | check
    source_correct: int | None = None  # the source's own grade (an import's is_correct), 1/0/None
    check_correct: int | None = None  # o3viz's answer check against the reference, 1/0/None
    self_checks: int = 0  # steps of kind self_check
    backtracks: int = 0  # steps of kind backtrack
    claims: int = 0
    claim_errors: int = 0
    first_wrong_step: int | None = None  # final round's first step holding a wrong claim
    first_wrong_pos: float | None = None  # that step's position, 0 = first step, 1 = last
    importance: str | None = None  # JSON {step type: mean importance}, when the trace has importance
    daa: str = "off"
    compression: float | None = None
    attention: int = 0
    created_at: str | None = None
    added_at: float = 0.0  # when the store took it (seconds since the epoch)
    file_bytes: int = 0
    tags: str = ""  # comma-separated
    # one count column per Thought Anchors step type, over all rounds
    t_problem_setup: int = 0
    t_plan_generation: int = 0
    t_fact_retrieval: int = 0
    t_active_computation: int = 0
    t_uncertainty_management: int = 0
    t_result_consolidation: int = 0
    t_self_checking: int = 0
    t_final_answer_emission: int = 0
    # the running answer (``o3viz.analysis.answer_figures``): stated answers, plus forced ones where
    # a probe recorded them; NULL when unknown (no reference, no answer)
    first_correct_frac: float | None = None  # where the answer is first right, 0..1 of the tokens
    convergence_frac: float | None = None  # where the running answer last changed
    answer_flips: int | None = None  # right→wrong plus wrong→right
    # right→wrong flips alone (a right answer lost); 0 when ungraded, so NULL means "not computed"
    # (a row indexed before the column: ``o3viz library reindex --full`` fills it)
    answer_losses: int | None = None
    tokens_after_correct: int | None = None  # tokens after the first correct point (an estimate for imports)
    overthinking: str | None = None  # none | harmless | harmful
    # the pairing key of the WHOLE question (``o3viz.analysis.pairing.question_hash``): ``question``
    # above is clipped, so two questions sharing a long preamble would share its key. NULL in a row
    # indexed before the column (store schema 6) whose question was clipped: ``reindex --full``
    # fills it, and the readers that key questions compute it from the file meanwhile
    question_key: str | None = None
    replaces: str = ""  # the keys this trace replaced, oldest first, comma-separated (its metadata's)

    def to_dict(self) -> dict:
        return dict(self.__dict__)  # every field is a scalar: asdict's deep copy only costs time


COLUMNS = tuple(f.name for f in fields(IndexRow))
TYPE_COLUMNS = tuple(f"t_{t}" for t in STEP_TYPES)
assert set(TYPE_COLUMNS) <= set(COLUMNS), "a step type has no count column"
_INT_COLUMNS = {f.name for f in fields(IndexRow) if f.type in ("int", "int | None")}
_REAL_COLUMNS = {f.name for f in fields(IndexRow) if f.type in ("float", "float | None")}
_KINDS = {c: int if c in _INT_COLUMNS else float if c in _REAL_COLUMNS else str for c in COLUMNS}
_NULLABLE = {f.name for f in fields(IndexRow) if "None" in f.type}
_DEFAULTS = {f.name: None if f.name in _NULLABLE else f.default for f in fields(IndexRow) if f.name != "key"}
_DEFAULTS["key"] = ""
# (name, SQL type) of the running-answer columns: an older index gains them in place (store schema 5)
ANSWER_COLUMNS = (
    ("first_correct_frac", "REAL"),
    ("convergence_frac", "REAL"),
    ("answer_flips", "INTEGER"),
    ("answer_losses", "INTEGER"),
    ("tokens_after_correct", "INTEGER"),
    ("overthinking", "TEXT"),
)
# store schema 6: the whole question's key and the keys a trace replaced (``o3viz.store.successors``)
KEY_COLUMNS = (("question_key", "TEXT"), ("replaces", "TEXT"))


def clean_row(row: dict) -> dict:
    """``row`` with every known column of its declared type: a value of another type (a row that an
    older o3viz or a hand-edited index wrote) becomes the column's default, so no page crashes on it.

    >>> clean_row({"key": "k", "added_at": "yesterday", "steps": 3.5, "name": None})
    {'key': 'k', 'added_at': 0.0, 'steps': 0, 'name': ''}
    """
    for name, value in row.items():
        kind = _KINDS.get(name)
        if kind is None or value is None and name in _NULLABLE:
            continue
        if kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63
        elif kind is float:
            ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
            ok = ok and (name != "added_at" or 0 <= value <= LATEST_TIME)
            value = float(value) if ok else value
        else:
            ok = isinstance(value, str)
        row[name] = value if ok else _DEFAULTS[name]
    return row


def column_sql() -> str:
    """The ``traces`` table's column definitions (``id`` is the insertion order: newest = largest)."""
    defs = ["id INTEGER PRIMARY KEY", "key TEXT NOT NULL UNIQUE"]
    for name in COLUMNS[1:]:
        kind = "INTEGER" if name in _INT_COLUMNS else "REAL" if name in _REAL_COLUMNS else "TEXT"
        defs.append(f"{name} {kind}")
    return ", ".join(defs)


def _correct(trace: Trace) -> tuple[int | None, str | None]:
    g = grading(trace)
    if g.source is not None:
        return g.source, "file"
    if g.check is not None:
        return g.check, "check"
    return None, None


def _first_wrong(trace: Trace) -> tuple[int | None, float | None]:
    if not trace.rounds:
        return None, None
    rnd = trace.final
    wrong = [c.step for c in rnd.checks if c.kind == "claim" and c.verdict == "wrong" and c.step is not None]
    if not wrong:
        return None, None
    first = min(wrong)
    n = len(rnd.steps)
    return first, (first / (n - 1) if n > 1 else 0.0)


def _per_step_importance(raw) -> list[float] | None:
    """A list of per-step numbers from the shapes an importance record may take, else None."""
    if isinstance(raw, dict):
        for name in ("per_step", "steps", "scores", "importance", "resampling", "counterfactual"):
            if name in raw:
                found = _per_step_importance(raw[name])
                if found is not None:
                    return found
        return None
    if (
        isinstance(raw, list)
        and raw
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in raw)
    ):
        return [float(v) for v in raw]
    if isinstance(raw, list) and raw and all(isinstance(v, dict) for v in raw):
        for name in ("importance", "score", "value"):
            vals = [v.get(name) for v in raw]
            if all(isinstance(x, int | float) and not isinstance(x, bool) for x in vals):
                return [float(x) for x in vals]
    return None


def _step_importance(steps) -> list[float] | None:
    """``Step.importance`` on every step (the shape Inspect reads), else None."""
    vals = [getattr(st, "importance", None) for st in steps]
    if steps and all(isinstance(v, int | float) and not isinstance(v, bool) for v in vals):
        return [float(v) for v in vals]
    return None


def importance_by_type(trace: Trace) -> dict[str, float] | None:
    """Mean importance per step type of the final round, when the trace carries importance: its
    importance records first (``o3viz.trace.importance.step_view``: the record the map shows,
    rank-scaled to 0..1 so traces compare), else ``Step.importance`` or a per-step list in ``info``."""
    if not trace.rounds:
        return None
    rnd = trace.final
    found: list[list[float | None] | None] = []
    if rnd.importance:  # the round's importance records, as the map shows them (rank-scaled 0..1)
        found.append(step_view(rnd.importance, len(rnd.steps))[0])
    found.append(_step_importance(rnd.steps))
    for raw in (rnd.info.get("importance"), trace.info.get("importance")):
        found.append(_per_step_importance(raw) if raw is not None else None)
    for values in found:
        if values is None or len(values) != len(rnd.steps) or all(v is None for v in values):
            continue
        sums: dict[str, list[float]] = {}
        for step, v in zip(rnd.steps, values, strict=True):
            if step.type and v is not None and math.isfinite(v):  # NaN and inf never enter a mean
                sums.setdefault(step.type, []).append(v)
        return {t: round(sum(vs) / len(vs), 6) for t, vs in sums.items()} or None
    return None


def index_row(trace: Trace, key: str, meta: dict | None = None, *, file_bytes: int = 0) -> IndexRow:
    """The index row of ``trace`` stored under ``key``; ``meta`` holds the store's own fields
    (name, source, dataset, record, part, line_hash, parts, added_at, tags)."""
    from o3viz.analysis.summary import summarize

    meta = meta or {}
    s = summarize(trace)
    rounds = trace.rounds
    all_steps = [st for r in rounds for st in r.steps]
    claims = [c for r in rounds for c in r.checks if c.kind == "claim"]
    correct, by = _correct(trace)
    graded = grading(trace)
    first, pos = _first_wrong(trace)
    imp = importance_by_type(trace)
    answers = _answer_columns(trace)
    types = dict.fromkeys(STEP_TYPES, 0)
    for st in all_steps:
        if st.type in types:
            types[st.type] += 1
    row = IndexRow(
        key=key,
        model=s.model or "",
        task=s.task or "",
        task_kind=trace.task.kind,
        question=" ".join(trace.task.question.split())[:QUESTION_CHARS],
        question_key=question_hash(trace.task.question),
        tokens=s.tokens or 0,  # the column is 0 for unknown; the Library shows "—" for it
        prompt_tokens=s.prompt_tokens,
        steps=s.steps,
        chars=sum(len(r.text) for r in rounds),
        rounds=s.rounds,
        verdict=s.final_verdict,
        answer=(s.answer or None) and s.answer[:200],
        correct=correct,
        correct_by=by,
        source_correct=graded.source,
        check_correct=graded.check,
        self_checks=sum(st.kind == "self_check" for st in all_steps),
        backtracks=sum(st.kind == "backtrack" for st in all_steps),
        claims=len(claims),
        claim_errors=sum(c.verdict == "wrong" for c in claims),
        first_wrong_step=first,
        first_wrong_pos=pos,
        importance=json.dumps(imp, sort_keys=True) if imp else None,
        daa=s.daa_mode,
        compression=s.compression_ratio,
        attention=int(s.has_attention),
        created_at=s.created_at,
        content_id=import_content_id(trace),
        file_bytes=file_bytes,
        **{f"t_{t}": n for t, n in types.items()},
        **answers,
    )
    for name, value in meta.items():
        if name in COLUMNS and name != "key" and value is not None:
            setattr(row, name, value)
    return row


def _answer_columns(trace: Trace) -> dict:
    """The running-answer columns: figures of the final round's stated answers (and its forced
    ones, where recorded); all NULL for a trace with no steps."""
    from o3viz.analysis.answer_figures import trace_answer_figures

    if not trace.rounds or not trace.final.steps:
        return {}
    f = trace_answer_figures(trace)
    graded = f.final_correct is not None or f.first_correct_step is not None
    return {
        "first_correct_frac": f.first_correct_fraction,
        "convergence_frac": f.convergence_fraction,
        "answer_flips": f.flips if graded else None,
        "answer_losses": f.flips_right_to_wrong,
        "tokens_after_correct": f.tokens_after_first_correct,
        "overthinking": f.overthinking if graded else None,
    }


def import_content_id(trace: Trace) -> str:
    """The content identity of a plain import (one the importers marked with ``content_id``),
    computed again from what the trace holds now, never trusted from the file: a copy edited
    after its import is its own trace. "" once it carries more (attention, importance, a
    verifier's verdicts, a parent), so an enriched or verified copy is its own trace too."""
    if not isinstance(trace.info.get("content_id"), str) or trace.parent is not None:
        return ""
    if any(r.attention is not None or r.importance or r.verdicts for r in trace.rounds):
        return ""
    return content_id(trace)


def search_text(trace: Trace) -> str:
    """What full-text search covers: the question, then every step's text, over all rounds."""
    parts = [trace.task.question]
    total = len(trace.task.question)
    for r in trace.rounds:
        for st in r.steps or []:
            parts.append(st.text)
            total += len(st.text) + 1
            if total > MAX_FTS_CHARS:
                return "\n".join(parts)[:MAX_FTS_CHARS]
        if not r.steps:
            parts.append(r.text[:MAX_FTS_CHARS])
    return "\n".join(parts)[:MAX_FTS_CHARS]
