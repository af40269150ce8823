"""The one table of import formats: ``register_format(name, detect, parse)`` adds a format,
``list_formats()`` names them, ``detect_input`` picks the format of an input.

A format reads one kind of decoded input (``reads``: JSON, JSONL or text, see
``o3viz.importers.formats.RawInput``). Detection tries, for the input's kind, every format in the
order it was registered, then the fallbacks (formats that claim almost anything of their kind:
``json_dataset``, ``plain_text``), so a format registered later is still tried before them.
``parse(raw, options)`` returns the ``Imported`` text; ``options`` holds ``record`` and the
``*_field`` names of ``import_trace``. The built-in formats are registered at the end of this
module, in the order detection has always used.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from o3viz.errors import TraceError, UsageError
from o3viz.importers.datasets import is_dataset, parse_record, pick_record
from o3viz.importers.formats import (
    Imported,
    RawInput,
    detect_json_format,
    has_think_tags,
    parse_anthropic,
    parse_chat_completion,
    parse_chat_messages,
    parse_openai_responses,
    parse_plain_text,
    parse_think_text,
)
from o3viz.importers.inspect_log import detect_inspect, parse_inspect

Reads = Literal["json", "jsonl", "text"]
Detect = Callable[[RawInput], bool]
Parse = Callable[[RawInput, dict[str, Any]], Imported]
FIELD_OPTIONS = ("text_field", "question_field", "answer_field", "reference_field", "id_field", "model_field")


class UnknownFormatError(TraceError):
    """An input that no importer can read; the message lists the formats tried."""


@dataclass(frozen=True)
class Format:
    name: str
    detect: Detect  # does this input (already of kind ``reads``) look like this format?
    parse: Parse
    reads: Reads = "json"
    fallback: bool = False  # tried after the other formats of its kind


_FORMATS: dict[str, Format] = {}


def register_format(
    name: str, detect: Detect, parse: Parse, *, reads: Reads = "json", fallback: bool = False
) -> Format:
    """Add a format to the table (after those already there); refuses a name already taken."""
    if not isinstance(name, str) or not name.isidentifier():
        raise UsageError(f"format name {name!r}: use letters, digits and underscores")
    if name in _FORMATS:
        raise UsageError(f"format {name!r} is already registered")
    if reads not in ("json", "jsonl", "text"):
        raise UsageError(f"format {name!r}: reads must be json, jsonl or text, not {reads!r}")
    fmt = _FORMATS[name] = Format(name, detect, parse, reads, fallback)
    return fmt


def unregister_format(name: str) -> None:
    """Remove a format added with ``register_format`` (a no-op for a name not in the table)."""
    _FORMATS.pop(name, None)


def list_formats() -> tuple[str, ...]:
    """Every format's name, in the order they were registered."""
    return tuple(_FORMATS)


def get_format(name: str) -> Format:
    fmt = _FORMATS.get(name)
    if fmt is None:
        raise UsageError(f"unknown format {name!r}; choose one of {', '.join(_FORMATS)}")
    return fmt


def detect_input(raw: RawInput) -> Format:
    """The first format of the table that claims ``raw``; raises ``UnknownFormatError``."""
    where = raw.file or "(input)"
    if raw.kind == "text" and not raw.data.strip():
        raise UnknownFormatError(f"{where}: empty input (tried {', '.join(_FORMATS)})")
    kind = [f for f in _FORMATS.values() if f.reads == raw.kind]
    for fmt in [f for f in kind if not f.fallback] + [f for f in kind if f.fallback]:
        if fmt.detect(raw):
            return fmt
    what = ", ".join(list(raw.data)[:8]) if isinstance(raw.data, dict) else type(raw.data).__name__
    raise UnknownFormatError(
        f"{where}: not a known trace format ({raw.kind.upper()} with {what}; tried "
        f"{', '.join(f.name for f in kind) or 'no format for it'})"
    )


# ---------------------------------------------------------------- the built-in formats


def _api(name: str, parse: Callable[[Any], Imported]) -> None:
    register_format(name, lambda raw: detect_json_format(raw.data) == name, lambda raw, _: parse(raw.data))


def _text(name: str, parse: Callable[[str], Imported]) -> Parse:
    def read(raw: RawInput, _: dict) -> Imported:
        if raw.text is None:
            raise UsageError(f"format={name} needs text input, not a {type(raw.data).__name__}")
        return parse(raw.text)

    return read


def _dataset(name: str) -> Parse:
    """A record of a dataset; a record that is itself an API response is read by that format."""

    def read(raw: RawInput, options: dict) -> Imported:
        records = raw.data if isinstance(raw.data, list) else [raw.data]
        n, rec = pick_record(records, options.get("record"), raw.file or "(input)")
        fields = {k: options.get(k) for k in FIELD_OPTIONS}
        inner = detect_json_format(rec) if not any(fields.values()) else None
        if inner is not None:
            imp = get_format(inner).parse(RawInput(rec, "json", raw.file), options)
            imp.format, imp.record = f"{name}:{inner}", n
            return imp
        return parse_record(rec, n, name, **fields)

    return read


_api("deepseek_chat", parse_chat_completion)
_api("openai_chat", parse_chat_completion)
_api("openai_responses", parse_openai_responses)
_api("anthropic_messages", parse_anthropic)
_api("chat_messages", parse_chat_messages)
register_format("inspect_ai", detect_inspect, parse_inspect)  # Inspect AI logs (.eval, .json)
register_format("json_dataset", lambda raw: is_dataset(raw.data), _dataset("json_dataset"), fallback=True)
register_format("jsonl", lambda raw: True, _dataset("jsonl"), reads="jsonl")
register_format(
    "think_tags",
    lambda raw: has_think_tags(raw.data) or "<｜User｜>" in raw.data,
    _text("think_tags", parse_think_text),
    reads="text",
)
register_format(
    "plain_text", lambda raw: True, _text("plain_text", parse_plain_text), reads="text", fallback=True
)
