"""Reading importable inputs and recognising their format: plain thinking text, ``<think>`` text
(chat-template dumps included), DeepSeek / OpenAI chat-completion JSON, OpenAI Responses JSON and
Anthropic Messages JSON. Each parser returns an :class:`Imported`; datasets live in
``o3viz.importers.datasets``, and the table that names and detects the formats in
``o3viz.importers.registry``.

Inputs are untrusted: sizes are checked before reading, JSON is parsed by ``o3viz.trace.safejson``
(nesting, values per byte, integer digits, no ``NaN``), and nothing is ever executed or evaluated.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from o3viz.errors import TraceError
from o3viz.trace.io import MAX_FILE_BYTES
from o3viz.trace.safejson import MAX_IMPORT_NESTING, BrokenJSON, loads, parse

MAX_IMPORT_BYTES = MAX_FILE_BYTES  # one limit for trace files and imports, on disk or uploaded
MAX_TEXT_CHARS = 20_000_000  # after decoding; a 30k-token trace is about 120k characters


@dataclass
class Imported:
    """What a format parser found in one input, before steps and checks are built."""

    format: str
    thinking: str  # the reasoning text (may be empty when a source gives only an answer)
    answer: str = ""  # the visible answer after the reasoning, if the source separates it
    question: str = ""
    reference: str | None = None  # the known correct answer, where the source has one
    is_correct: bool | None = None  # the source's own grading, where it has one
    source_model: str | None = None
    record: int | None = None  # index into a dataset
    file_answer: str | None = None  # the answer the source itself extracted, where it has one
    steps: list[str] | None = None  # the source's own steps, kept one to one (o3viz.importers.source_steps)
    info: dict = field(default_factory=dict)


@dataclass
class RawInput:
    """The decoded input: JSON data (dict/list), JSONL records, or text, plus where it came from."""

    data: Any
    kind: str  # json | jsonl | text
    file: str | None = None
    text: str | None = None  # the decoded text, when the input was text or a file


# ---------------------------------------------------------------- reading


def _decode(data: bytes, where: str) -> str:
    if len(data) > MAX_IMPORT_BYTES:
        raise TraceError(f"{where}: {len(data)} bytes exceeds the import limit of {MAX_IMPORT_BYTES} bytes")
    if data[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
                data = f.read(MAX_IMPORT_BYTES + 1)  # stops at the limit: a gzip bomb is never expanded
        except (OSError, EOFError, zlib.error) as exc:
            raise TraceError(f"{where}: not a valid gzip stream ({exc})") from None
        if len(data) > MAX_IMPORT_BYTES:
            raise TraceError(f"{where}: decompresses to more than the limit of {MAX_IMPORT_BYTES} bytes")
    if b"\x00" in data[:4096]:
        raise TraceError(f"{where}: binary data, not text or JSON (tried text, json, jsonl)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TraceError(f"{where}: not UTF-8 text at byte {exc.start} (tried text, json, jsonl)") from None


def looks_like_path(s: str) -> bool:
    if len(s) >= 4096 or "\n" in s or s.lstrip().startswith(("{", "[", "<")):
        return False
    try:
        return Path(s).is_file()
    except (OSError, ValueError):  # a sentence is not a path: "File name too long", NUL bytes
        return False


def read_input(src: Any) -> RawInput:
    """Decode a path, bytes, str (path or content), dict or list into a :class:`RawInput`."""
    if isinstance(src, dict | list):
        return RawInput(src, "json")
    file = None
    if isinstance(src, os.PathLike) or (isinstance(src, str) and looks_like_path(src)):
        from o3viz.trace.files import read_bounded

        path = Path(src)
        file, text = str(path), _decode(read_bounded(path, MAX_IMPORT_BYTES, "the import limit"), str(path))
    elif isinstance(src, bytes | bytearray):
        text = _decode(bytes(src), "(input)")
    elif isinstance(src, str):
        text = src
    else:
        raise TraceError(
            f"(input): cannot import a {type(src).__name__}; pass a path, bytes, str, dict or list"
        )
    if len(text) > MAX_TEXT_CHARS:
        raise TraceError(f"{file or '(input)'}: {len(text)} characters exceeds the limit of {MAX_TEXT_CHARS}")
    return _parse_text(text, file)


def _parse_text(text: str, file: str | None) -> RawInput:
    where = file or "(input)"
    head = text.lstrip()[:1]
    if head not in ("{", "["):
        return RawInput(text, "text", file, text)
    try:
        return RawInput(loads(text, where, max_nesting=MAX_IMPORT_NESTING), "json", file, text)
    except BrokenJSON as exc:
        if head != "{" or "\n" not in text.strip():
            raise BrokenJSON(f"{exc}; tried json, jsonl") from None
    try:  # JSON lines: the scan above passed the whole text, so each line is only parsed
        return RawInput(_parse_jsonl(text, where), "jsonl", file, text)
    except BrokenJSON as exc:
        raise BrokenJSON(f"{exc}; tried json, jsonl") from None


def _parse_jsonl(text: str, where: str) -> list[Any]:
    """The records of JSON-lines text that ``loads`` has scanned whole (so each line is only parsed)."""
    return [
        parse(line, f"{where}: line {n}", max_nesting=MAX_IMPORT_NESTING)
        for n, line in enumerate(text.splitlines(), 1)
        if line.strip()
    ]


# ---------------------------------------------------------------- text formats

# <think> and common synonyms; the closing tag alone is enough (templates often put the opening
# tag in the prompt, as the thought-anchors prompts do).
_OPEN = re.compile(r"<(think|thinking|reasoning)>|<\|begin_of_thought\|>", re.I)  # and OpenThoughts'
_CLOSE = re.compile(r"</(think|thinking|reasoning)>|<\|end_of_thought\|>", re.I)
# Chat-template user turns: DeepSeek (<｜User｜>…<｜Assistant｜>), ChatML, Llama-3.
_TEMPLATE_USER = (
    re.compile(r"<｜User｜>(.*?)<｜Assistant｜>", re.S),
    re.compile(r"<\|im_start\|>user\n(.*?)<\|im_end\|>", re.S),
    re.compile(r"<\|start_header_id\|>user<\|end_header_id\|>\s*(.*?)<\|eot_id\|>", re.S),
)
_SPECIAL = re.compile(r"<｜[^｜]{1,40}｜>|<\|[a-z_]{1,40}\|>")


def has_think_tags(text: str) -> bool:
    return bool(_CLOSE.search(text) or _OPEN.search(text))


def parse_think_text(text: str) -> Imported:
    """``[template…]<think>THINKING</think>ANSWER``; without a closing tag all of it is thinking."""
    question = ""
    for pat in _TEMPLATE_USER:
        m = pat.search(text)
        if m:
            question = m.group(1).strip()
            break
    close = _CLOSE.search(text)
    opened = _OPEN.search(text, 0, close.start() if close else len(text))
    start = opened.end() if opened else 0
    if not opened and question:  # a template dump without <think>: the reply starts after the user turn
        start = text.find(question) + len(question)
    thinking = text[start : close.start()] if close else text[start:]
    answer = text[close.end() :] if close else ""
    return Imported("think_tags", _clean(thinking), _clean(answer), question=question)


def _clean(s: str) -> str:
    """Drop chat-template special tokens (``<｜end▁of▁sentence｜>``) and surrounding blank space."""
    return _SPECIAL.sub("", s).strip()


def parse_plain_text(text: str) -> Imported:
    return Imported("plain_text", text.strip())


# ---------------------------------------------------------------- API JSON formats


def _text_of(content: Any) -> str:
    """Message content as text: a string, or a list of parts with ``text``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def _user_question(messages: Any) -> str:
    if not isinstance(messages, list):
        return ""
    users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    return _text_of(users[-1].get("content")).strip() if users else ""


def _split_answer(imp: Imported) -> Imported:
    """Some providers leave ``<think>`` inside ``content``; move it to the thinking."""
    if not imp.thinking and has_think_tags(imp.answer):
        inner = parse_think_text(imp.answer)
        imp.thinking, imp.answer = inner.thinking, inner.answer
    return imp


def parse_chat_completion(d: Any) -> Imported:
    """DeepSeek / OpenAI Chat Completions: ``choices[0].message.{reasoning_content, content}``."""
    choices = d.get("choices") if isinstance(d, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise TraceError("chat completion: no choices[0]")
    msg = choices[0].get("message") or choices[0].get("delta")
    if not isinstance(msg, dict):
        raise TraceError("chat completion: choices[0].message is missing")
    reasoning = msg.get("reasoning_content") or msg.get("reasoning") or ""
    fmt = "deepseek_chat" if "reasoning_content" in msg else "openai_chat"
    imp = Imported(
        fmt,
        _text_of(reasoning).strip(),
        _text_of(msg.get("content")).strip(),
        question=_user_question(d.get("messages")),
        source_model=_str(d.get("model")),
    )
    if isinstance(choices[0].get("finish_reason"), str):  # "length": cut at the token limit
        imp.info["stop_reason"] = choices[0]["finish_reason"][:40]
    return _split_answer(imp)


def parse_chat_messages(d: Any) -> Imported:
    """A conversation dump: ``[{"role": ..., "content": ...}, ...]`` or ``{"messages": [...]}``."""
    messages = d.get("messages") if isinstance(d, dict) else d
    replies = [m for m in messages or [] if isinstance(m, dict) and m.get("role") == "assistant"]
    if not replies:
        raise TraceError("chat messages: no assistant message")
    msg = replies[-1]
    reasoning = msg.get("reasoning_content") or msg.get("reasoning") or msg.get("thinking") or ""
    imp = Imported(
        "chat_messages",
        _text_of(reasoning).strip(),
        _text_of(msg.get("content")).strip(),
        question=_user_question(messages),
        source_model=_str(d.get("model")) if isinstance(d, dict) else None,
    )
    return _split_answer(imp)


def parse_openai_responses(d: Any) -> Imported:
    """OpenAI Responses API: ``output`` items ``reasoning`` (``summary[].text``) and ``message``."""
    output = d.get("output") if isinstance(d, dict) else None
    if not isinstance(output, list):
        raise TraceError("openai responses: no output list")
    thoughts, answers = [], []
    for item in output:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "reasoning":
            parts = (item.get("summary") or []) + (item.get("content") or [])
            thoughts += [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
        elif item.get("type") == "message":
            content = item.get("content") or []
            answers += [
                p["text"]
                for p in content
                if isinstance(p, dict)
                and p.get("type") in ("output_text", "text")
                and isinstance(p.get("text"), str)
            ]
    if not thoughts and not answers:
        raise TraceError("openai responses: no reasoning or message output")
    # ``input`` is the user's text, or a list of messages (the response object echoes it when stored)
    question = _user_question(d["input"]) if isinstance(d.get("input"), list) else d.get("input")
    return Imported(
        "openai_responses",
        "\n\n".join(t.strip() for t in thoughts),
        "\n\n".join(answers).strip(),
        question=_str(question) or "",
        source_model=_str(d.get("model")),
    )


def parse_anthropic(d: Any) -> Imported:
    """Anthropic Messages: ``content`` blocks of type ``thinking`` (``.thinking``) and ``text``."""
    blocks = d.get("content") if isinstance(d, dict) else None
    if not isinstance(blocks, list):
        raise TraceError("anthropic messages: no content list")
    thoughts = [b.get("thinking", "") for b in blocks if isinstance(b, dict) and b.get("type") == "thinking"]
    texts = [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    redacted = sum(1 for b in blocks if isinstance(b, dict) and b.get("type") == "redacted_thinking")
    if not thoughts and not texts:
        raise TraceError("anthropic messages: no thinking or text blocks")
    imp = Imported(
        "anthropic_messages",
        "\n\n".join(t.strip() for t in thoughts if isinstance(t, str)),
        "\n\n".join(t for t in texts if isinstance(t, str)).strip(),
        question=_user_question(d.get("messages")),
        source_model=_str(d.get("model")),
    )
    if redacted:
        imp.info["redacted_thinking_blocks"] = redacted
    return imp


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def detect_json_format(d: Any) -> str | None:
    """The API format of a decoded JSON value, or None (then it may be a dataset)."""
    if isinstance(d, dict):
        choices = d.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict) and "message" in choices[0]:
            msg = choices[0]["message"]
            return "deepseek_chat" if isinstance(msg, dict) and "reasoning_content" in msg else "openai_chat"
        if isinstance(d.get("output"), list) and (
            d.get("object") == "response"
            or any(isinstance(i, dict) and i.get("type") in ("reasoning", "message") for i in d["output"])
        ):
            return "openai_responses"
        if isinstance(d.get("content"), list) and any(
            isinstance(b, dict) and b.get("type") in ("thinking", "text", "redacted_thinking")
            for b in d["content"]
        ):
            return "anthropic_messages"
        if isinstance(d.get("messages"), list) and _is_conversation(d["messages"]):
            return "chat_messages"
    if isinstance(d, list) and _is_conversation(d):
        return "chat_messages"
    return None


def _is_conversation(items: list) -> bool:
    return (
        bool(items)
        and all(isinstance(m, dict) and "role" in m for m in items)
        and any(m.get("role") == "assistant" for m in items)
    )
