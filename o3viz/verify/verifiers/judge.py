"""An LLM critic asked for the first wrong step (a judge), with ProcessBench's published critique
prompt as the default (QwenLM/ProcessBench, ``code/templates/critique_template.txt``).

The judge only formats the prompt and reads the reply; ``ask(prompt) -> reply`` does the asking.
``JudgeVerifier.over_endpoint(base_url, model)`` builds ``ask`` on the endpoint client of
``o3viz.clients`` (deadlines, same-origin redirects, a run budget), as the registry does; a test
hands the judge its own ``ask``.

Replies are parsed strictly: the answer is the last ``\\boxed{N}`` with a whole number ``N`` from
-1 (no error) to the last paragraph's index. Anything else (no box, two different boxed answers, a
word, ``-0``, an index past the end or of more than ``MAX_INDEX_DIGITS`` digits) makes every step
``unsure`` with the reason in ``info["note"]``: never a guess, never an exception. A reply is
untrusted text, so it is read in one linear pass: only its last ``MAX_REPLY_CHARS``, and at most
``MAX_BOX_CHARS`` inside each box.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from o3viz.clients import check_timeout, endpoint_ask
from o3viz.errors import UsageError
from o3viz.trace.safejson import loads
from o3viz.verify.verifiers.base import Judgement, Solution

PROCESSBENCH_PROMPT = """The following is a math problem and a solution (split into paragraphs, enclosed with tags and indexed from 0):

[Math Problem]

{problem}

[Solution]

{tagged_response}

Your task is to review and critique the solution paragraph by paragraph. Once you identify an error in a paragraph, return the index of the paragraph where the earliest error occurs. Otherwise, return the index of -1 (which typically denotes "not found").

Please put your final answer (i.e., the index) in \\boxed{{}}."""  # noqa: E501 (the published text)

MAX_REPLY_CHARS = 200_000  # the reply's tail that is read: its answer sits at the end
MAX_BOX_CHARS = 64  # a box holding more is no index
MAX_INDEX_DIGITS = 6  # a round holds at most 50,000 steps
_OPEN = "\\boxed{"
_INDEX = re.compile(rf"[+-]?[0-9]{{1,{MAX_INDEX_DIGITS}}}")  # ASCII digits only: int() takes "٣"


def judge_prompt(sol: Solution, template: str = PROCESSBENCH_PROMPT) -> str:
    """The critique prompt of one solution: its steps as ``<paragraph_i>`` blocks, from 0."""
    tagged = "\n\n".join(f"<paragraph_{i}>\n{s}\n</paragraph_{i}>" for i, s in enumerate(sol.steps))
    return template.format(problem=sol.question, tagged_response=tagged)


def boxed_contents(reply: str) -> list[str | None]:
    """What each ``\\boxed{…}`` of the reply's last ``MAX_REPLY_CHARS`` holds, stripped; ``None``
    for a box left open or holding more than ``MAX_BOX_CHARS``. One pass with a depth counter, so
    linear in the reply whatever it holds (a regex with overlapping quantifiers backtracked in
    cubic time on a box left open).

    >>> boxed_contents("\\\\boxed{ 2 } then \\\\boxed{\\\\frac{1}{2}} and \\\\boxed{")
    ['2', '\\\\frac{1}{2}', None]
    """
    text = reply[-MAX_REPLY_CHARS:]
    out: list[str | None] = []
    at = text.find(_OPEN)
    while at >= 0:
        start = at + len(_OPEN)
        depth, end, stop = 1, None, min(len(text), start + MAX_BOX_CHARS + 1)
        for i in range(start, stop):  # at most MAX_BOX_CHARS + 1 characters per box
            ch = text[i]
            depth += (ch == "{") - (ch == "}")
            if depth == 0:
                end = i
                break
        out.append(None if end is None else text[start:end].strip())
        at = text.find(_OPEN, start)  # a box inside a box is read too
    return out


def read_reply(reply: str, n_steps: int) -> tuple[int | None, str]:
    """``(first wrong paragraph or -1, "")``, or ``(None, why the reply names none cleanly)``."""
    found = boxed_contents(reply if isinstance(reply, str) else "")
    if not found:
        return None, "unparseable reply: no \\boxed{index}"
    indices = [int(f) for f in found if f is not None and _INDEX.fullmatch(f) and f != "-0"]
    last = found[-1]
    if last is None or not _INDEX.fullmatch(last) or last == "-0":
        return None, "unparseable reply: its last \\boxed{} holds no index"
    if len(set(indices)) > 1:
        return None, "unparseable reply: two different boxed indices"  # it contradicts itself
    n = indices[-1]
    if not -1 <= n < n_steps:
        return None, f"unparseable reply: index {n} is not a paragraph (-1 to {n_steps - 1})"
    return n, ""


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
    return read_reply(reply, n_steps)[0]


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

    @classmethod
    def over_endpoint(
        cls,
        base_url: str,
        model: str,
        *,
        max_tokens: int = 1024,
        timeout: float = 300.0,
        budget_s: float | None = None,
        extra_body: dict | None = None,
        **kwargs,
    ) -> JudgeVerifier:
        """A judge asking ``model`` served at ``base_url`` (OpenAI-compatible, ending in /v1),
        greedily, through ``o3viz.clients.endpoint_ask``; ``kwargs`` are the judge's own fields."""
        ask = endpoint_ask(
            base_url, model, max_tokens=max_tokens, timeout=timeout, budget_s=budget_s, extra_body=extra_body
        )
        return cls(ask, **{"label": f"{base_url} {model}", **kwargs})

    def verify(self, sol: Solution) -> Judgement:
        reply = self.ask(judge_prompt(sol, self.template))
        reply = reply if isinstance(reply, str) else ""
        first, why = read_reply(reply, len(sol.steps))
        info = {"reply": reply[-self.keep_reply :], "parsed": first is not None}
        if why:
            info["note"] = why
        return Judgement(verdicts_of(first, len(sol.steps)), info=info)


def judge_verifier(
    *,
    base_url: str,
    model: str,
    max_tokens: int = 1024,
    request_timeout: float = 300.0,
    budget_s: float | None = None,
    extra_body: str | None = None,
) -> JudgeVerifier:
    """The ``judge`` verifier's factory: its keyword arguments are its options (``-V key=value``).

    base_url: an OpenAI-compatible endpoint ending in /v1
    model: the served model's name
    max_tokens: reply tokens per request
    request_timeout: total seconds per request
    budget_s: seconds the whole run may spend on the endpoint (None: no limit)
    extra_body: a JSON object merged into each request, e.g. {"top_k": 1}
    """
    check_timeout(request_timeout, "-V request_timeout")  # before a request: ~1e10 s overflows the socket
    body = None
    if extra_body is not None:
        body = loads(extra_body, "extra_body")  # bounded, NaN refused: o3viz.trace.safejson
        if not isinstance(body, dict):
            raise UsageError(f"extra_body must be a JSON object, not a {type(body).__name__}")
    return JudgeVerifier.over_endpoint(
        base_url, model, max_tokens=max_tokens, timeout=request_timeout, budget_s=budget_s, extra_body=body
    )
