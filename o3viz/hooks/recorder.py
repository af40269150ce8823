"""What a run keeps of its attention: ``RecorderSpec`` (which layers, heads, keys and dtype) and the
``Recorder`` that the o3viz attention function (``o3viz.hooks.instrument``) fills, plus the DAA
bias it applies. Building the recorder is kept apart from installing it, so its logic is tested
without a model.

What a recorder keeps, per decode step (one query row per head with the KV cache):

- ``mean``: the row averaged over all layers and heads, ``(K,)``;
- ``layer_head``: each head's attention share on the prompt, ``(L, H)``;
- ``heads``: full (or top-k) rows of the kept layers, ``(len(keep_layers), H', K)``; with
  ``sparse_rows`` (long generations) only the top-k values and key positions, ``(nL, H', k)``;
- ``before``: in allocate mode, the mean row with the bias removed in each layer.

Prefill forwards record the head-averaged attention of the kept layers, one block of query rows
at a time (``add_prefill_rows``): the dense ``(P, P)`` map, or with ``prefill_top_k`` only each
row's k largest keys (``prefill_top``: values and key indices, ``(P, k)``), so a long prompt keeps
``P × k`` instead of ``P²``. Recording
assumes batch size 1 (a capture is one sequence). Everything is detached, sliced, downcast and
moved to the CPU at the end of each step; ``last_mean`` keeps the latest step's mean row in fp32
on the device, for hooks that decide from it (progressive release reads each cache entry's
attention there, through ``key_positions``).

Columns are absolute positions. When a hook has removed cache entries (KV-cache release), it
sets ``key_positions`` to each cache entry's original position: rows are then scattered to
those positions (released keys read 0) and the bias is gathered from them.

The recorder is the loop's recording hook (``o3viz.hooks.step.StepHook``): it closes a step
after every forward and records nothing while paused.
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass, field

import torch

from o3viz.hooks.step import LoopState, StepHook


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
    keep_steps: bool = True  # False: keep only ``last_mean`` (a run that stores no attention)
    prefill_top_k: int | None = None  # keep each prefill row's k largest keys (None: dense (P, P))
    block_rows: int | None = (
        None  # query rows per block of prefill probabilities (None: o3viz.hooks.blocks.block_rows)
    )
    # keep each step's per-head rows as their ``top_k`` (value, int32 key) pairs instead of rows as
    # long as the context (a long generation, o3viz.run.sizing ``rows == "top_k"``): memory and
    # trace grow linearly with the generated tokens
    sparse_rows: bool = False


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


class Recorder(StepHook):
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
        self.steps_heads_top: list[tuple[torch.Tensor, torch.Tensor]] = []  # sparse_rows: (nL, H', k) x2
        self.prefill: dict[int, torch.Tensor] = {}  # layer -> (P, P) head mean
        self.prefill_top: dict[
            int, tuple[torch.Tensor, torch.Tensor]
        ] = {}  # layer -> (P, k) values, int32 keys
        self._pid_obj: torch.Tensor | None = None
        self._pid_end = 0
        self.key_positions: torch.Tensor | None = None  # (N,) position of each cache entry, ascending
        self._kp_end = 0
        self.last_mean: torch.Tensor | None = None  # (K,) fp32 on the device: the latest step's mean row
        self._paused_record: bool | None = None
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

    def set_key_positions(self, positions: torch.Tensor | None) -> None:
        """Each cache entry's original position ((N,), ascending, on the model's device), or None
        when the cache holds every position (no entry was removed)."""
        self.key_positions = positions
        self._kp_end = int(positions[-1]) + 1 if positions is not None and len(positions) else 0

    def key_end(self, position_ids: torch.Tensor | None, num_keys: int) -> int:
        """One past the absolute position of the last key. Sliding-window caches hand the function
        only the last keys, so positions come from ``position_ids`` (read once per forward: every
        layer gets the same tensor object); with ``key_positions`` set, from those."""
        if self.key_positions is not None:
            return self._kp_end
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
        keys = self.bias[start:end] if self.key_positions is None else self.bias[self.key_positions]
        term = lam.to(device) * keys.to(device=device, dtype=torch.float32)[None, :]
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
        kp = self.key_positions
        end = start + probs.shape[-1] if kp is None else self._kp_end
        cols = slice(start, end) if kp is None else kp  # released entries leave their columns at 0
        if self._buf is None:
            self._buf = self._step_buffer("rows", probs, end)
        self._buf[layer, :, cols] = probs
        if self.record_before:  # layers without bias contribute their (unchanged) rows
            if self._bbuf is None:
                self._bbuf = self._step_buffer("before", probs, end)
            self._bbuf[layer, :, cols] = probs if before is None else before

    def _step_buffer(self, kind: str, like: torch.Tensor, end: int) -> torch.Tensor:
        """A zeroed (L, H, end) view of the reusable store of ``kind``, grown geometrically."""
        store = self._stores.get(kind)
        if store is None or store.shape[-1] < end or store.dtype != like.dtype or store.device != like.device:
            cap = max(end, 2 * store.shape[-1] if store is not None else end + 256)
            store = self._stores[kind] = like.new_empty(self.spec.num_layers, self.spec.num_heads, cap)
        view = store[:, :, :end]
        view.zero_()
        return view

    def add_prefill_rows(self, layer: int, s: int, rows: torch.Tensor, total: int) -> None:
        """Rows ``s .. s+b`` of a kept layer's head-averaged prefill attention, ``rows`` (b, K_b)
        fp32 of ``total`` = P rows over P keys, keys from K_b on invisible to these rows (causally
        trimmed blocks, ``o3viz.hooks.blocks``); stored on the CPU in the spec's dtype, dense
        (P, P) or as top-k."""
        if not self.record:
            return
        dt, e, k, kb = self.spec.dtype, s + rows.shape[0], self.spec.prefill_top_k, rows.shape[-1]
        width = max(total, kb)  # a prefill's keys are its rows
        if k is None:
            if s == 0:
                self.prefill[layer] = torch.zeros(total, width, dtype=dt)
            self.prefill[layer][s:e, :kb] = rows.detach().to("cpu", dt)
            return
        k = min(k, width)
        if kb < k:  # fewer visible keys than k: the zeros after them fill the rest
            rows = torch.nn.functional.pad(rows, (0, k - kb))
        if s == 0:
            self.prefill_top[layer] = (
                torch.zeros(total, k, dtype=dt),
                torch.zeros(total, k, dtype=torch.int32),
            )
        vals, idx = rows.detach().topk(k, dim=-1)  # (b, k)
        values, index = self.prefill_top[layer]
        values[s:e], index[s:e] = vals.to("cpu", dt), idx.to("cpu", torch.int32)

    def wants_prefill(self, layer: int) -> bool:
        return self.record and self.spec.prefill and layer in self.keep_index

    def end_step(self) -> None:
        """Reduce this decode step's rows, move them to the CPU (downcast) and start a new step."""
        buf = self._buf
        if buf is None:  # a prefill forward or an unrecorded one
            return
        self.last_mean = buf.mean((0, 1))
        if not self.spec.keep_steps:
            self._reset_step()
            return
        if len(self.steps_mean) % TRIM_EVERY == TRIM_EVERY - 1:
            release_free_heap()
        dt = self.spec.dtype
        self.steps_mean.append(self.last_mean.to("cpu", dt))
        if self._bbuf is not None:
            self.steps_before.append(self._bbuf.mean((0, 1)).to("cpu", dt))
        self.steps_layer_head.append(buf[..., : self.spec.prompt_len].sum(-1).to("cpu", dt))
        if self.spec.keep_layers:
            block = buf[self.spec.keep_layers]  # (nL, H, C)
            if self.spec.keep_heads is not None:
                block = block[:, self.spec.keep_heads]
            if self.spec.head_average:
                block = block.mean(1, keepdim=True)
            if self.spec.sparse_rows and self.spec.top_k is not None:
                self.steps_heads_top.append(_top_k_pairs(block, self.spec.top_k, dt))
            else:
                self.steps_heads.append(_top_k(block, self.spec.top_k).to("cpu", dt))
        self._reset_step()

    # ---- the loop's recording hook ------------------------------------------------------------
    def on_prefill(self, state: LoopState) -> None:
        self.end_step()

    def after_forward(self, state: LoopState, g: int, token_id: int) -> None:
        self.end_step()

    def pause(self, paused: bool) -> None:
        if paused:
            self._paused_record, self.record = self.record, False
        elif self._paused_record is not None:
            self.record, self._paused_record = self._paused_record, None


def _top_k(rows: torch.Tensor, k: int | None) -> torch.Tensor:
    """Zero all but the k largest entries of each row (last dim); exact values are kept."""
    if k is None or k >= rows.shape[-1]:
        return rows
    vals, idx = rows.topk(k, dim=-1)
    return torch.zeros_like(rows).scatter_(-1, idx, vals)


def _top_k_pairs(rows: torch.Tensor, k: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """The k largest entries of each row (last dim) as CPU values and int32 key positions. A row
    with fewer than k keys keeps all of them, in order, padded with zeros at positions K..k-1 (so
    every step has the same width, and the first ``width`` columns are the row when width < k)."""
    n = rows.shape[-1]
    if n >= k:
        vals, idx = rows.topk(k, dim=-1)
    else:
        vals = torch.nn.functional.pad(rows, (0, k - n))
        idx = torch.arange(k, device=rows.device).expand(vals.shape)
    return vals.to("cpu", dtype), idx.to("cpu", torch.int32)
