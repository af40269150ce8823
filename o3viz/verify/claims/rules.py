"""Claim rules beyond ``a = b``: GSM8K calculator annotations and the contradiction rules
(final answer against the last result, one quantity stated with two values).

Used by :func:`o3viz.verify.claims.check.check_claims`; each function returns extra ``Claim`` objects.
"""

from __future__ import annotations

import re
from fractions import Fraction

from o3viz.text.answers import extract_strong_answer
from o3viz.verify.claims.evaluate import TooLarge, Value, Verdict, evaluate, format_value, judge, readings
from o3viz.verify.claims.parse import Run, parse_expression
from o3viz.verify.claims.text import normalize_text
from o3viz.verify.claims.types import Claim, Locator

_ANNOT_RE = re.compile(r"<<([^<>]*)>>")
_VISIBLE_RE = re.compile(
    r"[^\S\n]*+\$?[^\S\n]*+(-?(?:\d{1,3}(?: \d{3}){1,12}(?![\d.])|\d[\d,]*(?:\.\d+)?(?:/\d+)?|\.\d+)%?)"
)  # "12 500" (space-grouped thousands), "1,000", "3/4", ".5", "25%"; possessive blanks: linear
_LEAD_NUM = re.compile(r"\$?[^\S\n]*+-?(?:\d[\d,]*(?:\.\d+)?|\.\d+)%?")
_MAX_ANSWER = 200  # characters: a longer final answer is not an arithmetic result
_BASE_RULES = {"arith_eq", "calc_annotation", "percent_of", "fraction_of", "rounding"}


def mask_annotations(text: str) -> str:
    """``text`` with each ``<<...>>`` blanked to spaces (offsets unchanged)."""
    return _ANNOT_RE.sub(lambda m: " " * len(m.group()), text)


def _number_values(s: str) -> list[Value]:
    """A stated number's values: "25%" -> [1/4, 25]."""
    return [v for v, _ in readings(s)]


def _run_values(run: Run | None) -> list[Value]:
    if run is None or run.symbolic:
        return []
    try:
        vals = [evaluate(run.items), evaluate(run.items, pct_as_number=True)]
    except TooLarge:
        return []
    return [v for v in dict.fromkeys(vals) if v is not None]


def _combine(results: list[tuple[Verdict, bool]]) -> tuple[Verdict, bool]:
    verdicts = [v for v, _ in results]
    for v in ("wrong", "unverifiable"):
        if v in verdicts:
            return v, False
    return "correct", any(r for _, r in results)


def check_annotations(text: str, where: Locator) -> list[Claim]:
    """One ``calc_annotation`` claim per ``<<expr=result>>visible``."""
    claims = []
    for m in _ANNOT_RE.finditer(text):
        expr_text, eq, result = m.group(1).rpartition("=")
        if not eq or not expr_text.strip():
            continue  # "<<>>": nothing stated
        vis = _VISIBLE_RE.match(text, m.end())
        stated = vis.group(1) if vis else result.strip()
        end = vis.end() if vis else m.end()
        run = parse_expression(normalize_text(expr_text).text) if eq else None
        lv = _run_values(run)
        checks = [readings(result)] + ([readings(stated)] if vis else [])
        results = [judge(lv, rv) if lv and rv else ("unverifiable", False) for rv in checks]
        verdict, rounded = _combine(results)
        claims.append(
            Claim(
                start=m.start(),
                end=end,
                step=where.step_of(m.start()),
                expression=run.expression() if run else expr_text.strip(),
                stated=stated,
                value=format_value(lv[0] if lv else None),
                verdict=verdict,
                rule="rounding" if rounded else "calc_annotation",
            )
        )
    return claims


def find_final_answer(text: str) -> tuple[int, int, str] | None:
    """The stated final answer: (start, end, text) of ``\\boxed{N}``, ``#### N``, "the answer is N",
    "Answer: N" or "A: N", from the one extractor (``o3viz.text.answers.extract_strong_answer``)."""
    found = extract_strong_answer(text)
    if found is None or len(found.text) > _MAX_ANSWER:
        return None
    answer = found.text.strip().rstrip(".")
    if found.method == "answer_label":  # "The answer is 15 apples": the number it starts with
        m = _LEAD_NUM.match(answer)
        if m is None:
            return None
        answer = m.group()
    return found.start, found.start + len(answer), answer


def check_final_answer(text: str, results: list[tuple[int, int, str]], where: Locator) -> list[Claim]:
    """``final_answer_mismatch``: the final answer against the last result stated before it.

    ``results`` are (start, end, stated) of every stated result (right of an ``=``), in order.
    """
    final = find_final_answer(text)
    if final is None:
        return []
    start, end, answer = final
    avals = _run_values(parse_expression(normalize_text(answer).text))
    last = next((r for r in reversed(results) if r[1] <= start and _number_values(r[2])), None)
    if not avals or last is None:
        return []
    lvals = _number_values(last[2])
    verdict, _ = judge(lvals, readings(answer) or [(v, None) for v in avals])
    if verdict != "correct":  # the answer may round the last result: try the other way too
        alt, _ = judge(avals, readings(last[2]))
        verdict = alt if alt == "correct" else verdict
    if verdict == "wrong" and _answer_explained(text, results, start, last, answer, avals):
        verdict = "unverifiable"  # the answer is stated before, just not as the last result
    return [
        Claim(
            start=start,
            end=end,
            step=where.step_of(start),
            expression="final answer",
            stated=answer,
            value=format_value(lvals[0]),
            verdict=verdict,
            rule="final_answer_mismatch",
        )
    ]


def _answer_explained(
    text: str,
    results: list[tuple[int, int, str]],
    start: int,
    last: tuple[int, int, str],
    answer: str,
    avals: list[Value],
) -> bool:
    """Whether a final answer that is not the last result still appears before it: in the last
    result's line, as an earlier result, as 100x or 1/100 of the last (cents, %), or verbatim."""
    lvals = _number_values(last[2])
    if _mentions(text[text.rfind("\n", 0, last[0]) + 1 : start], avals):
        return True
    if any(v * k in avals for v in lvals for k in (100, Fraction(1, 100))):
        return True
    if any(v in avals for r in results if r[1] <= start for v in _number_values(r[2])):
        return True
    said = normalize_text(answer).text.strip()
    return bool(said) and said in normalize_text(text[:start]).text


def _mentions(text: str, values: list[Value]) -> bool:
    """Whether one of ``values`` is written as a number in ``text`` ("$118 000" counts)."""
    text = re.sub(r"(?<=\d)[ ,](?=\d{3}\b)", "", text)
    nums = [Fraction(n) for n in re.findall(r"\d+(?:\.\d+)?|\.\d+", text)]
    nums += [Fraction(_WORDS.index(w)) for w in re.findall(r"[a-z]+", text.lower()) if w in _WORDS]
    return any(n == v for n in nums for v in values)


_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen twenty"
).split()


def check_inconsistent(claims: list[Claim], where: Locator) -> list[Claim]:
    """``inconsistent_quantity``: the same expression stated with two values that disagree."""
    seen: dict[str, Claim] = {}
    out = []
    for c in claims:
        if c.rule not in _BASE_RULES or not re.search(r"[-+*/^]", c.expression[1:]):
            continue
        if not c.value or c.verdict == "unverifiable":
            continue  # symbolic (reasoning revisits "p(3)"), or the parse was in doubt
        prev = seen.get(c.expression)
        seen[c.expression] = c
        if prev is None or (prev.verdict == "correct" and c.verdict == "correct"):
            continue
        a, b = _number_values(prev.stated), _number_values(c.stated)
        if not a or not b:
            continue
        agree = (
            judge(a, readings(c.stated), True)[0] == "correct"
            or judge(b, readings(prev.stated), True)[0] == "correct"
        )
        if not agree:
            out.append(
                Claim(
                    start=c.start,
                    end=c.end,
                    step=c.step,
                    expression=c.expression,
                    stated=c.stated,
                    value=prev.stated,
                    verdict="wrong",
                    rule="inconsistent_quantity",
                )
            )
    return out
