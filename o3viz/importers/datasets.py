"""JSON and JSONL datasets of reasoning traces: picking a record, reading its fields (dotted paths
such as ``base_solution.solution``) with defaults that fit the files in ``../shared/data/traces``,
and the licence and origin of a known source file (read from the README beside it).

Field defaults, tried in order (the first present, non-empty string wins):

- text: ``full_response``, ``base_solution.solution``, ``response``, ``completion``, ``output``,
  ``generation``, ``text``, ``solution``; thinking-only fields ``reasoning_trace``,
  ``reasoning_content``, ``reasoning``, ``thinking`` are used when no text field is present; last,
  ``answer`` (a question/answer benchmark such as GSM8K's test file);
- question: ``problem`` (or ``problem.problem``), ``question``, ``scenario.user_prompt``, ``prompt``,
  ``input``, ``instruction``, ``query`` (never the field that is the text);
- answer text: ``answer_text``, ``content``; reference: ``ground_truth``, ``problem.gt_answer``,
  ``gt_answer``, ``reference``, ``expected_answer``, ``target``, and a benchmark's own ``answer``
  when the text is its worked ``answer`` or ``solution`` (reduced to its answer by
  ``o3viz.text.reference``);
- the file's own grading: the field ``grade_field`` names (true/false, 1/0, "correct"/"incorrect"),
  else ``is_correct``, ``base_solution.is_correct``, ``final_answer_correct``; its extracted answer:
  ``extracted_answer``, ``base_solution.answer``; model: ``model_name``, ``model``; id:
  ``item_id``, ``problem_id``, ``id``, ``unique_id``, ``uuid``, ``idx``.

A text field that is a list of strings (ProcessBench's ``steps``) is the source's own steps: each
becomes one step of the trace (``o3viz.importers.source_steps``).

So the common shapes read without options: question/answer, problem/solution, prompt/response,
prompt/completion, input/output, instruction/output, query/response.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from o3viz.errors import TraceError
from o3viz.importers.fields import ImportFields, read_grade
from o3viz.importers.formats import Imported, has_think_tags, parse_think_text
from o3viz.importers.source_steps import join_steps

TEXT_FIELDS = (
    "full_response",
    "base_solution.solution",
    "response",
    "completion",
    "output",
    "generation",
    "text",
    "solution",
    "steps",  # a list of step strings (as_text)
)
THINKING_FIELDS = ("reasoning_trace", "reasoning_content", "reasoning", "thinking")
# the text of a question/answer benchmark (GSM8K's test file: the worked answer), tried last
LAST_TEXT_FIELDS = ("answer",)
QUESTION_FIELDS = (
    "problem",
    "problem.problem",
    "question",
    "scenario.user_prompt",
    "prompt",
    "input",
    "instruction",
    "query",
)
ANSWER_FIELDS = ("answer_text", "content")
REFERENCE_FIELDS = (
    "ground_truth",
    "problem.gt_answer",
    "gt_answer",
    "reference",
    "expected_answer",
    "target",
)
CORRECT_FIELDS = ("is_correct", "base_solution.is_correct", "final_answer_correct")  # the last: ProcessBench
MISSING = object()  # get_field's answer for a field the record lacks (a null is None)
FILE_ANSWER_FIELDS = ("extracted_answer", "base_solution.answer")
MODEL_FIELDS = ("model_name", "model")
ID_FIELDS = ("item_id", "problem_id", "id", "unique_id", "uuid", "idx")
# a benchmark's worked solution whose marked answer is also the reference: GSM8K's test file
# (question, answer "… #### 18") and MATH (problem, solution "… \\boxed{…}", answer)
SOLUTION_REFERENCE = {"answer": "answer", "solution": "answer", "steps": "answer"}


def get_field(record: Any, path: str, missing: Any = None) -> Any:
    """``record["a"]["b"]`` for ``"a.b"``, and a list item for a number (``generations.0``,
    ``conversations.1.value``: OpenR1 and OpenThoughts columns); ``missing`` (None) where any part
    is missing.

    >>> get_field({"conversations": [{"value": "q"}, {"value": "a"}]}, "conversations.1.value")
    'a'
    """
    cur = record
    for part in path.split("."):
        if isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        elif isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return missing
    return cur


def _first_str(record: dict, fields: tuple[str, ...]) -> str | None:
    return first_field(record, fields)[1]


def as_text(v: object) -> str | None:
    """A field's value as text: a string, a number written out, or a list of strings (a record's
    steps) a blank line apart (``o3viz.importers.source_steps``); None for anything else.

    >>> as_text(["3*4 = 12.", "2 + 12 = 14."]), as_text(14), as_text([1, "a"]), as_text(True)
    ('3*4 = 12.\\n\\n2 + 12 = 14.', '14', None, None)
    """
    if isinstance(v, str):
        return v
    if isinstance(v, int | float) and not isinstance(v, bool):
        return str(v)
    if is_step_list(v):
        return join_steps(v)  # type: ignore[arg-type]
    return None


def is_step_list(v: object) -> bool:
    """A non-empty list of strings, one of which holds text: a source's own steps."""
    return (
        isinstance(v, list) and bool(v) and all(isinstance(x, str) for x in v) and any(x.strip() for x in v)
    )


def first_field(record: dict, fields: tuple[str, ...]) -> tuple[str | None, str | None]:
    """``(name, text)`` of the first of ``fields`` that holds non-empty text (``as_text``)."""
    for f in fields:
        v = as_text(get_field(record, f))
        if v is not None and v.strip():
            return f, v
    return None, None


def pick_field(
    record: dict, name: str | None, defaults: tuple[str, ...], option: str
) -> tuple[str | None, str | None]:
    """``(field, text)``: the field ``name`` (a one-line ``TraceError`` when the record lacks it or
    it is not text), else the first default present."""
    if name is None:
        return first_field(record, defaults)
    return name, _named(record, name, defaults, option)


def _named(record: dict, name: str | None, defaults: tuple[str, ...], option: str) -> str | None:
    if name is None:
        return _first_str(record, defaults)
    v = get_field(record, name)
    if v is None:
        raise TraceError(
            f"{option}={name!r}: no such field in the record (fields: {', '.join(list(record)[:12])})"
        )
    text = as_text(v)
    if text is None:
        what = "list of non-strings" if isinstance(v, list) else type(v).__name__
        raise TraceError(f"{option}={name!r}: the field is a {what}, not text or a list of steps")
    return text


def pick_record(records: list, record: int | None, where: str) -> tuple[int, dict]:
    if not records:
        raise TraceError(f"{where}: the dataset has no records")
    n = 0 if record is None else record
    if not -len(records) <= n < len(records):
        raise TraceError(f"{where}: record {n} is out of range (the dataset has {len(records)} records)")
    rec = records[n]
    if not isinstance(rec, dict):
        raise TraceError(f"{where}: record {n} is a {type(rec).__name__}, not an object")
    return n % len(records), rec


def parse_record(rec: dict, n: int, fmt: str, fields: ImportFields | None = None) -> Imported:
    """One dataset record as an :class:`Imported`, its parts found in the named ``fields`` or else
    the usual names; raises ``TraceError`` naming what is missing. ``info["fields"]`` names the
    field each part came from (what an import preview shows)."""
    f = fields or ImportFields()
    text_field, answer_field, reference_field = f.text_field, f.answer_field, f.reference_field
    text_name, text = pick_field(rec, text_field, TEXT_FIELDS, "text_field")
    thinking_only = None if text is not None else _first_str(rec, THINKING_FIELDS)
    if text is None and thinking_only is None:
        text_name, text = first_field(rec, LAST_TEXT_FIELDS)
    if text is None and thinking_only is None:
        tried = ", ".join(TEXT_FIELDS + THINKING_FIELDS + LAST_TEXT_FIELDS)
        raise TraceError(
            f"record {n}: no text field (tried {tried}; fields: {', '.join(list(rec)[:12])}; pass text_field=)"
        )
    steps = None
    if text is not None and has_think_tags(text):
        inner = parse_think_text(text)
        thinking, answer = inner.thinking, inner.answer
    else:
        thinking, answer = (text or thinking_only or "").strip(), ""
        raw = get_field(rec, text_name) if text_name else None
        steps = list(raw) if is_step_list(raw) else None  # the source's steps, kept one to one
    if not answer or answer_field is not None:
        answer = (_named(rec, answer_field, ANSWER_FIELDS, "answer_field") or answer).strip()
    question_name, question = pick_field(rec, f.question_field, QUESTION_FIELDS, "question_field")
    if question_name == text_name:  # "prompt" is a question only when it is not the text itself
        question_name, question = None, None
    ref_name, reference = _reference(rec, reference_field, text_name)
    model_name, model = pick_field(rec, f.model_field, MODEL_FIELDS, "model_field")
    id_name, item = pick_field(rec, f.id_field, ID_FIELDS, "id_field")
    correct = source_grade(rec, f.grade_field)
    info = {k: rec[k] for k in ("dataset", "condition") if isinstance(rec.get(k), str)}
    if item is not None:
        info["item_id"] = item
    generated = get_field(rec, "total_generated_tokens")  # the source's own count (the topology files)
    if isinstance(generated, int) and not isinstance(generated, bool) and 0 <= generated < 2**31:
        info["generated_tokens"] = generated
    names = {"text": text_name or thinking_name(rec), "question": question_name, "reference": ref_name}
    info["fields"] = {k: v for k, v in {**names, "id": id_name, "model": model_name}.items() if v}
    return Imported(
        fmt,
        thinking,
        answer,
        question=_unquote(question or "").strip(),
        reference=reference,
        is_correct=correct,
        source_model=model,
        record=n,
        file_answer=_first_str(rec, FILE_ANSWER_FIELDS),
        info=info,
        steps=steps,
    )


def source_grade(rec: dict, name: str | None) -> bool | None:
    """The source's own grade: the field ``name`` (``--grade-field``; a one-line ``TraceError``
    when the record lacks it or its value is no grade; null is ungraded), else the first default
    grade field that holds true or false (``CORRECT_FIELDS``)."""
    if name is None:
        return next((v for f in CORRECT_FIELDS if isinstance(v := get_field(rec, f), bool)), None)
    v = get_field(rec, name, MISSING)
    if v is MISSING:
        raise TraceError(
            f"grade_field={name!r}: no such field in the record (fields: {', '.join(list(rec)[:12])})"
        )
    return None if v is None else read_grade(v, f"grade_field={name!r}")


def thinking_name(rec: dict) -> str | None:
    return first_field(rec, THINKING_FIELDS)[0]


def _reference(
    rec: dict, reference_field: str | None, text_name: str | None
) -> tuple[str | None, str | None]:
    """The reference field: the one named, else a default reference field, else a benchmark's
    own answer (``SOLUTION_REFERENCE``: GSM8K's "answer" is both the text and, reduced to its
    ``#### N``, the reference)."""
    name, value = pick_field(rec, reference_field, REFERENCE_FIELDS, "reference_field")
    if value is None and reference_field is None and text_name in SOLUTION_REFERENCE:
        name, value = first_field(rec, (SOLUTION_REFERENCE[text_name],))
    return name, value


def _unquote(s: str) -> str:
    """Some merged files store strings as Python reprs (``'text'``); drop one matching quote pair."""
    return s[1:-1] if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"" else s


def is_dataset(data: Any) -> bool:
    """A list of JSON objects, or one object that has a text or thinking field."""
    if isinstance(data, list):
        return bool(data) and all(isinstance(r, dict) for r in data[:50])
    return (
        isinstance(data, dict)
        and _first_str(data, TEXT_FIELDS + THINKING_FIELDS + LAST_TEXT_FIELDS) is not None
    )


# ---------------------------------------------------------------- licence of known files

_LICENCE = re.compile(r"Licen[cs]e:\s*([A-Za-z0-9.\-]+),?\s*([\w.\-]+/[\w.\-]+)?\s*(@\w+)?")


def describe_source(file: str | None) -> dict:
    """Licence and origin of a file, read from the nearest README.md above it that names it.

    The README's bullet for the file (or its folder) must carry ``Licence: X, owner/repo @commit``,
    as ``../shared/data/README.md`` does. Returns ``{}`` when nothing names the file.
    """
    if not file:
        return {}
    path = Path(file).resolve()
    for folder in list(path.parents)[:3]:
        readme = folder / "README.md"
        if readme.is_file() and readme.stat().st_size < 1_000_000:
            found = _licence_from_readme(readme.read_text(errors="replace"), path)
            if found:
                return found
    return {}


def _licence_from_readme(text: str, path: Path) -> dict:
    names = [path.name, path.parent.name + "/"]
    blocks = re.split(r"\n(?=- \*\*|## )", text)
    for i, block in enumerate(blocks):
        if any(n in block for n in names):
            # the licence may sit in the block itself or in the next indented lines
            for cand in blocks[i : i + 2]:
                m = _LICENCE.search(cand)
                if m:
                    out = {"license": m.group(1).rstrip(",")}
                    if m.group(2):
                        out["origin"] = m.group(2) + (" " + m.group(3) if m.group(3) else "")
                    return out
    return {}
