"""The verifiers' table, ``VERIFIERS``: a ``o3viz.plugins.Registry`` like every other plug-in kind.
A verifier's options are its factory's keyword-only arguments, so the CLI (``-V key=value``),
``--list`` and ``--help`` read them from there, and a name already taken is refused.

``register_verifier`` / ``unregister_verifier`` / ``list_verifiers`` / ``make_verifier`` are the
same table through functions:

>>> from o3viz.verify.verifiers import VERIFIERS, make_verifier  # the package registers the built-ins
>>> make_verifier("claims").name
'claims'
>>> [o.usage() for o in VERIFIERS.get("prm").options][:2]
['model=str (required)', 'device=str (default None)']
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from o3viz.errors import UsageError
from o3viz.plugins import Plugin, Registry
from o3viz.verify.verifiers.base import Verifier

VERIFIERS = Registry("verifier")
_NEW_WAY = "make_verifier(name, model=..., threshold=0.4) or make_verifier(name, {'threshold': '0.4'})"

__all__ = ["VERIFIERS", "list_verifiers", "make_verifier", "register_verifier", "unregister_verifier"]


def register_verifier(name: str, make: Callable[..., Verifier], help: str) -> Plugin:
    """Add the verifier ``name``: ``make(**options)`` builds it, its keyword-only arguments being
    its options. A name already taken is refused in one line; so is a ``make`` that wants a
    positional argument (the retired ``VerifierOptions`` object)."""
    params = inspect.signature(make).parameters.values()
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.default is p.empty for p in params if p.name in positional):
        raise UsageError(
            f"verifier {name!r}: its factory must take its options as keyword-only arguments "
            f"(def make(*, threshold: float = 0.5)), not a positional {positional[0]!r}"
        )
    return VERIFIERS.register(name, make, help)


def unregister_verifier(name: str) -> None:
    """Remove a verifier added with ``register_verifier`` (a no-op for a name not in the table)."""
    VERIFIERS.unregister(name)


def list_verifiers() -> list[Plugin]:
    """Every registered verifier (``name``, ``help``, ``options``), in registration order."""
    return list(VERIFIERS)


def make_verifier(name: str, options: Mapping[str, Any] | None = None, /, **values: Any) -> Verifier:
    """Build the verifier ``name`` from its options: a mapping (strings as the CLI gives them, or
    typed values) and/or keywords. An unknown name or option, a missing or ill-typed one is a
    one-line UsageError."""
    if options is not None and not isinstance(options, Mapping):
        raise UsageError(f"make_verifier takes its options as a dict or keywords: {_NEW_WAY}")
    return VERIFIERS.make(name, {**(options or {}), **values})
