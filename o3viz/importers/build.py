"""Turning an :class:`Imported` into a :class:`Trace`: one round whose text is the thinking (then
the answer), typed steps with the tree, the final answer, claim and answer checks, provenance.
"""

from __future__ import annotations

from pathlib import Path

from o3viz.errors import TraceError
from o3viz.importers.datasets import describe_source
from o3viz.importers.formats import Imported
from o3viz.importers.source_steps import MAX_SOURCE_STEP_CHARS, source_spans, step_bounds
from o3viz.tasks.kind import detect_task_type
from o3viz.text.answers import AnswerSpan, answer_in_regions
from o3viz.text.classify import build_steps, split_steps, step_type_counts
from o3viz.text.reference import Reference, reduce_reference
from o3viz.text.spans import split_spans
from o3viz.trace import Provenance, Round, Task, Trace
from o3viz.trace.content import content_id
from o3viz.trace.core import MAX_STEPS, timestamp
from o3viz.verify.cut_short import CUT_OFF, HAND_REASONS, LIMIT_REASONS, apply_cut_short, cut_off_reason
from o3viz.verify.policy import answer_check
from o3viz.verify.trace_checks import claim_checks

SEPARATOR = "\n\n"  # between the thinking and the answer in ``round.text``
MAX_NAME_CHARS = 200  # a model name, an item id, a dataset part (a 1 MB key froze Compare's tab)
MAX_QUESTION_CHARS = 32_000  # a 2k-token prompt is about 8k characters
MAX_FIELD_CHARS = 2_000  # the reference, the source's own extracted answer


def compose_text(thinking: str, answer: str) -> tuple[str, dict[str, list[int]]]:
    """``round.text`` and the character regions of its parts (``thinking``, ``answer``)."""
    regions: dict[str, list[int]] = {}
    text = thinking
    if thinking:
        regions["thinking"] = [0, len(thinking)]
    if answer:
        start = len(text) + (len(SEPARATOR) if text else 0)
        text = (text + SEPARATOR if text else "") + answer
        regions["answer"] = [start, len(text)]
    return text, regions


def task_kind(imp: Imported, text: str) -> str:
    """The one task-kind rule (``o3viz.tasks.kind.detect_task_type``) on the question, with the
    written answer (or the whole text when there is none) and the reference as extra evidence."""
    return detect_task_type(imp.question, answer=imp.answer or text, reference=imp.reference)


def find_answer(text: str, regions: dict[str, list[int]], kind: str) -> AnswerSpan | None:
    """The final answer (``o3viz.text.answers.answer_in_regions``: answer part before thinking)."""
    return answer_in_regions(text, regions, kind)


def build_trace(
    imp: Imported,
    *,
    file: str | None = None,
    reference: str | None = None,
    question: str | None = None,
    claims: bool = True,
    options: dict | None = None,
) -> Trace:
    """The trace of one imported reasoning text (no tokens; see ``o3viz.importers.enrich``). A
    source's own list of steps (``imp.steps``) gives the steps of the thinking, one to one
    (``o3viz.importers.source_steps``)."""
    bounds = None
    if imp.steps is not None:
        imp.thinking, bounds = step_bounds(imp.steps)
    text, regions = compose_text(imp.thinking, imp.answer)
    if bounds is None:
        _refuse_too_many_steps(text, [tuple(r) for r in regions.values()])  # before any full-text scan
    else:
        long = [(a, b) for a, b in bounds if b - a > MAX_SOURCE_STEP_CHARS]
        rest = [tuple(r) for k, r in regions.items() if k != "thinking"]
        _refuse_too_many_steps(text, long + rest, already=len(bounds) - len(long))
    imp.question = question if question is not None else imp.question
    imp.reference = reference if reference is not None else imp.reference
    cut = cap_fields(imp)
    ref = reduce_reference(imp.reference)
    reference = ref.answer if ref is not None else None
    kind = task_kind(imp, text)
    answer = find_answer(text, regions, kind)
    split: dict[str, int] = {}
    if bounds is None:
        spans = split_steps(text, [tuple(r) for r in regions.values()])
    else:
        spans, split = source_spans(text, bounds)
        spans += split_steps(text, [tuple(r) for k, r in regions.items() if k != "thinking"])
    if len(spans) > MAX_STEPS:  # refuse before building: a trace with more steps would not load
        raise TraceError(
            f"{len(spans)} steps, over the limit of {MAX_STEPS} steps a trace holds (MAX_STEPS); "
            "import a shorter part of the text"
        )
    steps, rules = build_steps(text, spans, answer.start if answer else None)
    rnd = Round(index=0, prompt=imp.question, text=text, steps=steps, answer=answer.text if answer else None)
    final = next((st.index for st in steps if st.kind == "final"), None)
    status = "disabled"
    if claims:
        rnd.checks, status = claim_checks(rnd)  # bounded by the checker itself
    check = reference_check(answer, ref, final)
    rnd.checks.append(check)
    rnd.verdict = {"correct": "pass", "wrong": "fail"}.get(check.verdict, "unverifiable")
    rnd.info = {
        "regions": regions,
        "answer_method": answer.method if answer else None,
        "branch_rules": rules,
        "claim_checker": status,
        "step_types": step_type_counts(steps),
    }
    stop = imp.info.get("stop_reason")
    if isinstance(stop, str) and stop in (*LIMIT_REASONS, *HAND_REASONS):
        rnd.info["stop_reason"] = stop  # the source says the reply was cut short: not graded
        apply_cut_short(rnd)
    elif stop is None and (
        why := cut_off_reason(text, answer is not None and answer.strong, imp.info.get("generated_tokens"))
    ):
        rnd.info.update(stop_reason=CUT_OFF, cut_off=why)  # the text shows the cut: not graded either
        apply_cut_short(rnd)
        rnd.answer = None  # an unmarked answer of a cut text is only its last number: none was given
    info = {"imported": True, **({"source_info": imp.info} if imp.info else {})}
    if bounds is not None:  # the source's steps: which of them o3viz split, so labels map right
        info["source_steps"] = {"count": len(bounds), **({"split": split} if split else {})}
    if ref is not None and (ref.answer is None or ref.reduced):
        info["reference_text"] = ref.text  # the solution the answer came from, or prose kept as text
        info["reference_method"] = ref.method
    if cut:
        info["cut_at_import"] = cut  # what was too long to keep whole, so no page draws it whole
    if imp.is_correct is not None:
        info["file_is_correct"] = imp.is_correct
        if check.verdict != "unverifiable":
            info["agrees_with_file"] = (check.verdict == "correct") == imp.is_correct
    if imp.file_answer is not None:
        info["file_answer"] = imp.file_answer
    trace = Trace(
        task=Task(
            question=imp.question, kind=kind, source="import", id=_task_id(imp, file), reference=reference
        ),
        rounds=[rnd],
        provenance=_provenance(imp, file, options or {}),
        info=info,
    )
    info["content_id"] = content_id(trace)
    return trace


def reference_check(answer: AnswerSpan | None, ref: Reference | None, step: int | None = None):
    """The answer check against a reduced reference; a reference that stays text gives
    ``unverifiable`` (saying why), never ``wrong``."""
    check = answer_check(answer, ref.answer if ref is not None else None, step)
    if ref is not None and ref.answer is None:
        check.message = (
            "the reference is text, not an answer (no ####, \\boxed{}, 'A:' line or bare number to compare)"
        )
    return check


def _cut(value, limit: int, what: str, notes: list[str]):
    if isinstance(value, str) and len(value) > limit:
        notes.append(f"{what}: {len(value):,} characters, cut to {limit:,}")
        return value[: limit - 1] + "…"
    return value


def cap_fields(imp: Imported) -> list[str]:
    """Cut the names and short text fields of ``imp`` to their caps, in place; returns one note per
    field that was cut (``"model: 1,048,576 characters, cut to 200"``), kept in the trace's info."""
    notes: list[str] = []
    imp.source_model = _cut(imp.source_model, MAX_NAME_CHARS, "model", notes)
    imp.question = _cut(imp.question, MAX_QUESTION_CHARS, "question", notes)
    imp.reference = _cut(imp.reference, MAX_FIELD_CHARS, "reference", notes)
    imp.file_answer = _cut(imp.file_answer, MAX_FIELD_CHARS, "the source's answer", notes)
    imp.info = {k: _cut(v, MAX_NAME_CHARS, str(k), notes) for k, v in imp.info.items()}
    return notes


def _refuse_too_many_steps(text: str, regions: list[tuple[int, int]], already: int = 0) -> None:
    """On a long text, count steps 64 KB of lines at a time and stop as soon as the count is surely
    past ``MAX_STEPS`` (a line is never cut; a boundary can merge at most one pair of steps).
    ``already``: the steps outside ``regions`` (a source's steps kept whole)."""
    if already > MAX_STEPS:
        raise TraceError(
            f"{already} steps, over the limit of {MAX_STEPS} steps a trace holds (MAX_STEPS); "
            "import a shorter part of the text"
        )
    if len(text) < 1_000_000:
        return  # the full split is quick
    count, chunks = already, 0
    for a, b in regions:
        pos = a
        while pos < b:
            cut = text.find("\n", min(pos + (1 << 16), b), b)
            end = b if cut < 0 else cut + 1
            count += len(split_spans(text[pos:end]))
            chunks += 1
            if count - chunks > MAX_STEPS:
                raise TraceError(
                    f"more than {MAX_STEPS} steps (counted {count} in the first {end - a} characters), over "
                    "the limit a trace holds (MAX_STEPS); import a shorter part of the text"
                )
            pos = end


def _task_id(imp: Imported, file: str | None) -> str | None:
    item = imp.info.get("item_id") or imp.info.get("problem_id")
    if item:
        return str(item)
    if file:
        return Path(file).stem + (f":{imp.record}" if imp.record is not None else "")
    return None


def _provenance(imp: Imported, file: str | None, options: dict) -> Provenance:
    from o3viz import __version__

    source: dict = {"format": imp.format}
    if file:
        source["file"] = Path(file).name
    if imp.record is not None:  # counted from 1, as the preview, the Library and dataset imports count
        source["record"] = imp.record + 1
    model = imp.source_model or (
        Path(file).stem if file and imp.format in ("plain_text", "think_tags") else None
    )
    if model:
        source["source_model"] = model
    source.update(describe_source(file))
    source.update(
        imp.info.get("redacted_thinking_blocks")
        and {"redacted_thinking_blocks": imp.info["redacted_thinking_blocks"]}
        or {}
    )
    settings = {k: v for k, v in options.items() if v is not None and isinstance(v, str | int | float | bool)}
    return Provenance(
        model_id=model or "unknown (imported)",
        library_versions={"o3viz": __version__},
        settings={"import": settings},
        created_at=timestamp(),
        source=source,
    )
