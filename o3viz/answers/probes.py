"""The answer probes as plug-ins (``PROBES``, one ``o3viz.plugins.Registry``): ``local`` (the
loaded model, off one prefill: ``o3viz.answers.probe_local``) and ``endpoint`` (an
OpenAI-compatible server: ``o3viz.answers.probe_endpoint``). A probe's options are its factory's
keyword-only arguments (``-V key=value``); the host passes the loaded ``model`` (and its
``tokenizer``) by name, and a probe that does not use them ignores them.

>>> PROBES.names()
('local', 'endpoint')
>>> [o.name for o in PROBES.get("local").options]
['max_new_tokens', 'suffix', 'model_id']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from o3viz.answers.probe_types import Probe, ProbeResult
from o3viz.plugins import Registry

if TYPE_CHECKING:  # the implementations import torch: only a probe that is built loads them
    from o3viz.answers.probe_endpoint import EndpointProbe
    from o3viz.answers.probe_local import LocalProbe

__all__ = [
    "PROBES",
    "Probe",
    "ProbeResult",
    "make_endpoint_probe",
    "make_local_probe",
]

PROBES = Registry("answer probe")


def make_local_probe(
    model: Any = None,
    tokenizer: Any = None,
    *,
    max_new_tokens: int = 16,
    suffix: str | None = None,
    model_id: str | None = None,
) -> LocalProbe:
    """The local model forced to answer at each step's end, off one prefill of the round.

    max_new_tokens: the forced answer's token budget (1-64)
    suffix: the answer-forcing text appended to the reasoning (default: from the chat template)
    model_id: the model to load when none is at hand: a hub id, folder or .gguf (default: the
          embedded SmolLM2)
    """
    from o3viz.answers.probe_local import LocalProbe

    if isinstance(model, tuple):  # ``load_model``'s (model, tokenizer)
        model, tokenizer = model
    if model is None or tokenizer is None:
        from o3viz.model import load_model

        model, tokenizer = load_model(model_id)
    return LocalProbe(model, tokenizer, max_new_tokens=max_new_tokens, suffix=suffix)


def make_endpoint_probe(
    model: Any = None,
    tokenizer: Any = None,
    *,
    base_url: str,
    served_model: str,
    max_new_tokens: int = 16,
    suffix: str | None = None,
    concurrency: int = 8,
    retries: int = 3,
    timeout: float = 60.0,
    logprobs: bool = True,
) -> EndpointProbe:
    """An OpenAI-compatible server forced to answer at each step's end (completions with
    logprobs; without them, forced answers only, and it says so).

    base_url: the server's OpenAI address, e.g. http://127.0.0.1:8000/v1
    served_model: the model name the server serves
    max_new_tokens: the forced answer's token budget (1-64)
    suffix: the answer-forcing text appended to the reasoning (default: from the rendered prompt)
    concurrency: requests in flight at once (1-64)
    retries: retries of a request on 429, 5xx or no reply in time, with doubling backoff (0-10)
    timeout: total seconds for one request, connecting to the last byte
    logprobs: ask for log-probabilities (P(reference)); off: forced answers only
    """
    from o3viz.answers.probe_endpoint import EndpointProbe

    return EndpointProbe(
        base_url,
        served_model,
        max_new_tokens=max_new_tokens,
        suffix=suffix,
        concurrency=concurrency,
        retries=retries,
        timeout=timeout,
        logprobs=logprobs,
    )  # the host's model and tokenizer are not the served model's: its template is not used


PROBES.register("local", make_local_probe, "the local model, forked from the run's own KV cache")
PROBES.register("endpoint", make_endpoint_probe, "an OpenAI-compatible server (vLLM, transformers serve)")
