"""Mixture-of-experts routing capture: forward hooks on each MoE layer's router (gate) module
during KV-cached generation. ``output_router_logits`` is not used: ``generate()`` does not
return it, and many models never fill it.

A router is a module whose class name ends in ``Router``, ``Gate`` or ``Gating`` (transformers
5.x: ``MixtralTopKRouter``, ``DeepseekV3TopkRouter``, ``HunYuanMoEV1Gate``, ...; o3viz's own
``MoefiedRouter``). What it returns is normalised by ``parse_router_output``:

- ``(scores, weights, index)`` (most families) or ``(sparse_scores, logits)`` (Llama 4);
- ``scores`` rows that are non-negative and sum to 1 are probabilities, used as they are;
- otherwise they are raw logits: softmax over all experts, or, for routers that choose by
  sigmoid affinity (their forward calls ``sigmoid``: DeepSeek-V3, GLM-4-MoE, Llama 4), sigmoid
  scores normalised to sum 1;
- a router that returns only the chosen experts is recorded ``topk_only`` (no distribution).

The chosen experts and weights are exactly the tensors the block passes to its experts. Shared
experts: a gated shared expert (Qwen2-MoE's ``shared_expert_gate``) is recorded per token as its
sigmoid gate; always-on shared experts (DeepSeek-V3, Llama 4) are noted in ``info``.

Per-run state is a ``RoutingRecorder`` in a ``ContextVar``; the hooks are installed once per model
(``o3viz.hooks.hookset``) and do nothing outside a run. Row g is the routing of generated token g.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import numpy as np
import torch

from o3viz.errors import UsageError
from o3viz.hooks.hookset import installed
from o3viz.trace.layer_records import RoutingRecord

_ACTIVE: ContextVar[RoutingRecorder | None] = ContextVar("o3viz_routing", default=None)
ROUTER_CLASS = re.compile(r"(Router|Gate|Gating)$")
PROB_TOLERANCE = 1e-3  # rows within this of summing to 1 are taken as probabilities


@dataclass
class RouterSite:
    """One MoE layer's router: where it is and how its scores are turned into probabilities."""

    layer: int  # the decoder layer index
    name: str  # module path, e.g. "model.layers.3.mlp.gate"
    module: torch.nn.Module
    num_experts: int
    top_k: int
    sigmoid: bool  # chooses by sigmoid affinity rather than softmax
    shared_gate: torch.nn.Module | None = None  # Qwen2-MoE-style gated shared expert
    shared_always_on: int = 0  # number of always-on shared experts (DeepSeek-V3, Llama 4)


@functools.lru_cache(maxsize=128)
def _uses_sigmoid(cls: type) -> bool:
    try:
        return "sigmoid" in inspect.getsource(cls.forward)
    except (OSError, TypeError):
        return False


def _layer_of(name: str) -> int | None:
    m = re.search(r"\.(\d{1,6})\.", f".{name}.")
    return int(m.group(1)) if m else None


def _shared(block: torch.nn.Module, config) -> tuple[torch.nn.Module | None, int]:
    gate = getattr(block, "shared_expert_gate", None)
    if isinstance(gate, torch.nn.Module):
        return gate, 0
    if any(getattr(block, a, None) is not None for a in ("shared_expert", "shared_experts", "shared_mlp")):
        return None, int(getattr(config, "n_shared_experts", None) or 1)
    return None, 0


def find_routers(model) -> list[RouterSite]:
    """Every MoE router of ``model`` in layer order (an empty list for a dense model)."""
    modules = dict(model.named_modules())
    sites = []
    for name, module in modules.items():
        if not ROUTER_CLASS.search(type(module).__name__) or type(module) is torch.nn.Linear:
            continue
        layer = _layer_of(name)
        experts = getattr(module, "num_experts", None) or getattr(module, "out_features", None)
        top_k = getattr(module, "top_k", None)
        if layer is None or not experts or not top_k:
            continue
        block = modules.get(name.rsplit(".", 1)[0]) if "." in name else None
        gate, always = _shared(block, model.config) if block is not None else (None, 0)
        sites.append(
            RouterSite(
                layer, name, module, int(experts), int(top_k), _uses_sigmoid(type(module)), gate, always
            )
        )
    sites.sort(key=lambda s: s.layer)
    if len({s.layer for s in sites}) != len(sites):
        raise UsageError("found more than one router in a layer; o3viz records one MoE block per layer")
    return sites


def normalise_scores(scores: torch.Tensor, sigmoid: bool) -> tuple[torch.Tensor, str]:
    """(N, E) router scores -> (N, E) float32 probabilities and how they were obtained."""
    s = scores.float()
    if bool((s >= 0).all()) and bool(((s.sum(-1) - 1).abs() <= PROB_TOLERANCE).all()):
        return s, "probs"
    if sigmoid:
        p = torch.sigmoid(s)
        return p / p.sum(-1, keepdim=True), "sigmoid"
    return torch.softmax(s, dim=-1), "softmax"


def parse_router_output(output, site: RouterSite) -> tuple[torch.Tensor | None, torch.Tensor, torch.Tensor]:
    """(scores (N, E) or None, weights (N, k), index (N, k)) from what a router returned."""
    if isinstance(output, tuple) and len(output) == 3 and not output[2].is_floating_point():
        scores, weights, index = output
        if scores is None or scores.shape[-1] != site.num_experts:
            scores = None
        return scores, weights, index
    if isinstance(output, tuple) and len(output) == 2 and output[0].shape == output[1].shape:
        sparse, logits = output  # Llama 4: sigmoid of the top-k logits scattered into zeros
        logits = logits.reshape(-1, site.num_experts)
        index = logits.topk(site.top_k, dim=-1).indices
        return logits, sparse.reshape(-1, site.num_experts).gather(-1, index), index
    raise UsageError(f"router {site.name} returned an output o3viz cannot read ({type(output).__name__})")


@dataclass
class RoutingSpec:
    """What a routing recorder keeps."""

    top_n: int | None = None  # keep the n most probable experts per row (None: the full distribution)
    prefill: bool = False  # also record the prompt tokens' routing
    source: str = "model"  # model | moefied | random (see RoutingRecord.source)


@dataclass
class RoutingRecorder:
    """Per-run routing state read by the hooks.

    The hooks keep references to what each router returned and nothing more; parsing, stacking,
    normalising and the copy to the CPU happen once, over the whole run, in ``to_record`` (a few
    batched tensor ops instead of a dozen small ones per token and layer: the per-token cost is what
    the routing benchmark's ≤ 1.05× goal is about). The prompt's forward is parsed at once, since
    only its choices are kept.
    """

    sites: list[RouterSite]
    spec: RoutingSpec = field(default_factory=RoutingSpec)
    record: bool = True
    scoring: str | None = None
    rows: list[tuple] = field(default_factory=list)  # per decode forward: (router outputs, shared gates)
    prompt: tuple | None = None  # prefill (experts, weights) (P, R, k)
    _outputs: dict = field(default_factory=dict)  # site position -> what its router returned
    _shared: dict = field(default_factory=dict)  # site position -> (N, 1) gate

    def on_router(self, pos: int, output) -> None:
        if self.record:
            self._outputs[pos] = output

    def on_shared_gate(self, pos: int, output: torch.Tensor) -> None:
        if self.record:
            self._shared[pos] = output

    def end_forward(self) -> None:
        """Keep this forward's router outputs (a decode step) or its choices (the prefill)."""
        outs, shared = self._outputs, self._shared
        self._outputs, self._shared = {}, {}
        if not outs:
            return
        if len(outs) != len(self.sites):
            raise UsageError(f"routing saw {len(outs)} of {len(self.sites)} MoE layers in one forward")
        if _rows(parse_router_output(outs[0], self.sites[0])[2]).shape[0] > 1:  # the prefill
            if self.spec.prefill:
                parsed = [parse_router_output(outs[i], s) for i, s in enumerate(self.sites)]
                index, weights = self._choices([[p] for p in parsed])
                self.prompt = (index.to("cpu", torch.int32), weights.to("cpu", torch.float16))
            return
        self.rows.append((tuple(outs[i] for i in range(len(self.sites))), shared))

    def _choices(self, per_site: list[list[tuple]]) -> tuple[torch.Tensor, torch.Tensor]:
        """(N, R, k) expert indices (-1 pads) and float weights from each site's parsed outputs."""
        k = max(s.top_k for s in self.sites)
        index = torch.stack([_pad(torch.cat([_rows(p[2]) for p in ps]), k, -1) for ps in per_site], 1)
        weights = torch.stack(
            [_pad(torch.cat([_rows(p[1]) for p in ps]).float(), k, 0.0) for ps in per_site], 1
        )
        return index, weights

    def _shared_rows(self, gates: list[dict], n: int) -> torch.Tensor | None:
        """(N, R, 1) sigmoid gates of gated shared experts (0 in layers without one), or None."""
        if not any(gates):
            return None
        zero = torch.zeros(n, 1)
        cols = [
            torch.sigmoid(torch.cat([_rows(g[i]) for g in gates]).float()).reshape(n, 1).cpu()
            if i in gates[0]
            else zero
            for i in range(len(self.sites))
        ]
        return torch.stack(cols, 1).to(torch.float16)

    def _distribution(self, per_site: list[list[tuple]]) -> list:
        if any(p[0] is None for ps in per_site for p in ps):
            self.scoring = "topk_only"
            return [None, None, None]
        scores = torch.stack([torch.cat([_rows(p[0]) for p in ps]) for ps in per_site], 1)  # (N, R, E)
        probs, self.scoring = normalise_scores(scores, self.sites[0].sigmoid)
        if self.spec.top_n is None or self.spec.top_n >= probs.shape[-1]:
            return [probs.to("cpu", torch.float16), None, None]
        vals, idx = probs.topk(self.spec.top_n, dim=-1)
        return [None, idx.to("cpu", torch.int32), vals.to("cpu", torch.float16)]

    def to_record(self, num_generated: int, info: dict | None = None) -> RoutingRecord:
        """The first ``num_generated`` decode rows as a trace record."""
        rows = self.rows[:num_generated]
        r, k = len(self.sites), max(s.top_k for s in self.sites)
        width = max(s.num_experts for s in self.sites)
        full = self.spec.top_n is None
        cols: list = [None] * 6
        if rows:
            per_site = [[parse_router_output(row[0][i], s) for row in rows] for i, s in enumerate(self.sites)]
            index, weights = self._choices(per_site)
            cols = [index.to("cpu", torch.int32), weights.to("cpu", torch.float16)]
            cols += self._distribution(per_site)
            cols.append(self._shared_rows([row[1] for row in rows], len(rows)))

        def col(i: int, dtype, n: int) -> np.ndarray | None:
            if not rows:
                return np.zeros((0, r, n), dtype)
            return None if cols[i] is None else cols[i].numpy()

        sites_info = [
            {"layer": s.layer, "module": s.name, "router": type(s.module).__name__} for s in self.sites
        ]
        always = max((s.shared_always_on for s in self.sites), default=0)
        return RoutingRecord(
            layers=[s.layer for s in self.sites],
            num_experts=width,
            top_k=k,
            scoring=self.scoring or ("topk_only" if rows else "softmax"),
            experts=col(0, np.int32, k),
            weights=col(1, np.float16, k),
            probs=col(2, np.float16, width) if full else None,
            top_index=None if full else col(3, np.int32, self.spec.top_n),
            top_probs=None if full else col(4, np.float16, self.spec.top_n),
            shared=col(5, np.float16, 1) if rows else None,
            prompt_experts=self.prompt[0].numpy() if self.prompt else None,
            prompt_weights=self.prompt[1].numpy() if self.prompt else None,
            source=self.spec.source,
            info={
                "routers": sites_info,
                "shared_always_on": always,
                "top_n": self.spec.top_n,
                **(info or {}),
            },
        )


def _rows(t: torch.Tensor) -> torch.Tensor:
    """A router tensor as (tokens, width): (N, w) stays, (w,) becomes (1, w)."""
    return t.reshape(t.shape[0] if t.dim() > 1 else 1, -1)


def _pad(t: torch.Tensor, k: int, value) -> torch.Tensor:
    t = _rows(t)
    return t if t.shape[-1] == k else torch.nn.functional.pad(t, (0, k - t.shape[-1]), value=value)


def _make_hooks(model, sites: list[RouterSite]) -> list:
    handles = []
    for pos, site in enumerate(sites):
        handles.append(site.module.register_forward_hook(functools.partial(_router_hook, pos)))
        if site.shared_gate is not None:
            handles.append(site.shared_gate.register_forward_hook(functools.partial(_shared_hook, pos)))
    handles.append(model.register_forward_hook(_end_hook))
    return handles


def _router_hook(pos: int, module, args, output) -> None:
    rec = _ACTIVE.get()
    if rec is not None:
        rec.on_router(pos, output)


def _shared_hook(pos: int, module, args, output) -> None:
    rec = _ACTIVE.get()
    if rec is not None:
        rec.on_shared_gate(pos, output)


def _end_hook(module, args, output) -> None:
    rec = _ACTIVE.get()
    if rec is not None:
        rec.end_forward()


@contextmanager
def record_routing(model, spec: RoutingSpec | None = None) -> Iterator[RoutingRecorder]:
    """Record the routing of every forward of ``model`` in this context (this thread/context only)."""
    sites = find_routers(model)
    if not sites:
        raise UsageError(
            f"{type(model).__name__} has no mixture-of-experts router; use an MoE model (--model) "
            "or split the dense model into experts (--moefy E,k)"
        )
    rec = RoutingRecorder(sites, spec or RoutingSpec())
    with installed(model, "routing", lambda: _make_hooks(model, sites)):
        token = _ACTIVE.set(rec)
        try:
            yield rec
        finally:
            _ACTIVE.reset(token)
