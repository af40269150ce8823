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
    r"[^\S\n]*+\$?[^\S\n]*+(-?(?:\d{1,3}(?: \d{3}){1,12}(?!\d|\.\d)|\d[\d,]*(?:\.\d+)?(?:/\d+)?|\.\d+)%?)"
)  # "12 500" (space-grouped thousands), "1,000", "3/4", ".5", "25%"; possessive blanks: linear
_LEAD_NUM = re.compile(r"\$?[^\S\n]*+-?(?:\d[\d,]*(?:\.\d+)?|\.\d+)%?")
_ANSWER_NOISE = re.compile(r"\\[$,!;]|\\text\{[^{}]*\}|[$€£{}]")  # "\\$45.00" -> "45.00"
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
        note = ""
        if verdict == "wrong" and results[0][0] == "correct" and _cut_short(result.strip(), stated):
            verdict, note = "unverifiable", "the calculator's result, cut short"  # 14.999999999999998 → 14.99
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
                note=note,
            )
        )
    return claims


def _cut_short(result: str, stated: str) -> bool:
    """Whether ``stated`` copies the leading digits of a long calculator ``result``."""
    shown = stated.replace(",", "").replace(" ", "").lstrip("$")
    return len(result) > len(shown) + 6 and "." in shown and result.startswith(shown)


def find_final_answer(text: str) -> tuple[int, int, str] | None:
    """The stated final answer: (start, end, number) of ``\\boxed{N}``, ``#### N``, "the answer is N",
    "Answer: N" or "A: N", from the one extractor (``o3viz.text.answers.extract_strong_answer``).
    Only a plain number (or ``a/b``) is returned, without its currency sign: ``\\boxed{\\$45.00}``
    gives "45.00"; an expression, or a number in another base (``40_9``), gives None.

    >>> find_final_answer("So 3 * 3 = 9.\\n#### $9")
    (19, 21, '9')
    """
    found = extract_strong_answer(text)
    if found is None or len(found.text) > _MAX_ANSWER:
        return None
    answer = found.text.strip().rstrip(".")
    if found.method == "answer_label":  # "The answer is 15 apples": the number it starts with
        m = _LEAD_NUM.match(answer)
        if m is None:
            return None
        answer = m.group()
    lead = len(found.text) - len(found.text.lstrip())
    start, end = found.start + lead, found.start + lead + len(answer)
    if end < len(text) and text[end] in "_^":
        return None  # "$40_9$", "2^{10}": not the plain number it starts with
    number = _ANSWER_NOISE.sub("", answer).strip()
    if answer_members(answer):
        return start, end, answer  # "\\boxed{3, 7}": a set, compared member by member
    if readings(number):
        return start, end, number
    run = parse_expression(normalize_text(answer).text)  # "\\frac{24}{2}" is a number too
    if run is None or run.symbolic or not run.is_simple:
        return None  # an expression ("3 - 2\\sqrt{2}"): no single stated number to compare
    return start, end, answer


def check_final_answer(text: str, results: list[tuple[int, int, str]], where: Locator) -> list[Claim]:
    """``final_answer_mismatch``: the final answer against the last result stated before it.

    ``results`` are (start, end, stated) of every stated result (right of an ``=``), in order; a
    result inside the answer (``3 \\times 3 = \\boxed{9}``) counts as before it.
    """
    final = find_final_answer(text)
    if final is None:
        return []
    start, end, answer = final
    last = next((r for r in reversed(results) if r[0] < end and _number_values(r[2])), None)
    if last is None:
        return []
    lvals = _number_values(last[2])
    members = answer_members(answer)
    if members:  # a set: the last result is one of its members, or nothing is said
        hit = any(
            judge(lvals, readings(m) or [(v, None) for v in _member_values(m)])[0] == "correct"
            for m in members
        )
        note = "" if hit else "a set of answers, the last result not among them"
        return [_final_claim(start, end, where, answer, lvals, "correct" if hit else "unverifiable", note)]
    avals = _run_values(parse_expression(normalize_text(answer).text))
    verdict, _ = judge(lvals, readings(answer) or [(v, None) for v in avals])
    if verdict != "correct":  # the answer may round the last result: try the other way too
        alt, _ = judge(avals, readings(last[2]))
        verdict = alt if alt == "correct" else verdict
    note = ""
    if verdict == "wrong" and _answer_explained(text, results, start, last, answer, avals):
        verdict = "unverifiable"  # the answer is stated before, just not as the last result
    elif verdict == "wrong" and _mentions(_ANNOT_RE.sub(" ", text[last[1] : start]), [], any_number=True):
        verdict, note = "unverifiable", "numbers follow the last result"  # "+ a 5 dollar tip"
    elif verdict == "wrong" and _other_units(text, last[1], start, end):
        verdict, note = "unverifiable", "the answer is in another unit"  # "15 minutes", "0.25 hours"
    return [_final_claim(start, end, where, answer, lvals, verdict, note)]


_UNIT_AFTER_RE = re.compile(r"(?:[^\S\n]|[{}$]|\\text\b|\\mathrm\b|\\[,; ]){0,12}([A-Za-z]{1,20})")
_NOT_UNITS = set(
    "and or is are was so the a an which that then we to of in for as but this it i hope thus "
    "therefore final answer because since".split()
)


def _unit_after(text: str, pos: int) -> str:
    """The unit word written right after ``pos`` ("5 cm", "\\boxed{50 \\text{ mm}}"), or ""."""
    m = _UNIT_AFTER_RE.match(text, pos)
    word = m.group(1).lower() if m else ""
    return "" if word in _NOT_UNITS else word.rstrip("s")


def _other_units(text: str, last_end: int, start: int, end: int) -> bool:
    """Whether the last result and the final answer name two different units."""
    number = re.match(r"[^\d]{0,12}[\d.,]+", text[start:end])
    answer_at = start + number.end() if number else end
    a, b = _unit_after(text, last_end), _unit_after(text, answer_at) or _unit_after(text, end)
    return bool(a and b and a != b)


def _final_claim(
    start: int, end: int, where: Locator, answer: str, lvals: list[Value], verdict: Verdict, note: str
) -> Claim:
    return Claim(
        start=start,
        end=end,
        step=where.step_of(start),
        expression="final answer",
        stated=answer,
        value=format_value(lvals[0]),
        verdict=verdict,
        rule="final_answer_mismatch",
        note=note,
    )


_THOUSANDS_RE = re.compile(r"(?<=\d)\{?,\}?(?=\d{3}(?!\d))")  # "10,500", "10{,}500": one number
_MEMBER_SPLIT_RE = re.compile(r",|;|\b(?:and|or)\b")
_PM_RE = re.compile(r"\\pm|±|\\mp")
_MAX_MEMBERS = 20


def answer_members(answer: str) -> list[str]:
    """The members of a multi-valued answer ("3, 7", "-1 \\text{ and } 4", "2 \\pm 1" as its
    parts), or [] for one value. A thousands comma ("10,500") does not split. Linear: one pass
    of each pattern, and at most ``_MAX_MEMBERS`` members are kept."""
    text = _THOUSANDS_RE.sub("", answer)
    text = re.sub(r"\\(?:text|mbox|mathrm)\{([^{}]{0,40})\}", r" \1 ", text)
    pm = _PM_RE.search(text)
    if pm and text[: pm.start()].strip() and text[pm.end() :].strip():  # "2 \\pm 3": {5, -1}
        head, tail = text[: pm.start()], text[pm.end() :]
        return [f"{head}+({tail})", f"{head}-({tail})"]
    parts = [p.strip() for p in _MEMBER_SPLIT_RE.split(text, maxsplit=_MAX_MEMBERS)]
    parts = [p for p in parts if p]
    return parts if len(parts) >= 2 else []


def _member_values(member: str) -> list[Value]:
    run = parse_expression(normalize_text(_ANSWER_NOISE.sub("", member)).text)
    return _run_values(run)


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


def _mentions(text: str, values: list[Value], any_number: bool = False) -> bool:
    """Whether one of ``values`` (with ``any_number``: any number) is written in ``text``
    ("$118 000" counts)."""
    text = re.sub(r"(?<=\d)[ ,](?=\d{3}\b)", "", text)
    nums = [Fraction(n) for n in re.findall(r"\d+(?:\.\d+)?|\.\d+", text)]
    nums += [Fraction(_WORDS.index(w)) for w in re.findall(r"[a-z]+", text.lower()) if w in _WORDS]
    return bool(nums) if any_number else any(n == v for n in nums for v in values)


_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen twenty"
).split()


def check_inconsistent(claims: list[Claim], where: Locator) -> list[Claim]:
    """``inconsistent_quantity``: the same expression stated with two values that disagree.

    Never ``wrong``: each statement is already judged by its own rule against the value we
    compute, so a wrong one is flagged there (once), and a later statement that gets it right
    is a correction ("2 * 3 * 20 + 1 is 121, not 126"). The claim records the disagreement as
    ``unverifiable`` with the value we compute, never a value that was merely stated earlier.
    """
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
        if prev.start < c.end and c.start < prev.end:
            continue  # one statement read by two rules ("= $<<…>>32 000"): not two statements
        a, b = _number_values(prev.stated), _number_values(c.stated)
        if not a or not b:
            continue
        agree = (
            judge(a, readings(c.stated), True)[0] == "correct"
            or judge(b, readings(prev.stated), True)[0] == "correct"
        )
        if not agree:
            fixed = "corrects" if c.verdict == "correct" else "differs from"
            out.append(
                Claim(
                    start=c.start,
                    end=c.end,
                    step=c.step,
                    expression=c.expression,
                    stated=c.stated,
                    value=c.value,
                    verdict="unverifiable",
                    rule="inconsistent_quantity",
                    note=f"{fixed} {prev.stated} stated at step {prev.step}",
                )
            )
    return out
