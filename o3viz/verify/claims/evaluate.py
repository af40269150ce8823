"""Exact evaluation of expression runs and the comparison of a computed value with a stated one.

Values are ``Fraction`` (exact) or ``float`` (only after an irrational step such as ``sqrt(2)``);
``None`` means "cannot evaluate" (a variable, division by zero). Sizes are estimated before each
power, product, quotient or sum (from the operands' bit lengths), and :class:`TooLarge` is raised
instead of computing a result of more than ``MAX_BITS`` bits: ``((9^400)^400)^400`` costs
microseconds, not minutes. ``compare`` holds the rounding rule documented in
:mod:`o3viz.verify.claims.check`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Literal

from o3viz.verify.claims.tokens import plain_number

Value = Fraction | float
Verdict = Literal["correct", "wrong", "unverifiable"]

MAX_BITS = 8192  # about 2,500 digits: a larger exact result is "unverifiable (too large)"


class _Fail(Exception):
    pass


class TooLarge(Exception):
    """An exact result would exceed ``MAX_BITS``; estimated before computing it."""


def readings(text: str) -> list[tuple[Fraction, int]]:
    """A stated number read every way it can be, with its decimals as written:
    ``"42%"`` -> [(21/50, 2), (42, 0)]; ``"3.5"`` -> [(7/2, 1)]; ``"3/4"`` -> [(3/4, 12)]."""
    t = text.replace(",", "").replace("$", "").replace(" ", "").strip()
    pct = t.endswith("%")
    try:
        base = Fraction(t.rstrip("%").strip())
    except (ValueError, ZeroDivisionError):
        return []
    d = 12 if "/" in t else decimals_of(t)  # a stated fraction is exact
    return [(base / 100, d + 2), (base, d)] if pct else [(base, d)]


def evaluate(items: list[tuple[str, str]], pct_as_number: bool = False) -> Value | None:
    """Value of a run's items, or None when it holds a variable or cannot be computed; raises
    :class:`TooLarge` when the exact value would be too large to compute."""
    p = _Parser(items, pct_as_number)
    try:
        val = p.expr()
        if p.i != len(items):
            return None
        return val
    except (_Fail, ZeroDivisionError, OverflowError, ValueError, RecursionError):
        return None  # RecursionError: hostile nesting such as 3,000 parentheses


class _Parser:
    """Recursive descent: expr := term (+|- term)*; term := unary (*|/ unary)*;
    unary := -unary | power; power := atom (^ unary)?;
    atom := NUM [%] | ( expr ) | FUNC ( expr )."""

    def __init__(self, items: list[tuple[str, str]], pct_as_number: bool) -> None:
        self.items, self.i, self.pct_as_number = items, 0, pct_as_number

    def peek(self) -> tuple[str, str]:
        return self.items[self.i] if self.i < len(self.items) else ("END", "")

    def expr(self) -> Value:
        val = self.term()
        while self.peek()[0] == "OP" and self.peek()[1] in "+-":
            op = self.items[self.i][1]
            self.i += 1
            rhs = self.term()
            _check_size(val, rhs, add=True)
            val = val + rhs if op == "+" else val - rhs
        return val

    def term(self) -> Value:
        val = self.unary()
        while self.peek()[0] == "OP" and self.peek()[1] in "*/":
            op = self.items[self.i][1]
            self.i += 1
            rhs = self.unary()
            _check_size(val, rhs)
            val = val * rhs if op == "*" else _div(val, rhs)
        return val

    def unary(self) -> Value:
        if self.peek()[0] == "NEG":
            self.i += 1
            return -self.unary()
        return self.power()

    def power(self) -> Value:
        base = self.atom()
        if self.peek() == ("OP", "^"):
            self.i += 1
            return _pow(base, self.unary())
        return base

    def atom(self) -> Value:
        kind, text = self.peek()
        self.i += 1
        if kind == "NUM":
            if len(text) > MAX_BITS // 3:
                raise TooLarge
            val = Fraction(plain_number(text))
            if self.peek()[0] == "PCT":
                self.i += 1
                val = val if self.pct_as_number else val / 100
            return val
        if kind == "LP":
            val = self.expr()
            if self.peek()[0] != "RP":
                raise _Fail
            self.i += 1
            return val
        if kind == "FUNC" and text == "sqrt" and self.peek()[0] in ("LP", "NUM"):
            return _sqrt(self.atom())
        raise _Fail


def _div(a: Value, b: Value) -> Value:
    if b == 0:
        raise _Fail
    return a / b


def _bits(v: Value) -> int:
    """Bits of an exact value's numerator plus denominator (0 for a float)."""
    return v.numerator.bit_length() + v.denominator.bit_length() if isinstance(v, Fraction) else 0


def _check_size(a: Value, b: Value, add: bool = False) -> None:
    """Raise TooLarge if ``a op b`` may exceed MAX_BITS (a sum's denominators multiply too)."""
    if _bits(a) + _bits(b) > MAX_BITS * (2 if add else 1):
        raise TooLarge


def _pow(base: Value, exp: Value) -> Value:
    if isinstance(exp, Fraction) and exp.denominator == 1 and isinstance(base, Fraction):
        if base == 0 and exp < 0:
            raise _Fail
        if base == 0 or abs(base) == 1:  # 0, 1, -1: any power is cheap
            return base ** (2 - exp.numerator % 2) if exp else Fraction(1)
        if abs(exp.numerator) > MAX_BITS or abs(exp.numerator) * max(_bits(base) - 1, 1) > MAX_BITS:
            raise TooLarge  # estimated from the bit length: |b^e| has about e*log2|b| bits
        return base**exp.numerator
    if isinstance(exp, Fraction) and exp == Fraction(1, 2):
        return _sqrt(base)
    if base < 0:
        raise _Fail
    if isinstance(exp, Fraction) and abs(exp) > MAX_BITS:
        raise TooLarge
    return float(base) ** float(exp)


def _sqrt(x: Value) -> Value:
    if x < 0:
        raise _Fail
    if isinstance(x, Fraction):
        n, d = math.isqrt(x.numerator), math.isqrt(x.denominator)
        if n * n == x.numerator and d * d == x.denominator:
            return Fraction(n, d)
    return math.sqrt(x)


def decimals_of(stated: str) -> int:
    """Number of decimals as written: ``"3.50"`` -> 2, ``"7"`` -> 0."""
    t = stated.replace(",", "").rstrip("%").strip()
    return len(t.split(".", 1)[1]) if "." in t else 0


def compare(value: Value, stated: Fraction, decimals: int, approx: bool) -> tuple[Verdict, bool]:
    """Verdict for ``value`` against ``stated`` written with ``decimals``; bool: "by rounding"."""
    if isinstance(value, Fraction) and value == stated:
        return "correct", False
    diff = abs(Fraction(value) - stated) if isinstance(value, Fraction) else abs(value - float(stated))
    step = Fraction(1, 10**decimals)
    slack = 0 if isinstance(value, Fraction) else 1e-9 * max(1.0, abs(value))
    if diff <= slack:
        return "correct", False  # float equality (after an irrational step)
    if decimals >= 6 and diff <= Fraction(1, 10**12) * abs(stated):
        return "correct", True  # float noise copied from a calculator: 99.00000000000001
    if diff <= step / 2 + slack and _is_inexact(value, decimals, slack):
        return "correct", True  # a correct rounding at the stated number of decimals
    truncated = 0 <= stated * (1 if value >= 0 else -1) <= abs(Fraction(value))
    if diff < step + slack and decimals > 0 and truncated and _is_inexact(value, decimals, slack):
        return "correct", True  # truncated repeating decimal (0.66 for 2/3)
    if approx:
        rel = float(diff) / max(abs(float(value)), 1e-12)
        if rel <= 0.01:
            return "correct", True
        return ("unverifiable" if rel <= 0.1 else "wrong"), False
    if decimals == 0 and diff < 1 and _is_inexact(value, 0, slack):
        return "unverifiable", False  # an integer that floors/ceils a quotient: maybe deliberate
    return "wrong", False


def _is_inexact(value: Value, decimals: int, slack: float) -> bool:
    """True when ``value`` has more precision than ``decimals`` (so rounding was needed)."""
    scaled = value * 10**decimals
    if isinstance(scaled, Fraction):
        return scaled.denominator != 1
    return abs(scaled - round(scaled)) > slack * 10**decimals


def format_value(value: Value | None) -> str:
    """Exact value as a string: ``"9"``, ``"3.5"``, ``"10/3"``, or ``"1.414213562"`` (inexact)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.10g}"
    if value.denominator == 1:
        return str(value.numerator)
    d, twos, fives = value.denominator, 0, 0
    while d % 2 == 0:
        d, twos = d // 2, twos + 1
    while d % 5 == 0:
        d, fives = d // 5, fives + 1
    if d != 1:
        return f"{value.numerator}/{value.denominator}"
    k = max(twos, fives)  # value * 10**k is an integer: write it with k decimals, exactly
    digits = str(abs(value.numerator) * 10**k // value.denominator).rjust(k + 1, "0")
    sign = "-" if value < 0 else ""
    return f"{sign}{digits[:-k]}.{digits[-k:]}"


def judge(
    lvals: list[Value],
    rvals: list[tuple[Value, int | None]],
    approx: bool = False,
) -> tuple[Verdict, bool]:
    """Best verdict over all readings; each stated reading carries its decimals (None: exact)."""
    best: tuple[Verdict, bool] | None = None
    order = {"correct": 0, "unverifiable": 1, "wrong": 2}
    for lv in lvals:
        for rv, decimals in rvals:
            res = compare(lv, Fraction(rv), 12 if decimals is None else decimals, approx)
            if best is None or order[res[0]] < order[best[0]]:
                best = res
    return best or ("unverifiable", False)
