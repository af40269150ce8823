"""Inspect AI evaluation logs (UK AISI's ``inspect_ai``): the ``.eval`` file, a zip holding
``header.json`` (the task, the model, the results) and one ``samples/ID_epoch_N.json`` per sample
(members deflated or, since inspect_ai 0.3.2xx, zstd-compressed: method 93), and the ``.json`` log,
one object with ``eval``, ``results`` and ``samples``.

One trace per sample: the assistant's ``reasoning`` content blocks are the thinking (one block per
paragraph, so each block starts a step), the final completion is the answer, the input the
question and the target the reference; the first scorer's verdict (``C``/``I``, 1/0, true/false)
is the source's grade, and the task, model, scorer and sample id are kept as metadata.

The files are untrusted and read through ``o3viz.trace.bounded``: the file's size, its member
count and its central directory's size are checked from the zip's end record before zipfile parses
anything; a member's declared and real sizes are both capped before and while it is decompressed (a
zip bomb stops at the cap), and all members together against what the file may decode to; a
repeated member name is imported once; the JSON is read by ``o3viz.trace.safejson.loads``.

>>> rec = sample_record({"id": 1, "epoch": 1, "input": "2+2?", "target": "4", "scores": {"match": {"value": "C"}},
...     "messages": [{"role": "assistant", "content": [{"type": "reasoning", "reasoning": "2+2 = 4."},
...     {"type": "text", "text": "4"}]}], "output": {"completion": "4"}}, {"task": "t", "model": "m"})
>>> imp = parse_inspect(RawInput(rec, "json"), {})
>>> imp.thinking, imp.answer, imp.is_correct, imp.info["task"]
('2+2 = 4.', '4', True, 't')
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from o3viz.errors import TraceError, printable
from o3viz.importers.datasets import pick_record
from o3viz.importers.formats import MAX_IMPORT_BYTES, Imported, RawInput, has_think_tags, parse_think_text
from o3viz.trace import bounded
from o3viz.trace.bounded import Budget, BudgetError
from o3viz.trace.safejson import MAX_IMPORT_NESTING, loads

ZIP_MAGIC = b"PK\x03\x04"
MAX_MEMBER_BYTES = 64 * 1024 * 1024  # one sample (events included) or the header, decompressed
MAX_MEMBERS = 100_000
ZSTD = bounded.ZSTD  # the zip method number inspect_ai writes
MAX_EVAL_BYTES = bounded.MAX_ARCHIVE_BYTES  # the .eval file on disk, checked before it is opened
SAMPLE_KEYS = ("id", "epoch", "input", "target", "messages", "output", "scores", "metadata")
EVAL_KEYS = ("task", "model", "eval_id", "run_id", "created", "task_version")
_SAMPLE_NAME = re.compile(r"samples/[^/]+\.json")
_GRADES = {"C": True, "I": False, "correct": True, "incorrect": False}


# ---------------------------------------------------------------- reading the files


def read_member(
    z: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    where: str,
    cap: int | None = None,
    budget: Budget | None = None,
) -> bytes:
    """One member, decompressed, refused in one line past ``cap`` bytes (declared or real;
    default ``MAX_MEMBER_BYTES``): ``o3viz.trace.bounded.read_member``."""
    return bounded.read_member(z, info, where, MAX_MEMBER_BYTES if cap is None else cap, budget)


def parse_json(data: bytes, where: str) -> Any:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TraceError(f"{where}: not UTF-8 text at byte {exc.start}") from None
    return loads(text, where, max_nesting=MAX_IMPORT_NESTING)


def _open_zip(path: Path) -> zipfile.ZipFile:
    """The zip, opened only after its size and member count pass (``o3viz.trace.bounded``)."""
    return bounded.open_archive(path, MAX_MEMBERS, MAX_EVAL_BYTES, ".eval zip")


def _eval_info(z: zipfile.ZipFile, where: str) -> dict:
    try:
        info = z.getinfo("header.json")
    except KeyError:
        try:
            info = z.getinfo("_journal/start.json")  # a log still running has no header yet
        except KeyError:
            raise TraceError(f"{where}: a zip without header.json; not an Inspect .eval log") from None
    head = parse_json(
        read_member(z, info, where, min(MAX_MEMBER_BYTES, 16 * 1024 * 1024)), f"{where}: {info.filename}"
    )
    ev = head.get("eval") if isinstance(head, dict) else None
    if not isinstance(ev, dict):
        raise TraceError(f"{where}: {info.filename} has no 'eval' object; not an Inspect log")
    return {k: ev.get(k) for k in EVAL_KEYS if isinstance(ev.get(k), str | int)}


def _sample(
    z: zipfile.ZipFile, info: zipfile.ZipInfo, ev: dict, n: int, where: str, budget: Budget | None = None
) -> dict:
    name = printable(info.filename[:80])  # a member's name may hold a newline or ESC
    sample = parse_json(read_member(z, info, where, budget=budget), name)
    if not isinstance(sample, dict):
        raise TraceError(f"{name}: a JSON {type(sample).__name__}, not a sample")
    return sample_record(sample, ev, n)


def eval_samples(path: str | Path) -> Iterator[tuple[int, dict | None, str | None]]:
    """``(n, record, problem)`` per sample member of an ``.eval`` zip (``n`` from 1, in the zip's
    order): a record (``sample_record``) or, for a bad member, one line saying why."""
    path = Path(path)
    with _open_zip(path) as z:
        ev = _eval_info(z, path.name)
        budget, seen = Budget(path.name, path.stat().st_size), set()
        for n, info in enumerate(_members(z), 1):
            if info.filename in seen:  # zipfile lists a repeated name twice; its sample is one
                yield (
                    n,
                    None,
                    f"{printable(info.filename[:80])}: a duplicate member name; the first one is imported",
                )
                continue
            seen.add(info.filename)
            try:
                yield n, _sample(z, info, ev, n - 1, path.name, budget), None
            except BudgetError:
                raise  # the file as a whole is over its budget: nothing more is read
            except TraceError as exc:
                yield n, None, str(exc).replace(f"{path.name}: ", "")


def _members(z: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    return [i for i in z.infolist() if _SAMPLE_NAME.fullmatch(i.filename)]


def count_samples(path: str | Path) -> int:
    with _open_zip(Path(path)) as z:
        return len({i.filename for i in _members(z)})


def read_eval_sample(path: str | Path, record: int | None = None) -> dict:
    """Sample ``record`` (0-based, default 0) of an ``.eval`` zip as a record; only that member
    is decompressed."""
    path = Path(path)
    with _open_zip(path) as z:
        ev = _eval_info(z, path.name)
        members = list({i.filename: i for i in reversed(_members(z))}.values())[::-1]  # first of a name
        n, _ = pick_record([{}] * len(members), record, path.name)
        return _sample(z, members[n], ev, n, path.name)


def is_json_log(data: Any) -> bool:
    """An Inspect ``.json`` log (or ``read_eval``'s dict): ``eval`` with a task, and ``samples``."""
    return (
        isinstance(data, dict)
        and isinstance(data.get("eval"), dict)
        and "task" in data["eval"]
        and isinstance(data.get("samples", []), list)
    )


def json_log_samples(path: str | Path) -> Iterator[tuple[int, dict | None, str | None]]:
    """``(n, record, problem)`` per sample of an Inspect ``.json`` log (read whole, size-capped)."""
    from o3viz.trace.files import read_bounded

    path = Path(path)
    data = parse_json(read_bounded(path, MAX_IMPORT_BYTES, "the import limit"), path.name)
    if not is_json_log(data):
        raise TraceError(f"{path.name}: not an Inspect log (no 'eval' object with a task)")
    ev = {k: data["eval"].get(k) for k in EVAL_KEYS if isinstance(data["eval"].get(k), str | int)}
    for n, sample in enumerate(data.get("samples") or [], 1):
        if isinstance(sample, dict):
            yield n, sample_record(sample, ev, n - 1), None
        else:
            yield n, None, f"sample {n}: a JSON {type(sample).__name__}, not a sample"


def looks_like_json_log(head: bytes) -> bool:
    """The first bytes of an Inspect ``.json`` log: an object whose first keys are its version and
    status (what inspect_ai writes), never a JSONL record."""
    return bool(re.match(rb'\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:', head))


# ---------------------------------------------------------------- one sample → Imported


def sample_record(sample: dict, ev: dict, n: int | None = None) -> dict:
    """What a trace is built from (messages, output, scores, ...; not the events), with the log's
    task and model and the sample's position ``n`` in the log: one self-contained record."""
    return {"inspect_sample": {k: sample[k] for k in SAMPLE_KEYS if k in sample}, **ev, "index": n}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _reasoning(messages: list) -> tuple[list[str], int]:
    blocks, redacted = [], 0
    for m in messages:
        if not isinstance(m, dict) or m.get("role") != "assistant" or not isinstance(m.get("content"), list):
            continue
        for b in m["content"]:
            if not isinstance(b, dict) or b.get("type") != "reasoning":
                continue
            text = b.get("summary") if b.get("redacted") else b.get("reasoning")
            if b.get("redacted"):
                redacted += 1
            if isinstance(text, str) and text.strip():
                blocks.append(text.strip())
    return blocks, redacted


def _question(value: Any) -> str:
    if isinstance(value, list):  # chat messages: the last user turn
        users = [m for m in value if isinstance(m, dict) and m.get("role") == "user"]
        return _text(users[-1].get("content")) if users else ""
    return value if isinstance(value, str) else ""


def _grade(scores: Any) -> tuple[str | None, Any, bool | None]:
    """The first scorer's name, value and verdict (True/False, None where it is not a grade)."""
    if not isinstance(scores, dict) or not scores:
        return None, None, None
    name, score = next(iter(scores.items()))
    value = score.get("value") if isinstance(score, dict) else None
    if isinstance(value, bool):
        return name, value, value
    if isinstance(value, str):
        return name, value, _GRADES.get(value)
    if isinstance(value, int | float) and value in (0, 1):
        return name, value, bool(value)
    return name, value, None


def _thinking_and_answer(s: dict, output: dict) -> tuple[str, str, int]:
    """The reasoning blocks (one paragraph each), the final completion, and how many blocks were
    redacted; a model that writes ``<think>`` into its text is split like any think-tag import."""
    messages = s.get("messages") if isinstance(s.get("messages"), list) else []
    blocks, redacted = _reasoning(messages)
    answer = output.get("completion") if isinstance(output.get("completion"), str) else ""
    if not answer:
        last = next(
            (m for m in reversed(messages) if isinstance(m, dict) and m.get("role") == "assistant"), {}
        )
        answer = _text(last.get("content"))
    thinking = "\n\n".join(blocks)
    if not thinking and has_think_tags(answer):
        inner = parse_think_text(answer)
        thinking, answer = inner.thinking, inner.answer
    return thinking, answer, redacted


def parse_inspect(raw: RawInput, options: dict) -> Imported:
    """One Inspect sample (a ``sample_record``, or record ``options["record"]`` of a log)."""
    data = raw.data
    if is_json_log(data):
        ev = {k: data["eval"].get(k) for k in EVAL_KEYS if isinstance(data["eval"].get(k), str | int)}
        n, sample = pick_record(data.get("samples") or [], options.get("record"), raw.file or "(input)")
        data = sample_record(sample, ev, n)
    n = data.get("index") if isinstance(data.get("index"), int) else None
    s = data["inspect_sample"]
    output = s.get("output") if isinstance(s.get("output"), dict) else {}
    thinking, answer, redacted = _thinking_and_answer(s, output)
    target = s.get("target")
    reference = (
        target if isinstance(target, str) else target[0] if isinstance(target, list) and target else None
    )
    scorer, value, correct = _grade(s.get("scores"))
    info = {k: str(data[k]) for k in ("task", "eval_id") if data.get(k) is not None}
    info.update({"sample_id": str(s.get("id")), "epoch": str(s.get("epoch"))})
    if scorer is not None:
        info.update({"scorer": scorer, "score": str(value)})
    if redacted:
        info["redacted_thinking_blocks"] = redacted
    choices = output.get("choices") if isinstance(output.get("choices"), list) else []
    first = choices[0] if choices and isinstance(choices[0], dict) else {}
    stop = output.get("stop_reason", first.get("stop_reason"))
    if isinstance(stop, str):  # "max_tokens": cut at the token limit
        info["stop_reason"] = stop[:40]
    model = output.get("model") if isinstance(output.get("model"), str) else data.get("model")
    return Imported(
        "inspect_ai",
        thinking,
        answer.strip(),
        question=_question(s.get("input")),
        reference=reference if isinstance(reference, str) else None,
        is_correct=correct,
        source_model=model if isinstance(model, str) else None,
        record=n,
        info=info,
    )


def detect_inspect(raw: RawInput) -> bool:
    d = raw.data
    return is_json_log(d) or (isinstance(d, dict) and isinstance(d.get("inspect_sample"), dict))
