"""Final answers: extracting the answer an imported trace gives, and comparing it with a reference
by basic math equivalence.

Extraction, first rule that matches (the ``method``):

1. ``boxed``: the last ``\\boxed{…}`` / ``\\fbox{…}`` (braces matched, so ``\\boxed{\\frac{1}{2}}`` works);
2. ``hashes``: ``#### N`` (GSM8K);
3. ``answer_label``: the rest of the line after "Final answer:", "Answer:" or "the answer is";
4. ``final_math``: the last math span (``\\(…\\)``, ``$…$``, ``\\[…\\]``) of the last paragraph,
   right-hand side of its last ``=``;
5. ``last_number``: the last number in the text.

Equivalence (``answers_equivalent``): both sides are normalized (``$``, ``\\left``/``\\right``,
``\\text{}``, ``\\dfrac``→``\\frac``, degrees ``^\\circ``/``°``, ``%``, a leading ``x =``, thousands
commas, spaces). Equal strings match; otherwise both are evaluated as numbers with a small safe
parser (integers, decimals, ``a/b``, ``\\frac``, ``\\sqrt``, ``\\pi``, ``^``, implicit products such as
``3\\sqrt{13}``) and match within 1e-6 relative; tuples and intervals match element-wise. Nothing is
ever evaluated by Python itself.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass


@dataclass
class AnswerSpan:
    """An extracted answer: ``text`` as written and its ``[start, end)`` in the searched text."""

    text: str
    start: int
    end: int
    method: str  # boxed | hashes | answer_label | final_math | last_number


_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
_HASHES = re.compile(r"^####\s*(.+?)\s*$", re.M)
_LABEL = re.compile(
    r"\b(?:final answer|answer)\b\s*(?:\*\*)?\s*(?:is\b|[:：])\s*:?\s*(?:\*\*)?\s*(\S[^\n]*)", re.I
)
_MATH = re.compile(r"\\\((.+?)\\\)|\\\[(.+?)\\\]|\$\$(.+?)\$\$|\$([^$\n]+?)\$", re.S)
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")


def _brace_end(text: str, i: int) -> int:
    """Index just past the ``}`` matching the ``{`` at ``i - 1``; -1 if unbalanced."""
    depth = 1
    while i < len(text):
        c = text[i]
        depth += (c == "{") - (c == "}")
        if depth == 0:
            return i
        i += 1
    return -1


def extract_answer(text: str) -> AnswerSpan | None:
    """The final answer stated in ``text`` (see the module docstring for the rules)."""
    for finder in (_find_boxed, _find_hashes, _find_label, _find_final_math, _find_last_number):
        found = finder(text)
        if found is not None and found.text.strip():
            return found
    return None


def _find_boxed(text: str) -> AnswerSpan | None:
    last = None
    for m in _BOXED.finditer(text):
        end = _brace_end(text, m.end())
        if end > m.end():
            last = AnswerSpan(text[m.end() : end].strip(), m.end(), end, "boxed")
    return last


def _find_hashes(text: str) -> AnswerSpan | None:
    ms = list(_HASHES.finditer(text))
    return AnswerSpan(ms[-1].group(1), ms[-1].start(1), ms[-1].end(1), "hashes") if ms else None


def _find_label(text: str) -> AnswerSpan | None:
    ms = list(_LABEL.finditer(text))
    if not ms:
        return None
    m = ms[-1]
    value = re.split(r"(?<=[.?!])\s", m.group(1), maxsplit=1)[0]
    # "the answer is different?" or "…is simpler than I thought" muse about an answer; they state none
    if value.endswith("?") or len(value) > 80 or (len(value.split()) > 5 and not re.search(r"\d|\\", value)):
        return None
    value = value.rstrip(" .*")
    return AnswerSpan(value, m.start(1), m.start(1) + len(value), "answer_label")


def _find_final_math(text: str) -> AnswerSpan | None:
    para_start = text.rstrip().rfind("\n\n") + 1
    spans = list(_MATH.finditer(text, para_start))
    if not spans:
        return None
    m = spans[-1]
    g = next(i for i in range(1, 5) if m.group(i) is not None)
    inner, start = m.group(g), m.start(g)
    eq = max(inner.rfind("="), inner.rfind("\\approx"))
    if eq >= 0:
        skip = eq + (7 if inner.startswith("\\approx", eq) else 1)
        start, inner = start + skip, inner[skip:]
    lead = len(inner) - len(inner.lstrip())
    value = inner.strip().rstrip(".,")
    return AnswerSpan(value, start + lead, start + lead + len(value), "final_math")


def _find_last_number(text: str) -> AnswerSpan | None:
    ms = list(_NUMBER.finditer(text))
    if not ms:
        return None
    m = ms[-1]
    value = m.group().rstrip(",")
    return AnswerSpan(value, m.start(), m.start() + len(value), "last_number")


# ---------------------------------------------------------------- normalization and equivalence

_TEXT_CMD = re.compile(r"\\(?:text|textbf|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}")
_DROP = re.compile(r"\\left|\\right|\\[,;:! ]|\\displaystyle|\\\$|\$|\\%|%|\\\(|\\\)|\\\[|\\\]")
_DEGREE = re.compile(r"\^\s*\{?\\circ\}?|°|\\degree|\s*degrees?\b")
_LEADING_VAR = re.compile(r"^[a-zA-Z](?:_\{?\w+\}?)?\s*=\s*(?=\S)")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def normalize_answer(s: str) -> str:
    """A canonical form for comparison: ``'\\dfrac{1}{2}^\\circ'`` → ``'\\frac{1}{2}'``."""
    s = s.strip()
    for _ in range(3):
        s = _TEXT_CMD.sub(r"\1", s)
    s = s.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    s = _DEGREE.sub("", _DROP.sub("", s))
    s = _LEADING_VAR.sub("", s.strip())
    s = _THOUSANDS.sub("", s)
    s = re.sub(r"\s+", "", s).rstrip(".").strip("*")
    return s.lower() if re.fullmatch(r"[A-Za-z ,.'-]+", s) else s


def answers_equivalent(answer: str, reference: str) -> bool:
    """Whether ``answer`` states the same value as ``reference`` (see the module docstring).

    >>> answers_equivalent("\\\\dfrac{3}{56}", "\\\\frac{3}{56}"), answers_equivalent("90", "90^\\\\circ")
    (True, True)
    """
    a, b = normalize_answer(answer), normalize_answer(reference)
    if not a or not b:
        return False
    if a == b:
        return True
    pa, pb = _split_tuple(a), _split_tuple(b)
    if pa is not None or pb is not None:
        return (
            pa is not None
            and pb is not None
            and len(pa) == len(pb)
            and all(answers_equivalent(x, y) for x, y in zip(pa, pb, strict=True))
        )
    va, vb = evaluate_number(a), evaluate_number(b)
    return va is not None and vb is not None and math.isclose(va, vb, rel_tol=1e-6, abs_tol=1e-9)


def _split_tuple(s: str) -> list[str] | None:
    """Elements of ``(a,b)`` / ``[a,b]`` split at top-level commas; None if not a tuple."""
    if len(s) < 2 or s[0] not in "([" or s[-1] not in ")]":
        return None
    parts, depth, cur = [], 0, ""
    for c in s[1:-1]:
        depth += (c in "({[") - (c in ")}]")
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    parts.append(cur)
    return parts if len(parts) > 1 else None


# ---------------------------------------------------------------- a tiny safe evaluator

_TOKEN = re.compile(r"\d+\.?\d*|\.\d+|\\?[a-zA-Z]+|[-+*/^(){}]")


def evaluate_number(s: str) -> float | None:
    """The value of a simple numeric expression in plain or LaTeX notation, or None."""
    if len(s) > 200:
        return None
    s = s.replace("\\cdot", "*").replace("\\times", "*").replace("\\div", "/")
    tokens = _TOKEN.findall(s)
    if "".join(tokens) != re.sub(r"\s+", "", s):
        return None  # something the tokenizer does not know, e.g. a comma or a backslash-symbol
    try:
        parser = _Parser(tokens)
        value = parser.expr()
        return value if parser.pos == len(tokens) and math.isfinite(value) else None
    except (ValueError, OverflowError, ZeroDivisionError, IndexError, RecursionError):
        return None


class _Parser:
    """expr := term (+|- term)*; term := unary ((*|/)? unary)*; unary := -unary | power;
    power := atom (^ unary)?; atom := number | \\pi | \\sqrt atom | \\frac atom atom | (expr) | {expr}."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens, self.pos = tokens, 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        self.pos += 1
        return self.tokens[self.pos - 1]

    def expr(self) -> float:
        v = self.term()
        while self.peek() in ("+", "-"):
            v = v + self.term() if self.take() == "+" else v - self.term()
        return v

    def term(self) -> float:
        v = self.unary()
        while self.peek() is not None and self.peek() not in ("+", "-", ")", "}", "^"):
            op = self.take() if self.peek() in ("*", "/") else "*"  # implicit product: 3\sqrt{13}
            rhs = self.unary()
            v = v * rhs if op == "*" else v / rhs
        return v

    def unary(self) -> float:
        if self.peek() in ("-", "+"):
            return -self.unary() if self.take() == "-" else self.unary()
        return self.power()

    def power(self) -> float:
        v = self.atom()
        if self.peek() == "^":
            self.take()
            exp = self.unary()
            if abs(exp) > 1000:
                raise OverflowError
            v = v**exp
        return v

    def atom(self) -> float:
        t = self.take()
        if t[0].isdigit() or t[0] == ".":
            return float(t)
        if t in ("\\pi", "pi"):
            return math.pi
        if t in ("\\sqrt", "sqrt"):
            x = self.atom()
            if x < 0:
                raise ValueError
            return math.sqrt(x)
        if t == "\\frac":
            return self.atom() / self.atom()
        if t in ("(", "{"):
            v = self.expr()
            if self.take() != (")" if t == "(" else "}"):
                raise ValueError
            return v
        raise ValueError(t)
