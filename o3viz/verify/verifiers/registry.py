"""The one table of verifiers: ``register_verifier(name, make, help)`` adds one, ``list_verifiers``
names them, ``make_verifier(name, options)`` builds one. Adding a verifier is one edit: a class
with ``name``, ``provenance`` and ``verify`` (``o3viz.verify.verifiers.base.Verifier``) and one
``register_verifier`` line in ``o3viz/verify/verifiers/__init__.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from o3viz.errors import UsageError
from o3viz.verify.verifiers.base import Verifier


@dataclass
class VerifierOptions:
    """What a verifier may be built with; each verifier reads the fields it needs."""

    model: str | None = None  # a PRM or judge: a local folder or hub id (judge: the served name)
    base_url: str | None = None  # a judge: the OpenAI-compatible endpoint, ending in /v1
    device: str | None = None  # a PRM: "cpu", "cuda", ...; None: cuda when there is one
    dtype: str | None = None  # a PRM: "float32", "bfloat16", ...
    batch_size: int = 8  # a PRM: solutions per forward pass
    shape: str = "auto"  # a PRM: "tag" (Math-Shepherd), "head" (Qwen2.5-Math-PRM) or auto
    threshold: float = 0.5  # a PRM: a step scoring below this is wrong
    trust_remote_code: bool = False  # a PRM whose head is the checkpoint's own code (Qwen2.5-Math-PRM)
    max_tokens: int = 1024  # a judge: reply tokens per request
    request_timeout: float = 300.0  # a judge: total seconds per request
    budget_s: float | None = None  # a judge: seconds the whole run may spend on the endpoint
    extra_body: dict | None = None  # a judge: server-specific fields merged into each request
    then: str | None = None  # "combined": the verifier for the steps the first leaves unsure


@dataclass(frozen=True)
class VerifierSpec:
    name: str
    make: Callable[[VerifierOptions], Verifier]
    help: str
    needs: str = ""  # what it needs: "", "model" or "base_url"


_REGISTRY: dict[str, VerifierSpec] = {}


def register_verifier(
    name: str, make: Callable[[VerifierOptions], Verifier], help: str, needs: str = ""
) -> None:
    """Add the verifier ``name``: ``make(options)`` builds it. A name already taken is refused in
    one line, as ``register_format`` refuses one (a silent replacement hid which one ran)."""
    if name in _REGISTRY:
        raise UsageError(f"verifier {name!r} is already registered")
    _REGISTRY[name] = VerifierSpec(name, make, help, needs)


def unregister_verifier(name: str) -> None:
    """Remove a verifier added with ``register_verifier`` (a no-op for a name not in the table)."""
    _REGISTRY.pop(name, None)


def list_verifiers() -> list[VerifierSpec]:
    """Every registered verifier, in registration order."""
    return list(_REGISTRY.values())


def make_verifier(name: str, options: VerifierOptions | None = None) -> Verifier:
    """Build the verifier ``name``; an unknown name or a missing option is a one-line UsageError."""
    spec = _REGISTRY.get(name)
    if spec is None:
        raise UsageError(f"no verifier named {name!r}; the verifiers are {', '.join(_REGISTRY)}")
    options = options or VerifierOptions()
    if spec.needs == "model" and not options.model:
        raise UsageError(f"verifier {name!r} needs --model (a local folder or a hub id)")
    if spec.needs == "base_url" and not options.base_url:
        raise UsageError(f"verifier {name!r} needs --base-url (an OpenAI-compatible endpoint)")
    return spec.make(options)
