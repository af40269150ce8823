"""The generation clients: what branching, resampling and the judge verifier use to ask a model for
text. One layer below everything that asks a model something (``analysis``, ``branch``,
``verify``), so each of them builds the client it needs instead of being handed a callback.

- ``base``: ``Sampling`` (how continuations are sampled), the ``Backend`` protocol
  (``complete(prompt, k, sampling, first)``) and ``RolloutError``;
- ``local``: ``LocalBackend``, the local model, K samples of a prefix decoded as one batch;
- ``endpoint``: ``OpenAIBackend``, any OpenAI-compatible ``/v1/completions`` endpoint, and
  ``endpoint_ask``, a greedy ``ask(prompt) -> reply`` on it;
- ``post``: the one POST to a user-given address (a total deadline, redirects kept on the origin),
  and ``check_timeout``, the one check of a user-given timeout;
- ``cache``: ``RolloutCache``, rollouts on disk, so an interrupted run resumes.

>>> from o3viz.clients import Sampling
>>> Sampling(max_tokens=8, temperature=0.0).key()
{'max_tokens': 8, 'temperature': 0.0, 'top_p': 0.95, 'seed': 0}
"""

from __future__ import annotations

from o3viz.clients.base import Backend, RolloutError, Sampling
from o3viz.clients.cache import RolloutCache
from o3viz.clients.endpoint import OpenAIBackend, api_key_from_env, endpoint_ask
from o3viz.clients.local import LocalBackend
from o3viz.clients.post import MAX_TIMEOUT_S, EndpointError, check_timeout

__all__ = [
    "Backend",
    "MAX_TIMEOUT_S",
    "EndpointError",
    "LocalBackend",
    "OpenAIBackend",
    "RolloutCache",
    "RolloutError",
    "Sampling",
    "api_key_from_env",
    "check_timeout",
    "endpoint_ask",
]
