"""Forced answers through an OpenAI-compatible server (``EndpointProbe``: vLLM, ``transformers
serve``, a provider), at dataset scale.

Each boundary is one completions request (``/v1/completions``: the round's rendered prompt, its
text up to the step's end and the suffix, greedy, ``max_tokens`` bounded, ``logprobs``), and with
a reference a second one that scores it (``echo: true`` over prompt + suffix + reference, one new
token; the reference's tokens are those whose ``text_offset`` falls in it). The modes, decided by
the server's first replies and said once on stderr and in ``info["mode"]``:

- ``completions+logprobs``: forced answers and P(reference);
- ``completions``: the reply has no ``logprobs`` (``transformers serve``): forced answers only;
- ``chat``: no completions route (404/405/501): chat completions continuing the assistant message
  (vLLM's ``continue_final_message``), forced answers only.

Boundaries go through a pool of ``concurrency`` threads. A request has a total deadline
(``o3viz.clients.post``), redirects stay on the origin, the API key comes from the environment
(``o3viz.clients.endpoint.api_key_from_env``); 429, 5xx and failures to answer in time are retried
``retries`` times with doubling backoff. A reply is untrusted: at most ``MAX_RESPONSE_BYTES``,
parsed by ``o3viz.trace.safejson``; a bad one, or a request that failed, leaves that boundary's
``forced`` None with a note and marks it ``failed`` (``o3viz.answers.run`` then stores nothing).
"""

from __future__ import annotations

import json
import math
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from o3viz.answers.probe_types import ProbeResult, check_boundaries, check_max_new_tokens
from o3viz.answers.suffixes import Suffix, forced_answer, suffix_for_prompt
from o3viz.clients.endpoint import MAX_RESPONSE_BYTES, api_key_from_env
from o3viz.clients.post import MAX_TIMEOUT_S, EndpointError, Reply, check_timeout, post
from o3viz.errors import O3vizError, UsageError
from o3viz.run.prompt import rollout_prompt
from o3viz.text.reference import reference_answer
from o3viz.trace import Trace
from o3viz.trace.safejson import loads

__all__ = ["MAX_CONCURRENCY", "EndpointProbe"]

MAX_CONCURRENCY = 64
MAX_RETRIES = 10
_RETRY = {429, 500, 502, 503, 504}
_NO_ROUTE = {404, 405, 501}


class _BadReply(O3vizError, RuntimeError):
    """A reply that is not what the protocol says (one line, kept as the boundary's note)."""


class EndpointProbe:
    """Forced answers through an OpenAI-compatible endpoint (see the module docstring)."""

    def __init__(
        self,
        base_url: str,
        served_model: str,
        *,
        max_new_tokens: int = 16,
        suffix: str | None = None,
        concurrency: int = 8,
        retries: int = 3,
        timeout: float = 60.0,
        backoff: float = 1.0,
        logprobs: bool = True,
        tokenizer: Any = None,
    ):
        if not base_url.startswith(("http://", "https://")):
            raise UsageError(f"-V base_url={base_url[:80]!r} must start with http:// or https://")
        if not served_model.strip():
            raise UsageError("the endpoint probe needs -V served_model=NAME (the model the server serves)")
        if not 1 <= concurrency <= MAX_CONCURRENCY or not 0 <= retries <= MAX_RETRIES:
            raise UsageError(f"-V concurrency must be 1-{MAX_CONCURRENCY} and -V retries 0-{MAX_RETRIES}")
        timeout = check_timeout(timeout, "-V timeout")
        if not (math.isfinite(backoff) and 0 <= backoff <= MAX_TIMEOUT_S):
            raise UsageError(f"backoff {backoff:g}: give seconds from 0 to {MAX_TIMEOUT_S:g}")
        self.base_url, self.served_model = base_url.rstrip("/"), served_model
        self.max_new_tokens = check_max_new_tokens(max_new_tokens)
        self.given_suffix, self.tokenizer = suffix, tokenizer
        self.concurrency, self.retries, self.timeout, self.backoff = concurrency, retries, timeout, backoff
        self.api_key = api_key_from_env()
        self.mode = "completions+logprobs" if logprobs else "completions"
        self._lock = threading.Lock()
        self._said: set[str] = set()
        self.name = f"forced:endpoint:{served_model}"
        self.info = {
            "model": served_model,
            "endpoint": self.base_url,
            "suffix": None,
            "logprobs": logprobs,
            "mode": self.mode,
            "max_new_tokens": self.max_new_tokens,
            "trace_model": None,
            "other_model": None,
        }

    # the probe ---------------------------------------------------------------------------------

    def probe(
        self, trace: Trace, round_index: int, boundaries: list[int], reference: str | None
    ) -> list[ProbeResult]:
        boundaries = check_boundaries(trace, round_index, boundaries)
        rnd = trace.rounds[round_index]
        prompt, suffix = self._prompt_and_suffix(trace, round_index)
        writer = trace.provenance.source.get("source_model") or trace.provenance.model_id or ""
        other = None if not writer else writer.rsplit("/", 1)[-1] != self.served_model.rsplit("/", 1)[-1]
        self.info.update(
            suffix=suffix.text, suffix_style=suffix.style, trace_model=writer or None, other_model=other
        )
        ref = reference_answer(reference)
        jobs = [(b, rnd.text[: rnd.steps[b].end]) for b in boundaries]
        if not jobs:
            return []
        first = self._one(trace, prompt, jobs[0], suffix, ref)  # settles the mode before the pool starts
        if first.failed and first.forced is None:  # the server is down or broken: spare it the rest
            why = f"not asked: the first request failed ({first.note})"[:300]
            return [first, *(ProbeResult(b, None, None, why, failed=True) for b, _ in jobs[1:])]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            rest = list(pool.map(lambda job: self._one(trace, prompt, job, suffix, ref), jobs[1:]))
        return [first, *rest]

    def settings(self, trace: Trace, round_index: int) -> dict:
        """What makes this probe's answers on the round (``o3viz.answers.probe_types.Probe``): the
        suffix comes from the round's rendered prompt, so it is known before any request."""
        check_boundaries(trace, round_index, [])
        suffix = self._prompt_and_suffix(trace, round_index)[1]
        return {
            "probe": "endpoint",
            "model": self.served_model,
            "endpoint": self.base_url,
            "suffix": suffix.text,
            "max_new_tokens": self.max_new_tokens,
        }

    def _prompt_and_suffix(self, trace: Trace, round_index: int) -> tuple[str, Suffix]:
        """The round's rendered prompt and its suffix (an unknown template: one line, no request)."""
        prompt = rollout_prompt(trace, self.tokenizer, round_index)
        return prompt, suffix_for_prompt(prompt + trace.rounds[round_index].text, self.given_suffix)

    def _one(
        self, trace: Trace, prompt: str, job: tuple[int, str], suffix: Suffix, ref: str | None
    ) -> ProbeResult:
        step, before = job
        suffix = suffix.after(before)
        try:
            decoded = self._forced_text(trace, prompt, before, suffix)
        except (_BadReply, EndpointError) as exc:
            return ProbeResult(step, None, None, str(exc)[:300], failed=True)
        forced = forced_answer(suffix, decoded)
        p_ref, note = None, None if forced else "the forced continuation states no answer"
        if ref and self.mode == "completions+logprobs":
            try:
                p_ref = self._p_reference(prompt + before + suffix.text, ref)
            except (_BadReply, EndpointError) as exc:  # asked, not answered: a rerun may score it
                return ProbeResult(step, forced, None, f"P(reference) not scored: {str(exc)[:280]}", True)
        return ProbeResult(step, forced, p_ref, note)

    def _forced_text(self, trace: Trace, prompt: str, before: str, suffix: Suffix) -> str:
        if self.mode != "chat":
            body = {"model": self.served_model, "prompt": prompt + before + suffix.text}
            body.update(max_tokens=self.max_new_tokens, temperature=0.0, stop=["\n"])
            if self.mode == "completions+logprobs":
                body["logprobs"] = 1
            reply = self._request("/completions", body)
            if reply.status in _NO_ROUTE and self.mode != "chat":
                self._switch("chat", f"{self.base_url} has no completions route (HTTP {reply.status})")
            else:
                choice = _choice(self._parse(reply))
                if self.mode == "completions+logprobs" and not isinstance(choice.get("logprobs"), dict):
                    self._switch("completions", f"{self.base_url} gives no logprobs")
                return _text(choice.get("text"), "choices[0].text")
        return self._chat_text(trace, before + suffix.text)

    def _chat_text(self, trace: Trace, reply_so_far: str) -> str:
        messages = [
            {"role": "user", "content": trace.task.question or ""},
            {"role": "assistant", "content": reply_so_far},
        ]
        body = {"model": self.served_model, "messages": messages, "max_tokens": self.max_new_tokens}
        body.update(temperature=0.0, continue_final_message=True, add_generation_prompt=False)
        choice = _choice(self._parse(self._request("/chat/completions", body)))
        message = choice.get("message")
        return _text(
            message.get("content") if isinstance(message, dict) else None, "choices[0].message.content"
        )

    def _p_reference(self, context: str, ref: str) -> float:
        """P(``ref`` | ``context``): the echoed log-probabilities of the tokens that overlap it."""
        body = {"model": self.served_model, "prompt": context + ref, "max_tokens": 1, "temperature": 0.0}
        body.update(echo=True, logprobs=1)
        lp = _choice(self._parse(self._request("/completions", body))).get("logprobs")
        if not isinstance(lp, dict):
            raise _BadReply("the echoed reply has no logprobs")
        tokens, offsets, values = lp.get("tokens"), lp.get("text_offset"), lp.get("token_logprobs")
        if not (isinstance(tokens, list) and isinstance(offsets, list) and isinstance(values, list)):
            raise _BadReply("the echoed logprobs lack tokens, text_offset or token_logprobs")
        lo, hi, total, n = len(context), len(context) + len(ref), 0.0, 0
        for tok, off, v in zip(tokens, offsets, values, strict=False):
            if not (isinstance(tok, str) and isinstance(off, int) and not isinstance(off, bool)):
                raise _BadReply("the echoed logprobs hold a token that is not text at an offset")
            if off < hi and off + len(tok) > lo:
                if not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v) or v > 0:
                    raise _BadReply(f"the reference token {tok[:20]!r} has no log-probability")
                total, n = total + float(v), n + 1
        if n == 0:
            raise _BadReply("the echoed tokens do not cover the reference")
        return math.exp(total)

    # the wire ----------------------------------------------------------------------------------

    def _switch(self, mode: str, why: str) -> None:
        """Step down to ``mode`` (never back up), and say so once on stderr."""
        with self._lock:
            order = ("completions+logprobs", "completions", "chat")
            if order.index(mode) <= order.index(self.mode):
                return
            self.mode = mode
            self.info.update(mode=mode, logprobs=False)
            line = f"{why}: forced answers without probabilities ({mode})"
            self.info["note"] = line
            if line not in self._said:
                self._said.add(line)
                print(f"o3viz answers: {line}", file=sys.stderr)

    def _request(self, path: str, body: dict) -> Reply:
        """One POST with retries on 429, 5xx and no reply in time; a refused redirect or a 4xx is final."""
        headers = {"Content-Type": "application/json"}
        if self.api_key:  # to the endpoint's origin only: post() keeps redirects on it
            headers["Authorization"] = f"Bearer {self.api_key}"
        data, last = json.dumps(body).encode(), ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                reply = post(
                    self.base_url + path, data, headers, deadline_s=self.timeout, limit=MAX_RESPONSE_BYTES
                )
            except EndpointError as exc:
                if "redirect" in str(exc):
                    raise
                last = str(exc)
                continue
            if reply.status not in _RETRY:
                return reply
            last = f"HTTP {reply.status} {reply.reason}"
        raise EndpointError(f"{self.base_url}{path} failed after {self.retries + 1} tries: {last}")

    def _parse(self, reply: Reply) -> dict:
        if reply.status >= 400:
            detail = reply.body[:200].decode(errors="replace").replace("\n", " ")
            raise _BadReply(f"HTTP {reply.status} {reply.reason}: {detail}")
        if len(reply.body) > MAX_RESPONSE_BYTES:
            raise _BadReply(f"the reply is over {MAX_RESPONSE_BYTES:,} bytes")
        try:
            obj = loads(reply.body, "the endpoint's reply")
        except O3vizError as exc:
            raise _BadReply(f"a malformed reply: {exc}") from None
        if not isinstance(obj, dict):
            raise _BadReply("a malformed reply: not a JSON object")
        return obj


def _choice(obj: dict) -> dict:
    choices = obj.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise _BadReply("a malformed reply: no choices[0]")
    return choices[0]


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _BadReply(f"a malformed reply: {where} is not text")
    return value
