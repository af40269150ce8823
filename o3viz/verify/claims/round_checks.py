"""The claim checks that read a whole text once its pieces are checked, as plug-ins (``CHECKS``,
one ``o3viz.plugins.Registry``): each one's factory returns a function from the text so far
(``ClaimContext``) to the claims it adds. ``check_text`` runs them in registration order, after
the ``a = b`` chains and annotations of every piece; ``o3viz check-claims --list`` prints them and
``--skip NAME`` leaves one out.

>>> CHECKS.names()
('inconsistent_quantity', 'final_answer_mismatch')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from o3viz.plugins import Registry
from o3viz.verify.claims.rules import check_final_answer, check_inconsistent
from o3viz.verify.claims.types import Claim, Locator

__all__ = ["CHECKS", "ClaimContext", "RoundCheck"]

CHECKS = Registry("check")


@dataclass
class ClaimContext:
    """What a whole-text check reads: the text, where its steps are, the claims found so far (by
    the pieces and the checks before it) and the results the text states (for the final answer)."""

    text: str
    where: Locator
    claims: list[Claim] = field(default_factory=list)
    results: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, stated value)


RoundCheck = Callable[[ClaimContext], list[Claim]]


def inconsistent_quantity() -> RoundCheck:
    return lambda ctx: check_inconsistent(ctx.claims, ctx.where)


def final_answer_mismatch() -> RoundCheck:
    return lambda ctx: check_final_answer(ctx.text, sorted(ctx.results, key=lambda r: r[1]), ctx.where)


CHECKS.register("inconsistent_quantity", inconsistent_quantity, "one quantity stated with two values")
CHECKS.register(
    "final_answer_mismatch", final_answer_mismatch, "the final answer against the last result before it"
)
