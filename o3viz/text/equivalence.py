"""Answer equivalence: is a stated answer the same as a reference, by basic math equivalence?

Both sides are normalized (``$``, ``\\left``/``\\right``, ``\\text{}``, ``\\dfrac``→``\\frac``,
degrees, ``%``, a leading ``x =``, thousands commas, spaces; Unicode math as its LaTeX: ``√13`` is
``\\sqrt{13}``, ``π`` is ``\\pi``, ``−`` and ``×`` are ``-`` and ``*``). Equal strings match; otherwise both
are evaluated as numbers with a small safe parser and match within 1e-6 relative; tuples and
intervals match element-wise. Nothing is ever evaluated by Python itself. Answers longer than
``MAX_ANSWER_CHARS`` never compare equal. Extraction lives in ``o3viz.text.answers``.
"""

from __future__ import annotations

import math
import re

MAX_ANSWER_CHARS = 1000  # longer "answers" are not compared (keeps normalization cheap)

_TEXT_CMD = re.compile(r"\\(?:text|textbf|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}")
_DROP = re.compile(r"\\left|\\right|\\[,;:! ]|\\displaystyle|\\\$|\$|\\%|%|\\\(|\\\)|\\\[|\\\]")
_DEGREE = re.compile(r"\^\s*\{?\\circ\}?|°|\\degree|\s*degrees?\b")
_LEADING_VAR = re.compile(r"^[a-zA-Z](?:_\{?\w+\}?)?\s*=\s*(?=\S)")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_ROOT = re.compile(r"√\s*(?:\(([^()]{1,200})\)|\{([^{}]{1,200})\}|(\d+(?:\.\d+)?|[a-zA-Z]))")
_UNICODE = str.maketrans({"−": "-", "×": "*", "·": "*", "π": "\\pi "})


def normalize_answer(s: str) -> str:
    """A canonical form for comparison: ``'\\dfrac{1}{2}^\\circ'`` → ``'\\frac{1}{2}'``."""
    s = _ROOT.sub(lambda m: "\\sqrt{" + (m.group(1) or m.group(2) or m.group(3)) + "}", s.strip())
    s = s.translate(_UNICODE).strip()
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
    >>> answers_equivalent("3√13", "3\\\\sqrt{13}"), answers_equivalent("−2π", "-2\\\\pi")
    (True, True)
    """
    if len(answer) > MAX_ANSWER_CHARS or len(reference) > MAX_ANSWER_CHARS:
        return False
    a, b = normalize_answer(answer), normalize_answer(reference)
    if not a or not b:
        return False
    if a == b:
        return True
    pa, pb = split_tuple(a), split_tuple(b)
    if pa is not None or pb is not None:
        return (
            pa is not None
            and pb is not None
            and len(pa) == len(pb)
            and all(answers_equivalent(x, y) for x, y in zip(pa, pb, strict=True))
        )
    va, vb = evaluate_number(a), evaluate_number(b)
    return va is not None and vb is not None and math.isclose(va, vb, rel_tol=1e-6, abs_tol=1e-9)


def split_tuple(s: str) -> list[str] | None:
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
