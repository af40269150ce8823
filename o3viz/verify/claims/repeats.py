"""One error, one flag: the claims that repeat an error already flagged stop being ``wrong``.

Two cases, both kept as ``unverifiable`` with a note that points at the flagged claim:

- *the same statement* flagged by two rules ("$27000-54 = $<<27000-54=26456>>26456": the
  equation and its calculator annotation): the claims overlap, and the first one keeps the flag;
- *an annotation the visible text does not follow*: "$400 000 x 3/100 = $<<400*3/100=12>>12 000"
  is right as the reader sees it, so its calculator call is not flagged either;
- *a restatement*: the same expression with the same wrong value later in the text ("As above,
  12 * 3 = 38"), where the writer repeats the slip instead of making a new one.

A wrong value carried into later arithmetic that is right for it (``12 * 3 = 38``, then
``38 + 2 = 40``) was never flagged: each claim is checked against its own operands. A later
statement that corrects an earlier one is a correction, not an error
(:func:`o3viz.verify.claims.rules.check_inconsistent`).
"""

from __future__ import annotations

from o3viz.verify.claims.types import Claim

__all__ = ["count_once"]


def count_once(claims: list[Claim]) -> list[Claim]:
    """``claims`` (sorted by position) with every repeat of a flagged error made
    ``unverifiable``; changed in place and returned.

    >>> from o3viz.verify.claims.check import check_claims
    >>> [(c.step, c.verdict) for c in check_claims("So 12 * 3 = 38.\\nAgain 12 * 3 = 38.")]
    [(0, 'wrong'), (1, 'unverifiable')]
    """
    flagged: list[Claim] = []
    said: dict[tuple[str, str], Claim] = {}
    for i, c in enumerate(claims):
        if c.verdict != "wrong":
            continue
        twin = next((f for f in flagged if f.start < c.end and c.start < f.end), None)
        first = said.get((c.expression, c.stated.lstrip("$")))
        if c.rule == "calc_annotation" and _visible_right(claims, i):
            c.verdict, c.note = "unverifiable", "the visible equation is right; its annotation is not"
            continue
        if twin is not None:
            c.verdict, c.note = "unverifiable", f"same error as the {twin.rule} claim on this statement"
        elif first is not None:
            c.verdict, c.note = "unverifiable", f"repeats the error at step {first.step}"
        else:
            said[(c.expression, c.stated.lstrip("$"))] = c
        flagged.append(c)
    return claims


def _visible_right(claims: list[Claim], i: int) -> bool:
    """Whether a correct claim on the same statement states the annotation's visible result."""
    c, shown = claims[i], _plain(claims[i].stated)
    near = claims[max(0, i - 4) : i + 4]
    return any(
        o.verdict == "correct" and o.start < c.end and c.start < o.end and _plain(o.stated) == shown
        for o in near
    )


def _plain(stated: str) -> str:
    return stated.replace("$", "").replace(",", "").replace(" ", "")
