"""What every answer probe shares: the ``Probe`` protocol (a forced answer at chosen step
boundaries of one round, and the settings that make it) and its ``ProbeResult`` per boundary,
plus the bounds both kinds of probe keep (``o3viz.answers.probe_local``,
``o3viz.answers.probe_endpoint``).

A result is ``failed`` when the probe could not ask (a request that failed, a reply it could not
read): unlike "the model stated no answer", a rerun may give it, so ``o3viz.answers.run`` stores
no record of a round with a failed boundary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from o3viz.errors import UsageError
from o3viz.trace import Trace

__all__ = ["MAX_NEW_TOKENS", "MAX_REFERENCE_TOKENS", "Probe", "ProbeResult", "check_boundaries"]

MAX_NEW_TOKENS = 64  # a forced answer is a few tokens; more is a reply, not an answer
MAX_REFERENCE_TOKENS = 64  # a longer reference gets no probability (p_reference None)


@dataclass
class ProbeResult:
    """The forced answer at the end of one step."""

    step: int  # the step index whose end is the boundary probed
    forced: str | None  # the forced answer (o3viz.text.answers' extractor); None when none came
    p_reference: float | None  # P(reference tokens | prefix + suffix); None without logprobs / reference
    note: str | None = None  # why ``forced`` is None or the probability is missing, in one line
    failed: bool = False  # the probe could not ask (see the module docstring); ``note`` says why


class Probe(Protocol):
    name: str  # "forced:local:SmolLM2-135M-Instruct", "forced:endpoint:<served model>"
    info: dict  # model, suffix, logprobs, max_new_tokens, trace_model, other_model (the last trace probed)

    def settings(self, trace: Trace, round_index: int) -> dict:
        """What makes this probe's answers on that round, known before any request: ``probe``
        (its kind), ``model`` (a full path, hub id or served name), ``endpoint`` (None for a local
        one), ``suffix`` and ``max_new_tokens``. A stored record with other settings is redone."""
        ...

    def probe(
        self, trace: Trace, round_index: int, boundaries: list[int], reference: str | None
    ) -> list[ProbeResult]:
        """One result per step index in ``boundaries``, in that order."""
        ...


def check_boundaries(trace: Trace, round_index: int, boundaries: list[int]) -> list[int]:
    """``boundaries`` as step indices of the round, or one ``UsageError`` line."""
    if not trace.rounds or not -len(trace.rounds) <= round_index < len(trace.rounds):
        raise UsageError(f"the trace has {len(trace.rounds)} round(s); there is no round {round_index}")
    n = len(trace.rounds[round_index].steps)
    bad = [b for b in boundaries if isinstance(b, bool) or not isinstance(b, int) or not 0 <= b < n]
    if bad:
        raise UsageError(f"step {bad[0]!r} is not a step of round {round_index} (it has {n} steps)")
    return list(boundaries)


def check_max_new_tokens(n: int) -> int:
    if not 1 <= n <= MAX_NEW_TOKENS:
        raise UsageError(f"-V max_new_tokens must be 1-{MAX_NEW_TOKENS}, not {n}")
    return n
