"""Instrumentation: an attention function registered with transformers' ``AttentionInterface``
that computes attention itself, records the rows a run keeps, and adds the Dynamic Attention
Allocation bias to the attention logits.

Per-run state lives in a ``Recorder`` held in a ``ContextVar``: the app shares one cached model
across users and threads, so nothing run-specific is stored on the model. Outside a run (no
recorder in the current context) the function delegates to transformers' sdpa, so a model left
switched to ``"o3viz"`` by another thread still generates normally.

``instrument(model, recorder)`` registers the function (and the eager float mask under the SAME
name, so the function gets real causal / sliding-window masks rather than ``None``), switches
the model to it, and restores the previous implementation when the last concurrent run leaves.

What a recorder keeps, per decode step (one query row per head with the KV cache):

- ``mean``: the row averaged over all layers and heads, ``(K,)``;
- ``layer_head``: each head's attention share on the prompt, ``(L, H)``;
- ``heads``: full (or top-k) rows of the kept layers, ``(len(keep_layers), H', K)``;
- ``before``: in allocate mode, the mean row with the bias removed in each layer.

Prefill forwards record the head-averaged ``(P, P)`` attention of the kept layers. Recording
assumes batch size 1 (a capture is one sequence). Everything is
detached, sliced, downcast and moved to the CPU at the end of each step.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import torch

from o3viz.errors import UsageError

ATTN_NAME = "o3viz"
PREFILL_CHUNK = 256  # query rows per chunk when computing prefill probabilities (bounds memory)

_ACTIVE: ContextVar[Recorder | None] = ContextVar("o3viz_recorder", default=None)
_LOCK = threading.Lock()


@dataclass
class RecorderSpec:
    """What a recorder keeps. Layer and head indices refer to the model's own numbering."""

    num_layers: int
    num_heads: int
    prompt_len: int  # P: the prompt share in ``layer_head`` is attention on keys [0, P)
    keep_layers: list[int] = field(default_factory=list)  # layers whose per-head rows are kept
    keep_heads: list[int] | None = None  # None: all heads
    head_average: bool = False  # keep the head mean (H' = 1) instead of per-head rows
    top_k: int | None = None  # keep only the k largest keys of each kept row, zeros elsewhere
    prefill: bool = True  # record head-averaged prefill attention of the kept layers
    dtype: torch.dtype = torch.float16  # storage dtype on the CPU


TRIM_EVERY = 64  # decode steps between returns of freed heap memory to the OS


@functools.lru_cache(maxsize=1)
def _malloc_trim():
    """glibc's ``malloc_trim``, or None elsewhere."""
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def release_free_heap() -> None:
    """Give freed heap pages back to the OS. Each decode step frees temporaries of a slightly larger
    size than the last while keeping small per-step rows, which fragments glibc's heap: without this a
    2,048-token capture held ~2.8 GB of freed-but-unreturned memory (424 MB with it)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


class Recorder:
    """Per-run state read by the attention function: what to record, the bias, and the rows."""

    def __init__(self, spec: RecorderSpec) -> None:
        self.spec = spec
        self.record = True  # False during forwards that must not be recorded (branches)
        self.keep_index = {layer: i for i, layer in enumerate(spec.keep_layers)}
        self.bias: torch.Tensor | None = None  # (C_max,) additive logit bias per key position
        self.strength: torch.Tensor | None = None  # (L, H) λ per layer and head
        self.record_before = False
        self._lam = []
        self.steps_mean: list[torch.Tensor] = []  # per step (K,)
        self.steps_before: list[torch.Tensor] = []  # per step (K,), allocate mode only
        self.steps_layer_head: list[torch.Tensor] = []  # per step (L, H)
        self.steps_heads: list[torch.Tensor] = []  # per step (len(keep_layers), H', K)
        self.prefill: dict[int, torch.Tensor] = {}  # layer -> (P, P) head mean
        self._pid_obj: torch.Tensor | None = None
        self._pid_end = 0
        # One (L, H, capacity) buffer per kind, grown geometrically and reused across steps, instead
        # of a fresh buffer of ever-growing size at every step.
        self._stores: dict[str, torch.Tensor] = {}
        self._reset_step()

    # ---- bias ---------------------------------------------------------------------------------
    def set_bias(self, bias: torch.Tensor | None, strength: torch.Tensor | None, record_before: bool) -> None:
        """``bias`` (C_max,) and ``strength`` (L, H); heads with strength 0 get no bias at all
        (so a ``-inf`` bias never turns into ``0 * -inf = nan``). Per-layer λ columns are
        prepared once here, so the per-step cost is one multiply per biased layer."""
        self.bias, self.strength, self.record_before = bias, strength, record_before
        self._lam: list[tuple[torch.Tensor, torch.Tensor | None] | None] = []
        for row in strength if strength is not None else []:
            nonzero = row != 0
            if not bool(nonzero.any()):
                self._lam.append(None)
            else:
                partial = None if bool(nonzero.all()) else nonzero[:, None]
                self._lam.append((row.float()[:, None], partial))

    def key_end(self, position_ids: torch.Tensor | None, num_keys: int) -> int:
        """One past the absolute position of the last key. Sliding-window caches hand the function
        only the last keys, so positions come from ``position_ids`` (read once per forward: every
        layer gets the same tensor object)."""
        if position_ids is None:
            return num_keys
        if position_ids is not self._pid_obj:
            self._pid_obj, self._pid_end = position_ids, int(position_ids[0, -1]) + 1
        return self._pid_end

    def bias_for(self, layer: int, start: int, end: int, device: torch.device) -> torch.Tensor | None:
        """(H, K) additive term ``λ[layer, h] * bias[start:end]`` or None when this layer has no bias."""
        if self.bias is None or self.strength is None or self._lam[layer] is None:
            return None
        lam, partial = self._lam[layer]
        term = lam.to(device) * self.bias[start:end].to(device=device, dtype=torch.float32)[None, :]
        return term if partial is None else torch.where(partial.to(device), term, 0.0)

    # ---- recording ----------------------------------------------------------------------------
    def _reset_step(self) -> None:
        self._buf: torch.Tensor | None = None  # (L, H, C) this step's rows, on the model's device
        self._bbuf: torch.Tensor | None = None  # (L, H, C) the same with the bias removed

    def add_decode(
        self, layer: int, probs: torch.Tensor, before: torch.Tensor | None, start: int = 0
    ) -> None:
        """One layer's decode-step probabilities ``probs`` (H, K) over keys at positions
        ``start..start+K`` (``start`` > 0 only under a sliding window), ``before`` (H, K) or None.
        One copy per layer; the reductions run once per step in ``end_step``."""
        if not self.record:
            return
        end = start + probs.shape[-1]
        if self._buf is None:
            self._buf = self._step_buffer("rows", probs, end)
        self._buf[layer, :, start:end] = probs
        if self.record_before:  # layers without bias contribute their (unchanged) rows
            if self._bbuf is None:
                self._bbuf = self._step_buffer("before", probs, end)
            self._bbuf[layer, :, start:end] = probs if before is None else before

    def _step_buffer(self, kind: str, like: torch.Tensor, end: int) -> torch.Tensor:
        """A zeroed (L, H, end) view of the reusable store of ``kind``, grown geometrically."""
        store = self._stores.get(kind)
        if store is None or store.shape[-1] < end or store.dtype != like.dtype or store.device != like.device:
            cap = max(end, 2 * store.shape[-1] if store is not None else end + 256)
            store = self._stores[kind] = like.new_empty(self.spec.num_layers, self.spec.num_heads, cap)
        view = store[:, :, :end]
        view.zero_()
        return view

    def add_prefill(self, layer: int, head_mean: torch.Tensor) -> None:
        """(P, P) head-averaged prefill attention of a kept layer."""
        if self.record:
            self.prefill[layer] = head_mean.detach().to("cpu", self.spec.dtype)

    def wants_prefill(self, layer: int) -> bool:
        return self.record and self.spec.prefill and layer in self.keep_index

    def end_step(self) -> None:
        """Reduce this decode step's rows, move them to the CPU (downcast) and start a new step."""
        buf = self._buf
        if buf is None:  # a prefill forward or an unrecorded one
            return
        if len(self.steps_mean) % TRIM_EVERY == TRIM_EVERY - 1:
            release_free_heap()
        dt = self.spec.dtype
        self.steps_mean.append(buf.mean((0, 1)).to("cpu", dt))
        if self._bbuf is not None:
            self.steps_before.append(self._bbuf.mean((0, 1)).to("cpu", dt))
        self.steps_layer_head.append(buf[..., : self.spec.prompt_len].sum(-1).to("cpu", dt))
        if self.spec.keep_layers:
            block = buf[self.spec.keep_layers]  # (nL, H, C)
            if self.spec.keep_heads is not None:
                block = block[:, self.spec.keep_heads]
            if self.spec.head_average:
                block = block.mean(1, keepdim=True)
            self.steps_heads.append(_top_k(block, self.spec.top_k).to("cpu", dt))
        self._reset_step()


def _top_k(rows: torch.Tensor, k: int | None) -> torch.Tensor:
    """Zero all but the k largest entries of each row (last dim); exact values are kept."""
    if k is None or k >= rows.shape[-1]:
        return rows
    vals, idx = rows.topk(k, dim=-1)
    return torch.zeros_like(rows).scatter_(-1, idx, vals)


# ---- the attention function -------------------------------------------------------------------
def o3viz_attention(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    """``softmax(QK^T * scaling + mask [+ λ·bias]) V`` with recording; the AttentionInterface
    signature. Shapes: query (B, H, Q, D), key/value (B, Hkv, K, D), mask (B, 1, Q, K) float."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    rec = _ACTIVE.get()
    if rec is None:
        return sdpa_attention_forward(
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
        )
    layer = module.layer_idx
    end = rec.key_end(kwargs.get("position_ids"), key.shape[2])
    start = end - key.shape[2]
    bias = rec.bias_for(layer, start, end, query.device)  # (H, K) or None
    if query.shape[2] == 1:
        return _decode(rec, layer, query, key, value, attention_mask, scaling, bias, start)
    if start == 0 and rec.wants_prefill(layer):
        rec.add_prefill(layer, _prefill_head_mean(query, key, attention_mask, scaling, bias))
    if bias is not None:
        attention_mask = _mask_with_bias(attention_mask, bias, query)
    return sdpa_attention_forward(
        module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
    )


def _decode(rec: Recorder, layer, query, key, value, mask, scaling, bias, start: int):
    """One query row per head: fp32 scores on the KV heads (no repeat_kv copy), with the scale
    and the mask folded into one ``baddbmm`` to keep the per-layer op count low."""
    b, h, _, d = query.shape
    hkv, k = key.shape[1], key.shape[2]
    q = query.float().reshape(b * hkv, h // hkv, d)
    kt = key.float().reshape(b * hkv, k, d).transpose(1, 2)
    if mask is None:
        scores = torch.bmm(q, kt).mul_(scaling)
    else:  # (B, 1, 1, K) -> one row per batch, repeated over its KV heads
        m = mask[:, 0, -1:, :k].float()
        scores = torch.baddbmm(m if b == 1 else m.repeat_interleave(hkv, 0), q, kt, alpha=scaling)
    before = None
    if bias is not None:  # (H, K) -> (Hkv, n_rep, K)
        if rec.record_before:
            before = torch.softmax(scores, dim=-1).view(b, h, k)[0]
        scores = scores + bias.view(hkv, h // hkv, k)
    probs = torch.softmax(scores, dim=-1)  # (B * Hkv, n_rep, K)
    out = torch.bmm(probs.to(value.dtype), value.reshape(b * hkv, k, d))  # (B * Hkv, n_rep, D)
    rec.add_decode(layer, probs.view(b, h, k)[0], before, start)
    return out.view(b, h, 1, d).transpose(1, 2).contiguous(), None


def _prefill_head_mean(query, key, mask, scaling, bias) -> torch.Tensor:
    """(Q, K) attention probabilities of batch 0 averaged over heads, computed in row chunks."""
    h, q_len, k_len = query.shape[1], query.shape[2], key.shape[2]
    keys = key[0].float().repeat_interleave(h // key.shape[1], dim=0)  # (H, K, D)
    out = torch.empty(q_len, k_len, dtype=torch.float32, device=query.device)
    for s in range(0, q_len, PREFILL_CHUNK):
        e = min(q_len, s + PREFILL_CHUNK)
        scores = torch.matmul(query[0, :, s:e].float(), keys.transpose(-1, -2)) * scaling  # (H, q, K)
        if mask is not None:
            scores = scores + mask[0, :, s:e, :k_len].float()
        if bias is not None:
            scores = scores + bias[:, None, :]
        out[s:e] = torch.softmax(scores, dim=-1).mean(0)
    return out


def _mask_with_bias(mask, bias, query):
    """The float mask plus the per-head bias, (B, H, Q, K), in the mask's dtype."""
    q_len, k_len = query.shape[2], bias.shape[-1]
    if mask is None:  # only reachable if a caller passed no mask: rebuild causality
        causal = torch.ones(q_len, k_len, dtype=torch.bool, device=query.device).tril(k_len - q_len)
        mask = torch.where(causal, 0.0, torch.finfo(query.dtype).min)[None, None].to(query.dtype)
    return (mask[..., :k_len].float() + bias[None, :, None, :]).to(mask.dtype)


# ---- installing ---------------------------------------------------------------------------------
def register_attention() -> None:
    """Register the attention function and the eager mask under ``ATTN_NAME`` (idempotent)."""
    from transformers import AttentionInterface, AttentionMaskInterface
    from transformers.masking_utils import eager_mask

    AttentionInterface.register(ATTN_NAME, o3viz_attention)
    AttentionMaskInterface.register(ATTN_NAME, eager_mask)


def active_recorder() -> Recorder | None:
    return _ACTIVE.get()


_SWITCHES: dict[int, list] = {}  # id(model) -> [users, name, implementation to restore]
_HELD: ContextVar[frozenset[int]] = ContextVar("o3viz_held_models", default=frozenset())


@contextmanager
def _nested_switch(model, name: str) -> Iterator[None]:
    """Inside a context that already holds the model: a plain switch and restore (a stack)."""
    previous = model.config._attn_implementation
    if previous != name:
        model.set_attn_implementation(name)
    try:
        yield
    finally:
        if previous != name:
            model.set_attn_implementation(previous)


@contextmanager
def attention_implementation(model, name: str) -> Iterator[None]:
    """Run ``model`` with attention implementation ``name`` inside this context.

    The one place o3viz switches a model's implementation (capture, enrichment, the release
    loop). Overlapping users of the same name share the switch: the first switches, the last
    restores the previous implementation in ``finally``. Within one run a nested switch to
    another name is a stack; another run asking for a different implementation while one is
    active would change that run under its feet, so it raises ``UsageError``.
    """
    if id(model) in _HELD.get():
        with _nested_switch(model, name):
            yield
        return
    with _LOCK:
        entry = _SWITCHES.get(id(model))
        if entry is None:
            entry = _SWITCHES[id(model)] = [0, name, model.config._attn_implementation]
            if entry[2] != name:
                model.set_attn_implementation(name)
        elif entry[1] != name:
            raise UsageError(
                f"the model is busy with attention implementation {entry[1]!r}; try again when it ends"
            )
        entry[0] += 1
    held = _HELD.set(_HELD.get() | {id(model)})
    try:
        yield
    finally:
        _HELD.reset(held)
        with _LOCK:
            entry[0] -= 1
            if entry[0] == 0:
                if entry[2] != name:
                    model.set_attn_implementation(entry[2])
                del _SWITCHES[id(model)]


@contextmanager
def instrument(model, recorder: Recorder) -> Iterator[Recorder]:
    """Run ``model`` with the o3viz attention function and ``recorder`` active in this context.

    Runs on one model may overlap (threads): they share one switch of the implementation, and
    each sees only its own recorder through the ContextVar.
    """
    register_attention()
    with attention_implementation(model, ATTN_NAME):
        token = _ACTIVE.set(recorder)
        try:
            yield recorder
        finally:
            _ACTIVE.reset(token)
