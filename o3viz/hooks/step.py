"""The one hook protocol of the generation loop (``o3viz.run.loop.run_loop``): ``StepHook``, and the
``LoopState`` every hook sees.

Per-step behaviour plugs in here and nowhere else: recording attention (``Recorder``), the DAA
bias (``o3viz.run.daa``), KV-cache release and restore (``o3viz.compress.release``), the logit
lens and routing (``o3viz.run.layer_recorders``), streaming (``o3viz.run.loop.Streamer``). The loop
calls, for generated token g (at position ``prompt_len + g``):

1. ``on_prefill(state)`` once, after the prompt's forward;
2. ``before_forward(state, g, token_id)`` when token g is chosen, before it is fed;
3. ``after_forward(state, g, token_id)`` after its forward (hooks run in list order, so a hook
   that reads what an earlier one recorded comes after it);
4. ``on_token(state, g, token_id)`` once token g is final;
5. ``on_end(state)`` once, when the loop ends (a hook undoes what it set for the run).

A hook that edits the KV cache owns ``state.cache`` (it may replace it), and runs its own
forwards (a restored segment's recomputation) inside ``state.paused()``, so that recorders,
which record generation steps only, are told to record nothing there (``pause``).

Every method has a no-op default: subclass ``StepHook`` and write only what the hook needs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol


class StepHook(Protocol):
    """Per-step behaviour of the generation loop (see the module docstring for the order)."""

    def on_prefill(self, state: LoopState) -> None:
        return None

    def before_forward(self, state: LoopState, g: int, token_id: int) -> None:
        return None

    def after_forward(self, state: LoopState, g: int, token_id: int) -> None:
        return None

    def on_token(self, state: LoopState, g: int, token_id: int) -> None:
        return None

    def on_end(self, state: LoopState) -> None:
        return None

    def pause(self, paused: bool) -> None:
        """Forwards that are not generation steps follow (``True``) or are over (``False``)."""
        return None


@dataclass
class LoopState:
    """What the loop shares with its hooks."""

    model: Any
    cache: Any  # the KV cache the next forward uses; a hook doing KV surgery may replace it
    prompt_len: int  # P: generated token g sits at position P + g
    hooks: Sequence[StepHook] = field(default_factory=list)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Run forwards that are not generation steps: every hook is paused meanwhile."""
        for h in self.hooks:
            h.pause(True)
        try:
            yield
        finally:
            for h in self.hooks:
                h.pause(False)
