"""An LLM critic asked for the first wrong step (a judge), with ProcessBench's published critique
prompt as the default (QwenLM/ProcessBench, ``code/templates/critique_template.txt``).

The judge only formats the prompt and reads the reply; ``ask(prompt) -> reply`` does the asking.
The CLI and the benchmark build ``ask`` on the endpoint client of
``o3viz.analysis.importance.rollouts`` (deadlines, same-origin redirects, a run budget), a layer
this one may not import.

Replies are parsed strictly: the answer is the last ``\\boxed{N}`` with a whole number ``N`` from
-1 (no error) to the last paragraph's index. Anything else (no box, two different boxed answers, a
word, an index past the end) makes every step ``unsure``: never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from o3viz.verify.verifiers.base import Judgement, Solution

PROCESSBENCH_PROMPT = """The following is a math problem and a solution (split into paragraphs, enclosed with tags and indexed from 0):

[Math Problem]

{problem}

[Solution]

{tagged_response}

Your task is to review and critique the solution paragraph by paragraph. Once you identify an error in a paragraph, return the index of the paragraph where the earliest error occurs. Otherwise, return the index of -1 (which typically denotes "not found").

Please put your final answer (i.e., the index) in \\boxed{{}}."""  # noqa: E501 (the published text)

_BOXED = re.compile(r"\\boxed\{\s*([^{}]*?)\s*\}")
_INDEX = re.compile(r"[+-]?\d+")


def judge_prompt(sol: Solution, template: str = PROCESSBENCH_PROMPT) -> str:
    """The critique prompt of one solution: its steps as ``<paragraph_i>`` blocks, from 0."""
    tagged = "\n\n".join(f"<paragraph_{i}>\n{s}\n</paragraph_{i}>" for i, s in enumerate(sol.steps))
    return template.format(problem=sol.question, tagged_response=tagged)


def parse_first_error(reply: str, n_steps: int) -> int | None:
    """The first wrong paragraph the reply names (-1: none), or ``None`` when it names none
    cleanly.

    >>> parse_first_error("The error is in paragraph 2. \\\\boxed{2}", 4)
    2
    >>> parse_first_error("\\\\boxed{-1}", 4)
    -1
    >>> parse_first_error("paragraph 2 is wrong", 4) is None
    True
    """
    found = _BOXED.findall(reply)
    if not found or not _INDEX.fullmatch(found[-1]):
        return None
    if len({f for f in found if _INDEX.fullmatch(f)} | {found[-1]}) > 1:
        return None  # two different boxed indices: the reply contradicts itself
    n = int(found[-1])
    return n if -1 <= n < n_steps else None


def verdicts_of(first: int | None, n_steps: int) -> list[str | None]:
    """Per-step verdicts of a judge's answer: ok before the first error, wrong at it, not judged
    after it (the critic was asked only for the first); all unsure when there is no answer."""
    if first is None:
        return ["unsure"] * n_steps
    if first < 0:
        return ["ok"] * n_steps
    return ["ok"] * first + ["wrong"] + [None] * (n_steps - first - 1)


@dataclass
class JudgeVerifier:
    """A judge over ``ask``; ``label`` names the endpoint and model in the provenance."""

    ask: Callable[[str], str]
    label: str = ""
    template: str = PROCESSBENCH_PROMPT
    name: str = "judge"
    provenance: dict = field(default_factory=dict)
    keep_reply: int = 400  # characters of each reply kept with its record

    def __post_init__(self) -> None:
        self.provenance = self.provenance or {
            "kind": "judge",
            "endpoint": self.label,
            "prompt": "processbench" if self.template == PROCESSBENCH_PROMPT else "custom",
        }

    def verify(self, sol: Solution) -> Judgement:
        reply = self.ask(judge_prompt(sol, self.template))
        first = parse_first_error(reply, len(sol.steps))
        info = {"reply": reply[-self.keep_reply :], "parsed": first is not None}
        return Judgement(verdicts_of(first, len(sol.steps)), info=info)
