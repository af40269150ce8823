"""Importing reasoning traces that other models produced: ``import_trace`` and ``detect_format``.

Formats (``FORMATS``), detected in this order unless ``format=`` names one:

- JSON: ``deepseek_chat`` / ``openai_chat`` (``choices[].message``), ``openai_responses``
  (``output`` items), ``anthropic_messages`` (``content`` blocks), ``chat_messages`` (a list of
  role/content messages), then ``json_dataset`` (a list of records or one record object);
- ``jsonl``: one JSON record per line (a record may itself be an API response);
- text: ``think_tags`` (``<think>…</think>``, chat-template dumps) else ``plain_text``.

>>> t = import_trace("<think>2+3=5. So the sum is 5.</think>The answer is 5.", reference="5")
>>> t.provenance.source["format"], t.final.answer, t.final.checks[-1].verdict
('think_tags', '5', 'correct')
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from typing import Any

from o3viz.errors import TraceError, UsageError
from o3viz.importers.datasets import is_dataset, parse_record, pick_record
from o3viz.importers.formats import (
    JSON_PARSERS,
    Imported,
    RawInput,
    detect_json_format,
    has_think_tags,
    parse_plain_text,
    parse_think_text,
    read_input,
)
from o3viz.trace import Trace

TEXT_FORMATS = ("think_tags", "plain_text")
DATASET_FORMATS = ("json_dataset", "jsonl")
FORMATS = tuple(JSON_PARSERS) + DATASET_FORMATS + TEXT_FORMATS

__all__ = ["FORMATS", "UnknownFormatError", "detect_format", "import_trace"]


class UnknownFormatError(TraceError):
    """An input that no importer can read; the message lists the formats tried."""


def _detect(raw: RawInput) -> str:
    if raw.kind == "text":
        if not raw.data.strip():
            raise UnknownFormatError(f"{raw.file or '(input)'}: empty input (tried {', '.join(FORMATS)})")
        return "think_tags" if has_think_tags(raw.data) or "<｜User｜>" in raw.data else "plain_text"
    if raw.kind == "jsonl":
        return "jsonl"
    fmt = detect_json_format(raw.data)
    if fmt is not None:
        return fmt
    if is_dataset(raw.data):
        return "json_dataset"
    keys = ", ".join(list(raw.data)[:8]) if isinstance(raw.data, dict) else type(raw.data).__name__
    raise UnknownFormatError(
        f"{raw.file or '(input)'}: not a known trace format (JSON with {keys}; tried "
        f"{', '.join(JSON_PARSERS)}, json_dataset)"
    )


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (what import builds is acyclic; refcounting frees it).

    Measured on 16k and 32k one-claim steps: 7.1 s and 18.9 s with it on, 5.0 s and 10.2 s off."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def detect_format(src: Any) -> str:
    """The format name of ``src`` (a path, bytes, str, dict or list); raises ``TraceError``."""
    return _detect(src if isinstance(src, RawInput) else read_input(src))


def _parse(raw: RawInput, fmt: str, opts: dict) -> Imported:
    where = raw.file or "(input)"
    fields = {k: opts.get(k) for k in ("text_field", "question_field", "answer_field", "reference_field")}
    if fmt in TEXT_FORMATS:
        if raw.text is None:
            raise UsageError(f"format={fmt} needs text input, not a {type(raw.data).__name__}")
        return parse_think_text(raw.text) if fmt == "think_tags" else parse_plain_text(raw.text)
    if fmt in DATASET_FORMATS:
        records = raw.data if isinstance(raw.data, list) else [raw.data]
        n, rec = pick_record(records, opts.get("record"), where)
        inner = detect_json_format(rec) if not any(fields.values()) else None
        if inner is not None:  # a dataset of API responses: parse the record with its own parser
            imp = JSON_PARSERS[inner](rec)
            imp.format, imp.record = f"{fmt}:{inner}", n
            return imp
        return parse_record(rec, n, fmt, **fields)
    return JSON_PARSERS[fmt](raw.data)


def import_trace(
    src: Any,
    *,
    format: str | None = None,
    record: int | None = None,  # noqa: A002
    reference: str | None = None,
    question: str | None = None,
    text_field: str | None = None,
    question_field: str | None = None,
    answer_field: str | None = None,
    reference_field: str | None = None,
    claims: bool = True,
    enrich: bool = False,
    model: Any = None,
    tokenizer: Any = None,
    layers: Any = (),
    **enrich_options: Any,
) -> Trace:
    """Import one reasoning trace from ``src`` (a path, bytes, str, dict or list) as a ``Trace``.

    ``record`` picks a dataset record (default 0); the ``*_field`` options name dataset fields
    (dotted paths); ``reference``/``question`` override what the source says. ``enrich=True``
    teacher-forces the text through a local model for attention (``o3viz.importers.enrich``).
    Raises ``TraceError`` for unreadable input, naming the formats tried.
    """
    if format is not None and format not in FORMATS:
        raise UsageError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")
    raw = src if isinstance(src, RawInput) else read_input(src)
    fmt = format or _detect(raw)
    opts = {
        "record": record,
        "text_field": text_field,
        "question_field": question_field,
        "answer_field": answer_field,
        "reference_field": reference_field,
    }
    try:
        imp = _parse(raw, fmt, opts)
    except UnknownFormatError:
        raise
    except TraceError as exc:
        raise TraceError(f"{raw.file or '(input)'}: as {fmt}: {exc}") from None
    if not (imp.thinking or imp.answer):
        raise UnknownFormatError(f"{raw.file or '(input)'}: as {fmt}: no reasoning or answer text found")
    from o3viz.importers.build import build_trace

    with _gc_paused():  # the collector rescans the growing heap: with it on, big imports go quadratic
        trace = build_trace(
            imp,
            file=raw.file,
            reference=reference,
            question=question,
            claims=claims,
            options={"format": format, **opts},
        )
    if enrich:
        from o3viz.importers.enrich import enrich_trace

        enrich_trace(trace, model=model, tokenizer=tokenizer, layers=layers, **enrich_options)
    return trace
