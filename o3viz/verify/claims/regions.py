"""Which parts of a text the claim checker reads, and in what pieces: lines that hold a digit
or a number word, grouped into pieces of at most ``CHUNK_CHARS``, up to a budget.

This is what keeps the checker linear and bounded on any input. Finding the lines is one regex
search per candidate line (each search jumps to the next digit in C), so a megabyte of prose,
newlines or spaces costs milliseconds; claims need numbers, so nothing is lost by skipping the
rest. Every piece is checked on its own (chains never cross a line end), so memory is bounded by
the piece size, and the budgets ``MAX_CHECK_CHARS`` and ``MAX_CLAIMS`` bound the time on
adversarial text dense with numbers; what lies past the budget is reported as unchecked, never silently dropped.
"""

from __future__ import annotations

import re

CHUNK_CHARS = 1 << 14  # characters per piece: bounds the per-piece token and offset lists
MAX_CHECK_CHARS = 120_000  # characters of numeric lines read per text (real traces: at most 70k)
MAX_CLAIMS = 2_000  # reading stops after the piece that reaches this many claims

NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty "
    "ninety hundred thousand million half twice double triple"
).split()
_CANDIDATE_RE = re.compile(r"\d|\b(?:" + "|".join(NUMBER_WORDS) + r")\b", re.I)


def numeric_lines(text: str, limit: int | None = None) -> list[tuple[int, int]]:
    """(start, end) of each run of consecutive lines holding a digit or a number word; ``end``
    includes the line's newline. Linear: each search starts past the previous line's end. With
    ``limit``, stops once the spans hold that many characters (the rest is never scanned)."""
    spans: list[tuple[int, int]] = []
    pos, n, total = 0, len(text), 0
    while pos < n and (limit is None or total < limit):
        m = _CANDIDATE_RE.search(text, pos)
        if m is None:
            break
        start = text.rfind("\n", pos, m.start()) + 1 or pos
        start = max(start, pos)
        end = text.find("\n", m.end())
        end = n if end < 0 else end + 1
        if spans and spans[-1][1] == start:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
        total += end - start
        pos = end
    return spans


def pieces(text: str, spans: list[tuple[int, int]], size: int = CHUNK_CHARS) -> list[tuple[int, int]]:
    """``spans`` cut into pieces of at most ``size`` characters, each ending at a newline where
    one falls in its second half, else after a sentence end or a space, else where it must."""
    out = []
    for lo, end in spans:
        while lo < end:
            hi = min(lo + size, end)
            if hi < end:
                half = lo + size // 2
                cut = max(text.rfind("\n", half, hi), text.rfind(". ", half, hi))
                cut = cut if cut >= 0 else text.rfind(" ", half, hi)
                hi = cut + 1 if cut >= 0 else hi
            out.append((lo, hi))
            lo = hi
    return out


def has_number(text: str, piece: tuple[int, int]) -> bool:
    """Whether ``text[lo:hi]`` holds a digit or a number word (a long line's number-free pieces
    are skipped: "$ $ $ … 1 + 1 = 3" reads only the end)."""
    return _CANDIDATE_RE.search(text, *piece) is not None


def clean_cut(text: str, b: int) -> bool:
    """Whether a piece boundary at ``b`` falls between sentences (text start or end, after a
    newline, or after a full stop followed by a space), so no claim can straddle it."""
    return b <= 0 or b >= len(text) or text[b - 1] == "\n" or (text[b - 1] == "." and text[b] == " ")


def safe_span(text: str, lo: int, hi: int) -> tuple[int, int]:
    """The part of piece ``[lo, hi)`` whose claims cannot have been cut by a boundary: from the
    first sentence end after an unclean start to the last one before an unclean end."""
    a, b = lo, hi
    if not clean_cut(text, lo):
        ends = [i for i in (text.find("\n", lo, hi), text.find(". ", lo, hi)) if i >= 0]
        a = min(ends) + 1 if ends else hi
    if not clean_cut(text, hi):
        b = max(text.rfind("\n", lo, hi), text.rfind(". ", lo, hi)) + 1
        b = b if b > 0 else lo
    return a, max(a, b)


def budgeted(
    parts: list[tuple[int, int]], budget: int = MAX_CHECK_CHARS
) -> tuple[list[tuple[int, int]], int]:
    """The leading ``parts`` that fit in ``budget`` characters (the last one trimmed), and how
    many characters of ``parts`` are left over."""
    kept, used = [], 0
    for lo, hi in parts:
        take = min(hi - lo, budget - used)
        if take <= 0:
            break
        kept.append((lo, lo + take))
        used += take
    total = sum(hi - lo for lo, hi in parts)
    return kept, total - used
