"""The import formats' table, ``FORMATS``: a ``o3viz.plugins.Registry`` like every other plug-in
kind, so a name already taken is refused and ``o3viz import --list`` prints the generated help.
``register_format(name, detect, parse, help=...)`` adds a format, ``list_formats()`` names them,
``detect_input`` picks the format of an input.

A format's factory takes no options and returns its ``Format`` (``detect``, ``parse``): the options
every dataset format reads are the one ``ImportFields`` dataclass (``o3viz.importers.fields``).
A format reads one kind of decoded input (``reads``: JSON, JSONL or text, see
``o3viz.importers.formats.RawInput``). Detection tries, for the input's kind, every format in the
order it was registered, then the fallbacks (formats that claim almost anything of their kind:
``json_dataset``, ``plain_text``), so a format registered later is still tried before them.
``parse(raw, options)`` returns the ``Imported`` text; ``options`` holds ``record`` and the
``ImportFields`` as a dict. The built-in formats are registered at the end of this module, in the
order detection has always used.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from o3viz.errors import TraceError, UsageError
from o3viz.importers.datasets import is_dataset, parse_record, pick_record
from o3viz.importers.fields import ImportFields
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
from o3viz.plugins import Registry

Reads = Literal["json", "jsonl", "text"]
Detect = Callable[[RawInput], bool]
Parse = Callable[[RawInput, dict[str, Any]], Imported]
FORMATS = Registry("format")


class UnknownFormatError(TraceError):
    """An input that no importer can read; the message lists the formats tried."""


@dataclass(frozen=True)
class Format:
    name: str
    detect: Detect  # does this input (already of kind ``reads``) look like this format?
    parse: Parse
    reads: Reads = "json"
    fallback: bool = False  # tried after the other formats of its kind

    def itself(self) -> Format:
        """The format's factory in ``FORMATS`` (a format has no options of its own)."""
        return self


def register_format(
    name: str,
    detect: Detect,
    parse: Parse,
    *,
    reads: Reads = "json",
    fallback: bool = False,
    help: str = "",
) -> Format:
    """Add a format to the table (after those already there); refuses a name already taken."""
    if not isinstance(name, str) or not name.isidentifier():
        raise UsageError(f"format name {name!r}: use letters, digits and underscores")
    if reads not in ("json", "jsonl", "text"):
        raise UsageError(f"format {name!r}: reads must be json, jsonl or text, not {reads!r}")
    fmt = Format(name, detect, parse, reads, fallback)
    FORMATS.register(name, fmt.itself, help or f"a {reads} format")
    return fmt


def unregister_format(name: str) -> None:
    """Remove a format added with ``register_format`` (a no-op for a name not in the table)."""
    FORMATS.unregister(name)


def list_formats() -> tuple[str, ...]:
    """Every format's name, in the order they were registered."""
    return FORMATS.names()


def get_format(name: str) -> Format:
    """The format ``name``; an unknown one is a one-line UsageError naming the formats."""
    return FORMATS.make(name)


def _formats() -> list[Format]:
    return [FORMATS.make(name) for name in FORMATS.names()]


def detect_input(raw: RawInput) -> Format:
    """The first format of the table that claims ``raw``; raises ``UnknownFormatError``."""
    where = raw.file or "(input)"
    if raw.kind == "text" and not raw.data.strip():
        raise UnknownFormatError(f"{where}: empty input (tried {', '.join(FORMATS.names())})")
    kind = [f for f in _formats() if f.reads == raw.kind]
    for fmt in [f for f in kind if not f.fallback] + [f for f in kind if f.fallback]:
        if fmt.detect(raw):
            return fmt
    what = ", ".join(list(raw.data)[:8]) if isinstance(raw.data, dict) else type(raw.data).__name__
    raise UnknownFormatError(
        f"{where}: not a known trace format ({raw.kind.upper()} with {what}; tried "
        f"{', '.join(f.name for f in kind) or 'no format for it'})"
    )


# ---------------------------------------------------------------- the built-in formats


def _api(name: str, parse: Callable[[Any], Imported], help: str) -> None:
    register_format(
        name, lambda raw: detect_json_format(raw.data) == name, lambda raw, _: parse(raw.data), help=help
    )


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
        fields = ImportFields.of(options)
        inner = detect_json_format(rec) if not fields.given() else None
        if inner is not None:
            imp = get_format(inner).parse(RawInput(rec, "json", raw.file), options)
            imp.format, imp.record = f"{name}:{inner}", n
            return imp
        return parse_record(rec, n, name, fields)

    return read


_api("deepseek_chat", parse_chat_completion, "DeepSeek API JSON (choices[].message with reasoning_content)")
_api("openai_chat", parse_chat_completion, "OpenAI chat completions JSON (choices[].message)")
_api("openai_responses", parse_openai_responses, "OpenAI Responses API JSON (output items)")
_api("anthropic_messages", parse_anthropic, "Anthropic Messages JSON (content blocks)")
_api("chat_messages", parse_chat_messages, "a list of role/content chat messages")
register_format(
    "inspect_ai",
    detect_inspect,
    parse_inspect,
    help="Inspect AI logs (.eval zip, .json), one sample a record",
)
register_format(
    "json_dataset",
    lambda raw: is_dataset(raw.data),
    _dataset("json_dataset"),
    fallback=True,
    help="a JSON list of records or one record object (the field options apply)",
)
register_format(
    "jsonl",
    lambda raw: True,
    _dataset("jsonl"),
    reads="jsonl",
    help="one JSON record per line (the field options apply)",
)
register_format(
    "think_tags",
    lambda raw: has_think_tags(raw.data) or "<｜User｜>" in raw.data,
    _text("think_tags", parse_think_text),
    reads="text",
    help="text with <think>…</think> (R1 output, chat-template dumps)",
)
register_format(
    "plain_text",
    lambda raw: True,
    _text("plain_text", parse_plain_text),
    reads="text",
    fallback=True,
    help="any other text: all of it is thinking",
)
