"""Final answers: the one extractor of the answer a text states (used by capture, solve, the
importers and the claim checker), and the comparison of an answer with a reference by basic math
equivalence.

Extraction, first rule that matches (the ``method``):

1. ``boxed``: the last closed ``\\boxed{…}`` / ``\\fbox{…}`` (braces matched, so
   ``\\boxed{\\frac{1}{2}}`` works);
2. ``hashes``: ``#### N`` (GSM8K);
3. ``answer_label``: the rest of the sentence after "Final answer:", "Answer:", "the answer is" or a
   line "A: N" (GSM8K model solutions), the last one in the text;
4. ``final_math``: the last math span (``\\(…\\)``, ``$…$``, ``\\[…\\]``) of the last paragraph,
   right-hand side of its last ``=``;
5. ``conclusion``: a non-numeric answer: a concluding sentence after the last number ("Thus,
   Evelyn's average speed is the largest.") names a capitalised word, taken as the answer;
6. ``last_number``: the last number in the text.

``boxed``, ``hashes`` and ``answer_label`` are *strong* (``STRONG_METHODS``): the text says it is
the answer. ``round_answer(text, kind)`` is what a run stores: ``extract_answer`` for math, a
strong answer or else the last line for other tasks.

Every scan is linear in the text: braces are matched in one pass, whitespace runs are consumed by
possessive quantifiers or by character classes that stop at a newline, and math spans are found
from the end with ``rfind`` rather than by a lazy regex.

Equivalence (``answers_equivalent``): both sides are normalized (``$``, ``\\left``/``\\right``,
``\\text{}``, ``\\dfrac``→``\\frac``, degrees ``^\\circ``/``°``, ``%``, a leading ``x =``, thousands
commas, spaces). Equal strings match; otherwise both are evaluated as numbers with a small safe
parser (integers, decimals, ``a/b``, ``\\frac``, ``\\sqrt``, ``\\pi``, ``^``, implicit products such as
``3\\sqrt{13}``) and match within 1e-6 relative; tuples and intervals match element-wise. Nothing is
ever evaluated by Python itself. Answers longer than ``MAX_ANSWER_CHARS`` never compare equal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from o3viz.text.equivalence import (  # noqa: F401 (re-exported: callers import them from here)
    MAX_ANSWER_CHARS,
    answers_equivalent,
    evaluate_number,
    normalize_answer,
)

Method = Literal["boxed", "hashes", "answer_label", "final_math", "conclusion", "last_number", "last_line"]
STRONG_METHODS: tuple[str, ...] = ("boxed", "hashes", "answer_label")


@dataclass
class AnswerSpan:
    """An extracted answer: ``text`` as written and its ``[start, end)`` in the searched text."""

    text: str
    start: int
    end: int
    method: Method

    @property
    def strong(self) -> bool:
        """Whether the text marks this as its answer (boxed, ``####``, "the answer is")."""
        return self.method in STRONG_METHODS


_BOXED = re.compile(r"\\(?:boxed|fbox)[^\S\n]*+\{")
_HASHES = re.compile(r"^####[^\S\n]*+([^\n]*)", re.M)
_LABEL = re.compile(
    r"\b(?i:final answer|answer)\b[^\S\n]*+(?:\*\*)?[^\S\n]*+(?i:is\b|[:：])[\s:*]*+([^\s*][^\n]*)"
)
_A_LINE = re.compile(r"^[^\S\n]*+A[^\S\n]*+:[^\S\n]*+(-?\$?[\d.][^\n]*)", re.M)  # GSM8K "A: 26"
_SENTENCE_END = re.compile(r"(?<=[.?!])\s")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")
_CONCLUSION = re.compile(
    r"\b(?:Thus|Therefore|Hence|So),?[^\S\n]++(?:the answer is[^\S\n]++)?\**([A-Z][a-z]+)\**(?:['’]s)?[^\S\n]"
)
_NOT_NAMES = {"The", "This", "That", "These", "We", "It", "Its", "They", "There", "In", "If", "Our", "Each"}


def extract_answer(text: str, methods: tuple[str, ...] | None = None) -> AnswerSpan | None:
    """The final answer stated in ``text`` (see the module docstring for the rules); with
    ``methods``, only those rules are tried (in the usual order).

    >>> extract_answer("So 6 * 7 = 42.\\n\\nThe answer is \\\\boxed{42}.").text
    '42'
    """
    for method, finder in _FINDERS:
        if methods is not None and method not in methods:
            continue
        found = finder(text)
        if found is not None and found.text.strip():
            return found
    return None


def extract_strong_answer(text: str) -> AnswerSpan | None:
    """The answer ``text`` marks as such (``boxed``, ``hashes``, ``answer_label``), or None."""
    return extract_answer(text, STRONG_METHODS)


def round_answer(text: str, kind: str) -> AnswerSpan | None:
    """The answer a run stores for its round: ``extract_answer`` for math; for other tasks a
    strong answer or else the last non-empty line (at most 200 characters)."""
    if kind == "math":
        return extract_answer(text)
    found = extract_strong_answer(text)
    if found is not None:
        return found
    end = len(text.rstrip())
    start = text.rfind("\n", 0, end) + 1
    line = text[start:end]
    lead = len(line) - len(line.lstrip())
    line = line.strip()[:200]
    return AnswerSpan(line, start + lead, start + lead + len(line), "last_line") if line else None


def answer_in_regions(text: str, regions: dict[str, list[int]], kind: str) -> AnswerSpan | None:
    """The final answer of an imported text split into ``answer`` and ``thinking`` regions, in
    tiers: a strong answer in the answer part, then its final math or conclusion, then a strong
    answer in the thinking ("So final answer: Evelyn."), then the answer part's last number, and
    last the thinking's final math (or, for math tasks only, its conclusion or last number: a
    puzzle's last number is rarely its answer)."""
    weak = ("final_math", "conclusion", "last_number") if kind == "math" else ("final_math",)
    tiers = (
        ("answer", STRONG_METHODS),
        ("answer", ("final_math", "conclusion")),
        ("thinking", STRONG_METHODS),
        ("answer", ("last_number",)),
        ("thinking", weak),
    )
    for part, methods in tiers:
        if part not in regions:
            continue
        a, b = regions[part]
        found = extract_answer(text[a:b], methods)
        if found is not None:
            return AnswerSpan(found.text, a + found.start, a + found.end, found.method)
    return None


def _brace_matches(text: str) -> dict[int, int]:
    """For each ``{`` its matching ``}`` (one pass with a stack; unmatched ones are absent)."""
    match, stack = {}, []
    for m in re.finditer(r"[{}]", text):
        if m.group() == "{":
            stack.append(m.start())
        elif stack:
            match[stack.pop()] = m.start()
    return match


def _find_boxed(text: str) -> AnswerSpan | None:
    opens = [m.end() for m in _BOXED.finditer(text)]
    if not opens:
        return None
    match = _brace_matches(text)
    for start in reversed(opens):
        end = match.get(start - 1, -1)
        if end > start:
            inner = text[start:end]
            lead = len(inner) - len(inner.lstrip())
            value = inner.strip()
            return AnswerSpan(value, start + lead, start + lead + len(value), "boxed")
    return None


def _last_match(rx: re.Pattern, text: str, lo: int = 0) -> re.Match | None:
    """The last match of a one-line pattern in ``text[lo:]``, searched in windows that double
    from the end (each starts at a line start): cheap when the answer is near the end, 2n at worst."""
    size, n = 4096, len(text)
    while True:
        start = max(lo, text.rfind("\n", lo, max(lo, n - size)) + 1) if n - size > lo else lo
        last = None
        for last in rx.finditer(text, start):  # noqa: B007 (the last match is wanted)
            pass
        if last is not None or start == lo:
            return last
        size *= 2


def _find_hashes(text: str) -> AnswerSpan | None:
    last = _last_match(_HASHES, text) if "####" in text else None
    if last is None:
        return None
    value = last.group(1).rstrip()
    return AnswerSpan(value, last.start(1), last.start(1) + len(value), "hashes")


def _last_label(text: str) -> re.Match | None:
    """The last "answer is …" / "Answer: …" / "A: …" match. Candidates come from ``str.rfind``
    (C speed; a case-insensitive regex scan of 10 MB takes a second), tried from the end."""
    found = None
    cursors = {w: text.rfind(w) for w in ("nswer", "NSWER")}  # each only moves left: linear
    while True:
        word, i = max(cursors.items(), key=lambda kv: kv[1])
        if i < 1:
            break
        found = _LABEL.match(text, i - 1)
        if found is not None:
            break
        cursors[word] = text.rfind(word, 0, i)
    if "A:" in text or "A :" in text:
        a_line = _last_match(_A_LINE, text)
        if a_line is not None and (found is None or a_line.start() > found.start()):
            found = a_line
    return found


def _find_label(text: str) -> AnswerSpan | None:
    m = _last_label(text)
    if m is None:
        return None
    g = 1
    value = _SENTENCE_END.split(m.group(g), maxsplit=1)[0]
    # "the answer is different?" or "…is simpler than I thought" muse about an answer; they state none
    if value.endswith("?") or len(value) > 80 or (len(value.split()) > 5 and not re.search(r"\d|\\", value)):
        return None
    value = value.rstrip(" .*")
    return AnswerSpan(value, m.start(g), m.start(g) + len(value), "answer_label")


def _last_math_span(text: str, lo: int) -> tuple[int, int] | None:
    """(start, end) of the inside of the math span that closes last in ``text[lo:]``."""
    best = None
    for opener, closer in (("\\(", "\\)"), ("\\[", "\\]"), ("$$", "$$")):
        close = text.rfind(closer, lo)
        open_ = text.rfind(opener, lo, close) if close >= 0 else -1
        if open_ >= 0 and (best is None or close > best[1]):
            best = (open_ + len(opener), close)
    close = text.rfind("$", lo)
    if close > 0 and text[close - 1] != "$" and (best is None or close > best[1]):
        open_ = text.rfind("$", max(lo, text.rfind("\n", lo, close) + 1), close)
        if open_ >= 0 and close - open_ > 1 and text[open_ + 1] != "$":
            best = (open_ + 1, close)
    return best


def _find_final_math(text: str) -> AnswerSpan | None:
    para_start = text.rstrip().rfind("\n\n") + 1
    span = _last_math_span(text, para_start)
    if span is None:
        return None
    start, end = span
    inner = text[start:end]
    eq = max(inner.rfind("="), inner.rfind("\\approx"))
    if eq >= 0:
        skip = eq + (7 if inner.startswith("\\approx", eq) else 1)
        start, inner = start + skip, inner[skip:]
    lead = len(inner) - len(inner.lstrip())
    value = inner.strip().rstrip(".,")
    return AnswerSpan(value, start + lead, start + lead + len(value), "final_math")


def _find_conclusion(text: str) -> AnswerSpan | None:
    """A concluding sentence after the last number that names its answer: "Thus, Evelyn's ..."."""
    last_digit = max((text.rfind(d) for d in "0123456789"), default=-1)
    found = None
    for m in _CONCLUSION.finditer(text, last_digit + 1):
        if m.group(1) not in _NOT_NAMES:
            found = m
    if found is None or found.start() < len(text) - 2000:
        return None
    return AnswerSpan(found.group(1), found.start(1), found.end(1), "conclusion")


def _find_last_number(text: str) -> AnswerSpan | None:
    m = _last_match(_NUMBER, text)
    if m is None:
        return None
    value = m.group().rstrip(",")
    return AnswerSpan(value, m.start(), m.start() + len(value), "last_number")


_FINDERS = (
    ("boxed", _find_boxed),
    ("hashes", _find_hashes),
    ("answer_label", _find_label),
    ("final_math", _find_final_math),
    ("conclusion", _find_conclusion),
    ("last_number", _find_last_number),
)
