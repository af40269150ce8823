"""Rollout backends for counterfactual resampling, and the on-disk rollout cache.

- ``LocalBackend``: the local model. The K samples of one prefix share its KV cache: the prefix
  is prefilled once, the cache is repeated K times, and the K continuations decode as one batch.
- ``OpenAIBackend``: any OpenAI-compatible ``/v1/completions`` endpoint (vLLM, llama.cpp's server,
  ``transformers serve``, a provider). One request per sample (servers differ in ``n`` support),
  each with its own seed; failures are retried with exponential backoff, then reported in one line.
  Each request has a total deadline (``timeout``) and redirects stay on the endpoint's origin
  (``o3viz.analysis.importance.endpoint``); ``budget_s`` bounds a whole run's time on the endpoint.
- ``RolloutCache``: JSON-lines files keyed by a hash of (backend, model, prompt, sampling settings);
  samples are appended as they arrive, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from o3viz.analysis.importance.endpoint import EndpointError, post
from o3viz.errors import O3vizError, UsageError

MAX_RESPONSE_BYTES = 4 << 20
MAX_CACHE_FILE_BYTES = 16 << 20


class RolloutError(O3vizError, RuntimeError):
    """A rollout backend failed (endpoint down, garbage reply) after its retries."""


@dataclass
class Sampling:
    """How continuations are sampled."""

    max_tokens: int = 256  # new tokens per rollout
    temperature: float = 0.7
    top_p: float = 0.95
    seed: int = 0

    MAX_TOKENS = 200_000  # a rollout longer than this is a typo, not a plan

    def __post_init__(self) -> None:
        """Numbers are checked before any work (a NaN temperature once generated for 15 s, failed
        on save and left a rollout cached under a NaN key): one ``UsageError`` line each."""
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int):
            raise UsageError(f"max tokens must be a whole number, not {self.max_tokens!r}")
        if not 1 <= self.max_tokens <= self.MAX_TOKENS:
            raise UsageError(f"max tokens must be 1-{self.MAX_TOKENS:,}, not {self.max_tokens}")
        if not (math.isfinite(self.temperature) and self.temperature >= 0):  # 0: greedy
            raise UsageError(f"the temperature must be 0 (greedy) or more, not {self.temperature}")
        if not (math.isfinite(self.top_p) and 0 < self.top_p <= 1):
            raise UsageError(f"top-p must be in (0, 1], not {self.top_p}")

    def key(self) -> dict:
        return {
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "seed": self.seed,
        }


class Backend(Protocol):
    name: str  # what the cache key and provenance call this backend and model

    def complete(self, prompt: str, k: int, sampling: Sampling, first: int = 0) -> list[str]:
        """``k`` continuations of ``prompt`` (samples ``first .. first+k-1`` of the seed stream)."""
        ...


@dataclass
class LocalBackend:
    """The local model; K samples of one prefix decode as one batch from a shared prefix cache."""

    model: Any
    tokenizer: Any
    name: str = ""
    batch: int = 8
    budget_tokens: int = 0  # rollouts decoded here × their token budget (cache hits are not counted)
    seconds: float = 0.0  # the time those took: this machine's speed, as the cost lines count it

    def __post_init__(self) -> None:
        info = getattr(self.model, "o3viz_info", None)
        self.name = self.name or f"local:{getattr(info, 'model_id', None) or self.model.config._name_or_path}"

    def complete(self, prompt: str, k: int, sampling: Sampling, first: int = 0) -> list[str]:
        import time

        t0, out = time.perf_counter(), []
        ids = self.tokenizer(prompt, add_special_tokens=False, return_tensors="pt")["input_ids"]
        while len(out) < k:
            n = min(self.batch, k - len(out))
            out += generate_shared_prefix(self.model, self.tokenizer, ids, n, sampling, first + len(out))
        self.budget_tokens += k * sampling.max_tokens
        self.seconds += time.perf_counter() - t0
        return out


def generate_shared_prefix(
    model, tokenizer, ids, k: int, sampling: Sampling, seed_offset: int = 0
) -> list[str]:
    """``k`` sampled continuations of ``ids`` (1, P): one prefill of ``ids[:, :-1]``, its cache
    repeated ``k`` times, then one batched ``generate``."""
    import torch
    from transformers import DynamicCache

    device = next(model.parameters()).device
    ids = ids.to(device)
    cache = DynamicCache(config=model.config)
    with torch.inference_mode():
        if ids.shape[1] > 1:
            model(input_ids=ids[:, :-1], past_key_values=cache, use_cache=True)
        cache.batch_repeat_interleave(k)
        torch.manual_seed(sampling.seed * 1_000_003 + seed_offset)
        gen = model.generate(
            input_ids=ids.expand(k, -1),
            attention_mask=torch.ones(k, ids.shape[1], dtype=torch.long, device=device),
            past_key_values=cache,
            do_sample=sampling.temperature > 0,
            temperature=sampling.temperature or None,
            top_p=sampling.top_p,
            top_k=0,
            max_new_tokens=sampling.max_tokens,
            pad_token_id=tokenizer.pad_token_id,
        )
    return [tokenizer.decode(row[ids.shape[1] :], skip_special_tokens=True) for row in gen]


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
        if not self.timeout > 0 or (self.budget_s is not None and not self.budget_s > 0):
            raise UsageError("the request timeout and the run budget must be positive seconds")
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
        if self.api_key:  # sent to this origin only: endpoint.post never follows a redirect off it
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


class RolloutCache:
    """Rollouts on disk, one JSON-lines file per (backend, prompt, sampling) hash."""

    def __init__(self, folder: str | os.PathLike | None = None) -> None:
        from o3viz.paths import cache_dir

        self.folder = Path(folder) if folder is not None else cache_dir() / "rollouts"

    def key(self, backend: str, prompt: str, sampling: Sampling) -> str:
        blob = json.dumps({"backend": backend, "prompt": prompt, **sampling.key()}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:32]

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.jsonl"

    def get(self, key: str) -> list[str]:
        """Cached samples (a damaged trailing line, from a killed run, is dropped)."""
        path = self._path(key)
        if not path.is_file() or path.stat().st_size > MAX_CACHE_FILE_BYTES:
            return []
        out = []
        for line in path.read_text(errors="replace").splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                break
            if not isinstance(item, str):
                break
            out.append(item)
        return out

    def add(self, key: str, texts: list[str]) -> None:
        """Append samples, one line each, flushed and synced before returning."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._path(key)
        if path.is_file() and path.stat().st_size and not path.read_bytes().endswith(b"\n"):
            good = self.get(key)  # a run killed mid-line: keep the whole lines only
            path.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in good), encoding="utf-8")
        with path.open("a", encoding="utf-8") as f:
            for t in texts:
                f.write(json.dumps(t, ensure_ascii=False) + "\n")
            f.flush()
            os.fsync(f.fileno())
