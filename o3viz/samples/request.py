"""What a sampling job asks for: ``SampleRequest``, the one carrier of ``o3viz sample``'s settings
(the prompt or task, N, the temperature, the token budget, the set's name, the endpoint), checked
once by ``validate`` before any model loads; and the rule for a set's name.

>>> SampleRequest(prompt="What is 7 + 5?", n=4, temperature=0.8, max_new_tokens=32).validate()
>>> SampleRequest(prompt="What is 7 + 5?", n=1).validate()
Traceback (most recent call last):
...
o3viz.errors.UsageError: --n 1: a set of one sample has nothing to compare; give 2 to 256
"""

from __future__ import annotations

import math
import re
import secrets
import time
from dataclasses import dataclass

from o3viz.errors import UsageError
from o3viz.text.equivalence import MAX_ANSWER_CHARS

__all__ = [
    "MAX_CONCURRENCY",
    "MAX_NEW_TOKENS",
    "MAX_SAMPLES",
    "SampleRequest",
    "check_room",
    "check_set_name",
    "new_set_name",
]

MAX_SAMPLES = 256  # samples in one set: the tree and its view are sized for this many
MAX_NEW_TOKENS = 8192  # new tokens per sample
MAX_CONCURRENCY = 16  # endpoint requests in flight at once
MAX_PROMPT_CHARS = 32_000  # as an imported question (o3viz.importers.build.MAX_QUESTION_CHARS)
MAX_REFERENCE_CHARS = MAX_ANSWER_CHARS  # a longer reference would never compare equal
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,79}")


def check_set_name(name: str) -> str:
    """``name`` when it can name a set (1-80 letters, digits and ``._:+-``, starting with a letter
    or digit), else one ``UsageError`` line."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise UsageError(
            f"set name {str(name)[:40]!r}: use 1-80 letters, digits and . _ : + -, starting with a letter or digit"
        )
    return name


def check_room(name: str, have: int, adding: int) -> None:
    """One ``UsageError`` line when set ``name`` of ``have`` samples has no room for ``adding``
    more: callers check before they draw, so no request or decoding is spent on samples that
    could not be kept."""
    if have + adding > MAX_SAMPLES:
        room = f"add at most {MAX_SAMPLES - have}" if have < MAX_SAMPLES else "it is full"
        raise UsageError(
            f"set {name}: {have} + {adding} samples is over the {MAX_SAMPLES} a set holds; {room}"
        )


def new_set_name() -> str:
    """A made-up set name: ``samples-YYYYMMDD-HHMMSS-xxxx``."""
    return f"samples-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


@dataclass
class SampleRequest:
    """One sampling job: N continuations of one prompt (or built-in task), stored as a set."""

    prompt: str | None = None  # a free prompt, or
    task_id: str | None = None  # a built-in task, e.g. gsm8k:3
    reference: str | None = None  # with a free prompt: the answer that grades the samples (forks need it)
    n: int = 8  # samples
    temperature: float = 0.7  # must be above 0: a greedy set would be N copies of one sample
    top_p: float = 0.95
    max_new_tokens: int = 256
    seed: int = 0
    set_name: str | None = None  # None: one is made up (``new_set_name``)
    model: str | None = None  # a local model (None: the embedded one), or the endpoint's model
    base_url: str | None = None  # an OpenAI-compatible endpoint: N requests instead of one batch
    concurrency: int = 4  # endpoint requests in flight
    batch: int = 16  # local rows decoded together (memory: the cache is repeated this many times)
    request_timeout: float = 120.0  # seconds per endpoint request

    def validate(self) -> None:
        """One ``UsageError`` line for anything that cannot run, before any model loads."""
        if bool(self.task_id) == bool(self.prompt and self.prompt.strip()):
            raise UsageError("give a prompt (--prompt TEXT) or a task (--task gsm8k:3), not both or neither")
        if self.reference is not None and self.task_id:
            raise UsageError("--reference goes with --prompt: a task (--task) carries its own reference")
        if self.reference is not None and not 0 < len(self.reference.strip()) <= MAX_REFERENCE_CHARS:
            raise UsageError(f"--reference: give the answer, 1 to {MAX_REFERENCE_CHARS} characters")
        if self.prompt is not None and len(self.prompt) > MAX_PROMPT_CHARS:
            raise UsageError(f"the prompt has {len(self.prompt):,} characters, over {MAX_PROMPT_CHARS:,}")
        self._check_int("--n", self.n, 1, MAX_SAMPLES)
        if self.n < 2:
            raise UsageError(
                f"--n {self.n}: a set of one sample has nothing to compare; give 2 to {MAX_SAMPLES}"
            )
        t = self.temperature
        if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t <= 0:
            raise UsageError(
                f"--temperature {t}: give a number above 0 (at 0, greedy, every sample is the same)"
            )
        if not (math.isfinite(self.top_p) and 0 < self.top_p <= 1):
            raise UsageError(f"--top-p {self.top_p}: give a number in (0, 1]")
        self._check_int("--max-new-tokens", self.max_new_tokens, 1, MAX_NEW_TOKENS)
        self._check_int("--concurrency", self.concurrency, 1, MAX_CONCURRENCY)
        self._check_int("--batch", self.batch, 1, MAX_SAMPLES)
        if not (math.isfinite(self.request_timeout) and self.request_timeout > 0):
            raise UsageError(f"--request-timeout {self.request_timeout}: give seconds above 0")
        if self.base_url is not None:
            if not self.base_url.startswith(("http://", "https://")):
                raise UsageError(f"--base-url {self.base_url!r} must start with http:// or https://")
            if not self.model:
                raise UsageError("--base-url needs --model, the endpoint's model name")
        if self.set_name is not None:
            check_set_name(self.set_name)

    @staticmethod
    def _check_int(flag: str, value, lo: int, hi: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise UsageError(f"{flag} {value}: give a whole number from {lo} to {hi}")
