"""Pluggable step verifiers (issue 42): the interface (``base``), the table (``registry``), the
built-in ones (``builtin``: claim checker, code tests, their combination with any other), a
process reward model (``prm``) and an LLM judge (``judge``).

To add a verifier: write a class with ``name``, ``provenance`` and ``verify(solution) ->
Judgement`` and add one ``register_verifier`` line below.
"""

from __future__ import annotations

from o3viz.errors import UsageError
from o3viz.verify.verifiers.base import (
    Judgement,
    Solution,
    Verifier,
    add_verdicts,
    solution_of,
    verify_all,
)
from o3viz.verify.verifiers.builtin import ClaimVerifier, CodeVerifier, CombinedVerifier
from o3viz.verify.verifiers.judge import JudgeVerifier
from o3viz.verify.verifiers.registry import (
    VerifierOptions,
    VerifierSpec,
    list_verifiers,
    make_verifier,
    register_verifier,
    unregister_verifier,
)


def _prm(o: VerifierOptions) -> Verifier:
    from o3viz.verify.verifiers.prm import PrmSettings, make_prm

    settings = PrmSettings(shape=o.shape, threshold=o.threshold, batch_size=o.batch_size)
    return make_prm(
        o.model or "", settings, device=o.device, dtype=o.dtype, trust_remote_code=o.trust_remote_code
    )


def _judge(o: VerifierOptions) -> Verifier:
    if not o.model:
        raise UsageError("verifier 'judge' needs --model (the served model's name)")
    return JudgeVerifier.over_endpoint(
        o.base_url or "",
        o.model,
        max_tokens=o.max_tokens,
        timeout=o.request_timeout,
        budget_s=o.budget_s,
        extra_body=o.extra_body,
    )


def _combined(o: VerifierOptions) -> Verifier:
    return CombinedVerifier(ClaimVerifier(), make_verifier(o.then or "prm", o))


register_verifier("claims", lambda o: ClaimVerifier(), "the arithmetic claim checker (no model)")
register_verifier("code_tests", lambda o: CodeVerifier(), "the round's sandboxed code tests (no model)")
register_verifier("prm", _prm, "a process reward model loaded with transformers (--model)", needs="model")
register_verifier(
    "judge", _judge, "an LLM critic over an OpenAI-compatible endpoint (--base-url)", "base_url"
)
register_verifier(
    "claims+prm", _combined, "the claim checker, then a PRM on the steps it leaves unsure", "model"
)

__all__ = [
    "ClaimVerifier",
    "CodeVerifier",
    "CombinedVerifier",
    "Judgement",
    "JudgeVerifier",
    "Solution",
    "Verifier",
    "VerifierOptions",
    "VerifierSpec",
    "add_verdicts",
    "list_verifiers",
    "make_verifier",
    "register_verifier",
    "solution_of",
    "unregister_verifier",
    "verify_all",
]
