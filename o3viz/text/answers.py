"""Final answers: the one extractor of the answer a text states (used by capture, solve, the
importers and the claim checker), and the comparison of an answer with a reference by basic math
equivalence.

Extraction, first rule that matches (the ``method``):

1. ``boxed``: the last closed ``\\boxed{…}`` / ``\\fbox{…}`` (braces matched, so
   ``\\boxed{\\frac{1}{2}}`` works); a run of boxes joined only by punctuation, spacing and a
   closing "and"/"or" (``\\boxed{1}, \\boxed{2} \\text{ and } \\boxed{3}``) is one answer, its
   boxes' contents joined by ", " (a set of answers, as Math-Verify reads them);
2. ``hashes``: ``#### N`` (GSM8K);
3. ``answer_label``: the rest of the sentence after "Final answer:", "Answer:", "the answer is" or a
   line "A: N" (GSM8K model solutions), the last one in the text;
4. ``final_math``: the last math span (``\\(…\\)``, ``$…$``, ``\\[…\\]``) of the last paragraph,
   unless a concluding sentence after it ("Therefore, there are 12 …") states a number. Of the
   span: the right-hand side of its last ``=`` (``<=``, ``>=``, ``!=`` are relations, not ``=``;
   an exact value before ``\\approx`` wins over the approximation); the whole last equation where
   its right-hand side has a variable (``y = 2x + 1``) or it is the equation of a curve
   (``34x + 45y = 0``, ``x^2/4 + y^2/3 = 1``); the whole span for a relation (``x \\geq 5``) or a
   list (``p = -1, p = \\frac{15}{8}``);
5. ``conclusion``: a non-numeric answer: a concluding sentence after the last number ("Thus,
   Evelyn's average speed is the largest.") names a capitalised word, taken as the answer;
6. ``formula``: a text that is one short line of math and no prose (``-\\frac{10}{9}``, ``1 000``)
   is its own answer;
7. ``last_number``: the last number (or fraction ``a/b``) in the text.

``boxed``, ``hashes`` and ``answer_label`` are *strong* (``STRONG_METHODS``): the text says it is
the answer. Where a labelled answer comes after the last box ("\\boxed{200} … The final answer is
$10,455$"), the later one is the answer. ``round_answer(text, kind)`` is what a run stores: ``extract_answer`` for math, a
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

Method = Literal[
    "boxed", "hashes", "answer_label", "final_math", "conclusion", "formula", "last_number", "last_line"
]
STRONG_METHODS: tuple[str, ...] = ("boxed", "hashes", "answer_label")
MAX_JOINED_BOXES = 16  # boxes read as one answer at most


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
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:/\d+(?:\.\d+)?)?|-?\.\d+")
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
            if method == "boxed" and (methods is None or "answer_label" in methods):
                later = _find_label(text)  # "\\boxed{200} … The final answer is $10,455$"
                if later is not None and later.start > found.end and later.text.strip():
                    return later
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
    tiers: a strong answer in the answer part, then its final math, conclusion or formula, then a strong
    answer in the thinking ("So final answer: Evelyn."), then the answer part's last number, and
    last the thinking's final math (or, for math tasks only, its conclusion or last number: a
    puzzle's last number is rarely its answer)."""
    weak = ("final_math", "conclusion", "formula", "last_number") if kind == "math" else ("final_math",)
    tiers = (
        ("answer", STRONG_METHODS),
        ("answer", ("final_math", "conclusion", "formula")),
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
    boxes = [(m.start(), m.end()) for m in _BOXED.finditer(text)]
    if not boxes:
        return None
    match = _brace_matches(text)
    for k in range(len(boxes) - 1, -1, -1):
        end = match.get(boxes[k][1] - 1, -1)
        if end > boxes[k][1]:
            run = [(boxes[k][1], end)]  # (inner start, inner end) of each box in the run
            for j in range(k - 1, max(-1, k - MAX_JOINED_BOXES), -1):
                close = match.get(boxes[j][1] - 1, -1)
                if not boxes[j][1] < close < boxes[j + 1][0] or not _joins(text[close + 1 : boxes[j + 1][0]]):
                    break
                run.insert(0, (boxes[j][1], close))
            return _box_span(text, run)
    return None


def _box_span(text: str, run: list[tuple[int, int]]) -> AnswerSpan:
    """One box's stripped contents, or a run's contents joined by ", " over the run's extent."""
    parts = [text[a:b].strip() for a, b in run]
    a, b = run[0][0], run[-1][1]
    a += len(text[a:b]) - len(text[a:b].lstrip())
    b -= len(text[a:b]) - len(text[a:b].rstrip())
    return AnswerSpan(", ".join(p for p in parts if p), a, b, "boxed")


_GAP_NOISE = re.compile(r"\\text\s*\{|\\[a-z]*quad\b|\\[,;:! ()\[\]]|[${}]")
_GAP_END = re.compile(r"(?:^|\s)(?:and|or)$")


def _joins(gap: str) -> bool:
    """Whether the text between two boxes joins them into one answer: punctuation, spacing, math
    delimiters and words that end in "and"/"or" (``, ``, ``\\quad \\text{and} \\quad``,
    `` papers and ``), never a digit or a sentence."""
    if len(gap) > 60 or any(c.isdigit() or c in ".\n" for c in _GAP_NOISE.sub(" ", gap).strip()):
        return False
    words = _GAP_NOISE.sub(" ", gap).strip(" ,;")
    return not words or _GAP_END.search(words) is not None


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
    if span is None or _CONCLUDES_NUMBER.search(text, span[1], span[1] + 2000):
        return None  # "$d = \\frac{90}{n}$ … Therefore, there are 12 sequences": the number is the answer
    a, b = _final_value(text[span[0] : span[1]])
    start, inner = span[0] + a, text[span[0] + a : span[0] + b]
    lead = len(inner) - len(inner.lstrip())
    value = inner.strip().rstrip(".,")
    return AnswerSpan(value, start + lead, start + lead + len(value), "final_math")


_CONCLUDES_NUMBER = re.compile(r"\b(?:Therefore|Thus|Hence|So)\b[^.\n$\\]{0,200}\d")
_EQ = re.compile(r"(?<![\\<>!])=")
_VARIABLE = re.compile(r"(?<![\\a-zA-Z])[a-zA-Z](?![a-zA-Z])")  # a one-letter name, not a command
_CURVE = re.compile(r"[a-zA-Z]\s*\^|\d\s*[a-zA-Z](?![a-zA-Z])")  # x^2, 34x: an equation's terms


def _final_value(inner: str) -> tuple[int, int]:
    """``[start, end)`` of the answer inside a final math span (the rules in the module docstring)."""
    eqs = [m.start() for m in _EQ.finditer(inner)]
    if not eqs or _top_level_comma(inner):
        return 0, len(inner)  # a relation (x \\geq 5), a value, or a list (p = -1, p = 2)
    end, approx = len(inner), inner.rfind("\\approx")
    if approx >= 0:
        if approx < eqs[0]:
            return approx + len("\\approx"), len(inner)
        end, eqs = approx, [e for e in eqs if e < approx]  # the exact value, not its approximation
    last = eqs[-1]
    lhs_start = eqs[-2] + 1 if len(eqs) > 1 else 0
    lhs, rhs = inner[lhs_start:last], inner[last + 1 : end]
    curve = _VARIABLE.search(lhs) and (rhs.strip() == "0" or (_CURVE.search(lhs) and re.search(r"[-+]", lhs)))
    return (lhs_start, end) if _VARIABLE.search(rhs) or curve else (last + 1, end)


def _top_level_comma(s: str) -> bool:
    """A comma or semicolon outside brackets that is not a thousands separator (``1,000``)."""
    depth = 0
    for i, c in enumerate(s):
        depth += (c in "({[") - (c in ")}]")
        if (
            c in ",;"
            and depth == 0
            and not (c == "," and s[i - 1 : i].isdigit() and s[i + 1 : i + 4].isdigit())
        ):
            return True
    return False


_SHORT_WORDS = frozenset("so is it we as or an at to of in on by be if do no".split())  # prose, not math


def _find_formula(text: str) -> AnswerSpan | None:
    """A text that is one short line of math and no prose: ``-\\frac{10}{9}``, ``1 000``."""
    value = text.strip()
    if not value or len(value) > 100 or "\n" in value or not re.search(r"[\d\\]", value):
        return None
    bare = re.sub(r"\\[A-Za-z]+", "", value)
    if re.search(r"[A-Za-z]{3,}", bare) or _SHORT_WORDS.intersection(re.findall(r"[a-z]+", bare.lower())):
        return None  # words ("So 1."): prose, read by the other rules
    start = text.index(value)
    return AnswerSpan(value, start, start + len(value), "formula")


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
    ("formula", _find_formula),
    ("last_number", _find_last_number),
)
