"""Pluggable step verifiers (issue 42): the interface (``base``), the table (``registry``:
``VERIFIERS``, a ``o3viz.plugins.Registry``), the built-in ones (``builtin``: claim checker, code
tests, their combination with any other), a process reward model (``prm``) and an LLM judge
(``judge``).

To add a verifier: one file holding a class with ``name``, ``provenance`` and ``verify(solution)
-> Judgement`` and a factory whose keyword-only arguments are its options, and one
``register_verifier`` line below (docs/contributing.md, "Add a verifier").
"""

from __future__ import annotations

from o3viz.verify.verifiers.base import (
    Judgement,
    Solution,
    Verifier,
    add_verdicts,
    solution_of,
    verify_all,
)
from o3viz.verify.verifiers.builtin import ClaimVerifier, CodeVerifier, CombinedVerifier, claims_then
from o3viz.verify.verifiers.judge import JudgeVerifier, judge_verifier
from o3viz.verify.verifiers.prm import prm_verifier
from o3viz.verify.verifiers.registry import (
    VERIFIERS,
    list_verifiers,
    make_verifier,
    register_verifier,
    unregister_verifier,
)

register_verifier("claims", ClaimVerifier, "the arithmetic claim checker (no model)")
register_verifier("code_tests", CodeVerifier, "the round's sandboxed code tests (no model)")
register_verifier("prm", prm_verifier, "a process reward model loaded with transformers")
register_verifier("judge", judge_verifier, "an LLM critic over an OpenAI-compatible endpoint")
register_verifier(
    "claims+prm", claims_then, "the claim checker, then another verifier on the steps it leaves unsure"
)

__all__ = [
    "VERIFIERS",
    "ClaimVerifier",
    "CodeVerifier",
    "CombinedVerifier",
    "Judgement",
    "JudgeVerifier",
    "Solution",
    "Verifier",
    "add_verdicts",
    "list_verifiers",
    "make_verifier",
    "register_verifier",
    "solution_of",
    "unregister_verifier",
    "verify_all",
]
