"""Answer equivalence: is a stated answer the same as a reference, by the field's rules?

``answers_equivalent(answer, reference)`` decides in tiers, cheapest first, and caches its verdicts:

1. an answer longer than ``MAX_ANSWER_CHARS`` never compares equal;
2. both sides are normalized (``$``, ``\\left``/``\\right``, ``\\text{}``, ``\\dfrac``/``\\cfrac`` as
   ``\\frac``, degrees, ``%``, a leading ``x =``, thousands commas and spaces; Unicode math as its LaTeX: ``√13`` is ``\\sqrt{13}``, ``π`` is ``\\pi``, ``−`` and ``×`` are
   ``-`` and ``*``): equal strings match;
3. where both sides are numbers to the small safe evaluator here (integers, decimals, ``a/b``,
   ``\\frac``, ``\\sqrt``, ``\\pi``, ``^``, implicit products such as ``3\\sqrt{13}``), they match by
   Math-Verify's numeric rule: to 6 decimal places where either is written as a decimal, otherwise
   exactly (to float precision). A plain number against a plain number never reaches a parser;
4. a number against a form the evaluator does not read (``3!``, ``12\\text{ cm}``, a set): the form is
   parsed once by Math-Verify, and the number matches only the real constant it reads, by the same
   numeric rule (so every number of a trace meets one parse of its reference);
5. otherwise Math-Verify decides (``o3viz.text.mathverify``: sets, intervals, matrices, relations,
   equations, symbolic forms), in a bounded child process;
6. where it gives no verdict in bounds (too long, hostile, past its deadline, not installed), the
   evaluator's element-wise comparison of tuples and numbers decides, as before Math-Verify.

Nothing is ever evaluated by Python itself. Extraction lives in ``o3viz.text.answers``.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, localcontext
from functools import lru_cache

from o3viz.text.mathverify import math_verify_equivalent, math_verify_value

MAX_ANSWER_CHARS = 1000  # longer "answers" are not compared (keeps normalization cheap)
CACHE_SIZE = 16384  # verdicts kept: a dataset grades the same few answer forms over and over

__all__ = [
    "CACHE_SIZE",
    "MAX_ANSWER_CHARS",
    "answers_equivalent",
    "evaluate_number",
    "normalize_answer",
    "split_tuple",
]

_TEXT_CMD = re.compile(r"\\(?:text|textbf|textnormal|textrm|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}")
_DROP = re.compile(r"\\left|\\right|\\[,;:! ]|\\displaystyle|\\\$|\$|\\%|%|\\\(|\\\)|\\\[|\\\]")
_DEGREE = re.compile(
    r"\^\s*\{?\\circ\}?|°|\\degree|(?<!\s)\s*degrees?\b"
)  # (?<!\s): one scan per run of blanks, not one per blank
_LEADING_VAR = re.compile(r"^[a-zA-Z](?:_\{?\w+\}?)?\s*=\s*(?=\S)")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_SPACE_THOUSANDS = re.compile(r"^-?\d{1,3}(?: \d{3})+(?:\.\d+)?$")  # "1 000", "12 345.5"
_DECIMAL_COMMA = re.compile(r"-?(?:0,\d+|\d+,(?!\d{3}$)\d+)")  # "2,74", "1000,99", "0,111"; not "1,000"
_BARE_ARGS = (  # LaTeX's one-character arguments: \frac94 is \frac{9}{4}, \sqrt3 is \sqrt{3}
    (re.compile(r"\\frac\s*(\d)\s*(\d)"), r"\\frac{\1}{\2}"),
    (re.compile(r"\\frac\s*(\d)\s*(?=\{)"), r"\\frac{\1}"),
    (re.compile(r"\\frac\s*(\{[^{}]*\})\s*(\d)"), r"\\frac\1{\2}"),
    (re.compile(r"\\sqrt\s*(\d)"), r"\\sqrt{\1}"),
)
_ROOT = re.compile(r"√\s*(?:\(([^()]{1,200})\)|\{([^{}]{1,200})\}|(\d+(?:\.\d+)?|[a-zA-Z]))")
_UNICODE = str.maketrans({"−": "-", "×": "*", "·": "*", "π": "\\pi "})
_FRAC_KINDS = re.compile(r"\\[cdt]frac")
_PLAIN = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)")  # a plain decimal number: compared without a parser


def normalize_answer(s: str) -> str:
    r"""A canonical form for comparison: ``'\dfrac{1}{2}^\circ'`` → ``'\frac{1}{2}'``.

    >>> normalize_answer("1 000"), normalize_answer("7,425,000")
    ('1000', '7425000')
    >>> normalize_answer("\\cfrac94\\pi"), normalize_answer("32,\\! 349")
    ('\\frac{9}{4}\\pi', '32349')
    """
    s = _ROOT.sub(lambda m: "\\sqrt{" + (m.group(1) or m.group(2) or m.group(3)) + "}", s.strip())
    s = s.translate(_UNICODE).strip()
    for _ in range(3):
        s = _TEXT_CMD.sub(r"\1", s)
    s = _FRAC_KINDS.sub(r"\\frac", s)
    for rx, repl in _BARE_ARGS:
        s = rx.sub(repl, s)
    s = re.sub(r",\\!\s*", ",", s)  # 32,\! 349: a thousands comma with its spacing
    s = _DEGREE.sub("", _DROP.sub("", s))
    s = _LEADING_VAR.sub("", s.strip()).strip()
    if _SPACE_THOUSANDS.match(s):
        s = s.replace(" ", "")
    if not s.startswith(("(", "[", "{", "\\{")):  # in a tuple, interval or set a comma separates
        s = _THOUSANDS.sub("", s)
    s = re.sub(r"\s+", "", s).rstrip(".").strip("*")
    return s.lower() if re.fullmatch(r"[A-Za-z ,.'-]+", s) else s


def answers_equivalent(answer: str, reference: str) -> bool:
    r"""Whether ``answer`` states the same value as ``reference`` (see the module docstring).

    >>> answers_equivalent("\\dfrac{3}{56}", "\\frac{3}{56}"), answers_equivalent("90", "90^\\circ")
    (True, True)
    >>> answers_equivalent("3√13", "3\\sqrt{13}"), answers_equivalent("−2π", "-2\\pi")
    (True, True)
    >>> answers_equivalent("1 000", "1000"), answers_equivalent("-\\frac{10}{9}", "-10/9")
    (True, True)
    >>> answers_equivalent("2,74", "2.74"), answers_equivalent("1,2", "1.2"), answers_equivalent("1,22", "122")
    (True, True, False)
    """
    if len(answer) > MAX_ANSWER_CHARS or len(reference) > MAX_ANSWER_CHARS:
        return False
    return _equivalent(answer.strip(), reference.strip())


@lru_cache(maxsize=CACHE_SIZE)
def _equivalent(answer: str, reference: str) -> bool:
    if _PLAIN.fullmatch(answer) and _PLAIN.fullmatch(reference):
        return _plain_equal(answer, reference)  # most of a GSM8K dataset: no normalizing at all
    comma = _decimal_comma(answer, reference)
    if comma is not None:
        return comma
    a, b = normalize_answer(answer), normalize_answer(reference)
    if not a or not b:
        return False
    if a == b:
        return True
    if _PLAIN.fullmatch(a) and _PLAIN.fullmatch(b):
        return _plain_equal(a, b)
    va, vb = evaluate_number(a), evaluate_number(b)
    if va is not None and vb is not None:
        return _numbers_equal(va, vb, decimal="." in a + b)
    if (va is None) != (vb is None):  # a number against a form the evaluator does not read
        known, v = _constant(reference if va is not None else answer)
        if known:  # one parse per form, however many numbers meet it (every number of a trace)
            return v is not None and _numbers_equal(va if va is not None else vb, v, decimal="." in a + b)  # type: ignore[arg-type]
    same = math_verify_equivalent(answer, reference)
    return same if same is not None else _basic_equivalent(a, b)


@lru_cache(maxsize=CACHE_SIZE)
def _constant(s: str) -> tuple[bool, float | None]:
    """The real constant Math-Verify reads ``s`` as (``mathverify.math_verify_value``), cached."""
    return math_verify_value(s)


def _decimal_comma(answer: str, reference: str) -> bool | None:
    """A decimal comma against a decimal point (``2,74`` and ``2.74``; ``0,111`` and ``0.111``), or
    None. Only against a point: elsewhere ``1,2`` is a list, as Math-Verify reads it in LaTeX."""
    a, b = answer.strip("$ "), reference.strip("$ ")
    for x, y in ((a, b), (b, a)):
        if _DECIMAL_COMMA.fullmatch(x) and _PLAIN.fullmatch(y) and "." in y:
            return _plain_equal(x.replace(",", "."), y)
    return None


def _plain_equal(a: str, b: str) -> bool:
    """Two plain decimal numbers (any length up to ``MAX_ANSWER_CHARS``), by ``_numbers_equal``'s
    rule, read exactly."""
    x, y = Decimal(a), Decimal(b)
    if x == y or "." not in a + b:
        return x == y
    with localcontext(prec=2 * MAX_ANSWER_CHARS):  # room for every digit: rounding never overflows
        return round(x, 6) == round(y, 6)


def _numbers_equal(a: float, b: float, decimal: bool) -> bool:
    """Math-Verify's numeric rule: to 6 decimal places where a side is written as a decimal,
    otherwise exactly (to the evaluator's float precision)."""
    if decimal and round(a, 6) == round(b, 6):
        return True
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _basic_equivalent(a: str, b: str) -> bool:
    """The evaluator's comparison of normalized forms, the last tier: tuples and intervals element
    by element (their brackets unread), numbers within 1e-6 relative."""
    pa, pb = split_tuple(a), split_tuple(b)
    if pa is not None or pb is not None:
        return (
            pa is not None
            and pb is not None
            and len(pa) == len(pb)
            and all(_equivalent(x, y) for x, y in zip(pa, pb, strict=True))
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
