"""The typed settings of a run and their text forms: ``CaptureConfig`` (what attention is kept),
``DAAConfig`` (Dynamic Attention Allocation, with ``SteerSpan`` for its ``steer`` mode), the layer and top-k syntax shared by the CLI and the
Run page (``parse_layers``, ``parse_top_k``) and the model-dependent ``resolve_layers``.

Every rule that can be checked without a model lives in a ``validate`` method here (the routing,
MoEfication and logit-lens rules in ``check_internals``); ``o3viz.run.request.RunRequest.validate``
(the one validator of a run) calls them. Rules that need the model (a layer or head index out of
range) are checked by ``resolve_layers`` / ``check_internals(cfg, num_layers)`` / the recorder
when the model is known.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from o3viz.errors import UsageError
from o3viz.hooks.daa import ALPHA
from o3viz.hooks.steer import STEER_ALPHA, SteerHeads, parse_steer_heads
from o3viz.run.daa.modes import DAA_MODE_TABLE, DAA_MODES, DAAMode

ENTROPY_THRESHOLD = 1.5  # nats: the model spreads its bet over roughly e^1.5 ≈ 4.5 tokens or more
MARGIN_THRESHOLD = 0.1  # p(top1) - p(top2): the two best candidates are nearly tied
# |λ|: the bias is a z-score of relevance, so ±100 already moves a logit by hundreds (saturated)
MAX_STRENGTH = 100.0

LayerChoice = Literal["auto", "all", "none"]
StorageDtype = Literal["float16", "float32"]
LAYER_CHOICES: tuple[str, ...] = get_args(LayerChoice)


@dataclass
class CaptureConfig:
    """What attention a run records and keeps (bounded storage)."""

    enabled: bool = True  # record attention at all (False: tokens and logprobs only)
    layers: LayerChoice | Sequence[int] = "auto"  # per-head rows: first/middle/last, all, none, indices
    heads: Sequence[int] | None = None  # heads kept in per-head rows (None: all)
    top_k: int | None = 64  # keep the k largest keys of each per-head row, zeros elsewhere (None: full rows)
    head_average: bool = False  # keep the head mean of the kept layers instead of per-head rows
    prefill: bool = True  # head-averaged prefill attention (P, P) of the kept layers
    dtype: StorageDtype = "float16"  # storage dtype of the arrays
    entropy_threshold: float = ENTROPY_THRESHOLD  # decision point: entropy (nats) at or above
    margin_threshold: float = MARGIN_THRESHOLD  # decision point: p(top1) - p(top2) at or below
    branch_tokens: int = 48  # tokens generated per explored branch
    routing: bool = False  # record MoE expert routing per token and layer (o3viz.hooks.routing)
    routing_top_n: int | None = None  # keep the n most probable experts per token (None: all, fp16)
    routing_prefill: bool = False  # also record the prompt tokens' chosen experts
    logit_lens: Sequence[int] = ()  # layers whose residual is read through the final norm + unembedding
    lens_top_k: int = 5  # tokens kept per layer and generated token by the logit lens
    moefy: tuple[int, int] | None = None  # (E, k): run the dense model split into E experts, k per token

    def validate(self) -> None:
        """Raise ``UsageError`` (one line) for settings no model can run."""
        if isinstance(self.layers, str):
            if self.layers not in LAYER_CHOICES:
                raise UsageError(
                    f"layers must be 'auto', 'all', 'none' or a list of indices, not {self.layers!r}"
                )
        elif not all(isinstance(i, int) and not isinstance(i, bool) for i in self.layers):
            raise UsageError(f"layers must be integers, not {list(self.layers)!r}")
        if self.heads is not None and any(not isinstance(h, int) or h < 0 for h in self.heads):
            raise UsageError(f"heads must be non-negative integers, not {list(self.heads)!r}")
        if self.top_k is not None and self.top_k < 1:
            raise UsageError(f"top_k must be at least 1, not {self.top_k}")
        if self.dtype not in get_args(StorageDtype):
            raise UsageError(f"dtype must be float16 or float32, not {self.dtype!r}")
        if self.branch_tokens < 1:
            raise UsageError(f"branch_tokens must be at least 1, not {self.branch_tokens}")
        check_internals(self)  # routing, MoEfication and logit-lens settings


@dataclass(frozen=True)
class SteerSpan:
    """One marked part of the prompt (``steer`` mode): a text (its ``occurrence``-th appearance,
    1-based; None: it must occur once) or a named segment (``instruction``, ``question``,
    ``sentence N``, 0-based: the prompt's sentences as the Run page lists them)."""

    text: str | None = None
    occurrence: int | None = None
    segment: str | None = None

    def validate(self) -> None:
        if (self.text is None) == (self.segment is None):
            raise UsageError("a steering span is a text or a segment, not both or neither")
        if self.text is not None and not self.text.strip():
            raise UsageError("a steering span's text is empty")
        if self.occurrence is not None and self.occurrence < 1:
            raise UsageError(f"--steer-occurrence counts from 1, not {self.occurrence}")


@dataclass
class DAAConfig:
    """Dynamic Attention Allocation settings (see ``o3viz.hooks.daa`` for the score and the bias,
    ``o3viz.hooks.steer`` for steering)."""

    mode: DAAMode = "off"  # what each mode does: o3viz.run.daa.modes.DAA_MODE_TABLE
    alpha: float = ALPHA  # weight of the embedding cosine against the position term
    strength: float | Sequence = 1.0  # λ: a number, per layer (L,) or per layer and head (L, H)
    spans: Sequence[SteerSpan] = ()  # steer: the marked prompt spans
    steer_alpha: float = STEER_ALPHA  # steer: unmarked prompt keys' attention is scaled by this
    steer_heads: SteerHeads = "all"  # steer: "all", "auto" (profiled) or [(layer, head), ...]

    def validate(self) -> None:
        if self.mode not in DAA_MODES:
            raise UsageError(f"DAA mode must be one of {', '.join(DAA_MODES)}, not {self.mode!r}")
        if not 0 <= self.alpha <= 1:
            raise UsageError(f"DAA alpha must be in [0, 1], not {self.alpha}")
        check_strength(self.strength)
        if not DAA_MODE_TABLE[self.mode].steers:
            return
        if not self.spans:
            raise UsageError("steering needs at least one marked span (--steer TEXT)")
        for span in self.spans:
            span.validate()
        if not 0 < self.steer_alpha <= 1:
            raise UsageError(f"the steering alpha must be in (0, 1], not {self.steer_alpha}")
        if isinstance(self.steer_heads, str):
            parse_steer_heads(self.steer_heads)  # one line for a bad word


def check_strength(strength: float | Sequence) -> None:
    """A one-line ``UsageError`` unless λ is a number, or per-layer (L,) or per-layer-and-head (L, H)
    numbers, every one finite and within ±``MAX_STRENGTH`` (NaN and inf reach the trace and the
    store otherwise, after the work)."""
    try:
        lam = np.asarray(strength, dtype=float)
    except (TypeError, ValueError):
        lam = None
    if lam is None or isinstance(strength, str | bool) or lam.ndim > 2:
        raise UsageError(f"DAA strength must be a number or a list of numbers, not {strength!r:.60}")
    if not np.isfinite(lam).all() or (np.abs(lam) > MAX_STRENGTH).any():
        raise UsageError(f"DAA strength must be finite and within ±{MAX_STRENGTH:g}, not {strength!r:.60}")


def parse_indices(text: str, what: str = "layers", *, allow_empty: bool = True) -> list[int]:
    """Comma-separated integers (``"0, 10,-1"`` -> [0, 10, -1]): the one layer-list parser, for
    ``--layers``, ``--logit-lens`` and the Run page; ``resolve_layers`` checks them against a depth.

    >>> parse_indices("0, 10,20,-1")
    [0, 10, 20, -1]
    """
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(
            f"{what}: expected comma-separated integers, e.g. 0,10,20,29, not {text[:40]!r}"
        ) from None
    if not out and not allow_empty:
        raise UsageError(f"{what}: give at least one layer, e.g. 0,10,20,29")
    return out


def parse_layers(text: str) -> LayerChoice | list[int]:
    """``auto``/``all``/``none`` or comma-separated indices (the CLI's ``--layers``, the Run page).

    >>> parse_layers("0, 15,-1")
    [0, 15, -1]
    """
    text = text.strip()
    if text in LAYER_CHOICES:
        return text  # type: ignore[return-value]
    try:
        return parse_indices(text)
    except UsageError:
        raise UsageError(
            f"layers: expected auto, all, none or comma-separated integers, not {text[:40]!r}"
        ) from None


def parse_top_k(text: str) -> int | None:
    """A positive integer, or ``all`` (full rows: None)."""
    text = text.strip()
    if text in ("all", "none", "full"):
        return None
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"top-k: expected a positive integer or 'all', not {text!r}")
    return int(text)


def resolve_layers(layers: LayerChoice | Sequence[int], num_layers: int) -> list[int]:
    """Layer indices from ``"auto"``, ``"all"``, ``"none"`` or a list (negative counts from the end).

    >>> resolve_layers("auto", 30), resolve_layers([-1, 0, 0], 4)
    ([0, 15, 29], [0, 3])
    """
    if isinstance(layers, str):
        if layers == "auto":
            return sorted({0, num_layers // 2, num_layers - 1})
        if layers == "all":
            return list(range(num_layers))
        if layers == "none":
            return []
        raise UsageError(f"layers must be 'auto', 'all', 'none' or a list of indices, not {layers!r}")
    out = []
    for i in layers:
        j = int(i) + num_layers if int(i) < 0 else int(i)
        if not 0 <= j < num_layers:
            raise UsageError(f"layer {i} does not exist; the model has layers 0..{num_layers - 1}")
        out.append(j)
    return sorted(set(out))


def check_internals(cfg: CaptureConfig, num_layers: int | None = None) -> None:
    """One-line ``UsageError`` for internals settings that cannot run (routing, MoEfication, the
    logit lens); with ``num_layers``, also lens layers the model lacks."""
    if cfg.routing_top_n is not None and cfg.routing_top_n < 1:
        raise UsageError(f"routing top-n must be at least 1, not {cfg.routing_top_n}")
    if cfg.moefy is not None and (len(cfg.moefy) != 2 or not 1 <= int(cfg.moefy[1]) <= int(cfg.moefy[0])):
        raise UsageError(f"moefy must be (E, k) with 1 <= k <= E, not {tuple(cfg.moefy)}")
    if cfg.lens_top_k < 1:
        raise UsageError(f"the logit-lens top-k must be at least 1, not {cfg.lens_top_k}")
    if num_layers is not None:
        resolve_layers(list(cfg.logit_lens), num_layers)  # one line for a layer the model lacks
