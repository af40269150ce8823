"""Attention as recorded during generation (or teacher-forced enrichment): the arrays the heatmaps
and the step-allocation matrix are drawn from, one ``AttentionRecord`` per round.

Shapes: G generated tokens, P prompt tokens, C = P + G context positions, L layers, H heads,
S steps, K = segments + S allocation targets. Row g of a token matrix covers keys ``[0, P + g]``
and is zero beyond. Long generations keep each row's top-k pairs (``o3viz.trace.pair_rows``);
Dynamic Attention Allocation's records are ``o3viz.trace.daa_records``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from o3viz.trace.codec import (
    arrays_equal,
    check_json_value,
    encode_array,
    fail,
    opt,
    opt_array,
    req,
    req_list,
)
from o3viz.trace.daa_records import DAA_RECORD_MODES, HEAD_CHOICES, DAARecord, SteerRecord  # noqa: F401 (re-exported)
from o3viz.trace.pair_rows import (  # noqa: F401 (re-exported: callers import the pairs from here)
    PairRows,
    decode_mean_rows,
    decode_pairs,
    kept_pairs,
    scatter_pairs,
    top_k_pairs,
)


@dataclass(eq=False)
class AttentionRecord:
    """Recorded attention of one round."""

    num_layers: int
    num_heads: int
    prompt_len: int  # P
    mean: np.ndarray | PairRows  # (G, C) float16, averaged over all layers and heads (PairRows: top-k)
    layers: list[int] = field(default_factory=list)  # layers whose per-head rows are kept
    per_head: np.ndarray | None = None  # (G, len(layers), H, C) float16
    layer_head: np.ndarray | None = None  # (G, L, H) float16: each head's attention share on the prompt
    prefill: np.ndarray | None = None  # (len(layers) or L, P, P) float16, head-averaged
    step_alloc: np.ndarray | None = None  # (S, K) float16, rows sum to 1
    alloc_labels: list[str] = field(default_factory=list)  # K labels: "seg 0".., "step 0"..
    daa: DAARecord | None = None
    info: dict = field(default_factory=dict)  # capture settings (top-k, head-averaging, windows...)
    # Heads held in per_head's H axis, in order: None = all num_heads heads; [] = per_head holds
    # the head mean (H axis of size 1, CaptureConfig.head_average).
    heads: list[int] | None = None
    # Optional: DAA's steer mode. Last, so that records built positionally (info after daa) keep
    # their meaning.
    steer: SteerRecord | None = None
    # Long generations (o3viz.run.sizing, ``rows == "top_k"``): each mean row holds at most
    # ``rows_top_k`` nonzero keys and is stored in the file, and held in memory (``mean`` is then a
    # ``PairRows``), as (value, key) pairs, not as a row as long as the context; ``per_head_top`` replaces ``per_head`` with the rows' top-k values
    # (G, len(layers), H', k) and int32 key positions (same shape). Both keep the file linear in G.
    rows_top_k: int | None = None
    per_head_top: tuple[np.ndarray, np.ndarray] | None = None

    _ARRAYS = (("mean", 2), ("per_head", 4), ("layer_head", 3), ("prefill", 3), ("step_alloc", 2))

    @property
    def num_generated(self) -> int:
        return int(self.mean.shape[0])

    @property
    def has_per_head(self) -> bool:
        return self.per_head is not None or self.per_head_top is not None

    def head_block(self, layer: int, g0: int = 0, g1: int | None = None, c1: int | None = None) -> np.ndarray:
        """(g1-g0, H', c1) float32 per-head rows of one kept layer for generated tokens ``[g0, g1)``
        and keys ``[0, c1)``, from the dense rows or the top-k pairs (only the window is built)."""
        if not self.has_per_head or layer not in self.layers:
            raise KeyError(f"layer {layer} was not kept per head; kept: {self.layers}")
        li = self.layers.index(layer)
        c1 = self.mean.shape[1] if c1 is None else c1
        if self.per_head is not None:
            return self.per_head[g0:g1, li, :, :c1].astype(np.float32)
        values, index = self.per_head_top
        vals, idx = values[g0:g1, li].astype(np.float32), index[g0:g1, li]  # (g, H', k)
        out = np.zeros((*vals.shape[:2], c1), dtype=np.float32)
        keep = idx < c1
        np.put_along_axis(out, np.where(keep, idx, 0), np.where(keep, vals, 0), axis=-1)
        return out

    def token_matrix(self, layer: int | None = None, head: int | None = None) -> np.ndarray:
        """(G, C) float32 attention rows: the all-layer mean, or one kept layer (head-mean or one head)."""
        if layer is None:
            return self.mean.astype(np.float32)
        block = self.head_block(layer)  # (G, H', C)
        if head is None:
            return block.mean(axis=1)
        if self.heads is None:
            return block[:, head]
        if head not in self.heads:
            raise KeyError(f"head {head} was not kept per head; kept: {self.heads or 'head mean only'}")
        return block[:, self.heads.index(head)]

    def to_dict(self) -> dict:
        d: dict[str, Any] = {
            "num_layers": self.num_layers,
            "num_heads": self.num_heads,
            "prompt_len": self.prompt_len,
            "layers": list(self.layers),
            "alloc_labels": list(self.alloc_labels),
            "info": self.info,
        }
        for k, _ in self._ARRAYS:
            if getattr(self, k) is not None and not (k == "mean" and self.rows_top_k is not None):
                d[k] = encode_array(getattr(self, k))
        if self.rows_top_k is not None:  # the mean rows as pairs (o3viz.run.sizing: rows == "top_k")
            values, index = kept_pairs(self.mean, self.rows_top_k)
            d["mean"] = {"top_k": self.rows_top_k, "width": int(self.mean.shape[1]),
                         "values": encode_array(values), "index": encode_array(index)}  # fmt: skip
        if self.per_head_top is not None:
            d["per_head_top"] = {
                "values": encode_array(self.per_head_top[0]),
                "index": encode_array(self.per_head_top[1]),
            }
        if self.daa is not None:
            d["daa"] = self.daa.to_dict()
        if self.steer is not None:
            d["steer"] = self.steer.to_dict()
        if self.heads is not None:
            d["heads"] = list(self.heads)
        return d

    @classmethod
    def from_dict(cls, d: Any, path: str) -> AttentionRecord:
        rec = cls(
            num_layers=req(d, "num_layers", int, path),
            num_heads=req(d, "num_heads", int, path),
            prompt_len=req(d, "prompt_len", int, path),
            mean=decode_mean_rows(req(d, "mean", dict, path), f"{path}.mean"),
            layers=req_list(d, "layers", path, int),
            alloc_labels=req_list(d, "alloc_labels", path, str),
            info=check_json_value(opt(d, "info", dict, path, {}), f"{path}.info"),
        )
        for k, ndim in cls._ARRAYS[1:]:
            setattr(rec, k, opt_array(d, k, path, ndim))
        if d.get("daa") is not None:
            rec.daa = DAARecord.from_dict(req(d, "daa", dict, path), f"{path}.daa")
        if d.get("steer") is not None:
            rec.steer = SteerRecord.from_dict(req(d, "steer", dict, path), f"{path}.steer")
        if d.get("heads") is not None:
            rec.heads = req_list(d, "heads", path, int)
        if "top_k" in d["mean"]:
            rec.rows_top_k = req(d["mean"], "top_k", int, f"{path}.mean")
            if rec.rows_top_k < max(rec.mean.k, 1):  # else every save would rebuild each row whole
                raise fail(
                    f"{path}.mean.top_k",
                    f"is {rec.rows_top_k}: it must be at least 1 and at least the {rec.mean.k} pairs "
                    "each row holds",
                )
        if d.get("per_head_top") is not None:
            rec.per_head_top = decode_pairs(
                req(d, "per_head_top", dict, path), f"{path}.per_head_top", 4, rec.mean.shape[1]
            )
            if rec.per_head_top[0].shape[:2] != (rec.mean.shape[0], len(rec.layers)):
                raise fail(
                    f"{path}.per_head_top.values",
                    f"must have {rec.mean.shape[0]} rows of {len(rec.layers)} layers",
                )
        return rec

    def check_tokens(self, generated: int, prompt: int, path: str) -> None:
        """Refuse, in one line, top-k mean rows wider than the round's tokens: ``width`` is a size
        the file declares, and one row of it is built whole when a token is shown (P + G keys)."""
        if isinstance(self.mean, PairRows) and self.mean.width > prompt + generated:
            raise fail(
                f"{path}.mean.width",
                f"is {self.mean.width:,}, more than the round's {prompt:,} prompt and {generated:,} "
                "generated tokens",
            )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AttentionRecord):
            return NotImplemented
        steer = (self.steer is None) == (other.steer is None) and (
            self.steer is None or arrays_equal(self.steer.before, other.steer.before)
        )
        pairs = (self.per_head_top is None) == (other.per_head_top is None) and (
            self.per_head_top is None
            or all(arrays_equal(a, b) for a, b in zip(self.per_head_top, other.per_head_top, strict=True))
        )
        mean = (
            self.mean.same(other.mean)
            if isinstance(self.mean, PairRows) and isinstance(other.mean, PairRows)
            else arrays_equal(np.asarray(self.mean), np.asarray(other.mean))
        )
        return (
            mean
            and all(arrays_equal(getattr(self, k), getattr(other, k)) for k, _ in self._ARRAYS[1:])
            and (
                steer
                and pairs
                and self.rows_top_k == other.rows_top_k
                and self.to_dict().keys() == other.to_dict().keys()
            )
        )
