"""Instruction-following tasks for attention steering, generated in code with known answers: the
profiling set of ``--steer-heads auto`` and the task set of ``python -m benchmarks steer``.

Three families, each built from a fixed table of facts (no randomness, no files):

- ``one_word``: "Answer with one word." + a capital-city question. Compliant when the reply is
  one word; correct when that word is the capital.
- ``json``: 'Answer in JSON with the key "answer".' + the same questions. Compliant when the reply
  holds a JSON object with an ``answer`` key; correct when its value names the capital.
- ``distractor``: three people and three cities, one sentence each, then "Where does X live?".
  The marked span is the sentence that holds the answer; correct when the reply names X's city.

A task marks its instruction (or, for ``distractor``, its answer sentence) as the steering span,
and carries ``target``, the start of a compliant, correct reply (what profiling scores).

>>> t = steering_tasks("one_word", 1)[0]
>>> t.span in t.prompt, t.target, check_reply(t, "Paris.")
(True, 'Paris', (True, True))
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

FAMILIES = ("one_word", "json", "distractor")
CAPITALS = (
    ("France", "Paris"), ("Japan", "Tokyo"), ("Italy", "Rome"), ("Egypt", "Cairo"), ("Peru", "Lima"),
    ("Kenya", "Nairobi"), ("Canada", "Ottawa"), ("Spain", "Madrid"), ("Norway", "Oslo"),
    ("Greece", "Athens"), ("Germany", "Berlin"), ("Russia", "Moscow"), ("Poland", "Warsaw"),
    ("Austria", "Vienna"), ("Portugal", "Lisbon"), ("Ireland", "Dublin"), ("Cuba", "Havana"),
    ("Chile", "Santiago"), ("Thailand", "Bangkok"), ("Sweden", "Stockholm"),
)  # fmt: skip
NAMES = ("Anna", "Ben", "Carla", "David", "Eva", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Kofi")
INSTRUCTIONS = {
    "one_word": "Answer with one word.",
    "json": 'Answer in JSON with the key "answer".',
}


@dataclass(frozen=True)
class SteerTask:
    """One generated task: the prompt, the span to mark, the expected answer and a compliant reply."""

    family: str
    index: int
    prompt: str
    span: str  # the text to steer towards (occurs once in ``prompt``)
    answer: str  # the known answer
    target: str  # the start of a compliant, correct reply


def _format_task(family: str, i: int) -> SteerTask:
    country, capital = CAPITALS[i % len(CAPITALS)]
    instruction = INSTRUCTIONS[family]
    # The instruction comes first and the question last: the position a small model forgets most.
    prompt = f"{instruction} What is the capital city of {country}? Tell me about it."
    target = capital if family == "one_word" else '{"answer": "' + capital + '"}'
    return SteerTask(family, i, prompt, instruction, capital, target)


def _distractor_task(i: int) -> SteerTask:
    people = [NAMES[(i + k) % len(NAMES)] for k in range(3)]
    cities = [CAPITALS[(3 * i + 5 * k) % len(CAPITALS)][1] for k in range(3)]
    asked = i % 3
    facts = [f"{p} lives in {c}." for p, c in zip(people, cities, strict=True)]
    prompt = " ".join(facts) + f" Where does {people[asked]} live? Reply with the city."
    return SteerTask("distractor", i, prompt, facts[asked], cities[asked], cities[asked])


def steering_tasks(family: str, n: int, start: int = 0) -> list[SteerTask]:
    """Tasks ``start .. start + n - 1`` of ``family`` (deterministic)."""
    if family not in FAMILIES:
        raise ValueError(f"unknown steering task family {family!r}; one of {', '.join(FAMILIES)}")
    make = _distractor_task if family == "distractor" else (lambda i: _format_task(family, i))
    return [make(i) for i in range(start, start + n)]


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z][A-Za-z'-]*", text)


def check_reply(task: SteerTask, reply: str) -> tuple[bool, bool]:
    """(followed the instruction, answered correctly) for a reply to ``task``."""
    text = reply.strip()
    correct = task.answer.lower() in text.lower()
    if task.family == "one_word":
        return len(_words(text)) == 1, correct and len(_words(text)) == 1
    if task.family == "json":
        value = _json_answer(text)
        return value is not None, value is not None and task.answer.lower() in str(value).lower()
    return True, correct and not any(c.lower() in text.lower() for c in _other_cities(task))


def _json_answer(text: str):
    """The ``answer`` value of the first JSON object in ``text`` (fenced or bare), else None."""
    m = re.search(r"\{.*?\}", text, re.S)
    if m is None:
        return None
    try:
        obj = json.loads(m.group())
    except ValueError:
        return None
    return obj.get("answer") if isinstance(obj, dict) and "answer" in obj else None


def _other_cities(task: SteerTask) -> list[str]:
    found = re.findall(r"lives in ([A-Z][a-z]+)\.", task.prompt)
    return [c for c in found if c != task.answer]
