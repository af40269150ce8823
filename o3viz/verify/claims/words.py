"""Spelled-out numbers for the claim checker: "twelve" -> 12, "thirty-eight" -> 38,
"one hundred twenty-five" -> 125, "two thousand" -> 2000. Used by the text normalizer, which
rewrites each phrase to digits while keeping the offset map to what the author wrote."""

from __future__ import annotations

import re

_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
VALUES: dict[str, int] = {w: i for i, w in enumerate(_UNITS)} | {w: 20 + 10 * i for i, w in enumerate(_TENS)}
_WORD = "|".join(sorted([*VALUES, *_SCALES], key=len, reverse=True))
# one phrase: number words joined by spaces, hyphens or "and"; every repetition consumes a word
NUMBER_PHRASE = rf"\b(?:{_WORD})(?:(?:[ -]|\band )(?:{_WORD}))*+\b"
_SPLIT = re.compile(r"[ -]+")


def phrase_value(phrase: str) -> int | None:
    """The value of a number phrase, or None when the words do not make one number
    ("three two", "hundred" alone, "one" alone: a pronoun more often than a quantity)."""
    words = [w for w in _SPLIT.split(phrase.lower()) if w and w != "and"]
    if words in (["one"], ["zero"]) or not words or words[0] in _SCALES:
        return None
    total, current, last = 0, 0, None  # last: "unit", "ten", "scale"
    for w in words:
        if w in _SCALES:
            if current == 0 or (w == "hundred" and current >= 100):
                return None
            current *= _SCALES[w]
            if w != "hundred":
                total, current = total + current, 0
            last = "scale"
            continue
        v = VALUES[w]
        if last == "unit" or (last == "ten" and (v >= 10 or v == 0)):
            return None  # "three two", "twenty thirty", "twenty twelve"
        if last == "scale" and current % 100 and v:
            return None
        current += v
        last = "ten" if v >= 20 else "unit"
    return total + current


_NUM = rf"\$?\d[\d,]*(?:\.\d+)?|{NUMBER_PHRASE}"
_S = r"[^\S\n]{1,3}"  # bounded blanks: no pattern here can rescan a run of spaces
DIFFERENCE = "difference"  # a format of its own: the operands in decreasing order
# Verbal arithmetic, rewritten to operators (the groups are the operands, in the order written)
VERBAL: list[tuple[str, str]] = [
    (rf"\b(?:multiply|multiplying){_S}({_NUM}){_S}by{_S}({_NUM})", "{0} * {1}"),
    (rf"\b(?:divide|dividing){_S}({_NUM}){_S}by{_S}({_NUM})", "{0} ÷ {1}"),
    (rf"\b(?:add|adding){_S}({_NUM}){_S}(?:and|to){_S}({_NUM})", "{0} + {1}"),
    (rf"\b(?:subtract|subtracting){_S}({_NUM}){_S}from{_S}({_NUM})", "{1} - {0}"),
    (rf"\bthe{_S}sum{_S}of{_S}({_NUM}){_S}and{_S}({_NUM})", "({0} + {1})"),
    (rf"\bthe{_S}product{_S}of{_S}({_NUM}){_S}and{_S}({_NUM})", "({0} * {1})"),
    (rf"\bthe{_S}quotient{_S}of{_S}({_NUM}){_S}and{_S}({_NUM})", "({0} ÷ {1})"),
    # "the difference between 4 and 10 is 6": a difference is read as the larger minus the smaller
    (rf"\bthe{_S}difference{_S}between{_S}({_NUM}){_S}and{_S}({_NUM})", DIFFERENCE),
    (rf"\bthe{_S}square{_S}of{_S}({_NUM})", "{0}^2"),
    (rf"\bthe{_S}cube{_S}of{_S}({_NUM})", "{0}^3"),
]
# Words that state a result ("5 + 6, which is 12", "to get 43"): read like "is"
RESULT_WORDS = (
    rf",?[^\S\n]{{0,3}}\bwhich{_S}(?:is|gives|makes|equals)\b|\b(?:to|we|you|I){_S}get\b"
    rf"|\b(?:gives|giving|makes|yields)\b(?={_S}\$?\d)"  # not "is equal to": "2/5 is equal to 12.8 ha"
)
# "15% tip on $40": the words between a percentage and "on" name what the percentage is of
PERCENT_ON = rf"%(?:{_S}[a-z]{{1,20}}){{0,2}}{_S}on(?={_S}\$?\d)"


def to_digits(operand: str) -> str:
    """An operand as digits: "$40" stays, "twelve" becomes "12"."""
    if operand[:1].isdigit() or operand[:1] == "$":
        return operand
    value = phrase_value(operand)
    return str(value) if value is not None else operand


def difference(a: str, b: str) -> str:
    """ "the difference between a and b" as larger minus smaller (both already digits)."""

    def value(x: str) -> float | None:
        try:
            return float(x.lstrip("$").replace(",", ""))
        except ValueError:
            return None

    va, vb = value(a), value(b)
    return f"({b} - {a})" if va is not None and vb is not None and vb > va else f"({a} - {b})"
