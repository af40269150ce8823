"""Datasets of human step labels (process supervision) as traces with their labels: MR-GSM8K
(``model_output_steps`` and the first wrong step, counted from 1), PRM800K (the phase-1 stepwise
file, one row per rated candidate step with its prefix, and the raw format, one record per
labelled solution tree) and ProcessBench (``steps`` and ``label``, the first wrong step counted
from 0, or -1; ``final_answer_correct`` is the source's grade).

Each source step becomes one o3viz step (``o3viz.importers.source_steps``: only a step over its
length cap is split, and the trace's info says so); a split step's parts each take its label, the
first of them "first error". A PRM800K rating 1 or 0 (neutral) is ``correct``, -1 ``wrong``; an
unrated step has no label. The stepwise file is a tree per problem: each leaf path is one trace,
and each rated step is labelled once, in the first trace that holds it, so a shared prefix is not
counted again. ``LabelOptions.grade_field`` names the field that holds the source's grade of a
record (``--grade-field``).

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

from o3viz.errors import TraceError, UsageError
from o3viz.importers.build import build_trace
from o3viz.importers.datasets import is_step_list, source_grade
from o3viz.importers.formats import Imported, read_input
from o3viz.importers.source_steps import SourceStepCount, source_step_map
from o3viz.trace import Trace

LABELLERS = {
    "mr_gsm8k": "MR-GSM8K annotators",
    "prm800k": "PRM800K annotators",
    "processbench": "ProcessBench annotators",
}
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


@dataclass
class LabelOptions:
    """How a labelled dataset is read (``grade_field``: the field holding the source's grade, as
    ``--grade-field``), and what the reading found (``steps``: its source steps, filled in)."""

    grade_field: str | None = None
    steps: SourceStepCount = field(default_factory=SourceStepCount)


def label_format(data: Any) -> str:
    """``mr_gsm8k``, ``prm800k`` (stepwise rows), ``prm800k_raw``, ``processbench``; else a
    one-line ``TraceError``."""
    first = data[0] if isinstance(data, list) and data else None
    if isinstance(first, dict) and "model_output_steps" in first:
        return "mr_gsm8k"
    if isinstance(first, dict) and isinstance(first.get("steps"), list) and "label" in first:
        if not isinstance(first["label"], dict):  # PRM800K's raw label is an object
            return "processbench"  # its label is checked per record, in one line
    if isinstance(first, dict) and {"instruction", "next_response", "rating"} <= set(first):
        return "prm800k"
    if isinstance(first, dict) and isinstance(first.get("label"), dict) and "steps" in first["label"]:
        return "prm800k_raw"
    raise TraceError(
        "--labels reads MR-GSM8K (model_output_steps), PRM800K (stepwise rows or the raw format) or "
        "ProcessBench (steps and label); this file is none of them"
    )


def _record(imp: Imported, steps: list[str], verdicts: list[str | None], file: str | None) -> LabelledRecord:
    """Build the trace of ``steps`` (the source's, one to one) and put each source step's verdict
    on its o3viz step; a step o3viz split gives its verdict to each part, "first error" to the
    first (``o3viz.importers.source_steps``)."""
    imp.steps = steps
    trace = build_trace(imp, file=file)
    source = json.dumps([imp.format, imp.question, steps, verdicts, imp.is_correct], sort_keys=True).encode()
    rec = LabelledRecord(trace, imp.record or 0, line_hash=hashlib.sha256(source).hexdigest()[:16])
    first_wrong = next((i for i, v in enumerate(verdicts) if v == "wrong"), None)
    mine = source_step_map(trace.info.get("source_steps")) or []
    for src, (idx, verdict) in enumerate(zip(mine, verdicts, strict=True)):
        if verdict is not None:
            rec.labels += [(i, verdict, src == first_wrong and j == 0) for j, i in enumerate(idx)]
    return rec


def _rating(value: Any) -> int | None:
    """A PRM800K rating (1, 0, -1), or None for anything else (a list, a string, true)."""
    return value if type(value) is int and value in _RATING else None


def _grade(imp: Imported, x: dict, n: int, grade: str | None) -> None:
    """The source's grade from the field ``grade`` names (``--grade-field``), when one is named."""
    if grade is not None:
        try:
            imp.is_correct = source_grade(x, grade)
        except TraceError as exc:
            raise TraceError(f"record {n}: {exc}") from None


def _mr_gsm8k(items: list, file: str | None, grade: str | None) -> Iterator[LabelledRecord]:
    for n, x in enumerate(items):
        if not isinstance(x, dict) or not isinstance(x.get("model_output_steps"), list):
            raise TraceError(f"record {n}: no model_output_steps list")
        steps = [s if isinstance(s, str) else "" for s in x["model_output_steps"]]
        first = x.get("model_output_solution_first_error_step")
        first = first if type(first) is int and 1 <= first <= len(steps) else None
        # the annotators judged the steps up to the first error; what follows is unlabelled
        verdicts = (
            ["correct"] * (first - 1) + ["wrong"] + [None] * (len(steps) - first)
            if first
            else ["correct"] * len(steps)
        )
        ref = x.get("ground_truth_answer")
        imp = Imported("mr_gsm8k", "", question=str(x.get("question") or ""), record=n)
        imp.reference = None if ref is None else str(ref)
        said = x.get("model_output_answer_correctness")
        imp.is_correct = {"wrong": False, "correct": True}.get(said) if isinstance(said, str) else None
        if x.get("uuid"):
            imp.info["item_id"] = str(x["uuid"])
        _grade(imp, x, n, grade)
        yield _record(imp, steps, verdicts, file)


@dataclass
class _Tree:
    """The stepwise rows as one tree (a trie over instruction, responses, next response): each row
    walks its path once, so the work is linear in the file (every prefix as a tuple was quadratic)."""

    text: list[str] = field(default_factory=lambda: [""])  # node 0: the root, above the instructions
    parent: list[int] = field(default_factory=lambda: [-1])
    rating: list[int | None] = field(default_factory=lambda: [None])
    children: list[dict[str, int]] = field(default_factory=lambda: [{}])

    def add(self, path: list[str], rating: int | None) -> None:
        node = 0
        for s in path:
            nxt = self.children[node].get(s)
            if nxt is None:
                nxt = self.children[node][s] = len(self.text)
                self.text.append(s)
                self.parent.append(node)
                self.rating.append(None)
                self.children.append({})
            node = nxt
        if self.rating[node] is None:  # the first rating of a step stands
            self.rating[node] = rating

    def leaves(self) -> Iterator[list[int]]:
        """Each leaf's chain of nodes from its instruction, leaves in the order of their texts."""
        stack = [0]
        while stack:
            node = stack.pop()
            kids = self.children[node]
            if not kids and node:
                chain = []
                while node:
                    chain.append(node)
                    node = self.parent[node]
                yield chain[::-1]
            stack.extend(kids[k] for k in sorted(kids, reverse=True))


def _prm800k_rows(rows: list, file: str | None, grade: str | None) -> Iterator[LabelledRecord]:
    if grade is not None:
        raise UsageError("--grade-field: PRM800K's stepwise rows rate steps, not whole solutions; drop it")
    tree = _Tree()
    for n, r in enumerate(rows):
        if not isinstance(r, dict) or not isinstance(r.get("responses"), list):
            raise TraceError(f"record {n}: not a PRM800K stepwise row")
        path = [str(r.get("instruction")), *map(str, r["responses"]), str(r.get("next_response"))]
        tree.add(path, _rating(r.get("rating")))
    seen: set[int] = set()
    for n, chain in enumerate(tree.leaves()):
        verdicts: list[str | None] = []
        for node in chain[1:]:
            v = tree.rating[node]
            verdicts.append(None if v is None or node in seen else _RATING[v])
            seen.add(node)
        imp = Imported("prm800k", "", question=tree.text[chain[0]], record=n)
        yield _record(imp, [tree.text[c] for c in chain[1:]], verdicts, file)


def _raw_step(st: Any) -> dict | None:
    """The completion a raw PRM800K step settled on (the chosen one, else the human's), or None."""
    if not isinstance(st, dict):
        return None
    chosen, comps = st.get("chosen_completion"), st.get("completions")
    if type(chosen) is int and isinstance(comps, list) and 0 <= chosen < len(comps):
        comp = comps[chosen]
    else:
        comp = st.get("human_completion")
    return comp if isinstance(comp, dict) and isinstance(comp.get("text"), str) else None


def _prm800k_raw(items: list, file: str | None, grade: str | None) -> Iterator[LabelledRecord]:
    for n, x in enumerate(items):
        if not isinstance(x, dict):
            raise TraceError(f"record {n}: a JSON {type(x).__name__}, not a PRM800K record")
        label = x.get("label") if isinstance(x.get("label"), dict) else {}
        steps, verdicts = [], []
        for st in label.get("steps") if isinstance(label.get("steps"), list) else []:
            comp = _raw_step(st)
            if comp is None:
                break
            steps.append(comp["text"])
            v = _rating(comp.get("rating"))
            verdicts.append(None if v is None else _RATING[v])
        q = x.get("question") if isinstance(x.get("question"), dict) else {}
        imp = Imported("prm800k", "", question=str(q.get("problem") or ""), record=n)
        ref = q.get("ground_truth_answer")
        imp.reference = None if ref is None else str(ref)
        _grade(imp, x, n, grade)
        yield _record(imp, steps or ["(no steps)"], verdicts or [None], file)


def _processbench(items: list, file: str | None, grade: str | None) -> Iterator[LabelledRecord]:
    """ProcessBench: ``steps`` and ``label``, the first wrong step counted from 0 (-1: none). The
    annotators judged the steps up to the first error; what follows is unlabelled."""
    for n, x in enumerate(items):
        steps = x.get("steps") if isinstance(x, dict) else None
        if not is_step_list(steps):
            raise TraceError(f"record {n}: no steps list (a list of strings)")
        label = x.get("label")
        if type(label) is not int or not -1 <= label < len(steps):
            shown = repr(label)[:40]
            raise TraceError(f"record {n}: label {shown} is not -1 or a step index (0 to {len(steps) - 1})")
        verdicts: list[str | None] = (
            ["correct"] * label + ["wrong"] + [None] * (len(steps) - label - 1)
            if label >= 0
            else ["correct"] * len(steps)
        )
        imp = Imported("processbench", "", question=str(x.get("problem") or ""), record=n)
        said = x.get("final_answer_correct")
        imp.is_correct = said if isinstance(said, bool) else None
        imp.source_model = x["generator"] if isinstance(x.get("generator"), str) else None
        if isinstance(x.get("id"), str | int) and not isinstance(x.get("id"), bool):
            imp.info["item_id"] = str(x["id"])
        _grade(imp, x, n, grade)
        yield _record(imp, list(steps), verdicts, file)


def labelled_records(
    src: str | os.PathLike | list, *, limit: int | None = None, options: LabelOptions | None = None
) -> Iterator[LabelledRecord]:
    """The traces and labels of a labelled dataset (a path, or its parsed records)."""
    options = options or LabelOptions()
    data = src if isinstance(src, list) else read_input(src).data
    file = None if isinstance(src, list) else os.fspath(src)
    fmt = label_format(data)
    readers = {
        "mr_gsm8k": _mr_gsm8k,
        "prm800k": _prm800k_rows,
        "prm800k_raw": _prm800k_raw,
        "processbench": _processbench,
    }
    for i, rec in enumerate(readers[fmt](data, file, options.grade_field)):
        if limit is not None and i >= limit:
            return
        options.steps.add(rec.trace.info.get("source_steps"))
        yield rec
