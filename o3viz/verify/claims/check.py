"""The arithmetic claim checker: the verification layer for math (``check_claims``).

It finds the arithmetic a reasoning text states (``16 - 3 - 4 = 9``, ``2+3 = 5 = 10/2``,
GSM8K calculator annotations ``<<16-3-4=9>>9``, "20% of 50 is 10", "half of 18 is 9", LaTeX
``\\frac{3}{4} \\times 8 = 6``), recomputes each one exactly with ``fractions.Fraction`` and
returns one :class:`Claim` per statement with a verdict ``correct`` / ``wrong`` /
``unverifiable`` and the rule that decided it.

Rules (the ``rule`` field):

- ``arith_eq``: an expression equals a stated number; ``chain_mismatch``: two expressions in one
  chain (``2+3 = 10/2``) must agree; ``calc_annotation``: a GSM8K ``<<expr=r>>v`` annotation is
  right and the visible ``v`` agrees with it; ``percent_of`` / ``fraction_of``: "p% of n",
  "a/b of n", "half of n"; ``rounding``: any of these, correct only by rounding.
- Contradiction detection, extra claims on top: ``final_answer_mismatch`` (``#### N``,
  ``\\boxed{N}``, "The answer is N", "Answer: N" against the last stated result before it) and
  ``inconsistent_quantity`` (one expression stated with two different values: never ``wrong``,
  since each statement is judged by its own rule; a later correct one is a correction).
- One error, one flag (:mod:`o3viz.verify.claims.repeats`): a second rule on the same statement,
  or the same wrong claim restated, is ``unverifiable`` with a note naming the flagged claim.

Rounding rule: a stated value written with *d* decimals is correct when the exact value rounds
to it at *d* decimals, or truncates to it (a repeating decimal cut short: 2/3 = 0.66); with
``≈``/``~`` a relative error up to 1% is also correct (10% or more is wrong). An integer stated
for a non-integer quotient that is its floor or ceiling but not its rounding is ``unverifiable``
(word problems round up or down on purpose). Percentages are read both ways (``75%`` as 0.75
and as 75). Whenever the parse is in doubt (a variable, implicit multiplication, words such as
"of"/"than" right before the expression, an unclosed parenthesis) a mismatch is
``unverifiable``, never ``wrong``: a false alarm costs more than a missed error here.

Layout: ``claims_text`` (LaTeX/Unicode normalization with an offset map), ``claims_tokens`` and
``claims_parse`` (expression runs and ``=`` chains), ``claims_eval`` (exact values, the rounding
rule), ``claims_rules`` (annotations, contradiction rules), ``claims_types`` (``Claim``).
Measured on GSM8K by ``python -m o3viz bench claims``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace
from fractions import Fraction

from o3viz.verify.claims.evaluate import TooLarge, Value, Verdict, evaluate, format_value, judge, readings
from o3viz.verify.claims.latex import adds, converts, stated_remainder
from o3viz.verify.claims.parse import Run, scan_chains
from o3viz.verify.claims.regions import (
    MAX_CHECK_CHARS,
    MAX_CLAIMS,
    budgeted,
    has_number,
    numeric_lines,
    pieces,
    safe_span,
)
from o3viz.verify.claims.repeats import count_once
from o3viz.verify.claims.round_checks import CHECKS, ClaimContext
from o3viz.verify.claims.rules import check_annotations, mask_annotations
from o3viz.verify.claims.text import NormText, normalize_text
from o3viz.verify.claims.types import RULES, VERDICTS, Claim, Locator, Rule

__all__ = [
    "RULES",
    "VERDICTS",
    "Claim",
    "ClaimReport",
    "Rule",
    "Verdict",
    "check_claims",
    "check_text",
    "judge",
]


@dataclass
class ClaimReport:
    """All claims of a text, and how much of its numeric text was checked."""

    claims: list[Claim]
    checked_chars: int  # characters of lines with numbers that were read
    unchecked_chars: int  # such characters past the budgets (MAX_CHECK_CHARS, MAX_CLAIMS), not read

    @property
    def status(self) -> str:
        """``ok``, or a one-line note saying what was left unchecked."""
        if not self.unchecked_chars:
            return "ok"
        return (
            f"checked the first {self.checked_chars:,} characters of numeric lines; "
            f"{self.unchecked_chars:,} more were not checked "
            f"(limits: {MAX_CHECK_CHARS:,} characters, {MAX_CLAIMS:,} claims)"
        )


def check_claims(text: str, *, steps: list[tuple[int, int]] | None = None) -> list[Claim]:
    """Find and check every arithmetic claim in ``text``; claims are sorted by position.

    ``steps`` are (start, end) character ranges of reasoning steps; by default each line is a
    step. A claim's ``step`` is the index of the step holding its start (-1 if none does).
    Numeric text past ``MAX_CHECK_CHARS`` characters or ``MAX_CLAIMS`` claims is not read
    (``check_text`` says how much).

    >>> [(c.expression, c.stated, c.verdict) for c in check_claims("So 16 - 3 - 4 = 9 eggs.")]
    [('16-3-4', '9', 'correct')]
    """
    return check_text(text, steps=steps).claims


def check_text(
    text: str,
    *,
    steps: list[tuple[int, int]] | None = None,
    max_chars: int = MAX_CHECK_CHARS,
    skip: tuple[str, ...] = (),
) -> ClaimReport:
    """``check_claims`` with the bookkeeping: only lines holding a digit or a number word are
    read, in pieces (``o3viz.verify.claims.regions``), up to ``max_chars`` characters. ``skip``
    names whole-text checks (``CHECKS``) not to run; an unknown name is a one-line UsageError."""
    for name in skip:
        CHECKS.get(name)
    where = Locator(text, steps)
    claims: list[Claim] = []
    results: list[tuple[int, int, str]] = []  # stated results, for the final answer
    spans = numeric_lines(text, limit=2 * max_chars)  # past twice the budget: never scanned
    numeric = [p for p in pieces(text, spans) if has_number(text, p)]
    kept, left = budgeted(numeric, max_chars)
    left += len(text) - spans[-1][1] if spans and has_number(text, (spans[-1][1], len(text))) else 0
    for k, (lo, hi) in enumerate(kept):
        if len(claims) >= MAX_CLAIMS:  # dense adversarial text: the rest is reported unchecked
            left += sum(b - a for a, b in kept[k:])
            kept = kept[:k]
            break
        where.shift = lo
        part, stated = _check_chunk(text[lo:hi], where)
        safe = safe_span(text, lo, hi)
        claims += [
            _asked(_cut_guard(replace(c, start=c.start + lo, end=c.end + lo), safe), text) for c in part
        ]
        results += [(a + lo, b + lo, s) for a, b, s in stated]
    where.shift = 0
    claims.sort(key=lambda c: (c.start, c.end))
    ctx = ClaimContext(text, where, claims, results)
    for name in CHECKS.names():  # the whole-text checks (o3viz.verify.claims.round_checks)
        if name not in skip:
            ctx.claims += CHECKS.make(name)(ctx)
    claims.sort(key=lambda c: (c.start, c.end))
    return ClaimReport(count_once(claims), sum(hi - lo for lo, hi in kept), left)


def _cut_guard(claim: Claim, safe: tuple[int, int]) -> Claim:
    """A claim a piece boundary may have cut ("16 - 3 | - 4 = 9") cannot be ``wrong``."""
    if claim.verdict == "wrong" and not safe[0] <= claim.start <= claim.end <= safe[1]:
        claim.verdict = "unverifiable"
        claim.note = "cut at a piece boundary"
    return claim


def _asked(claim: Claim, text: str) -> Claim:
    """A claim asked, not stated ("4 * 5 = 25? No, 4 * 5 = 20.") cannot be ``wrong``."""
    if claim.verdict == "wrong" and text[claim.end : claim.end + 3].lstrip(" $").startswith("?"):
        claim.verdict = "unverifiable"
        claim.note = "a question, not a statement"
    return claim


def _check_chunk(text: str, where: Locator) -> tuple[list[Claim], list[tuple[int, int, str]]]:
    """Annotation and chain claims of one chunk, and the results it states (chunk offsets)."""
    claims = check_annotations(text, where)
    results = [(c.start, c.end, c.stated) for c in claims]
    norm = normalize_text(mask_annotations(text))
    for chain in scan_chains(norm.text):
        for i, (link, right) in enumerate(zip(chain.links, chain.runs[1:], strict=True)):
            left = chain.runs[i]
            try:
                claim = check_pair(left, right, link, norm, where, first=i == 0)
            except TooLarge:  # estimated, not computed: ((9^400)^400)^400
                claim = _make(left, right, right, norm, where, "unverifiable", "arith_eq", None)
                claim.note = "too large"
            except (OverflowError, ValueError):
                claim = None  # numbers too large for a float comparison: no verdict to give
            if claim is not None and claim.verdict == "wrong" and _congruent(left, right, chain.modulus):
                claim.verdict, claim.note = "unverifiable", "arithmetic modulo a number"
            if claim is not None:
                claims.append(claim)
            if right.is_simple:
                a, b = norm.span_of(right.start, right.end)
                results.append((a, b, _orig(norm, a, b)))
    return claims, results


def _congruent(left: Run, right: Run, modulus: int | None) -> bool:
    """Whether a chain modulo a number may hold: "(4^2)^2 = (-1)^2 \\pmod{17}" (256 and 1 agree
    mod 17). With no modulus read, any pair may; "17 * 5 * 42 = 735 ... mod 83" may not."""
    if modulus is None:
        return False
    if modulus == 0:
        return True
    lv, rv = _values(left), _values(right)
    ints = [v for v in lv + rv if isinstance(v, Fraction) and v.denominator == 1]
    if len(ints) < len(lv) + len(rv) or not lv or not rv:
        return True  # a fraction or an irrational side: not a plain congruence we can check
    return any((a - b) % modulus == 0 for a in lv for b in rv)


def _values(run: Run) -> list[Value]:
    """The run's value, plus its value with percentages read as plain numbers, if different."""
    vals = [evaluate(run.items)]
    if any(k == "PCT" for k, _ in run.items):
        vals.append(evaluate(run.items, pct_as_number=True))
    return [v for v in vals if v is not None]


def _exact(vals: list[Value]) -> list[tuple[Value, int | None]]:
    return [(v, None) for v in vals]


def check_pair(
    left: Run, right: Run, link: str, norm: NormText, where: Locator, first: bool = True
) -> Claim | None:
    """The claim made by ``left <link> right`` in a chain, or None if it states nothing."""
    approx = link == "≈"
    if left.is_bare and right.is_bare:
        lv, rv = _values(left), _values(right)
        if lv and rv and judge(lv, _exact(rv))[0] == "correct":
            return _make(left, right, right, norm, where, "correct", "arith_eq", lv[0])
        return None  # "1 hour = 60 minutes": a conversion, not arithmetic
    if _is_range(left, norm) or _is_range(right, norm):
        return None
    if left.property_of and not (left.property_of.startswith(("remainder", "residue")) and adds(left)):
        return None  # "the units digit of 3^3, which is 7": a property of 3^3, not its value
    if converts(left, right, norm.text[left.start : left.end]):
        return None  # "1/4 inch = 10 miles": a scale or a conversion, not arithmetic
    if link == "is" and not right.is_simple:
        return None  # "50% of 8 is 1.5*8": words around "is" make weak equations
    if link == "is" and left.is_simple and not left.is_bare and not left.divides:
        return None  # "1/5 is 6.4 hectares": a fraction *of something* is that quantity
    if _bare_symbol(left) or _bare_symbol(right):
        return None  # "x = 3 + 4" defines x; the pair "3 + 4 = 7" is checked on its own
    if left.symbolic or right.symbolic:
        return _make(left, right, right, norm, where, "unverifiable", "arith_eq", None)
    if right.is_simple and not left.is_bare:
        return _judge_simple(left, right, approx, norm, where)
    if left.is_bare:  # "4 students drank 1.5 quarts = 4 * 1.5": at a chain's start, a label
        return _judge_simple(right, left, approx, norm, where, label=first)
    return _judge_chain(left, right, approx, norm, where)


def _bare_symbol(run: Run) -> bool:
    return len(run.items) == 1 and run.items[0][0] == "VAR"


def _judge_simple(
    expr: Run, stated: Run, approx: bool, norm: NormText, where: Locator, label: bool = False
) -> Claim:
    lv = _values(expr)
    rv = readings(stated.expression()) if stated.is_bare else _exact(_values(stated))
    verdict, rounded = judge(lv, rv, approx) if lv and rv else ("unverifiable", False)
    if verdict == "wrong" and any(-v == r for v in lv for r, _ in rv):
        verdict = "unverifiable"  # "$30 - $50 = $20 less": the sign moved into words (rule kept on principle; its old example came from the held-out half)
    if (
        verdict == "wrong"
        and stated_remainder(expr, rv)
        and "remainder" in norm.text[max(0, expr.start - 80) : expr.end + 40].lower()
    ):
        verdict = "unverifiable"  # "the remainder of 17 divided by 5 is 2": not the quotient
    if verdict == "wrong" and _rounded_inputs(expr, lv, rv):
        verdict = "unverifiable"  # "-8/14.424 = -0.5547": inputs already rounded
    if verdict == "wrong" and (label or expr.guarded or expr.ambiguous or stated.guarded):
        verdict = "unverifiable"
    rule = "rounding" if rounded else _rule_for(expr)
    first, last = (expr, stated) if expr.start <= stated.start else (stated, expr)
    return _make(first, last, stated, norm, where, verdict, rule, lv[0] if lv else None, expr)


def _rounded_inputs(expr: Run, lv: list[Value], rv: list[tuple[Value, int | None]]) -> bool:
    """Whether the expression uses decimals of 2+ places and misses by at most 0.1%."""
    if not any(k == "NUM" and len(t.partition(".")[2]) >= 2 for k, t in expr.items):
        return False
    a, b = float(lv[0]), float(rv[0][0])
    return abs(a - b) <= 1e-3 * max(abs(a), abs(b))


def _judge_chain(left: Run, right: Run, approx: bool, norm: NormText, where: Locator) -> Claim:
    lv, rv = _values(left), _values(right)
    if not lv or not rv:
        return _make(left, right, right, norm, where, "unverifiable", "chain_mismatch", None)
    verdict, _ = judge(lv, _exact(rv), approx)
    if verdict == "correct":
        return _make(left, right, right, norm, where, "correct", "chain_mismatch", lv[0])
    lead = _leading_number(right)
    if lead is not None:  # "16 - 3 = 13 - 4 = 9": the writer carries 13 on, so check 16-3 = 13
        claim = _judge_simple(left, lead, approx, norm, where)
        if claim.verdict == "correct":
            return claim
    a, b = float(lv[0]), float(rv[0])
    rel = abs(a - b) / max(abs(a), abs(b), 1e-12)
    unsure = (
        left.guarded
        or left.ambiguous
        or right.guarded
        or right.ambiguous
        or approx
        or rel <= 0.01  # rounded intermediates: "1.005^6 = 1.025251 * 1.005"
        or _is_part(right, left)
    )
    verdict: Verdict = "correct" if rel <= 1e-9 else "unverifiable" if unsure else "wrong"
    return _make(
        left,
        right,
        right,
        norm,
        where,
        verdict,
        "rounding" if verdict == "correct" else "chain_mismatch",
        lv[0],
    )


def _is_part(right: Run, left: Run) -> bool:
    """ "3182 - 319 + 1 = 3182 - 319 = 2863", "81 - 216 + 162 - 27 = (81+162) = 243": the right
    side computes a piece of the left (its numbers are some of the left's)."""
    rnums = Counter(t for k, t in right.items if k == "NUM")
    lnums = Counter(t for k, t in left.items if k == "NUM")
    if not rnums or rnums.total() >= lnums.total():
        return False
    return not rnums - lnums


def _is_range(run: Run, norm: NormText) -> bool:
    """ "400-488", "3-4 hours": an unspaced a-b with a < b is a range, not a subtraction."""
    m = re.fullmatch(r"(\d+)-(\d+)", norm.text[run.start : run.end])
    return bool(m) and int(m.group(1)) < int(m.group(2))


def _leading_number(run: Run) -> Run | None:
    """The first number of ``13 - 4`` as a run of its own, if the run starts ``NUM OP``."""
    items = run.items
    n = 2 if items[0][0] == "NUM" and len(items) > 1 and items[1][0] == "PCT" else 1
    if items[0][0] != "NUM" or len(items) <= n or items[n][0] != "OP":
        return None
    num_text = items[0][1]
    lead = Run(items=items[:n], start=run.start, end=run.start + len(num_text) + (n - 1))
    return lead


def _rule_for(run: Run) -> Rule:
    if run.has_of:
        return "percent_of" if any(k == "PCT" for k, _ in run.items) else "fraction_of"
    return "arith_eq"


def _make(
    first: Run,
    last: Run,
    stated: Run,
    norm: NormText,
    where: Locator,
    verdict: Verdict,
    rule: Rule,
    value: Value | None,
    expr: Run | None = None,
) -> Claim:
    start, end = norm.span_of(first.start, last.end)
    s0, s1 = norm.span_of(stated.start, stated.end)
    expr = expr or first
    return Claim(
        start=start,
        end=end,
        step=where.step_of(start),
        expression=expr.expression(),
        stated=norm.text[stated.start : stated.end] if s0 == s1 else _orig(norm, s0, s1),
        value=format_value(value),
        verdict=verdict,
        rule=rule,
    )


def _orig(norm: NormText, a: int, b: int) -> str:
    # annotations were blanked to spaces: "$<<9*2=18>>18" reads "$18"
    return re.sub(r"(?<=[$€£])\s+", "", norm.original[a:b])
