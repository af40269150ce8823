"""Steps of an imported trace: splitting, Thought Anchors types and the tree (kind and parent).

**Types** (``classify_step``): the first rule that fires wins; every cue is a phrase a reader can
check, none is tuned to one file.

1. ``final_answer_emission``: ``\\boxed{}``, ``####``, "final answer", "the answer is/should be";
2. ``problem_setup``: one of the first steps (first 3, or first 5 %) that talks about the problem,
   the question, what is given or what must be found;
3. ``self_checking``: "let me check/verify/confirm", "double-check", "plug back", "that seems right",
   "checks out";
4. ``uncertainty_management``: opens with "Wait", "Hmm", "Actually", "Hold on", "No,", "Oops", or
   voices doubt ("not sure", "mistake", "doesn't make sense", "confus…"), or is a question;
5. ``plan_generation``: "let me / let's / I need to / I should / I'll", "alternatively",
   "maybe I/we can", "approach", "strategy", "try"; or opens with "First/Next/Then/Now" and has no math;
6. ``fact_retrieval``: "recall", "remember", "formula", "theorem", "by definition", "we know",
   "is defined", "the problem says/states", "given that";
7. ``result_consolidation``: opens with "So", "Thus", "Therefore", "Hence", "That means" (or
   "which gives") and states a value without arithmetic in it (with arithmetic it is still computing);
8. ``active_computation``: an equation, arithmetic between numbers, LaTeX math, or a verb such as
   "compute", "calculate", "simplify", "substitute", "multiply";
9. otherwise ``fact_retrieval`` (a statement without math).

**Tree** (``build_tree``):

- a step that opens with a backtracking cue ("Wait", "Actually", "Alternatively", "Hold on",
  "Let me reconsider", "On second thought", "No,", "Oops") has kind ``backtrack`` and opens a new
  branch (``parent``) from the step it reconsiders, chosen within the previous 12 steps:
  (a) the latest step that shares a number with it (it questions that statement); else
  (b) for "Alternatively", the latest ``plan_generation`` step (the plan it replaces); else
  (c) the latest step that asserted something (computation, consolidation, fact, answer);
  else (d) the previous step. The rule used is kept in ``round.info["branch_rules"]``.
- ``self_checking`` steps have kind ``self_check`` (verification nodes);
- the step holding the extracted final answer has kind ``final``;
- every other step is ``step`` with ``parent`` None (the linear successor of the previous step).
"""

from __future__ import annotations

import re

from o3viz.text.spans import split_spans
from o3viz.trace import Step
from o3viz.trace.parts import STEP_TYPES

TYPES = STEP_TYPES  # the Thought Anchors categories (o3viz.trace.parts.StepType)
LOOKBACK = 12


def _rx(pattern: str) -> re.Pattern:
    """Cue patterns are matched against the lower-cased step (faster than re.I on long traces)."""
    return re.compile(pattern)


_FINAL = _rx(r"\\boxed|^#{4}\s|final answer|\bthe answer (?:is|should be|would be|will be)\b|\banswer:\s*\S")
_SETUP = _rx(
    r"\b(?:problem|question|asked|we are given|given|need to (?:find|figure|determine|compute|measure)|"
    r"wants? (?:me|us) to|i have (?:this|a|two|an))\b"
)
_CHECK = _rx(
    r"\b(?:let me (?:double[- ]?)?(?:check|verify|confirm)|double[- ]check|to (?:verify|confirm|check)\b|"
    r"verif(?:y|ied|ying|ication)\b|(?:that|this|it) (?:seems|looks|is) "
    r"(?:correct|right|consistent)|checks? out\b|sanity check|consistent\b)"
)
# "plugging x = 3 back in" is a check too; found by ``_plugs_back``, not by ``plug\b.*\bback``
# in _CHECK, which rescans the rest of the line from every "plug": quadratic on a long line
_PLUG = _rx(r"\bplug(?:ging)?\b")
_BACK = _rx(r"\bback\b")
_DOUBT_START = _rx(r"^\W*(?:wait|hmm+|actually|hold on|but wait|no[,.!]|oops|oh[,!]|uh\b)")
_DOUBT = _rx(
    r"\b(?:not (?:sure|certain)\b|mistake|wrong\b|doesn'?t (?:make sense|seem|add up)|confus|"
    r"contradict|that can'?t be\b|incorrect\b|misread|am i\b)"
)
_PLAN = _rx(
    r"\b(?:let me|let'?s|i need to|we need to|i should|we should|i'?ll|i will|alternatively|"
    r"(?:maybe|perhaps) (?:i|we) (?:can|could|should)|approach|strategy|method|try|plan|idea)\b"
)
_SEQUENCE = _rx(r"^\W*(?:first|next|then|now)\b")  # a plan only when no math follows in the step
_FACT = _rx(
    r"\b(?:recall|remember|formula|theorem|by definition|we know|is defined|the problem (?:says|states)|"
    r"given that|known|property|identity|rule)\b"
)
_CONSOLIDATE = _rx(
    r"^\W*(?:so|thus|therefore|hence|that means|which means|this means|in total|altogether|"
    r"overall|which gives|this gives)\b"
)
_MATH = re.compile(r"=|\d\s*[-+*/×÷^]\s*\d|\\(?:frac|sqrt|cdot|times|sum|binom)|\$|\\\(|\\\[|[≈≤≥]")
_COMPUTE = _rx(r"\b(?:comput|calculat|simplif|substitut|multipl|divid|subtract|expand|evaluat|solv|plug)")
_VALUE = re.compile(r"\d|=")
_ARITH = re.compile(r"\d\s*[-+*/×÷^]\s*\(?\d|\\(?:frac|sqrt|cdot|times)")

_BACKTRACK = _rx(
    r"^\W*(?:wait|actually|alternatively|hold on|but wait|hmm+,? wait|no,? wait|oh,? wait|"
    r"on second thought|oops|no[,.!]|let me (?:re-?consider|re-?think|re-?examine|start over|go back))"
)
_ALTERNATIVE = _rx(r"^\W*(?:alternatively|another (?:way|approach))")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_ASSERTING = ("active_computation", "result_consolidation", "fact_retrieval", "final_answer_emission")


def split_steps(text: str, regions: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Step spans over each ``[start, end)`` region of ``text`` (thinking, then answer): lines first,
    then sentences (``o3viz.text.spans.split_spans``), offsets into ``text``."""
    spans: list[tuple[int, int]] = []
    for a, b in regions:
        spans += [(a + s, a + e) for s, e in split_spans(text[a:b])]
    return spans


def _plugs_back(t: str) -> bool:
    """Whether a line of ``t`` says "plug" and later "back": only a line's first "plug" needs a
    look ahead, so each line is read at most twice.

    >>> _plugs_back("plugging x = 3 back in"), _plugs_back("plug it in\\nback to it")
    (True, False)
    """
    m = _PLUG.search(t)
    while m is not None:
        eol = t.find("\n", m.end())
        eol = len(t) if eol < 0 else eol
        if _BACK.search(t, m.end(), eol):
            return True
        m = _PLUG.search(t, eol)
    return False


def classify_step(text: str, index: int, total: int) -> str:
    """The Thought Anchors type of one step (rules in the module docstring)."""
    t = text.strip().lower()
    if _FINAL.search(t):
        return "final_answer_emission"
    if (index < 3 or index < 0.05 * total) and _SETUP.search(t):
        return "problem_setup"
    if _CHECK.search(t) or _plugs_back(t):
        return "self_checking"
    if _DOUBT_START.search(t) or _DOUBT.search(t) or t.endswith("?"):
        return "uncertainty_management"
    if _PLAN.search(t) or (_SEQUENCE.search(t) and not _MATH.search(t)):
        return "plan_generation"
    if _FACT.search(t):
        return "fact_retrieval"
    if _CONSOLIDATE.search(t) and _VALUE.search(t) and not _ARITH.search(t):
        return "result_consolidation"  # states a result; with arithmetic in it, it is still computing
    if _MATH.search(t) or _COMPUTE.search(t):
        return "active_computation"
    return "fact_retrieval"


def build_steps(text: str, spans: list[tuple[int, int]], final_pos: int | None) -> tuple[list[Step], dict]:
    """Typed steps with kind and parent; ``final_pos`` is where the final answer sits in ``text``.

    Returns the steps and ``{step index: rule letter}`` for every backtrack (see the docstring).
    """
    steps = [
        Step(index=i, text=text[s:e], start=s, end=e, type=classify_step(text[s:e], i, len(spans)))
        for i, (s, e) in enumerate(spans)
    ]
    rules: dict[str, str] = {}
    for st in steps:
        if _BACKTRACK.search(st.text[:40].lower()):
            st.kind = "backtrack"
            if st.index > 0:
                st.parent, rules[str(st.index)] = _reconsidered(steps, st)
        elif st.type == "self_checking":
            st.kind = "self_check"
    final = _final_step(steps, final_pos)
    if final is not None:
        final.kind, final.type, final.parent = "final", "final_answer_emission", None
    return steps, rules


def _reconsidered(steps: list[Step], st: Step) -> tuple[int, str]:
    """(index of the step that ``st`` reconsiders, rule letter a/b/c/d)."""
    window = steps[max(0, st.index - LOOKBACK) : st.index]
    numbers = set(_NUMBER.findall(st.text))
    if numbers:
        for prev in reversed(window):
            if numbers & set(_NUMBER.findall(prev.text)):
                return prev.index, "a"
    if _ALTERNATIVE.search(st.text[:40].lower()):
        for prev in reversed(window):
            if prev.type == "plan_generation":
                return prev.index, "b"
    for prev in reversed(window):
        if prev.type in _ASSERTING and prev.kind != "backtrack":
            return prev.index, "c"
    return st.index - 1, "d"


def _final_step(steps: list[Step], pos: int | None) -> Step | None:
    if pos is None:
        return None
    for st in steps:
        if st.start <= pos < max(st.end, st.start + 1):
            return st
    return None


def step_type_counts(steps: list[Step]) -> dict[str, int]:
    out = dict.fromkeys(TYPES, 0)
    for st in steps:
        if st.type in out:
            out[st.type] += 1
    return out
