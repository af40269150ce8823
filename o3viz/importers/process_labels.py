"""Datasets of human step labels (process supervision) as traces with their labels: MR-GSM8K
(``model_output_steps`` and the first wrong step, counted from 1) and PRM800K (the phase-1
stepwise file, one row per rated candidate step with its prefix, and the raw format, one record per
labelled solution tree).

Each source step becomes a paragraph of the trace's text; the o3viz steps it is split into take its
label (the first of them carries "first error"). A PRM800K rating 1 or 0 (neutral) is ``correct``,
-1 ``wrong``; an unrated step has no label. The stepwise file is a tree per problem: each leaf path
is one trace, and each rated step is labelled once, in the first trace that holds it, so a
shared prefix is not counted again.

>>> recs = list(labelled_records([{"question": "1+1?", "ground_truth_answer": 2,
...     "model_output_steps": ["Step 1: 1+1 = <<1+1=3>>3", "Step 2: #### 3"],
...     "model_output_solution_first_error_step": 1}]))
>>> [(s, v, f) for s, v, f in recs[0].labels]
[(0, 'wrong', True)]
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from o3viz.errors import TraceError
from o3viz.importers.build import build_trace
from o3viz.importers.formats import Imported, read_input
from o3viz.trace import Trace

LABELLERS = {"mr_gsm8k": "MR-GSM8K annotators", "prm800k": "PRM800K annotators"}
_RATING = {1: "correct", 0: "correct", -1: "wrong"}


@dataclass
class LabelledRecord:
    """One trace built from a labelled source record, and its steps' labels."""

    trace: Trace
    record: int  # 0-based position in the file
    labels: list[tuple[int, str, bool]] = field(
        default_factory=list
    )  # (final-round step, verdict, first error)
    line_hash: str = ""  # the source record's hash: a re-import finds the trace it made


def label_format(data: Any) -> str:
    """``mr_gsm8k``, ``prm800k`` (stepwise rows), ``prm800k_raw``; else a one-line ``TraceError``."""
    first = data[0] if isinstance(data, list) and data else None
    if isinstance(first, dict) and "model_output_steps" in first:
        return "mr_gsm8k"
    if isinstance(first, dict) and {"instruction", "next_response", "rating"} <= set(first):
        return "prm800k"
    if isinstance(first, dict) and isinstance(first.get("label"), dict) and "steps" in first["label"]:
        return "prm800k_raw"
    raise TraceError(
        "--labels reads MR-GSM8K (model_output_steps) or PRM800K (stepwise rows or the raw format); "
        "this file is neither"
    )


def _record(imp: Imported, steps: list[str], verdicts: list[str | None], file: str | None) -> LabelledRecord:
    """Build the trace of ``steps`` and carry each source step's verdict to its o3viz steps."""
    steps = [" ".join(s.split()) or "(empty step)" for s in steps]
    imp.thinking = "\n\n".join(steps)
    trace = build_trace(imp, file=file)
    bounds, pos = [], 0
    for s in steps:
        bounds.append((pos, pos + len(s)))
        pos += len(s) + 2
    source = json.dumps([imp.format, imp.question, steps, verdicts], sort_keys=True).encode()
    rec = LabelledRecord(trace, imp.record or 0, line_hash=hashlib.sha256(source).hexdigest()[:16])
    first_wrong = next((i for i, v in enumerate(verdicts) if v == "wrong"), None)
    taken: set[int] = set()
    for src, ((a, b), verdict) in enumerate(zip(bounds, verdicts, strict=True)):
        if verdict is None:
            continue
        mine = [st.index for st in trace.final.steps if a <= st.start < b and st.index not in taken]
        for j, idx in enumerate(mine):
            rec.labels.append((idx, verdict, src == first_wrong and j == 0))
            taken.add(idx)
    return rec


def _mr_gsm8k(items: list, file: str | None) -> Iterator[LabelledRecord]:
    for n, x in enumerate(items):
        if not isinstance(x, dict) or not isinstance(x.get("model_output_steps"), list):
            raise TraceError(f"record {n}: no model_output_steps list")
        steps = [s if isinstance(s, str) else "" for s in x["model_output_steps"]]
        first = x.get("model_output_solution_first_error_step")
        first = first if isinstance(first, int) and 1 <= first <= len(steps) else None
        # the annotators judged the steps up to the first error; what follows is unlabelled
        verdicts = (
            ["correct"] * (first - 1) + ["wrong"] + [None] * (len(steps) - first)
            if first
            else ["correct"] * len(steps)
        )
        ref = x.get("ground_truth_answer")
        imp = Imported("mr_gsm8k", "", question=str(x.get("question") or ""), record=n)
        imp.reference = None if ref is None else str(ref)
        imp.is_correct = {"wrong": False, "correct": True}.get(x.get("model_output_answer_correctness"))
        if x.get("uuid"):
            imp.info["item_id"] = str(x["uuid"])
        yield _record(imp, steps, verdicts, file)


def _prm800k_rows(rows: list, file: str | None) -> Iterator[LabelledRecord]:
    rating: dict[tuple, int | None] = {}
    for n, r in enumerate(rows):
        if not isinstance(r, dict) or not isinstance(r.get("responses"), list):
            raise TraceError(f"record {n}: not a PRM800K stepwise row")
        path = (str(r.get("instruction")), *map(str, r["responses"]), str(r.get("next_response")))
        if rating.get(path) is None:
            rating[path] = r.get("rating") if r.get("rating") in _RATING else None
    prefixes = {p[:j] for p in rating for j in range(2, len(p))}
    seen: set[tuple] = set()
    for n, path in enumerate(sorted(p for p in rating if p not in prefixes)):
        verdicts: list[str | None] = []
        for j in range(2, len(path) + 1):
            v = rating.get(path[:j])
            verdicts.append(None if v is None or path[:j] in seen else _RATING[v])
            seen.add(path[:j])
        imp = Imported("prm800k", "", question=path[0], record=n)
        yield _record(imp, list(path[1:]), verdicts, file)


def _prm800k_raw(items: list, file: str | None) -> Iterator[LabelledRecord]:
    for n, x in enumerate(items):
        steps, verdicts = [], []
        for st in (x.get("label") or {}).get("steps") or []:
            chosen = st.get("chosen_completion")
            comp = st["completions"][chosen] if isinstance(chosen, int) else st.get("human_completion")
            if not isinstance(comp, dict) or not isinstance(comp.get("text"), str):
                break
            steps.append(comp["text"])
            verdicts.append(_RATING.get(comp.get("rating")))
        q = x.get("question") or {}
        imp = Imported("prm800k", "", question=str(q.get("problem") or ""), record=n)
        imp.reference = q.get("ground_truth_answer")
        yield _record(imp, steps or ["(no steps)"], verdicts or [None], file)


def labelled_records(src: str | os.PathLike | list, *, limit: int | None = None) -> Iterator[LabelledRecord]:
    """The traces and labels of a labelled dataset (a path, or its parsed records)."""
    data = src if isinstance(src, list) else read_input(src).data
    file = None if isinstance(src, list) else os.fspath(src)
    fmt = label_format(data)
    reader = {"mr_gsm8k": _mr_gsm8k, "prm800k": _prm800k_rows, "prm800k_raw": _prm800k_raw}[fmt]
    for i, rec in enumerate(reader(data, file)):
        if limit is not None and i >= limit:
            return
        yield rec
