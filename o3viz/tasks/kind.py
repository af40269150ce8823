"""Task kind: ``"code"``, ``"math"`` or ``"general"`` for a free prompt, the one rule used by
``capture`` (when no task is given) and ``solve``'s free prompts, so both give a prompt the same kind.

*code* when the text has a code fence, a ``def`` / ``class`` / ``return`` / ``import``
statement, or asks to "write a function/program"; *math* when it has at least two numbers, or
one number with an arithmetic operator or a math word ("how many", "calculate", "solve", "sum",
"total", ...) or LaTeX math (``\\frac``, ``$…$``); *general* otherwise. Imports also pass their
answer and reference (``detect_task_type(..., answer=, reference=)``): the same rule, more evidence.
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
_LATEX_RE = re.compile(r"\\(?:boxed|frac|sqrt)\b|\$[^$\n]{1,200}\$|\\\(")  # bounded: linear
_NUM_RE = re.compile(r"\d+(?:[.,]\d+)?")
_MATH_WORDS = re.compile(
    r"\b(how many|how much|calculate|compute|solve|sum|total|product|difference|"
    r"percent|equation|average|multiply|divide|remainder)\b",
    re.I,
)


def detect_task_type(text: str, *, answer: str = "", reference: str | None = None) -> TaskKind:
    """``"code"``, ``"math"`` or ``"general"`` by the rules in the module docstring.

    ``answer`` and ``reference`` are the extra evidence an imported trace has (its written answer
    and the file's reference): a reference makes it *math* (a known final answer; code tasks come
    with tests), a Python fence in the answer *code*, LaTeX math in the prompt or a ``\\boxed``
    answer *math*.

    >>> detect_task_type("Tom has 3 apples and buys 5 more. How many apples?")
    'math'
    >>> detect_task_type("Write a function that reverses a list.")
    'code'
    >>> detect_task_type("Find $x$ such that $x^2 = y$.")
    'math'
    """
    if reference is not None:  # a known final answer to compare with: math (code tasks have tests)
        return "math"
    if _CODE_RE.search(text) or "```python" in answer:
        return "code"
    if "\\boxed" in answer or _LATEX_RE.search(text):
        return "math"
    nums = _NUM_RE.findall(text)
    if len(nums) >= 2 or (nums and (_MATH_WORDS.search(text) or any(c in _MATH_CHARS for c in text))):
        return "math"
    return "general"
