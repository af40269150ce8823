"""The answer-forcing suffix: the text appended to a reasoning prefix so that the model's next
tokens are its answer, right for the model's chat template, and the reduction of what it says next
to an answer (``o3viz.text.answers``' one extractor).

- A template with a think block (``<think>``…``</think>``, DeepSeek-R1 and Qwen3 style): close the
  block, then ``Final answer: \\boxed{`` (style ``think``). A prefix whose block is already closed
  gets only the boxed tail.
- A plain chat template (SmolLM2's ChatML, Llama's) or none at all: the assistant text goes on with
  ``Final answer: `` (style ``plain``).
- A template with a reasoning marker whose closing is not known here (gpt-oss channels,
  ``[THINK]``, ``<seed:think>``, …): one ``UsageError`` line naming ``-V suffix=...``.

>>> suffix_for_template("{{ '<|im_start|>assistant\\n' }}").text
'\\n\\nFinal answer: '
>>> forced_answer(Suffix("\\n</think>\\n\\nFinal answer: \\\\boxed{", "think"), "\\\\frac{1}{2}} and")
'\\\\frac{1}{2}'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from o3viz.errors import UsageError
from o3viz.text.answers import extract_answer

__all__ = [
    "PLAIN_SUFFIX",
    "THINK_SUFFIX",
    "Suffix",
    "answer_ended",
    "forced_answer",
    "suffix_for_prompt",
    "suffix_for_template",
    "suffix_for_tokenizer",
    "user_suffix",
]

Style = Literal["think", "plain", "user"]
PLAIN_SUFFIX = "\n\nFinal answer: "
BOXED_TAIL = "\n\nFinal answer: \\boxed{"
THINK_SUFFIX = "\n</think>" + BOXED_TAIL
MAX_SUFFIX_CHARS = 400  # a suffix is a few words; a longer one is a mistake
# reasoning markers whose closing this module does not know: a suffix must be given
_UNKNOWN_REASONING = re.compile(r"<\|channel\|>|\[/?THINK\]|<seed:think>|<\|begin_of_thought\|>|<reasoning>")


@dataclass(frozen=True)
class Suffix:
    """The text appended after the reasoning prefix, and how its answer is read."""

    text: str
    style: Style  # think: closes the think block and opens \\boxed{; plain: "Final answer: "; user: given

    @property
    def boxed(self) -> bool:
        """The suffix opens ``\\boxed{``: the answer ends where its brace closes."""
        return self.text.rstrip().endswith("\\boxed{")

    def after(self, before: str) -> Suffix:
        """The suffix for a prefix ending in ``before``: a think suffix whose block ``before``
        already closed keeps only the boxed tail."""
        if self.style == "think" and before.rfind("</think>") > before.rfind("<think>"):
            return Suffix(BOXED_TAIL, "think")
        return self


def user_suffix(text: str) -> Suffix:
    """A suffix given with ``-V suffix=...`` (``\\n`` written as two characters is a newline)."""
    text = text.replace("\\n", "\n")
    if not text.strip() or len(text) > MAX_SUFFIX_CHARS:
        raise UsageError(f"-V suffix= must be 1-{MAX_SUFFIX_CHARS} characters of text, not {text[:40]!r}")
    return Suffix(text, "user")


def suffix_for_template(chat_template: str | None, given: str | None = None) -> Suffix:
    """The suffix for a chat template (``given``: the user's, which wins); see the module docstring."""
    if given:
        return user_suffix(given)
    template = chat_template or ""
    if "<think>" in template or "</think>" in template:
        return Suffix(THINK_SUFFIX, "think")
    found = _UNKNOWN_REASONING.search(template)
    if found:
        raise UsageError(
            f"the model's chat template marks reasoning with {found.group()!r}, and no answer suffix "
            "is known for it; give one with --suffix (-V suffix=...)"
        )
    return Suffix(PLAIN_SUFFIX, "plain")


def suffix_for_tokenizer(tokenizer, given: str | None = None) -> Suffix:
    """The suffix for a loaded tokenizer's chat template."""
    template = getattr(tokenizer, "chat_template", None)
    return suffix_for_template(template if isinstance(template, str) else None, given)


def suffix_for_prompt(prompt: str, given: str | None = None) -> Suffix:
    """The suffix for an endpoint, read from the rendered prompt the reasoning continues (the
    served model's template is not at hand): an open ``<think>`` means a think block."""
    return suffix_for_template(prompt, given)


def forced_answer(suffix: Suffix, decoded: str) -> str | None:
    """The answer in ``decoded`` (what the model said after ``suffix``), reduced by the one
    extractor; None when it said nothing that reads as one."""
    if not decoded.strip():
        return None
    decoded = decoded.lstrip().split("\n", 1)[0]  # an answer is one line (a box closes before it ends)
    head = "Final answer: \\boxed{" if suffix.boxed else suffix.text.strip() + " "
    if suffix.style == "user" and "answer" not in head.lower():
        head = "Final answer: " + head  # a given suffix: the extractor still reads its label
    text = head + decoded
    if suffix.boxed and _open_braces(decoded) >= 0:
        text += "}" * (_open_braces(decoded) + 1)  # cut before the box closed
    found = extract_answer(text)
    answer = found.text.strip() if found is not None else ""
    return answer or None


def answer_ended(suffix: Suffix, decoded: str) -> bool:
    """Whether decoding can stop: the box closed (a boxed suffix), or a line ended after the answer."""
    if suffix.boxed:
        return _open_braces(decoded) < 0
    return "\n" in decoded.lstrip()


def _open_braces(text: str) -> int:
    """Braces still open at the end of ``text`` (−1: one more closed than opened, the box's own)."""
    depth = 0
    for ch in text:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return -1
    return depth
