"""What happened inside the layers during generation: mixture-of-experts routing and the logit lens.

Both are optional fields of a round (``Round.internals``), so traces without them (and every
version-1 file) load unchanged.

Shapes: G generated tokens, P prompt tokens, R MoE layers recorded, E experts, k experts chosen
per token, n entries kept of a top-n distribution, S shared experts, Y lens layers, T lens top-k.

- Routing row g is the routing *of* generated token g (its hidden state going through each MoE
  layer), in the forward that fed token g to the model. Prompt rows (optional) likewise per token.
- Lens row g is what each chosen layer would have predicted for generated token g: the residual
  at the position before token g (the prefill's last position for g = 0) through the final norm
  and the unembedding. The last layer's lens is the model's own output distribution.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from o3viz.trace.codec import (
    arrays_equal,
    check_json_value,
    decode_array,
    encode_array,
    fail,
    literal,
    opt,
    req,
    req_list,
)

Scoring = Literal["softmax", "sigmoid", "probs", "topk_only"]
SCORINGS = ("softmax", "sigmoid", "probs", "topk_only")
ROUTING_SOURCES = ("model", "moefied", "random")


def _arr(d: dict, key: str, path: str, ndim: int) -> np.ndarray | None:
    return None if d.get(key) is None else decode_array(d[key], f"{path}.{key}", ndim=ndim)


def _encode_fields(obj: Any, names: tuple[str, ...]) -> dict:
    return {k: encode_array(getattr(obj, k)) for k in names if getattr(obj, k) is not None}


def _same_arrays(a: Any, b: Any, names: tuple[str, ...]) -> bool:
    return all(arrays_equal(getattr(a, k), getattr(b, k)) for k in names)


@dataclass(eq=False)
class RoutingRecord:
    """Expert routing of one round, per token and MoE layer.

    ``scoring`` says how ``probs`` were obtained from what the router returned: ``softmax`` of raw
    logits over all experts, ``sigmoid`` scores normalised to sum 1 (DeepSeek-V3-style routers
    choose by sigmoid affinity, so a softmax would misstate them), ``probs`` when the router
    already returned rows summing to 1, ``topk_only`` when it returned only the chosen experts
    (then ``probs`` is None). ``weights`` are exactly what the block multiplies each expert by.
    """

    layers: list[int]  # model layer index of each recorded MoE layer (R)
    num_experts: int  # E (routed experts)
    top_k: int  # k
    scoring: str  # softmax | sigmoid | probs | topk_only
    experts: np.ndarray  # (G, R, k) int32 chosen experts, -1 where a layer chose fewer
    weights: np.ndarray  # (G, R, k) float16 the weight each chosen expert's output gets
    probs: np.ndarray | None = None  # (G, R, E) float16 full distribution
    top_index: np.ndarray | None = None  # (G, R, n) int32 top-n experts (when not full)
    top_probs: np.ndarray | None = None  # (G, R, n) float16 their probabilities
    shared: np.ndarray | None = None  # (G, R, S) float16 shared-expert gates (1.0: always on)
    prompt_experts: np.ndarray | None = None  # (P, R, k) int32, prefill routing (optional)
    prompt_weights: np.ndarray | None = None  # (P, R, k) float16
    source: str = "model"  # model | moefied (a dense model's learned weights split) | random
    info: dict = field(default_factory=dict)  # router class, family, shared-expert kind, settings

    _ARRAYS = (
        ("experts", 3),
        ("weights", 3),
        ("probs", 3),
        ("top_index", 3),
        ("top_probs", 3),
        ("shared", 3),
        ("prompt_experts", 3),
        ("prompt_weights", 3),
    )

    @property
    def num_generated(self) -> int:
        return int(self.experts.shape[0])

    def distribution(self) -> np.ndarray | None:
        """(G, R, E) float32 probabilities: the full rows, or the top-n spread into zeros."""
        if self.probs is not None:
            return self.probs.astype(np.float32)
        if self.top_index is None or self.top_probs is None:
            return None
        g, r, _ = self.top_index.shape
        out = np.zeros((g, r, self.num_experts), np.float32)
        np.put_along_axis(out, self.top_index.astype(np.int64), self.top_probs.astype(np.float32), -1)
        return out

    def to_dict(self) -> dict:
        d: dict[str, Any] = {
            "layers": list(self.layers),
            "num_experts": self.num_experts,
            "top_k": self.top_k,
            "scoring": self.scoring,
            "source": self.source,
            "info": self.info,
        }
        d.update(_encode_fields(self, tuple(k for k, _ in self._ARRAYS)))
        return d

    @classmethod
    def from_dict(cls, d: Any, path: str) -> RoutingRecord:
        rec = cls(
            layers=req_list(d, "layers", path, int, 4096),
            num_experts=req(d, "num_experts", int, path),
            top_k=req(d, "top_k", int, path),
            scoring=literal(d, "scoring", SCORINGS, path),
            experts=decode_array(req(d, "experts", dict, path), f"{path}.experts", ndim=3),
            weights=decode_array(req(d, "weights", dict, path), f"{path}.weights", ndim=3),
            source=literal(d, "source", ROUTING_SOURCES, path, "model"),
            info=check_json_value(opt(d, "info", dict, path, {}), f"{path}.info"),
        )
        for k, ndim in cls._ARRAYS[2:]:
            setattr(rec, k, _arr(d, k, path, ndim))
        rec._check(path)
        return rec

    def _check(self, path: str) -> None:
        g, r, k = self.experts.shape
        if r != len(self.layers) or self.weights.shape != (g, r, k):
            raise fail(f"{path}.weights", "shape does not match experts (G, layers, k)")
        if self.num_experts < 1 or k > self.num_experts:
            raise fail(f"{path}.num_experts", "must be at least 1 and at least top_k")
        if self.experts.size and (self.experts.min() < -1 or self.experts.max() >= self.num_experts):
            raise fail(f"{path}.experts", f"expert indices must lie in -1..{self.num_experts - 1}")
        if self.probs is not None and self.probs.shape != (g, r, self.num_experts):
            raise fail(f"{path}.probs", "shape must be (G, layers, num_experts)")
        if (self.top_index is None) != (self.top_probs is None):
            raise fail(f"{path}.top_index", "top_index and top_probs come together")
        if self.top_index is not None:
            if self.top_index.shape[:2] != (g, r) or self.top_probs.shape != self.top_index.shape:
                raise fail(f"{path}.top_index", "shape must be (G, layers, n) like top_probs")
            if self.top_index.size and (self.top_index.min() < 0 or self.top_index.max() >= self.num_experts):
                raise fail(f"{path}.top_index", "expert indices out of range")
        if self.shared is not None and self.shared.shape[:2] != (g, r):
            raise fail(f"{path}.shared", "shape must be (G, layers, S)")
        pe, pw = self.prompt_experts, self.prompt_weights
        if (pe is None) != (pw is None) or (
            pe is not None and (pe.shape != pw.shape or pe.shape[1:] != (r, k))
        ):
            raise fail(f"{path}.prompt_experts", "prompt routing must be (P, layers, k) in both arrays")
        if pe is not None and pe.size and (pe.min() < -1 or pe.max() >= self.num_experts):
            raise fail(f"{path}.prompt_experts", "expert indices out of range")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RoutingRecord):
            return NotImplemented
        names = tuple(k for k, _ in self._ARRAYS)
        meta = {k: v for k, v in self.to_dict().items() if k not in names}
        other_meta = {k: v for k, v in other.to_dict().items() if k not in names}
        return _same_arrays(self, other, names) and meta == other_meta


@dataclass(eq=False)
class LensRecord:
    """The logit lens at each generated token for the chosen layers (layer L-1 is the output)."""

    layers: list[int]  # Y layer indices (residual stream after that decoder layer)
    num_layers: int  # L of the model
    token_ids: np.ndarray  # (G, Y, T) int32 the lens's top-T tokens
    probs: np.ndarray  # (G, Y, T) float16 their probabilities
    entropy: np.ndarray  # (G, Y) float16 entropy (nats) of the lens distribution
    rank: np.ndarray  # (G, Y) int32 rank of the finally generated token (0 = the lens's top-1)
    token_texts: dict = field(default_factory=dict)  # str(token id) -> text, for every id above
    info: dict = field(default_factory=dict)

    _ARRAYS = ("token_ids", "probs", "entropy", "rank")

    def to_dict(self) -> dict:
        d: dict[str, Any] = {
            "layers": list(self.layers),
            "num_layers": self.num_layers,
            "token_texts": self.token_texts,
            "info": self.info,
        }
        d.update(_encode_fields(self, self._ARRAYS))
        return d

    @classmethod
    def from_dict(cls, d: Any, path: str) -> LensRecord:
        arrays = {
            k: decode_array(req(d, k, dict, path), f"{path}.{k}", ndim=nd)
            for k, nd in (("token_ids", 3), ("probs", 3), ("entropy", 2), ("rank", 2))
        }
        texts = check_json_value(opt(d, "token_texts", dict, path, {}), f"{path}.token_texts")
        if not all(isinstance(v, str) for v in texts.values()):
            raise fail(f"{path}.token_texts", "values must be strings")
        rec = cls(
            layers=req_list(d, "layers", path, int, 4096),
            num_layers=req(d, "num_layers", int, path),
            token_texts=texts,
            info=check_json_value(opt(d, "info", dict, path, {}), f"{path}.info"),
            **arrays,
        )
        g, y, t = rec.token_ids.shape
        if y != len(rec.layers) or rec.probs.shape != (g, y, t):
            raise fail(f"{path}.probs", "shape must be (G, layers, top-k) like token_ids")
        if rec.entropy.shape != (g, y) or rec.rank.shape != (g, y):
            raise fail(f"{path}.entropy", "entropy and rank must be (G, layers)")
        if any(not 0 <= x < rec.num_layers for x in rec.layers):
            raise fail(f"{path}.layers", f"must lie in 0..{rec.num_layers - 1}")
        return rec

    def text_of(self, token_id: int) -> str:
        return self.token_texts.get(str(int(token_id)), f"#{int(token_id)}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LensRecord):
            return NotImplemented
        return _same_arrays(self, other, self._ARRAYS) and (
            {k: v for k, v in self.to_dict().items() if k not in self._ARRAYS}
            == {k: v for k, v in other.to_dict().items() if k not in self._ARRAYS}
        )


@dataclass(eq=False)
class InternalsRecord:
    """Per-layer internals of one round: routing, the logit lens, or both."""

    routing: RoutingRecord | None = None
    lens: LensRecord | None = None

    def to_dict(self) -> dict:
        d: dict[str, Any] = {}
        if self.routing is not None:
            d["routing"] = self.routing.to_dict()
        if self.lens is not None:
            d["lens"] = self.lens.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: Any, path: str) -> InternalsRecord:
        rec = cls()
        if opt(d, "routing", dict, path) is not None:
            rec.routing = RoutingRecord.from_dict(d["routing"], f"{path}.routing")
        if opt(d, "lens", dict, path) is not None:
            rec.lens = LensRecord.from_dict(d["lens"], f"{path}.lens")
        return rec

    def check_tokens(self, generated: int, prompt: int, path: str) -> None:
        """Rows must match the round's tokens, so views can index one by the other."""
        if self.routing is not None and self.routing.num_generated != generated:
            raise fail(
                f"{path}.routing.experts", f"has {self.routing.num_generated} rows for {generated} tokens"
            )
        pe = self.routing.prompt_experts if self.routing is not None else None
        if pe is not None and pe.shape[0] != prompt:
            raise fail(f"{path}.routing.prompt_experts", f"has {pe.shape[0]} rows for {prompt} prompt tokens")
        if self.lens is not None and self.lens.token_ids.shape[0] != generated:
            raise fail(
                f"{path}.lens.token_ids", f"has {self.lens.token_ids.shape[0]} rows for {generated} tokens"
            )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, InternalsRecord):
            return NotImplemented
        return self.routing == other.routing and self.lens == other.lens
