"""Load errors in the user's language: one short line that says what is wrong and what to do, and
the technical detail kept apart (the app shows it in an expander). No streamlit here.

>>> explain_load_error("t.o3trace.json: (file): not valid JSON, perhaps truncated (Expecting ',' delimiter: line 9 column 2 (char 80))").line
't.o3trace.json: not an o3viz trace or a known reasoning format (expected JSON, JSONL or text)'
>>> explain_load_error("t.o3trace.json: (file): not valid JSON, perhaps truncated (Expecting value: line 1 column 1 (char 0))").line
't.o3trace.json: not an o3viz trace or a known reasoning format (expected JSON, JSONL or text) (the file is empty or not JSON)'
"""

from __future__ import annotations

from dataclasses import dataclass

NOT_A_TRACE = "not an o3viz trace or a known reasoning format (expected JSON, JSONL or text)"
_RULES = (  # (a phrase in the detail, what the user reads); the first that matches wins
    ("empty input", "empty file"),
    ("exceeds the limit", "too large for the app (the limit is 64 MiB); import it with the CLI instead"),
    ("schema_version", "made by another o3viz version: {detail}"),
    (
        "unknown file type",
        "unknown file type; upload .o3trace.json(.gz), reasoning as .txt, .json or .md, or a dataset "
        "as .jsonl(.gz), an Inspect AI .eval log or .parquet",
    ),
    ("binary data", "not JSON: binary data, not UTF-8 JSON, JSONL or text"),
    ("not valid JSON", NOT_A_TRACE),
    ("broken JSON", "broken JSON (perhaps cut off): " + NOT_A_TRACE),
    ("not a known trace format", NOT_A_TRACE),
    ("Not a gzipped file", "not a gzip file, though its name ends in .gz"),
    ("timed out", "took too long to read and was stopped; try the CLI (python -m o3viz import)"),
)


_PLAIN = ("not JSON", "expands to more than")


@dataclass
class LoadMessage:
    line: str  # what the page shows: "NAME: what is wrong"
    detail: str  # the technical message, for an expander


def _empty_json(detail: str) -> bool:
    return "Expecting value: line 1 column 1 (char 0)" in detail


def explain_load_error(error: str, *, empty: bool = False) -> LoadMessage:
    """``"NAME: technical detail"`` (as ``load_files`` reports it) → a line a user understands;
    ``empty`` when the file had no bytes at all."""
    name, _, detail = error.partition(": ")
    if not detail:
        return LoadMessage(error, error)
    if empty:
        return LoadMessage(f"{name}: empty file", detail)
    if detail.startswith(_PLAIN):  # already one line in the user's words
        return LoadMessage(f"{name}: {detail}", detail)
    if _empty_json(detail):
        return LoadMessage(f"{name}: {NOT_A_TRACE} (the file is empty or not JSON)", detail)
    for phrase, says in _RULES:
        if phrase in detail:
            return LoadMessage(f"{name}: {says.format(detail=detail.split(': ', 1)[-1])}", detail)
    return LoadMessage(f"{name}: could not be opened ({detail.split(' (', 1)[0][:120]})", detail)
