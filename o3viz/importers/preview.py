"""What an import will do, before it runs: how the first records of a dataset parse with the
given field mapping (``ImportOptions``: text, question, answer, reference, id, model fields).
The app's upload shows it and lets the user change the mapping; ``o3viz import --preview`` prints it.

Only the first ``n`` records are read (each bounded like a bulk import's), and nothing is stored.

>>> preview_import("gsm8k_test.jsonl", ImportOptions("gsm8k")).records[0].used  # doctest: +SKIP
{'text': 'answer', 'question': 'question', 'reference': 'answer'}
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from o3viz.errors import O3vizError, one_line
from o3viz.importers.bulk import ImportOptions, fan_out, read_records
from o3viz.trace.safejson import MAX_IMPORT_NESTING, loads

PREVIEW_RECORDS = 5
HEAD_CHARS = 160  # characters of the text, question and reference a preview row shows
ROLES = ("text", "question", "reference", "id", "model")  # the fields a user may map


@dataclass
class RecordPreview:
    """One record (or one part of a fanned-out record) as the import would read it."""

    record: int  # 1-based line (JSONL), position (JSON array), sample or row
    part: str = ""
    used: dict[str, str] = field(default_factory=dict)  # role -> the field it was read from
    text: str = ""  # the head of the reasoning text
    question: str = ""
    reference: str | None = None  # the reference as the source gives it (head)
    reference_answer: str | None = None  # what it reduces to (None: it stays text, ungraded)
    answer: str | None = None  # the final answer o3viz reads from the text
    grade: str = "unverifiable"  # pass | fail | unverifiable
    steps: int = 0
    error: str = ""  # why this record would be skipped, one line


@dataclass
class ImportPreview:
    """The first records of a file parsed with one field mapping."""

    file: str
    fields: list[str] = field(default_factory=list)  # field names seen in the first records
    records: list[RecordPreview] = field(default_factory=list)

    @property
    def readable(self) -> int:
        """Previewed records that would become traces."""
        return sum(not r.error for r in self.records)

    def rows(self) -> list[dict]:
        """One table row per previewed record: where it is, which field is what, and the result."""
        out = []
        for r in self.records:
            ref = (
                r.reference_answer
                if r.reference_answer is not None
                else ("text, ungraded" if r.reference else "—")
            )
            out.append(
                {
                    "record": f"{r.record}" + (f" {r.part}" if r.part else ""),
                    "fields": ", ".join(f"{k}: {v}" for k, v in r.used.items()) or "—",
                    "question": r.question or "—",
                    "text": r.text or "—",
                    "reference": ref,
                    "answer": r.answer if r.answer is not None else "—",
                    "grade": r.grade if not r.error else "skipped",
                    "problem": r.error or "",
                }
            )
        return out

    def summary(self) -> str:
        n = len(self.records)
        if not n:
            return f"{self.file}: no records found"
        bad = next((r.error for r in self.records if r.error), "")
        s = f"{self.readable} of the first {n} records would import"
        return s + (f"; first problem: {bad}" if bad else "")


def _head(text: str | None) -> str:
    text = " ".join((text or "")[: HEAD_CHARS * 4].split())
    return text if len(text) <= HEAD_CHARS else text[: HEAD_CHARS - 1] + "…"


def _preview_one(rec: dict, line: int, part: str, opts: ImportOptions) -> RecordPreview:
    from o3viz.importers import import_trace

    row = RecordPreview(line, part)
    try:
        trace = import_trace(rec, claims=False, fields=opts.fields())
    except O3vizError as exc:
        row.error = one_line(exc, 300).replace("(input): ", "")
        return row
    src = trace.info.get("source_info") or {}
    row.used = dict(src.get("fields") or {})
    rnd = trace.final
    regions = rnd.info.get("regions") or {}
    row.text = _head(rnd.text[slice(*regions["thinking"])] if "thinking" in regions else rnd.text)
    row.question = _head(trace.task.question)
    row.reference = _head(trace.info.get("reference_text") or trace.task.reference) or None
    row.reference_answer = trace.task.reference
    row.answer = rnd.answer
    row.grade = rnd.verdict or "unverifiable"
    row.steps = len(rnd.steps)
    return row


def preview_import(path: str | os.PathLike, opts: ImportOptions, n: int = PREVIEW_RECORDS) -> ImportPreview:
    """How the first ``n`` records of ``path`` (JSONL, a JSON array, an Inspect log, Parquet)
    parse under ``opts``; a record that would be skipped says why in ``error``."""
    path = Path(path)
    out = ImportPreview(path.name)
    seen: dict[str, None] = {}
    for r in read_records(path):
        if len(out.records) >= n:
            break
        if r.hash.startswith("!"):
            out.records.append(RecordPreview(r.line, error=r.hash[1:].split(": ", 1)[-1]))
            continue
        try:
            rec = loads(r.text, "record", max_nesting=MAX_IMPORT_NESTING)
        except O3vizError as exc:
            out.records.append(RecordPreview(r.line, error=one_line(exc, 200)))
            continue
        if not isinstance(rec, dict):
            out.records.append(
                RecordPreview(r.line, error=f"a JSON {type(rec).__name__}, not a record object")
            )
            continue
        seen.update(dict.fromkeys(str(k) for k in list(rec)[:64]))
        for part, sub in fan_out(rec)[: max(1, n - len(out.records))]:
            out.records.append(_preview_one(sub, r.line, part, opts))
    out.fields = list(seen)
    return out
