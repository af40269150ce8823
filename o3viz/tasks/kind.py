"""Task kind: ``"code"``, ``"math"`` or ``"general"`` for a free prompt, the one rule used by
``capture`` (when no task is given) and ``solve``'s free prompts, so both give a prompt the same kind.

*code* when the text has a code fence, a ``def`` / ``class`` / ``return`` / ``import``
statement, or asks to "write a function/program"; *math* when it has at least two numbers, or
one number with an arithmetic operator or a math word ("how many", "calculate", "solve", "sum",
"total", ...); *general* otherwise.
"""

from __future__ import annotations

import re

from o3viz.trace.core import TaskKind

_MATH_CHARS = frozenset("+-*/×÷^%=<>()·")
_CODE_RE = re.compile(
    r"```|^\s*(def|class|return|import|from \S+ import)\b|\bwrite (a |an )?(python )?"
    r"(function|program|script|class)\b",
    re.I | re.M,
)
_NUM_RE = re.compile(r"\d+(?:[.,]\d+)?")
_MATH_WORDS = re.compile(
    r"\b(how many|how much|calculate|compute|solve|sum|total|product|difference|"
    r"percent|equation|average|multiply|divide|remainder)\b",
    re.I,
)


def detect_task_type(text: str) -> TaskKind:
    """``"code"``, ``"math"`` or ``"general"`` by the rules in the module docstring.

    >>> detect_task_type("Tom has 3 apples and buys 5 more. How many apples?")
    'math'
    >>> detect_task_type("Write a function that reverses a list.")
    'code'
    """
    if _CODE_RE.search(text):
        return "code"
    nums = _NUM_RE.findall(text)
    if len(nums) >= 2 or (nums and (_MATH_WORDS.search(text) or any(c in _MATH_CHARS for c in text))):
        return "math"
    return "general"
