"""Glue between a capture's settings and the per-layer recorders: MoE routing
(``o3viz.hooks.routing``) and the logit lens (``o3viz.hooks.lens``), both opt-in.

``record_internals(model, tokenizer, cfg)`` is a context manager around the generation loop only
(explored branches are not recorded), and what it yields is one of the loop's hooks;
``finish(num_generated)`` turns what was recorded into the round's ``InternalsRecord``, or None
when neither was asked for.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from o3viz.errors import UsageError
from o3viz.hooks.step import StepHook
from o3viz.run.config import check_internals, resolve_layers
from o3viz.trace.layer_records import InternalsRecord


def check_internals_for(model, cfg: Any) -> None:
    """Fail before generating: lens layers beyond the model's depth, routing on a dense model."""
    check_internals(cfg, model.config.num_hidden_layers)
    if cfg.routing and not cfg.moefy:
        from o3viz.hooks.routing import find_routers

        if not find_routers(model):
            raise UsageError(
                f"{type(model).__name__} has no mixture-of-experts router; pass an MoE --model "
                "or split the dense model into experts with --moefy E,k"
            )


def routing_source(model) -> str:
    """What the routing of ``model`` means: a real MoE's, a dense model split into experts, or random."""
    from o3viz.moefy import active

    return "moefied" if active() is not None else getattr(model, "o3viz_routing_source", "model")


@dataclass
class InternalsRun(StepHook):
    """The recorders of one run (either may be None); as the loop's hook, it pauses them during
    forwards that are not generation steps (a KV-cache restore)."""

    routing: Any = None
    lens: Any = None
    num_layers: int = 0
    tokenizer: Any = None
    info: dict | None = None

    def finish(self, num_generated: int) -> InternalsRecord | None:
        if self.routing is None and self.lens is None:
            return None
        out = InternalsRecord()
        if self.routing is not None:
            out.routing = self.routing.to_record(num_generated, self.info)
        if self.lens is not None:
            out.lens = self.lens.to_record(num_generated, self.num_layers, self._decode)
        return out

    def pause(self, paused: bool) -> None:
        for rec in (self.routing, self.lens):
            if rec is not None:
                rec.record = not paused

    def _decode(self, token_id: int) -> str:
        return self.tokenizer.decode([token_id]) if self.tokenizer is not None else f"#{token_id}"


@contextmanager
def record_internals(model, tokenizer, cfg: Any, info: dict | None = None) -> Iterator[InternalsRun]:
    """Install the recorders ``cfg`` (a CaptureConfig) asks for around the generation loop;
    ``info`` goes into the routing record's provenance (e.g. the MoEfication settings)."""
    n = model.config.num_hidden_layers
    check_internals(cfg, n)
    run = InternalsRun(num_layers=n, tokenizer=tokenizer, info=info)
    with ExitStack() as stack:
        if cfg.routing:
            from o3viz.hooks.routing import RoutingSpec, record_routing

            spec = RoutingSpec(cfg.routing_top_n, cfg.routing_prefill, routing_source(model))
            run.routing = stack.enter_context(record_routing(model, spec))
        if cfg.logit_lens:
            from o3viz.hooks.lens import record_lens

            layers = resolve_layers(list(cfg.logit_lens), n)
            run.lens = stack.enter_context(record_lens(model, layers, cfg.lens_top_k))
        yield run
