"""Attention as recorded during generation (or teacher-forced enrichment) and Dynamic Attention
Allocation data: the arrays the heatmaps and the step-allocation matrix are drawn from.

Shapes: G generated tokens, P prompt tokens, C = P + G context positions, L layers, H heads,
S steps, K = segments + S allocation targets. Row g of a token matrix covers keys ``[0, P + g]``
and is zero beyond.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from o3viz.trace.codec import (
    MAX_ARRAY_ELEMENTS,
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
from o3viz.trace.parts import Segment

# The DAA modes that write a ``DAARecord`` (``steer`` writes a ``SteerRecord``). What each mode does
# is ``o3viz.run.daa.modes.DAA_MODE_TABLE``, above this layer; a test keeps the two in step.
DAA_RECORD_MODES = ("off", "observe", "allocate")
HEAD_CHOICES = ("all", "list", "auto")


def _opt_array(d: dict, key: str, path: str, ndim: int) -> np.ndarray | None:
    return None if d.get(key) is None else decode_array(d[key], f"{path}.{key}", ndim=ndim)


@dataclass(eq=False)
class DAARecord:
    """What the relevance module computed and, in ``allocate`` mode, how it moved attention."""

    mode: str = "off"  # off | observe | allocate
    alpha: float = 0.6
    strength: float = 0.0  # λ (global); per-layer/head values go in ``info``
    task_type: str = "general"
    focus: int = 0  # task focus position f
    relevance: np.ndarray | None = None  # (C,) float16, r_j for every context position
    descriptor_tokens: list[int] = field(default_factory=list)  # positions used for e_task
    before: np.ndarray | None = None  # (G, C) float16, mean rows before allocation (allocate mode)
    info: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d: dict[str, Any] = {
            "mode": self.mode,
            "alpha": self.alpha,
            "strength": self.strength,
            "task_type": self.task_type,
            "focus": self.focus,
            "descriptor_tokens": list(self.descriptor_tokens),
            "info": self.info,
        }
        for k in ("relevance", "before"):
            if getattr(self, k) is not None:
                d[k] = encode_array(getattr(self, k))
        return d

    @classmethod
    def from_dict(cls, d: Any, path: str) -> DAARecord:
        return cls(
            mode=literal(d, "mode", DAA_RECORD_MODES, path),
            alpha=req(d, "alpha", float, path),
            strength=req(d, "strength", float, path),
            task_type=opt(d, "task_type", str, path, "general"),
            focus=opt(d, "focus", int, path, 0),
            relevance=_opt_array(d, "relevance", path, 1),
            descriptor_tokens=req_list(d, "descriptor_tokens", path, int),
            before=_opt_array(d, "before", path, 2),
            info=check_json_value(opt(d, "info", dict, path, {}), f"{path}.info"),
        )


@dataclass(eq=False)
class SteerRecord:
    """DAA's ``steer`` mode (PASTA): in ``heads``, attention to prompt keys outside ``spans`` was
    scaled by ``alpha`` and renormalised. ``before`` holds the mean rows as they were unsteered."""

    alpha: float = 0.01
    spans: list[Segment] = field(
        default_factory=list
    )  # the marked spans: chars in the rendered prompt, key tokens
    heads: list[tuple[int, int]] = field(default_factory=list)  # (layer, head) pairs that were steered
    head_choice: str = "all"  # all | list (given by the user) | auto (profiled; why in ``info``)
    before: np.ndarray | None = None  # (G, C) float16: mean rows with the steering bias removed
    info: dict = field(default_factory=dict)

    @property
    def ranges(self) -> list[tuple[int, int]]:
        """The marked key-token ranges ``[token_start, token_end)``."""
        return [(s.token_start, s.token_end) for s in self.spans]

    def to_dict(self) -> dict:
        d: dict[str, Any] = {
            "alpha": self.alpha,
            "spans": [s.to_dict() for s in self.spans],
            "heads": [list(h) for h in self.heads],
            "head_choice": self.head_choice,
            "info": self.info,
        }
        if self.before is not None:
            d["before"] = encode_array(self.before)
        return d

    @classmethod
    def from_dict(cls, d: Any, path: str) -> SteerRecord:
        heads = req_list(d, "heads", path, list)
        if any(len(h) != 2 or not all(type(x) is int for x in h) for h in heads):
            raise fail(f"{path}.heads", "every head is a [layer, head] pair of integers")
        return cls(
            alpha=req(d, "alpha", float, path),
            spans=[
                Segment.from_dict(s, f"{path}.spans[{i}]")
                for i, s in enumerate(req_list(d, "spans", path, dict))
            ],
            heads=[(int(a), int(b)) for a, b in heads],
            head_choice=literal(d, "head_choice", HEAD_CHOICES, path),
            before=_opt_array(d, "before", path, 2),
            info=check_json_value(opt(d, "info", dict, path, {}), f"{path}.info"),
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
            values, index = _kept_pairs(self.mean, self.rows_top_k)
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
            mean=_mean_rows(req(d, "mean", dict, path), f"{path}.mean"),
            layers=req_list(d, "layers", path, int),
            alloc_labels=req_list(d, "alloc_labels", path, str),
            info=check_json_value(opt(d, "info", dict, path, {}), f"{path}.info"),
        )
        for k, ndim in cls._ARRAYS[1:]:
            setattr(rec, k, _opt_array(d, k, path, ndim))
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
            rec.per_head_top = _pairs(
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


class PairRows:
    """(G, C) attention rows kept as each row's ``k`` largest entries: ``values`` (G, k) and int32
    key positions ``index`` (G, k), zeros elsewhere. It reads like the dense array it stands for
    without holding it (a 16k-token enriched import: 6 MB, not 512 MB): ``shape``, ``dtype``,
    ``rows[g]``, ``rows[g0:g1]`` and ``rows[g0:g1, :c1]`` build dense blocks of the rows asked
    for only; ``astype`` and ``np.asarray`` build the whole (G, C) array, for callers that need it.

    >>> r = PairRows(np.array([[0.5, 0.25]], np.float16), np.array([[0, 2]], np.int32), 4)
    >>> r.shape, r[0].tolist(), r[0:1, :2].tolist()
    ((1, 4), [0.5, 0.0, 0.25, 0.0], [[0.5, 0.0]])
    """

    ndim = 2

    def __init__(self, values: np.ndarray, index: np.ndarray, width: int) -> None:
        if values.ndim != 2 or index.shape != values.shape:
            raise ValueError(f"pairs of shape {values.shape} and {index.shape}: expected (G, k) twice")
        self.values, self.index, self.width = values, index, int(width)

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.values.shape[0]), self.width)

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype

    @property
    def k(self) -> int:
        return int(self.values.shape[1])

    @property
    def nbytes(self) -> int:
        return int(self.values.nbytes + self.index.nbytes)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key) -> np.ndarray:
        rows, cols = key if isinstance(key, tuple) else (key, slice(None))
        # only the rows asked for are built (a view's window, a step, one row)
        return scatter_pairs(self.values[rows], self.index[rows], self.width)[..., cols]

    def astype(self, dtype, copy: bool = True) -> np.ndarray:
        return scatter_pairs(self.values.astype(dtype), self.index, self.width)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        return self.astype(dtype or self.dtype)

    def same(self, other: PairRows) -> bool:
        """The same rows as the same pairs (``==`` compares elements, as for an array)."""
        return (
            self.width == other.width
            and arrays_equal(self.values, other.values)
            and arrays_equal(self.index, other.index)
        )

    def __eq__(self, other):  # elementwise, as the dense array would
        return np.asarray(self) == (np.asarray(other) if isinstance(other, PairRows) else other)

    def __ne__(self, other):
        return np.asarray(self) != (np.asarray(other) if isinstance(other, PairRows) else other)

    __hash__ = None  # type: ignore[assignment]


def top_k_pairs(rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``k`` largest entries (last axis) as values and int32 positions, positions
    ascending (ties and zeros included when a row has fewer than ``k`` nonzeros).

    >>> v, i = top_k_pairs(np.array([0.1, 0.5, 0.2, 0.9]), 2)
    >>> v.tolist(), i.tolist()
    ([0.5, 0.9], [1, 3])
    """
    if rows.ndim == 1:  # one row: the blocks below run over the leading axis
        values, index = top_k_pairs(rows[None], k)
        return values[0], index[0]
    n, k = rows.shape[-1], min(k, rows.shape[-1])
    idx = np.empty((*rows.shape[:-1], k), dtype=np.int32)
    for a in range(0, max(rows.shape[0], 1), 256):  # in blocks of rows: argpartition's int64 is (.., n)
        part = np.argpartition(rows[a : a + 256], n - k, axis=-1)[..., n - k :]
        idx[a : a + 256] = np.sort(part, axis=-1)
    return np.take_along_axis(rows, idx, axis=-1), idx


def scatter_pairs(values: np.ndarray, index: np.ndarray, width: int) -> np.ndarray:
    """Rows of ``width`` with ``values`` at ``index`` (last axis) and zeros elsewhere."""
    out = np.zeros((*values.shape[:-1], width), dtype=values.dtype)
    np.put_along_axis(out, index.astype(np.int64), values, axis=-1)
    return out


def _kept_pairs(mean: np.ndarray | PairRows, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(G, ≤ k) values and key positions of each mean row's ``k`` largest entries; top-k rows are
    cut from their own pairs (never rebuilt at full width: G × C can be far larger than the file).

    >>> r = PairRows(np.array([[0.5, 0.25, 0.75]], np.float16), np.array([[1, 4, 6]], np.int32), 9)
    >>> [a.tolist() for a in _kept_pairs(r, 2)]
    [[[0.5, 0.75]], [[1, 6]]]
    """
    if not isinstance(mean, PairRows):
        return top_k_pairs(np.asarray(mean), k)
    if mean.k <= k:
        return mean.values, mean.index
    values, at = top_k_pairs(mean.values, k)  # at: positions among the pairs, ascending as the keys
    return values, np.take_along_axis(mean.index, at, axis=-1)


def _pairs(d: dict, path: str, ndim: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    values = decode_array(req(d, "values", dict, path), f"{path}.values", ndim=ndim)
    index = decode_array(req(d, "index", dict, path), f"{path}.index", ndim=ndim, dtypes=("int32",))
    if index.shape != values.shape:
        raise fail(f"{path}.index", f"has shape {list(index.shape)}, values {list(values.shape)}")
    if index.size and (int(index.min()) < 0 or int(index.max()) >= width):
        raise fail(f"{path}.index", f"key positions must lie in 0..{width - 1}")
    return values, index


def _mean_rows(d: dict, path: str) -> np.ndarray | PairRows:
    """The (G, C) mean rows: a dense array, or top-k (value, key) pairs with the row ``width``."""
    if "top_k" not in d:
        return decode_array(d, path, ndim=2)
    width = req(d, "width", int, path)
    if not 0 <= width <= MAX_ARRAY_ELEMENTS:
        raise fail(f"{path}.width", f"must lie in 0..{MAX_ARRAY_ELEMENTS}")
    values, index = _pairs(d, path, 2, width)
    return PairRows(values, index, width)  # held as pairs: linear in the rows, whatever the width
