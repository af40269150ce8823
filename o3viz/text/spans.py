"""Splitting text into reasoning steps: paragraphs first, then lines, then sentences, with
character offsets back into the original text. Shared by capture (generated text) and the
importers (thinking text), so both give the same kind of step.

>>> [text[s:e] for text in ["First, 2+2=4. Then 4*3=12.\\n\\nSo the answer is 12."] for s, e in split_spans(text)]
['First, 2+2=4.', 'Then 4*3=12.', 'So the answer is 12.']
"""

from __future__ import annotations

import re

# A sentence ends at . ! ? followed by space and an upper-case letter, digit, quote or bracket.
# Decimal points (3.5) never match (no space follows); single-letter abbreviations, "e.g.", "i.e."
# and list markers at the start of a line ("1. ") are excluded by look-behinds.
_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\b[A-Za-z]\.)(?<!^\d\.)(?<!^\d\d\.)(?<!\be\.g\.)(?<!\bi\.e\.)\s+(?=[A-Z0-9\"'(\[$\\])",
    re.M,
)
_LINE = re.compile(r"[^\n]+")
MIN_STEP_CHARS = 3


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans, pos = [], start
    for m in _SENTENCE_END.finditer(text, start, end):
        spans.append((pos, m.start()))
        pos = m.end()
    spans.append((pos, end))
    return spans


def _strip(text: str, s: int, e: int) -> tuple[int, int]:
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return s, e


def split_spans(text: str, *, sentences: bool = True, max_chars: int = 600) -> list[tuple[int, int]]:
    """``[start, end)`` spans of the steps of ``text``: lines, each split into sentences.

    Lines that are part of a code block (indented or between ``` fences) stay whole, so code is
    one step per line. Sentence splitting applies to prose lines only; a prose sentence longer
    than ``max_chars`` is left as it is rather than cut mid-thought.
    """
    spans: list[tuple[int, int]] = []
    in_fence = False
    for m in _LINE.finditer(text):
        line = m.group()
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        is_code = (
            in_fence
            or line.startswith(("    ", "\t"))
            or line.lstrip().startswith(("def ", "return ", "```"))
        )
        parts = [(m.start(), m.end())] if (is_code or not sentences) else _sentences(text, m.start(), m.end())
        for s, e in parts:
            s, e = _strip(text, s, e)
            if e - s >= 1:
                spans.append((s, e))
    return _merge_tiny(text, spans)


def _merge_tiny(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Fold fragments shorter than MIN_STEP_CHARS (a stray "1." or "}") into the previous step."""
    out: list[tuple[int, int]] = []
    for s, e in spans:
        if out and e - s < MIN_STEP_CHARS:
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def token_ranges(spans: list[tuple[int, int]], token_offsets: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """For each char span, the ``[first, last+1)`` range of tokens that overlap it.

    >>> token_ranges([(0, 3), (4, 7)], [(0, 2), (2, 4), (4, 7)])
    [(0, 2), (2, 3)]
    """
    import bisect

    starts = [s for s, _ in token_offsets]
    ends = [e for _, e in token_offsets]
    out = []
    for s, e in spans:
        first = bisect.bisect_right(ends, s)  # first token ending after s
        last = bisect.bisect_left(starts, e)  # tokens starting before e
        out.append((first, max(first, last)))
    return out
