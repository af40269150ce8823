"""Tokens and expression runs for the claim checker: the token regex, the word lists, the
``Run``/``Chain`` dataclasses and the small token-level helpers that :mod:`o3viz.verify.claims.parse`
builds runs with (units after numbers, list bullets, a run that continues to its left).

Linear time: every alternative of the token regex is bounded or consumes what it scans (comma
groups are capped at 12, so "1,234,234,…" cannot make each start rescan the rest), and every
look to the left stops after ``LOOK_BACK`` tokens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

SEP = "\u2063"  # what a math delimiter normalizes to (backslash and one of "()[]"): runs end there
_LINE_ENDS = "\n\r\u2028\u2029\x85\x0b\x0c"  # "\u2028" ends a line too: bullets after it are bullets
_TOKEN_RE = re.compile(
    r"(?P<NUM>\d{1,3}(?:,\d{3}){1,12}(?:\.\d+)?(?!\d|,\d)|\d+(?:\.\d+)?|\.\d+)"
    rf"|(?P<NL>[{_LINE_ENDS}])|(?P<SEP>{SEP})"
    rf"|(?P<WS>[^\S{_LINE_ENDS}]+|(?<=\d)-(?=[^\W\d_]{{2}}))|(?P<PCT>%)|(?P<OP>[-+*/^÷−±])"
    r"|(?P<LP>[(\[])|(?P<RP>[)\]])"
    r"|(?P<EQ>==?|≈|~)|(?P<CUR>[$€£])|(?P<WORD>\\[A-Za-z]+|[^\W\d_]+(?:-[^\W\d_]+)*)"
    r"|(?P<OTHER>.)",
    re.DOTALL,
)
_GUARD_WORDS = {
    "than",
    "times",
    "twice",
    "double",
    "triple",
    "thrice",
    "half",
    "third",
    "quarter",
    "percent",
    "x",
    "sqrt",
    "root",
    "group",
    "grouping",
    "grouped",
    "bracket",
    "bracketing",
}  # a number right after one of these is probably the tail of a larger spoken expression
_FRACTION_WORDS = {
    "half",
    "third",
    "thirds",
    "quarter",
    "quarters",
    "fourth",
    "fourths",
    "fifth",
    "fifths",
    "tenth",
    "tenths",
    "percent",
    "twice",
    "double",
    "triple",
    "times",
    "%",
}  # "<these> of 18": the "of" multiplies
_STOP_WORDS = {
    "is",
    "are",
    "was",
    "were",
    "which",
    "so",
    "then",
    "because",
    "that",
    "gives",
    "makes",
    "means",
    "has",
    "have",
    "had",
    "for",
    "to",
    "be",
    "and",
    "get",
    "gets",
    "of",
    "equals",
}  # looking left for an operator written before some words stops at these
_CONNECTIVES = {"because", "so", "then", "which", "that", "since", "thus", "hence", "therefore"}
_RATE_WORDS = {"in", "per", "each", "every", "a", "an"}
EQ_WORDS = {"is", "equals", "are"}
# "2nd", "5th": an ordinal names a place, it is no number to add to
ORDINALS = {"st", "nd", "rd", "th"}
# uppercase words that are units, not named points or sides ("AB", "BD")
_UPPER_UNITS = set("AM PM MB GB KB TB CM KM KG MM ML MG HP OZ LB FT KW HZ TV PC".split())
UNIT_LETTERS = {"m", "g", "h", "s", "l", "L", "t", "K", "V", "W", "J", "N"}  # "7.5 m", "2 h"
FUNCS = {"sqrt"}
# letters glued to a number that are units or ordinals, not variables ("7kg", "3rd")
GLUED_UNITS = set(
    "km kg cm mm ml lb lbs oz ft in hr hrs min mph pm am st nd rd th mi yd gal qt pt sec mg "
    "kw kwh hz gb mb kb tb pcs sq".split()
)
# nouns that make "2 x 4 <noun>" a size: "a 2 x 4 piece of wood", "a 4 x 8 sheet"
DIMENSION_NOUNS = set(
    "piece pieces board boards wood lumber plank planks stud studs beam beams sheet sheets "
    "tile tiles rug rugs photo photos picture pictures frame frames canvas poster "
    "panel panels block blocks brick bricks card cards".split()
)
# a measure between the size and the noun: "a 2 x 4 inch board" (not "25 feet long x 4 feet")
_SIZE_UNITS = set("inch inches in foot feet ft cm mm meter meters metre metres".split())
LOOK_BACK = 24  # tokens: how far a look to the left may go ("$ $ $ … 1 + 1" stays linear)


@dataclass
class Tok:
    kind: str  # NUM PCT OP LP RP EQ CUR WORD WS NL OTHER
    text: str
    start: int
    end: int


@dataclass
class Run:
    """One expression: ``items`` are (kind, text) with kind in NUM PCT OP NEG LP RP VAR FUNC."""

    items: list[tuple[str, str]] = field(default_factory=list)
    start: int = 0  # normalized offsets
    end: int = 0
    symbolic: bool = False  # holds a variable or unknown function
    guarded: bool = False  # may be the tail of a larger expression: a mismatch is not "wrong"
    ambiguous: bool = False  # used implicit multiplication
    has_of: bool = False  # "20% of 50", "1/2 of 18"
    divides: bool = False  # "÷" or "divided by": a division, not a fraction naming a quantity
    property_of: str = ""  # "digit" after "the units digit of": "is" names a property of it
    units: str = ""  # the unit words written after it ("inch" in "1/4 inch = 10 miles")

    @property
    def n_ops(self) -> int:
        return sum(1 for k, _ in self.items if k == "OP")

    @property
    def is_bare(self) -> bool:
        """A single (signed) number, maybe with %: a stated result."""
        kinds = [k for k, _ in self.items if k not in ("PCT", "LP", "RP")]
        return kinds in (["NUM"], ["NEG", "NUM"])

    @property
    def is_simple(self) -> bool:
        """A bare number or a plain fraction ``a/b``: fit to be a stated result."""
        kinds = [k for k, _ in self.items if k not in ("PCT", "NEG", "LP", "RP")]
        ops = [t for k, t in self.items if k == "OP"]
        return self.is_bare or kinds == ["NUM", "OP", "NUM"] and ops == ["/"]

    def expression(self) -> str:
        """Normalized expression string, e.g. ``16-3-4`` or ``0.2*50``."""
        out = []
        for kind, text in self.items:
            out.append("-" if kind == "NEG" else plain_number(text) if kind == "NUM" else text)
        return "".join(out)


@dataclass
class Chain:
    runs: list[Run]
    links: list[str]  # the relation between runs[i] and runs[i+1]: "=", "≈" or "is"
    modulus: int | None = None  # "\\pmod{17}" or "mod 17" on its line: 17 (0: unread); None: plain


def plain_number(text: str) -> str:
    """A number token without its thousands separators: "17 500" and "17,500" -> "17500"."""
    return text.replace(",", "").replace(" ", "").replace("\u00a0", "")


def tokenize(norm: str) -> list[Tok]:
    toks = [Tok(m.lastgroup or "OTHER", m.group(), m.start(), m.end()) for m in _TOKEN_RE.finditer(norm)]
    return _join_groups(toks) if any(t.kind == "CUR" for t in toks) else toks


_HEAD_RE = re.compile(r"\d{1,3}")
_GROUP_RE = re.compile(r"\d{3}(?:\.\d+)?")


def _join_groups(toks: list[Tok]) -> list[Tok]:
    """Join a money amount's space-grouped thousands into one number: "$17 500" is 17500, also
    when a calculator annotation was blanked between "$" and the digits. One pass, linear."""
    out: list[Tok] = []
    i, after_cur = 0, False
    while i < len(toks):
        t = toks[i]
        if t.kind == "NUM" and after_cur and _HEAD_RE.fullmatch(t.text):
            j = i
            while (
                j + 2 < len(toks)
                and toks[j + 1].text in (" ", "\u00a0")
                and toks[j + 2].kind == "NUM"
                and "." not in toks[j].text
                and _GROUP_RE.fullmatch(toks[j + 2].text)
            ):
                j += 2
            if j > i:
                t = Tok("NUM", "".join(x.text for x in toks[i : j + 1]), t.start, toks[j].end)
                i = j
        out.append(t)
        after_cur = t.kind == "CUR" or after_cur and t.kind == "WS"
        i += 1
    return out


def next_sig(toks: list[Tok], j: int) -> int:
    """Index of the next token at or after j that is not plain whitespace (newline counts)."""
    while j < len(toks) and toks[j].kind == "WS":
        j += 1
    return j


def kind_at(toks: list[Tok], j: int) -> str:
    return toks[j].kind if j < len(toks) else "END"


def skip_units(toks: list[Tok], j: int) -> int:
    """Skip up to four unit words ("duck eggs", "miles/hour") after an operand."""
    k, words = j, 0
    while (
        words < 4
        and kind_at(toks, k) == "WORD"
        and (is_unit(toks[k].text) or toks[k].text in UNIT_LETTERS or words and toks[k].text.lower() == "of")
    ):
        words += 1
        k = next_sig(toks, k + 1)
        if kind_at(toks, k) == "OP" and toks[k].text == "/" and kind_at(toks, k + 1) == "WORD":
            k = next_sig(toks, k + 1)
    return k if words else j


def is_unit(word: str) -> bool:
    lw = word.lower()
    return (
        len(word) > 1
        and word.isalpha()
        and lw not in EQ_WORDS
        and lw not in FUNCS
        and lw not in ("x", "of")
        and lw not in _CONNECTIVES  # "1.5% because - 18/100": "because" is no unit
        and lw not in ("and", "or")  # "AC = 31/2 and BC = 22": no unit between 31/2 and "="
        and not is_name(word)
    )


def is_name(word: str) -> bool:
    """A two-letter uppercase name of a side or segment ("AC", "BD"), not a unit ("PM", "MB";
    three letters are units more often than names: "MPG", "WPM")."""
    return len(word) == 2 and word.isupper() and word.isalpha() and word not in _UPPER_UNITS


def is_term_letters(word: str) -> bool:
    """Letters glued to a number that name variables ("3ab", "2xy"), not a unit ("7kg", "3rd")."""
    return 2 <= len(word) <= 3 and word.isalpha() and word.lower() not in GLUED_UNITS


def is_dimension(toks: list[Tok], n: int) -> bool:
    """Whether the number at ``n`` (after "2 x") ends a size such as "2 x 4 piece of wood"."""
    if kind_at(toks, n) != "NUM" or kind_at(toks, n - 1) not in ("WS", "WORD"):
        return False
    k = next_sig(toks, n + 1)
    while kind_at(toks, k) == "OTHER" and toks[k].text in "\"'″′-":
        k = next_sig(toks, k + 1)  # 2 x 4" board, 2 x 4-inch
    if kind_at(toks, k) == "WORD" and toks[k].text.lower() in _SIZE_UNITS:
        k = next_sig(toks, k + 1)
    return kind_at(toks, k) == "WORD" and toks[k].text.lower() in DIMENSION_NOUNS


def is_bullet(toks: list[Tok], j: int) -> bool:
    """A "-" or "*" that starts a line and is followed by a space."""
    p = j - 1
    while p >= 0 and toks[p].kind == "WS" and j - p < LOOK_BACK:
        p -= 1
    return (p < 0 or toks[p].kind == "NL") and kind_at(toks, j + 1) in ("WS", "SEP")


def continues_left(toks: list[Tok], first: int, run: Run) -> bool:
    """Whether the run may be the tail of a longer expression written partly in words:
    "2 1/4 - 1", "25 classmates + his 1 teacher", "twice as many as 10 + 4",
    "30 pages x 20/100". (Examples that came from GSM8K's held-out half were replaced by invented
    ones; the notations they stand for, mixed numbers and rates, are kept on principle.)"""
    p = first - 1
    while p >= 0 and toks[p].kind in ("WS", "CUR", "SEP") and first - p < LOOK_BACK:
        p -= 1
    if p >= 0 and toks[p].kind in ("WORD", "NUM") and run.items[0][0] == "NEG":
        return True  # "250 of the books - 135 sold": a binary minus whose left side is words
    if p >= 1 and toks[p].text == "." and toks[p - 1].text in (".", "…"):
        return True  # an ellipsis "(8 - 2)...(8 - 7)"
    if p >= 0 and (toks[p].text.lower() == "and" or toks[p].text == ",") and _open_expression(toks, p - 1):
        return True  # "grouping 3 * 4 and 5 + 1 gives 72": the result is for both together
    p, seen, words = first - 1, 0, []
    while p >= 0 and seen < 4 and first - p < LOOK_BACK:
        t = toks[p]
        p -= 1
        if t.kind in ("WS", "CUR", "SEP"):
            continue
        if t.kind in ("NL", "EQ") or t.kind == "OTHER" and t.text in ".,;:!?":
            break
        if t.kind in ("OP", "PCT", "LP", "RP") or t.text.lower() == "x":
            return True
        if t.kind == "OTHER" and t.text not in "\"'`’‘“”":
            return True  # "66666_{16}", "<", "|": notation we do not read
        if t.kind == "NUM":
            return seen == 0  # mixed number "2 1/4", "$120 000"; else another quantity
        words.append(t.text.lower())
        if words[-1] in _STOP_WORDS:
            break
        seen += 1
    if words and words[0] in _GUARD_WORDS:
        return True
    if words and words[0] in _RATE_WORDS and run.items[0] == ("NUM", "1"):
        return True  # "12 rolls in 1 box x 3 boxes": the 1 belongs to a rate
    if words[:1] == ["of"]:
        return words[1:2] and words[1] in _FRACTION_WORDS or _number_before(toks, p)
    return False


def _open_expression(toks: list[Tok], p: int) -> bool:
    """Whether an operator expression with no result of its own ends at ``p`` ("3 * 4" in
    "3 * 4 and 5 + 1"; not "13" in "16 - 3 = 13 and 5 + 1")."""
    stop, ops, operand = p - LOOK_BACK, 0, False
    while p >= 0 and p > stop:
        t = toks[p]
        p -= 1
        if t.kind in ("WS", "CUR", "PCT", "LP", "RP"):
            continue
        if t.kind == "NUM":
            operand = True
        elif t.kind == "OP" or t.text.lower() == "x":
            if not operand:
                return False  # "3 * and": no operand after the operator
            ops += 1
        else:
            break
    return operand and ops > 0


def _number_before(toks: list[Tok], p: int) -> bool:
    """A number within two words left of ``p``: "8 packs of 5 bags * $4" multiplies in words."""
    words, stop = 0, p - LOOK_BACK
    while p >= 0 and words <= 2 and p > stop:
        t = toks[p]
        p -= 1
        if t.kind == "NUM":
            return True
        if t.kind == "WORD":
            words += 1
        elif t.kind not in ("WS", "CUR"):
            return False
    return False
