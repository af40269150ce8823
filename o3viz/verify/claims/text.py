"""Text normalization for the claim checker: LaTeX, Unicode operators and word phrases become
plain arithmetic, while every normalized character remembers the original span it came from.

``normalize_text(text)`` returns a :class:`NormText`; ``span_of(a, b)`` maps a normalized slice
back to the original text, so a claim found in normalized text points at what the author wrote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from o3viz.verify.claims.tokens import SEP
from o3viz.verify.claims.words import (
    DIFFERENCE,
    NUMBER_PHRASE,
    PERCENT_ON,
    RESULT_WORDS,
    VERBAL,
    difference,
    phrase_value,
    to_digits,
)


@dataclass
class NormText:
    """Normalized text with, per character, the original [start, end) it was made from."""

    text: str = ""
    original: str = ""
    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)

    def add(self, s: str, start: int, end: int) -> None:
        self.text_parts.append(s)
        self.starts.extend([start] * len(s))
        self.ends.extend([end] * len(s))

    def span_of(self, a: int, b: int) -> tuple[int, int]:
        """Original (start, end) of normalized slice [a, b)."""
        if b <= a:
            return (self.starts[a], self.starts[a]) if a < len(self.starts) else (0, 0)
        return self.starts[a], self.ends[b - 1]

    text_parts: list[str] = field(default_factory=list, repr=False)


# Plain replacements: pattern -> replacement. Commands are matched whole-word (no letter after).
_SIMPLE: dict[str, str] = {
    r"\times": "*",
    r"\cdot": "*",
    r"\ast": "*",
    r"\div": "÷",
    r"\approx": "≈",
    r"\sim": "~",
    r"\simeq": "≈",
    r"\neq": "≠",
    r"\ne": "≠",
    r"\leq": "<",
    r"\le": "<",
    r"\geq": ">",
    r"\ge": ">",
    r"\lt": "<",
    r"\gt": ">",
    r"\%": "%",
    r"\$": "$",
    r"\pi": "π",
    r"\sqrt": "sqrt",
    r"\left": "",
    r"\right": "",
    r"\big": "",
    r"\Big": "",
    r"\bigg": "",
    r"\Bigg": "",
    r"\displaystyle": " ",
    r"\quad": " ",
    r"\qquad": " ",
    r"\,": "",
    r"\;": " ",
    r"\!": "",
    r"\:": " ",
    r"\ ": " ",
    r"\(": SEP,  # a math delimiter ends an expression: "\(3 \times 7\) - \(22" is no subtraction
    r"\)": SEP,
    r"\[": SEP,
    r"\]": SEP,
    r"\pm": "±",  # a run holding ± has two values: never compared with one result
    r"\mp": "±",
    "∓": "±",
    r"\{": " ",
    r"\}": " ",
    r"\cdots": "…",
    r"\ldots": "…",
    r"\dots": "…",
    "×": "*",
    "÷": "÷",
    "·": "*",
    "⋅": "*",
    "∗": "*",
    "−": "-",
    "–": "-",
    "√": "sqrt",
    "**": "^",
    " squared": "^2",
    " cubed": "^3",
    " percent of": "% of",
    "$$": " ",
    "{,}": ",",
    "\u2009": "",
    "\u202f": "",
    "&": "",
    r"\\": "\n",
}
# Word phrases that read as arithmetic; the lookahead keeps them to "... of <number>" etc.
_PHRASES: list[tuple[str, str]] = [
    (r"\b(?:one|a)[ -]half of\b", "1/2 of"),
    (r"\bhalf of\b", "1/2 of"),
    (r"\b(?:one|a)[ -]third of\b", "1/3 of"),
    (r"\btwo[ -]thirds of\b", "2/3 of"),
    (r"\b(?:one|a)[ -](?:quarter|fourth) of\b", "1/4 of"),
    (r"\bthree[ -](?:quarters|fourths) of\b", "3/4 of"),
    (r"\b(?:one|a)[ -]fifth of\b", "1/5 of"),
    (r"\b(?:one|a)[ -]tenth of\b", "1/10 of"),
    (r"\b(?:twice|double)(?= \$?\d)", "2 *"),
    (r"\b(?:triple|thrice)(?= \$?\d)", "3 *"),
    (r"\b(?:multiplied by|times)(?= \$?[\d(])", "*"),
    (r"\bdivided by(?= \$?[\d(])", "÷"),  # spoken: a division, never a fraction "of something"
    (r"\bplus(?= \$?[\d(])", "+"),
    (r"\bminus(?= \$?[\d(])", "−"),  # U+2212: the parser knows it was spoken
]
_FRAC = {r"\frac", r"\dfrac", r"\tfrac", r"\cfrac"}
_TEXT = {r"\text", r"\mathrm", r"\textbf", r"\textit", r"\mbox", r"\mathbf", r"\operatorname"}
_TRANSPARENT = {r"\boxed", r"\fbox"}

_SUP = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
_SUP_RE = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_CMD_RE = re.compile(r"\\(?:[A-Za-z]+|.)")
_FRAC_DIGITS_RE = re.compile(r"[^\S\n]*+(\d)[^\S\n]*+(\d)")  # matched in place: no copy of the rest
_SIMPLE_RE = re.compile(
    "|".join(re.escape(k) for k in sorted((k for k in _SIMPLE if not k[0] == "\\"), key=len)[::-1])
)
_PHRASES = [(p.replace(r"(?= \$?[\d(])", rf"(?= \$?(?:[\d(]|{NUMBER_PHRASE}))"), r) for p, r in _PHRASES]
_PHRASE_RE = re.compile("|".join(f"(?P<p{i}>{p})" for i, (p, _) in enumerate(_PHRASES)), re.I)
_VERBAL_RES = [(re.compile(p, re.I), fmt) for p, fmt in VERBAL]
_RESULT_RE = re.compile(RESULT_WORDS, re.I)
_PERCENT_ON_RE = re.compile(PERCENT_ON, re.I)
_NUMBER_WORDS_RE = re.compile(NUMBER_PHRASE, re.I)


_SPECIAL_RE = re.compile(
    r"[\\{}]|\^\{|[⁰¹²³⁴⁵⁶⁷⁸⁹]|"
    + "|".join([_SIMPLE_RE.pattern, _PHRASE_RE.pattern, RESULT_WORDS, PERCENT_ON, NUMBER_PHRASE])
    + "|"
    + "|".join(p for p, _ in VERBAL),
    re.I,
)  # where a rewrite may start; everything between two matches is copied as is


def _phrase_for(m: re.Match) -> str:
    return _PHRASES[int((m.lastgroup or "p0")[1:])][1]


def normalize_text(text: str) -> NormText:
    """Rewrite LaTeX/Unicode math to plain operators, keeping an offset map to ``text``."""
    out = NormText(original=text)
    stack: list[str] = []  # what each open brace closes as: ")", ")/(", "))", " "
    i, n = 0, len(text)
    while i < n:
        m = _SPECIAL_RE.search(text, i)
        j = m.start() if m else n
        if j > i:  # plain stretch: copied in bulk (most text)
            out.text_parts.append(text[i:j])
            out.starts.extend(range(i, j))
            out.ends.extend(range(i + 1, j + 1))
        if m is None:
            break
        i = _rewrite_at(text, j, out, stack)
    out.text = "".join(out.text_parts)
    out.starts.append(n)
    out.ends.append(n)
    return out


def _rewrite_at(text: str, i: int, out: NormText, stack: list[str]) -> int:
    """Rewrite the special construct at ``i``; returns the index after it."""
    ch = text[i]
    if ch == "\\":
        return _emit_command(text, i, out, stack)
    if ch == "{" and not text.startswith("{,}", i):
        stack.append(")")
        out.add("(", i, i + 1)
        return i + 1
    if text.startswith("**", i) and _is_bold(text, i):
        out.add("  ", i, i + 2)  # "**Answer: 5** 3 + 4": Markdown bold, not a power
        return i + 2
    if ch == "}" and stack:
        return _close_brace(text, i, out, stack)
    if text.startswith("^{", i):
        out.add("^(", i, i + 2)
        stack.append(")")
        return i + 2
    sup = _SUP_RE.match(text, i)
    if sup:  # "2¹⁸" -> "2^18"
        out.add("^" + sup.group().translate(_SUP), i, sup.end())
        return sup.end()
    phrase = _PHRASE_RE.match(text, i) if _starts_word(text, i) else None
    words = None if phrase else _rewrite_words(text, i, out)  # "two thirds of" before "two"
    if words is not None:
        return words
    m = _SIMPLE_RE.match(text, i) or phrase
    if m and (m.re is _SIMPLE_RE or _starts_word(text, i)):
        rep = _SIMPLE[m.group()] if m.re is _SIMPLE_RE else _phrase_for(m)
        out.add(rep, i, m.end())
        return m.end()
    out.add(ch, i, i + 1)
    return i + 1


def _rewrite_words(text: str, i: int, out: NormText) -> int | None:
    """Arithmetic written in words at ``i``: "Multiply 6 by 7" -> "6 * 7", ", which is" /
    "to get" -> " is ", "15% tip on $40" -> "15% of $40", "thirty-eight" -> "38". Returns the
    index after the rewrite, or None when nothing here is in words."""
    m = _PERCENT_ON_RE.match(text, i) or _RESULT_RE.match(text, i)
    if m and (text[i] in "%," or _starts_word(text, i)):
        out.add("% of" if m.re is _PERCENT_ON_RE else " is ", i, m.end())
        return m.end()
    if not _starts_word(text, i):
        return None
    for rx, fmt in _VERBAL_RES:
        m = rx.match(text, i)
        if m:
            operands = [to_digits(g) for g in m.groups()]
            out.add(difference(*operands) if fmt == DIFFERENCE else fmt.format(*operands), i, m.end())
            return m.end()
    m = _NUMBER_WORDS_RE.match(text, i)
    value = phrase_value(m.group()) if m else None
    if m and value is not None:
        out.add(str(value), i, m.end())
        return m.end()
    return None


def _is_bold(text: str, i: int) -> bool:
    """Whether the "**" at ``i`` is Markdown bold: blank on one side only ("**5", "5** 3"),
    where a power ("2**3", "2 ** 3") has blanks on both sides or neither."""
    before = i == 0 or text[i - 1].isspace()
    after = i + 2 >= len(text) or text[i + 2].isspace()
    return before != after


def _starts_word(text: str, i: int) -> bool:
    return i == 0 or not text[i - 1].isalnum()


def _emit_command(text: str, i: int, out: NormText, stack: list[str]) -> int:
    m = _CMD_RE.match(text, i)
    if m is None:  # a lone backslash before a newline or at the end
        out.add("\\", i, i + 1)
        return i + 1
    cmd, end = m.group(), m.end()
    if cmd in _FRAC:
        brace = _brace_after(text, end)
        if brace >= 0:  # "\frac {9^4} {k^4}": blanks before a brace are allowed
            out.add("((", i, brace + 1)
            stack.append("frac1")
            return brace + 1
        d = _FRAC_DIGITS_RE.match(text, end)
        if d:  # \frac12 means 1/2
            out.add(f"({d.group(1)}/{d.group(2)})", i, d.end())
            return d.end()
    if cmd in _TEXT and text.startswith("{", end):
        out.add(" ", i, end + 1)
        stack.append(" ")
        return end + 1
    if cmd in _TRANSPARENT and text.startswith("{", end):
        out.add(" ", i, end + 1)
        stack.append(" ")
        return end + 1
    if cmd in _SIMPLE:
        out.add(_SIMPLE[cmd], i, end)
        return end
    out.add(cmd, i, end)  # unknown command: kept, reads as a symbol (makes a claim unverifiable)
    return end


def _close_brace(text: str, i: int, out: NormText, stack: list[str]) -> int:
    kind = stack.pop()
    if kind == "frac1":
        brace = _brace_after(text, i + 1)
        if brace >= 0:
            out.add(")/(", i, brace + 1)
            stack.append("))")
            return brace + 1
        out.add(")", i, i + 1)  # malformed \frac{a} with no denominator
        return i + 1
    out.add(kind, i, i + 1)
    return i + 1


def _brace_after(text: str, i: int) -> int:
    """Index of a "{" at ``i`` after at most 3 blanks, or -1 (bounded: no rescan of long blanks)."""
    k = i
    while k < len(text) and k - i < 3 and text[k] in " \t":
        k += 1
    return k if text.startswith("{", k) else -1
