"""Any OpenAI-compatible ``/v1/completions`` endpoint as a generation client (``OpenAIBackend``:
vLLM, llama.cpp's server, ``transformers serve``, a provider), and ``endpoint_ask``, the one
``ask(prompt) -> reply`` built on it for a judge.

One request per sample (servers differ in ``n`` support), each with its own seed; failures are
retried with exponential backoff, then reported in one line. Each request has a total deadline
(``timeout``) and redirects stay on the endpoint's origin (``o3viz.clients.post``); ``budget_s``
bounds a whole run's time on the endpoint. The API key comes from the environment
(``api_key_from_env``) and is sent to the endpoint's origin only.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from o3viz.clients.base import RolloutError, Sampling
from o3viz.clients.post import EndpointError, check_timeout, post
from o3viz.errors import UsageError

__all__ = ["MAX_RESPONSE_BYTES", "OpenAIBackend", "api_key_from_env", "endpoint_ask"]

MAX_RESPONSE_BYTES = 4 << 20
API_KEY_VARIABLES = ("O3VIZ_API_KEY", "OPENAI_API_KEY")  # the first one set is the key


def api_key_from_env() -> str | None:
    """The endpoint's API key: ``$O3VIZ_API_KEY``, else ``$OPENAI_API_KEY``, else None."""
    return next((os.environ[v] for v in API_KEY_VARIABLES if os.environ.get(v)), None)


@dataclass
class OpenAIBackend:
    """An OpenAI-compatible completions endpoint: ``{base_url}/completions``."""

    base_url: str
    model: str
    api_key: str | None = None
    retries: int = 3
    backoff: float = 1.0  # seconds before the first retry; doubles each time
    timeout: float = 120.0  # total seconds per request: connect, headers and the whole body
    extra_body: dict = field(default_factory=dict)  # server-specific fields, e.g. generation_config
    name: str = ""
    budget_s: float | None = None  # total seconds this backend may spend on the endpoint (None: no cap)

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise UsageError(f"--base-url {self.base_url!r} must start with http:// or https://")
        self.timeout = check_timeout(self.timeout, "the request timeout")
        if self.budget_s is not None and not self.budget_s > 0:
            raise UsageError("the run budget must be positive seconds")
        self.base_url = self.base_url.rstrip("/")
        self.name = self.name or f"openai:{self.base_url}:{self.model}"
        self._started: float | None = None  # the first request's time: the budget counts from it

    def left_s(self) -> float:
        """Seconds of the run's budget still unspent (infinite without a budget)."""
        if self.budget_s is None:
            return float("inf")
        if self._started is None:
            return self.budget_s
        return self.budget_s - (time.monotonic() - self._started)

    def spent(self) -> bool:
        """The run's budget is used up: no new request starts (``should_stop`` of a resampling run)."""
        return self.left_s() <= 0

    def complete(self, prompt: str, k: int, sampling: Sampling, first: int = 0) -> list[str]:
        return [self._one(prompt, sampling, sampling.seed * 1_000_003 + first + i) for i in range(k)]

    def _one(self, prompt: str, sampling: Sampling, seed: int) -> str:
        body = {
            "model": self.model,
            "prompt": prompt,
            "max_tokens": sampling.max_tokens,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "seed": seed,
            **self.extra_body,
        }
        last, tries = "", 0
        if self._started is None:
            self._started = time.monotonic()
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(max(0.0, min(self.backoff * 2 ** (attempt - 1), self.left_s())))
            if self.spent():
                last = f"the run's budget of {self.budget_s:g} s is spent" + (
                    f" (last: {last})" if last else ""
                )
                break
            tries += 1
            try:
                return _completion_text(self._post(body, min(self.timeout, self.left_s())))
            except RolloutError as exc:
                last = str(exc)
                if "garbage" in last and attempt >= 1:
                    break
        raise RolloutError(f"endpoint {self.base_url} failed after {tries} tries: {last}")

    def _post(self, body: dict, deadline_s: float) -> bytes:
        headers = {"Content-Type": "application/json"}
        if self.api_key:  # sent to this origin only: post() never follows a redirect off it
            headers["Authorization"] = f"Bearer {self.api_key}"
        try:
            reply = post(
                f"{self.base_url}/completions",
                json.dumps(body).encode(),
                headers,
                deadline_s=deadline_s,
                limit=MAX_RESPONSE_BYTES,
            )
        except EndpointError as exc:
            raise RolloutError(str(exc)) from None
        if reply.status >= 400:
            detail = reply.body[:300].decode(errors="replace").replace("\n", " ")
            raise RolloutError(f"HTTP {reply.status} {reply.reason}: {detail[:200]}")
        return reply.body


def _completion_text(raw: bytes) -> str:
    """``choices[0].text`` of a completions reply, or a RolloutError saying what came back."""
    if len(raw) > MAX_RESPONSE_BYTES:
        raise RolloutError(f"garbage reply: more than {MAX_RESPONSE_BYTES} bytes")
    try:
        obj = json.loads(raw)
        text = obj["choices"][0]["text"]
    except (ValueError, KeyError, IndexError, TypeError):
        shown = raw[:80].decode(errors="replace").replace("\n", " ")
        raise RolloutError(f"garbage reply, not a completions response (got {shown!r})") from None
    if not isinstance(text, str):
        raise RolloutError("garbage reply: choices[0].text is not a string")
    return text


def endpoint_ask(
    base_url: str,
    model: str,
    *,
    max_tokens: int = 1024,
    timeout: float = 300.0,
    budget_s: float | None = None,
    extra_body: dict | None = None,
) -> Callable[[str], str]:
    """``ask(prompt) -> reply`` on ``OpenAIBackend`` (a total deadline per request, redirects kept
    on the origin, a run budget, one retry), greedy: temperature 0, top-p 1."""
    backend = OpenAIBackend(
        base_url,
        model,
        api_key_from_env(),
        retries=1,
        timeout=timeout,
        budget_s=budget_s,
        extra_body=extra_body or {},
    )
    sampling = Sampling(max_tokens=max_tokens, temperature=0.0, top_p=1.0)
    return lambda prompt: backend.complete(prompt, 1, sampling)[0]
