"""Reading the answer one step of model text states, and how sure that reading is (issue 63): an
answer to the question, never an intermediate result. Every scan here is linear in the text (plain
string searches from the end and regexes without nested or overlapping quantifiers); a step is
read over at most its last ``MAX_SENTENCE_CHARS`` characters, a question over at most
``MAX_QUESTION_CHARS``.

A step states an answer (``read_step``), first rule that matches:

1. **marked**: a strong answer (``o3viz.text.answers.extract_strong_answer``: ``\\boxed{…}``,
   ``#### N``, "Final answer: …", "the answer is …", a GSM8K line "A: N"), unless what it took is a
   bare opening delimiter (``\\[`` of "**Final Answer:**\\n\\n\\[") or a verdict word ("the answer is
   correct");
2. a **conclusion**: the step's last sentence opens with a concluding word ("So", "Thus",
   "Therefore", "Hence", "That's", "We get", "The total/result …") and ends "<subject> = X",
   "<subject> is/are/equals X" (up to two unit words, or one remark in parentheses, after X),
   where X is answer-shaped (a number, a fraction, a math span's right side, a formula without
   spaces, a bracketed tuple) with balanced brackets. Whose value it is decides the reading, by
   the *subject* (the clause before the verb) against what the question asks
   (``question_target``: the words and symbols of its asking sentences):
   - **concluded**: every content word, symbol or number of the subject is one the question asks
     about, and one of them is a word or symbol ("Find the angle …" → "So the angle between them
     is 90 degrees");
   - **uncertain**: the subject says nothing ("That's 9", "So the total is 18") or only partly
     matches, or the question names nothing to match (no question);
   - *no answer*: the subject names only other things ("So angle at E is 90 degrees" when the
     question asks for DE); X is written in a symbol where the question asks a value, not an
     expression ("So quotient: a^2 - 2a - 3 = (a-3)(a+1)" for "Find … a"; "c = π + 2πk"); X is
     not a number where it asks "how many"; or X is one part of an asked tuple ("So r is 3" for
     "(r, θ)").

A labelled answer is cut to the answer ("the answer is \\( w = 6 - 5i \\), which …" → ``6 - 5i``;
"3√13 units" → ``3√13``) and read *uncertain* when its sentence hedges ("maybe the answer is …").

Nothing else is an answer: a number mid-step, a step that does not conclude, a question.

>>> t = question_target("What is the value of $a$?")
>>> read_step("So a = 3.", t)
Stated(text='3', start=7, confidence='concluded')
>>> read_step("So quotient: a^2 - 2a - 3 = (a-3)(a+1)", t) is None
True
>>> read_step("That's 9.", t).confidence, read_step("The answer is \\\\boxed{3}.", t).confidence
('uncertain', 'marked')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from o3viz.analysis.answer_conclusion import MAX_X_CHARS, answer_shaped, conclusion
from o3viz.text.answers import extract_strong_answer

__all__ = [
    "CONFIDENT",
    "MAX_QUESTION_CHARS",
    "MAX_SENTENCE_CHARS",
    "MAX_X_CHARS",
    "Confidence",
    "Stated",
    "Target",
    "question_target",
    "read_step",
]

Confidence = Literal["marked", "concluded", "uncertain"]
CONFIDENT: tuple[str, ...] = ("marked", "concluded")  # readings the dataset figures count flips between
MAX_SENTENCE_CHARS = 400  # the conclusion rule reads at most this much of a step's end
MAX_QUESTION_CHARS = 8000  # the question is read over at most this much (after drawing code)
MAX_LABEL_CHARS = 400  # a labelled answer ("the answer is …") is read over at most this much

_STARTS = re.compile(
    r"\**[^\S\n]*(?:(?:So|Thus|Therefore|Hence|Finally|Overall|Altogether|In total|In conclusion"
    r"|Which gives|This gives|We get|We have|The (?:total|result|sum|product|difference|value"
    r"|final (?:result|value|count)))\b|(?P<bare>(?:That|It|This)(?:'s|’s|[^\S\n]+is)\b))"
)
# a word, a \command or a number (a symbol keeps its primes and subscript: w' is not w); possessive
_TOKEN = re.compile(r"\\?[^\W\d_]++(?:'++|_\{?+\w++\}?+)?+|\d++(?:\.\d++)?+")
_EXPRESSION_ASK = re.compile(
    r"\b(?:simplify|expand|factor|express|write|rewrite|in terms of|expression|polynomial|equation"
    r"|function|formula)\b",
    re.I,
)
_COUNT_ASK = re.compile(r"\bhow many\b", re.I)
_ASKS = re.compile(
    r"\b(?:what|which|how|find|compute|calculate|determine|evaluate|simplify|express|solve|convert"
    r"|write|enter|give)\b",
    re.I,
)
_HEDGE = re.compile(r"\b(?:maybe|perhaps|might|whether|suppose|not sure|if)\b", re.I)
_VERDICTS = frozenset(
    "correct incorrect right wrong valid invalid consistent inconsistent different same confirmed "
    "verified indeed also not fine reasonable plausible likely unclear true".split()
)
_BARE = frozenset({"\\[", "\\(", "$", "$$", "\\begin"})
_GREEK = {"θ": "theta", "π": "pi", "α": "alpha", "β": "beta", "γ": "gamma", "φ": "phi", "ω": "omega"}
# words that name no quantity: a subject of only these says nothing about what it is
_STOP = frozenset(
    "the an of in on to is are be was were what which how many much find compute calculate "
    "determine evaluate simplify express your answer as form enter write give value values "
    "number numbers possible result results total final that this it its these those there "
    "and or with for by from at between such does do have has can will would could should we "
    "you so thus therefore hence then now let us me get gives equal equals common fraction "
    "simplest radical units unit inches degrees exactly indeed also actually really just still "
    "here case our my all both each one two three when where if not only then overall "
    "altogether conclusion finally sum product difference count left right frac dfrac tfrac "
    "cdot times left right text mathrm mathbf boxed quad qquad le ge leq geq neq approx dots "
    "ldots cdots circ".split()
)
_CONSTANTS = frozenset({"pi", "i", "e", "cm", "m", "km", "kg", "g", "s", "ft", "in"})  # never symbols
_NUMBER = re.compile(r"-?\d++(?:\.\d++)?+")
_TUPLE_FORM = re.compile(r"\(\s*\\?[A-Za-z]+\s*,\s*\\?[A-Za-z]+")  # "(r,\theta)" in the question


@dataclass(frozen=True)
class Stated:
    """An answer one step states: as written, its offset in the step, and how it was read."""

    text: str
    start: int
    confidence: Confidence


@dataclass(frozen=True)
class Target:
    """What the question asks for: the content words and symbols of its asking sentences, the
    symbols an answer may be written in ("in terms of p and q"), and whether it asks a tuple."""

    terms: frozenset[str] = frozenset()
    allowed: frozenset[str] = frozenset()
    tuple_form: bool = False
    expression: bool = False  # it asks for an expression ("simplify", "in terms of"): symbols may appear
    count: bool = False  # it asks "how many": the answer is a number


def _strip_drawing(text: str) -> str:
    """``text`` without ``[asy]…[/asy]`` drawing code (found with ``str.find``: linear)."""
    out, at = [], 0
    while (i := text.find("[asy]", at)) >= 0:
        out.append(text[at:i])
        j = text.find("[/asy]", i)
        at = len(text) if j < 0 else j + 6
    out.append(text[at:])
    return " ".join(out)


def _terms(text: str) -> set[str]:
    """The content tokens of ``text``: words, symbols and numbers, lowercased, Greek letters and
    ``\\commands`` by name, the article "a" and the words of ``_STOP`` left out."""
    out = set()
    for m in _TOKEN.finditer(text):
        tok = m.group().lstrip("\\").lower()
        tok = "".join(_GREEK.get(c, c) for c in tok) if not tok.isascii() else tok
        if (
            tok in _STOP
            or tok in ("a", "i")
            and text[m.end() : m.end() + 1] == " "
            and _word_after(text, m.end())
        ):
            continue
        out.add(tok)
    return out


def _word_after(text: str, at: int) -> bool:
    """Whether a word of two or more letters follows ``at`` (so "a" before it is an article)."""
    rest = text[at : at + 3].lstrip()
    return len(rest) >= 2 and rest[0].isalpha() and rest[1].isalpha()


@lru_cache(maxsize=256)
def question_target(question: str | None) -> Target:
    """What ``question`` asks for (see ``Target``); empty (every conclusion uncertain) when it has
    no asking sentence."""
    text = _strip_drawing((question or "")[:MAX_QUESTION_CHARS])
    terms: set[str] = set()
    allowed: set[str] = set()
    tuple_form = expression = count = False
    start = 0
    for i, c in enumerate(text + "\n"):
        if c in ".?!\n" and (i + 1 >= len(text) or text[i + 1] in " \n$") or i == len(text):
            sentence, start = text[start : i + 1], i + 1
            if not _ASKS.search(sentence) and "?" not in sentence:
                continue
            ask, _, given = sentence.partition("in terms of")
            terms |= _terms(ask)
            allowed |= _terms(given)
            tuple_form = tuple_form or bool(_TUPLE_FORM.search(sentence))
            expression = expression or bool(_EXPRESSION_ASK.search(sentence))
            count = count or bool(_COUNT_ASK.search(sentence))
    return Target(frozenset(terms), frozenset(allowed), tuple_form, expression, count)


def read_step(text: str, target: Target | None = None) -> Stated | None:
    """The answer step ``text`` states, where, and how it was read (the module docstring's
    rules); ``target``: what the question asks (``question_target``; None: nothing known)."""
    target = target or Target()
    strong = extract_strong_answer(text)
    if strong is not None and strong.method == "answer_label":
        x, at = _clean_label(text, strong.start, strong.end)
        if _marks_an_answer(x):
            hedged = _HEDGE.search(
                text, max(_last_sentence(text[: strong.start]), strong.start - 200), strong.end
            )
            return Stated(x, at, "uncertain" if hedged else "marked")
    elif strong is not None and _marks_an_answer(strong.text.strip()):
        return Stated(strong.text.strip(), strong.start, "marked")
    body = text.rstrip()
    if not body or body.endswith("?"):
        return None
    start = _last_sentence(body)
    m = _STARTS.match(body, start)
    if m is None:
        return None
    found = conclusion(body, m.end(), bare=bool(m.group("bare")))
    if found is None:
        return None
    x, at, subject = found
    confidence = "uncertain" if m.group("bare") else _judge(subject, x, target)
    return None if confidence is None else Stated(x, at, confidence)


def _clean_label(text: str, start: int, end: int) -> tuple[str, int]:
    """A labelled answer ("the answer is …" takes the rest of the sentence) cut to the answer: up to
    a top-level ", which/because/but …", without a leading "simply"/"just", trailing unit words or
    the delimiters of one math span (its right side when it says "w = …")."""
    x = text[start : min(end, start + MAX_LABEL_CHARS)]
    depth, dollar, paren = 0, False, 0
    for i, c in enumerate(x):  # a remark after a top-level comma, outside math, is not the answer
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(c, 0)
        dollar ^= c == "$"
        paren += x.startswith("\\(", i) - x.startswith("\\)", i)
        if c == "," and depth <= 0 and not dollar and paren <= 0 and x[i + 1 : i + 3].strip()[:1].isalpha():
            x = x[:i]
            break
    lead = len(x) - len(x.lstrip())
    x, start = x.strip().rstrip(".!*").strip(), start + lead
    for filler in ("simply ", "just ", "indeed ", "still ", "probably "):
        if x.startswith(filler):
            x, start = x[len(filler) :].lstrip(), start + len(filler)
    for _ in range(2):  # "3√13 units"
        head, _, word = x.rpartition(" ")
        if head and word.isalpha() and word.islower() and answer_shaped(head.strip()):
            x = head.strip()
    for opener, closer in (("\\(", "\\)"), ("\\[", "\\]"), ("$", "$")):
        if x.startswith(opener) and x.endswith(closer) and len(x) > len(opener) + len(closer):
            inner = x[len(opener) : -len(closer)]
            if opener not in inner:
                eq = inner.rfind("=")
                x, start = inner[eq + 1 :].strip(), start + len(opener) + eq + 1
                start += len(inner[eq + 1 :]) - len(inner[eq + 1 :].lstrip())
            break
    return x, start


def _marks_an_answer(x: str) -> bool:
    """Whether a strong answer's text is one: not empty, not a bare delimiter, not a verdict."""
    return bool(x) and x not in _BARE and x.rstrip(".!").lower() not in _VERDICTS


def _last_sentence(body: str) -> int:
    """Where the last sentence of ``body`` starts: after the last line break or ". " (before a
    capital, ``*``, ``\\`` or ``$``), within the last ``MAX_SENTENCE_CHARS`` characters."""
    floor = max(body.rfind("\n") + 1, len(body) - MAX_SENTENCE_CHARS)
    for i in range(len(body) - 2, floor - 1, -1):
        if body[i] in ".!?" and body[i + 1].isspace():
            j = i + 1
            while j < len(body) and body[j].isspace():
                j += 1
            if j < len(body) and (body[j].isupper() or body[j] in "*\\$"):
                return j
    return floor


def _symbols(x: str) -> set[str]:
    """The one- and two-letter symbols of ``x``, constants (π, i, e) and unit-like words left out."""
    return {t for t in _terms(x) if len(t.rstrip("'").split("_")[0]) <= 2 and not t[0].isdigit()} - _CONSTANTS


def _judge(subject: str, x: str, target: Target) -> Confidence | None:
    """How a conclusion "<subject> = X" reads against what the question asks (the module
    docstring's rule 2)."""
    if not target.terms:
        return "uncertain"
    if not target.expression and _symbols(x):
        return None  # written in a symbol (the unknown itself, or a free one): not a value
    if target.count and not _NUMBER.fullmatch(x.replace(",", "")):
        return None  # "how many" is answered by a number
    if target.tuple_form and not (x.startswith("(") and "," in x):
        return None  # one part of an asked tuple
    s = _terms(subject)
    if not s:
        return "uncertain"
    if s <= target.terms:  # numbers alone name no quantity: "1 * 2 = 2" matches any question's digits
        return "concluded" if any(not t[0].isdigit() for t in s) else "uncertain"
    return "uncertain" if s & target.terms else None
