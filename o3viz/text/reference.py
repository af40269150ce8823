"""References: the one reduction of a dataset's known correct answer to an answer o3viz can
compare, used by every importer, the task loaders and the app.

A source may give its reference as the answer itself (``18``, ``\\frac{14}{3}``, ``\\text{Evelyn}``)
or as a whole worked solution (GSM8K's ``…\\n#### 18``, the model-solutions file's ``…\\nA: 18``,
MATH's ``…\\boxed{\\frac{14}{3}}``). ``reduce_reference`` returns the answer, first rule that
matches (the ``method``):

1. ``boxed`` / ``hashes`` / ``answer_label``: the answer the text marks as such (``\\boxed{}``,
   ``#### N``, "A: N", "The answer is N"; ``o3viz.text.answers.extract_strong_answer``);
2. ``number``: the text is a bare number (``1,234``, ``-0.5``, ``$18``, ``25%``);
3. ``as_is``: the text is short and reads as an answer, not prose (one line; a formula, a name,
   a few words);
4. ``text``: none of these. The reference stays text (``answer`` is None) and an answer check
   against it is ``unverifiable``, never ``fail``: o3viz cannot know what a paragraph's answer is.

>>> reduce_reference("She makes 9 * 2 = $18 every day.\\n#### 18").answer
'18'
>>> reduce_reference("Janet sells 9 eggs a day. She makes $18 every day.").answer is None
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from o3viz.text.answers import answer_in_regions, answers_equivalent, extract_strong_answer

__all__ = ["Reference", "grade_text", "reduce_reference", "reference_answer"]

RefMethod = Literal["boxed", "hashes", "answer_label", "number", "as_is", "text"]
MAX_AS_IS_CHARS = 120  # a reference longer than this (without a marked answer) is prose
MAX_AS_IS_WORDS = 6  # plain words (no digit, no LaTeX) a short answer may have: "the blue car"

_NUMBER = re.compile(r"^\$?\s*-?(?:\d[\d,]*(?:\.\d+)?|\.\d+)\s*(?:%|\\%)?\.?$")
_MATHY = re.compile(r"[\d\\^_=+*/()\[\]{}<>]")


@dataclass(frozen=True)
class Reference:
    """A reference as the source gave it (``text``) and the answer it reduces to (None: it stays
    text, and grading against it is ``unverifiable``)."""

    text: str
    answer: str | None
    method: RefMethod

    @property
    def reduced(self) -> bool:
        """Whether the answer differs from the text as given (a solution reduced to its answer)."""
        return self.answer is not None and self.answer != self.text.strip()


def reduce_reference(text: str | int | float | None) -> Reference | None:
    """The answer a reference states (see the module docstring); None for no reference at all.

    >>> reduce_reference("Janet sells 16 - 3 - 4 = 9 duck eggs a day.\\nA: 18").method
    'answer_label'
    >>> reduce_reference(" \\\\left( 3, \\\\frac{\\\\pi}{2} \\\\right) ").answer
    '\\\\left( 3, \\\\frac{\\\\pi}{2} \\\\right)'
    """
    if text is None or isinstance(text, bool):
        return None
    text = str(text)
    s = text.strip()
    if not s:
        return None
    if _NUMBER.match(s):
        return Reference(text, s.rstrip("."), "number")
    strong = extract_strong_answer(s)
    if strong is not None and strong.text.strip():
        return Reference(text, strong.text.strip(), strong.method)  # type: ignore[arg-type]
    if _reads_as_answer(s):
        return Reference(text, s, "as_is")
    return Reference(text, None, "text")


def reference_answer(text: str | int | float | None) -> str | None:
    """Only the reduced answer of ``reduce_reference`` (None for prose or no reference).

    >>> reference_answer("It takes 2/2=1 bolt of white fiber.\\n#### 3")
    '3'
    """
    ref = reduce_reference(text)
    return ref.answer if ref is not None else None


def _reads_as_answer(s: str) -> bool:
    """One short line that is a formula, a number with words ("5 apples"), or a few plain words;
    not a sentence of a solution ("She sells the rest at the market.")."""
    if "\n" in s or len(s) > MAX_AS_IS_CHARS:
        return False
    if re.search(r"[.!?]\s+[A-Z]", s):
        return False  # two sentences: a worked solution, not an answer
    if _MATHY.search(s):
        # a sentence of a worked solution has many words around its numbers
        words = [w for w in s.split() if w.isalpha() and len(w) > 1]
        return len(words) <= MAX_AS_IS_WORDS
    sentences = [p for p in re.split(r"(?<=[.!?])\s+", s) if p]
    return len(sentences) == 1 and len(s.split()) <= MAX_AS_IS_WORDS


def grade_text(text: str, reference: str | int | float | None, kind: str = "math") -> bool | None:
    """The grade an imported text gets against a reference, as ``o3viz import`` computes it: the
    reference reduced (``reduce_reference``), the text's answer found (``answer_in_regions`` over
    one answer region), the two compared (``answers_equivalent``). None: no answer, or a reference
    that stays text (ungraded).

    >>> grade_text("So $x = 5+5+1 = 7 = 11$.", "$x = 11$"), grade_text("It is 3.", "$3\\sqrt{13}$")
    (True, False)
    """
    answer = reference_answer(reference)
    found = answer_in_regions(text, {"answer": [0, len(text)]}, kind)
    if answer is None or found is None:
        return None
    return answers_equivalent(found.text, answer)
