"""The two built-in verifiers on the one interface, and their combination with any other:

- ``ClaimVerifier``: the arithmetic claim checker. A step holding a wrong claim is ``wrong``; one
  whose claims all hold is ``ok``; a step with no checkable claim is ``unsure``.
- ``CodeVerifier``: the round's sandboxed test results. A failing (or erroring, timing out) test
  makes the step it sits in ``wrong`` (the last step when the test names none); passing tests make
  it ``ok``; steps no test speaks of are not judged.
- ``CombinedVerifier``: one verifier first, a second on the steps the first leaves ``unsure``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from o3viz.errors import UsageError
from o3viz.verify.claims.check import check_text
from o3viz.verify.verifiers.base import Judgement, Solution, Verifier, verify_all


@dataclass
class ClaimVerifier:
    name: str = "claims"
    provenance: dict = field(
        default_factory=lambda: {"kind": "claim checker", "rules": "o3viz.verify.claims"}
    )

    def verify(self, sol: Solution) -> Judgement:
        report = check_text(sol.round.text if sol.round is not None else sol.text, steps=sol.spans())
        seen: list[set[str]] = [set() for _ in sol.steps]
        for c in report.claims:
            if 0 <= c.step < len(seen):
                seen[c.step].add(c.verdict)
        verdicts = ["wrong" if "wrong" in s else "ok" if "correct" in s else "unsure" for s in seen]
        return Judgement(verdicts, info={} if report.status == "ok" else {"note": report.status})


_FAILING = ("fail", "error", "timeout")


@dataclass
class CodeVerifier:
    name: str = "code_tests"
    provenance: dict = field(default_factory=lambda: {"kind": "code tests", "runner": "o3viz.verify.sandbox"})

    def verify(self, sol: Solution) -> Judgement:
        verdicts: list[str | None] = [None] * len(sol.steps)
        tests = [c for c in (sol.round.checks if sol.round is not None else []) if c.kind == "test"]
        for c in tests:
            i = c.step if c.step is not None and 0 <= c.step < len(verdicts) else len(verdicts) - 1
            if i < 0:
                continue
            if c.verdict in _FAILING:
                verdicts[i] = "wrong"
            elif verdicts[i] is None:
                verdicts[i] = "ok"
        return Judgement(verdicts, info={"tests": len(tests)})


@dataclass
class CombinedVerifier:
    """``first``'s decided verdicts stand; ``then`` judges the steps ``first`` left unsure (or did
    not judge). Scores are ``then``'s."""

    first: Verifier
    then: Verifier
    name: str = ""
    provenance: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.name = self.name or f"{self.first.name}+{self.then.name}"
        self.provenance = self.provenance or {
            "kind": "combined",
            "first": self.first.provenance,
            "then": self.then.provenance,
        }

    def verify(self, sol: Solution) -> Judgement:
        return self.verify_many([sol])[0]

    def verify_many(self, sols: list[Solution]) -> list[Judgement]:
        firsts, thens = verify_all(self.first, sols), verify_all(self.then, sols)
        return [combine(a, b) for a, b in zip(firsts, thens, strict=True)]


def combine(a: Judgement, b: Judgement) -> Judgement:
    """``a``'s ``ok`` and ``wrong`` stand; ``b`` speaks for the steps ``a`` left unsure or unjudged."""
    verdicts = [x if x in ("ok", "wrong") else y for x, y in zip(a.verdicts, b.verdicts, strict=True)]
    return Judgement(verdicts, b.scores, {**a.info, **b.info})


def claims_then(*, then: str = "prm", **options: object) -> CombinedVerifier:
    """The ``claims+prm`` verifier's factory: the claim checker, then the verifier ``then`` built
    with every other option given.

    then: the verifier for the steps the claim checker leaves unsure
    """
    from o3viz.verify.verifiers.registry import VERIFIERS  # the table this factory is in

    if then == "claims+prm":
        raise UsageError("claims+prm: then= must name another verifier, not claims+prm itself")
    return CombinedVerifier(ClaimVerifier(), VERIFIERS.make(then, options))
