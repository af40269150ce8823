"""How a paired run's pairs were graded, for people: each side's outcome per task
(``side_outcome``), and the note a run prints when pairs went ungraded (``grading_note``): why
(replies cut at the token limit, answers the check could not grade) and about how many graded
pairs a 10-point difference needs (``pairs_needed``, McNemar's sample size).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

from o3viz.trace import Trace
from o3viz.verify.cut_short import cut_short, limit_tokens

__all__ = ["SideOutcome", "grading_note", "pairs_needed", "side_outcome"]

DETECT = 0.10  # the difference (10 points of accuracy) the grading note sizes n for
ASSUMED_FLIPS = 0.20  # the share of pairs that flip, where too few were graded to measure it
MIN_TO_ESTIMATE = 10  # graded pairs needed before the note trusts the observed share of flips


@dataclass(frozen=True)
class SideOutcome:
    """One side's reply to one task, as the grading note reads it."""

    tokens: int  # tokens generated (one round: one reply)
    cut: bool  # stopped at its token limit, so not graded (``o3viz.verify.cut_short``)
    correct: int | None  # 1/0 by the answer check (code: its tests); None where not graded


def side_outcome(trace: Trace) -> SideOutcome:
    """``trace``'s outcome: its final round's answer check (code: its tests) under the cut-short
    rule; the same grade as the comparison's ``check`` column (``o3viz.analysis.provenance``)."""
    rnd, correct = trace.final, None
    answer = next((c for c in reversed(rnd.checks) if c.kind == "answer"), None)
    if cut_short(rnd) is not None:
        pass  # not graded (one rule), whatever its checks say
    elif answer is not None and answer.verdict in ("correct", "wrong"):
        correct = int(answer.verdict == "correct")
    elif trace.task.kind == "code" and rnd.verdict in ("pass", "fail"):
        correct = int(rnd.verdict == "pass")
    return SideOutcome(len(rnd.tokens), limit_tokens(rnd) is not None, correct)


def pairs_needed(diff: float, flips: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Graded pairs for McNemar's test to find a difference ``diff`` between two paired accuracies
    at two-sided level ``alpha`` with ``power``, when a share ``flips`` of the pairs are discordant
    (Connor 1987, the normal approximation; ``flips`` is at least ``diff``, since the difference is
    made of flips).

    >>> pairs_needed(0.10, 0.20), pairs_needed(0.05, 0.20)
    (155, 626)
    """
    psi, z = max(flips, diff), NormalDist()
    root = z.inv_cdf(1 - alpha / 2) * math.sqrt(psi) + z.inv_cdf(power) * math.sqrt(psi - diff**2)
    return math.ceil(root**2 / diff**2)


def grading_note(outcomes: list[tuple[SideOutcome, SideOutcome]], limit: int) -> str | None:
    """The note for ``outcomes`` (A, B per pair) run with token ``limit`` (see ``grading_note`` of
    ``PairedRunResult``).

    >>> cut, done = SideOutcome(160, True, None), SideOutcome(90, False, 1)
    >>> print(grading_note([(cut, cut), (cut, done)], 160))  # doctest: +NORMALIZE_WHITESPACE
    0 of 2 pairs run now are graded on both sides: 2 replies on side A and 1 on side B were cut at
    160 tokens, so they are not graded; the replies that ended on their own took up to 90 tokens,
    and a cut one needs more than 160: raise --max-new-tokens to 320 or more (under a new --dataset
    NAME). Detecting a 10-point difference (McNemar, 5% level, 80% power) takes about 155 graded
    pairs, if about 20% of pairs flip (too few were graded here to measure it).
    """
    graded = [(a, b) for a, b in outcomes if a.correct is not None and b.correct is not None]
    flips = sum(a.correct != b.correct for a, b in graded)
    measured = len(graded) >= MIN_TO_ESTIMATE and flips > 0
    psi = flips / len(graded) if measured else ASSUMED_FLIPS
    need = pairs_needed(DETECT, psi)
    if not outcomes or (len(graded) == len(outcomes) and len(graded) >= need):
        return None
    cut_a, cut_b = (sum(pair[i].cut for pair in outcomes) for i in (0, 1))
    line = f"{len(graded)} of {len(outcomes)} pairs run now are graded on both sides"
    if cut_a or cut_b:
        ended = [o.tokens for pair in outcomes for o in pair if not o.cut]
        took = f"the replies that ended on their own took up to {max(ended)} tokens, and " if ended else ""
        line += (
            f": {cut_a} replies on side A and {cut_b} on side B were cut at {limit} tokens, so they are "
            f"not graded; {took}a cut one needs more than {limit}: raise --max-new-tokens to "
            f"{2 * limit} or more (under a new --dataset NAME)"
        )
    blank = sum(o.correct is None and not o.cut for pair in outcomes for o in pair)
    if blank:
        line += f"{';' if cut_a or cut_b else ':'} {blank} replies gave no answer the check could grade"
    why = f"with {flips} of {len(graded)} graded pairs flipping, as here"
    if not measured:
        few = len(graded) < MIN_TO_ESTIMATE
        seen = (
            "too few were graded here to measure it" if few else f"none of {len(graded)} graded pairs flipped"
        )
        why = f"if about {ASSUMED_FLIPS:.0%} of pairs flip ({seen})"
    return (
        f"{line}. Detecting a {DETECT * 100:.0f}-point difference (McNemar, 5% level, 80% power) takes "
        f"about {need} graded pairs, {why}."
    )
