"""The one way o3viz reads or changes attention: attention functions registered with transformers'
``AttentionInterface``, installed on a model for the length of a ``with`` block.

**The mechanism.** An attention function has transformers' signature (``AttentionFunction``). It
is registered under a name with ``register_attention(name, fn)``, together with a mask function
under the SAME name: the eager float mask, or for functions that handle a ``None`` mask as causal
(``"o3viz"``, ``"o3viz_enrich"``) ``causal_skip_mask``, which skips the (B, 1, Q, K) mask exactly
where sdpa would rely on ``is_causal`` (a 16k-token prefill's mask alone is 1 GB fp32). With plain
``sdpa_mask`` a function unaware of this would get ``None`` masks and silently lose causality.
``install(model, name, state)`` then switches the model to that name and makes ``state``
(whatever the function needs: a recorder, a bias, a mask) visible to the function through one
``ContextVar``, read with ``active_state()``. The model is never forked or patched, and
nothing run-specific is stored on it: the app shares one cached model across users and threads.
``attention_implementation(model, name)`` is the shared switch under ``install``: overlapping runs
asking for the same name share it, the last one out restores the previous implementation, and a
run asking for another name while one is active gets ``UsageError``.

**The functions.**

- ``"o3viz"`` (``o3viz_attention``, here): capture and the release loop. It records what a
  ``Recorder`` (``o3viz.hooks.recorder``) keeps and adds the recorder's per-key logit bias (DAA's
  allocation, or ``-inf`` to mask keys). Outside a run (no recorder in the current context) it
  delegates to transformers' sdpa, so a model left switched to ``"o3viz"`` by another thread still
  generates normally. ``instrument(model, recorder)`` is ``install(model, "o3viz", recorder)``.
- ``"o3viz_enrich"`` (``o3viz.hooks.blockwise``): exact eager attention in blocks of query rows,
  for teacher-forcing long imported texts.

To add a function (attention suppression, a probe), write it with the ``AttentionFunction``
signature, read its state with ``active_state()``, register it once, and run the model inside
``install(model, name, state)``. Hooks that are not attention (routing, logit lens) belong beside
this, as forward hooks on modules installed in their own context manager.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol, TypeVar

import torch

from o3viz.errors import UsageError
from o3viz.hooks.blocks import probability_blocks
from o3viz.hooks.recorder import Recorder, RecorderSpec

__all__ = [
    "ATTN_NAME",
    "AttentionFunction",
    "Recorder",
    "RecorderSpec",
    "active_recorder",
    "active_state",
    "attention_implementation",
    "causal_skip_mask",
    "install",
    "instrument",
    "o3viz_attention",
    "register_attention",
]

ATTN_NAME = "o3viz"

_ACTIVE: ContextVar[Any] = ContextVar("o3viz_attention_state", default=None)
_LOCK = threading.Lock()
_FUNCTIONS: dict[str, tuple[AttentionFunction, bool]] = {}  # name -> (function, skip_causal_mask)
S = TypeVar("S")


class AttentionFunction(Protocol):
    """transformers' attention-function signature. Shapes: query (B, H, Q, D), key/value
    (B, Hkv, K, D), attention_mask (B, 1, Q, K) float or None; returns ((B, Q, H, D), weights or None)."""

    def __call__(
        self, module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs
    ) -> tuple[torch.Tensor, torch.Tensor | None]: ...


def active_state() -> Any:
    """The state the current context installed with ``install`` (None outside a run)."""
    return _ACTIVE.get()


def active_recorder() -> Recorder | None:
    state = _ACTIVE.get()
    return state if isinstance(state, Recorder) else None


# ---- the attention function -------------------------------------------------------------------
def o3viz_attention(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    """``softmax(QK^T * scaling + mask [+ λ·bias]) V`` with recording; the AttentionInterface
    signature. Shapes: query (B, H, Q, D), key/value (B, Hkv, K, D), mask (B, 1, Q, K) float."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    rec = active_recorder()
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
    record = start == 0 and rec.wants_prefill(layer)
    if bias is not None:  # blocks, not sdpa with an (B, H, Q, K) mask + bias
        return _biased_rows(rec if record else None, layer, query, key, value, attention_mask, scaling, bias)
    if record:
        _record_prefill(rec, layer, query, key, attention_mask, scaling, bias)
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


def _record_prefill(rec: Recorder, layer: int, query, key, mask, scaling, bias) -> None:
    """Batch 0's prefill attention, one block of query rows at a time (``probability_blocks``),
    each block averaged over heads and handed to the recorder, which keeps its dense or top-k rows:
    at most (H, block, K) fp32 is alive."""
    q_len = query.shape[2]
    mask = None if mask is None else mask[:1]
    for s, probs in probability_blocks(query[:1], key[:1], mask, scaling, bias, rec.spec.block_rows):
        rec.add_prefill_rows(layer, s, probs[0].mean(0), q_len)  # (b, K)
        del probs


def _biased_rows(rec: Recorder | None, layer: int, query, key, value, mask, scaling, bias):
    """Several query rows with the per-head bias (H, K): the output computed in blocks of rows
    (``probability_blocks``), each block recorded as prefill rows when ``rec`` is given. Returns
    ((B, Q, H, D), None)."""
    b, h, q_len, d = query.shape
    n_rep = h // value.shape[1]
    values = value.repeat_interleave(n_rep, dim=1) if n_rep > 1 else value  # (B, H, K, D)
    out = torch.empty(b, h, q_len, d, dtype=query.dtype, device=query.device)
    block = rec.spec.block_rows if rec is not None else None
    for s, probs in probability_blocks(query, key, mask, scaling, bias, block):
        kb = probs.shape[-1]  # (B, H, b, K_b): keys from K_b on are invisible to the block
        out[:, :, s : s + probs.shape[2]] = torch.matmul(probs.to(values.dtype), values[:, :, :kb])
        if rec is not None:
            rec.add_prefill_rows(layer, s, probs[0].mean(0), q_len)
        del probs
    return out.transpose(1, 2).contiguous(), None


# ---- installing ---------------------------------------------------------------------------------
def causal_skip_mask(*args, dtype: torch.dtype = torch.float32, allow_is_causal_skip: bool = True, **kwargs):
    """transformers' eager float mask (B, 1, Q, K), or None where its sdpa mask would skip to
    ``is_causal`` (no padding and Q == K, one query row, or an empty cache): the registered
    function then applies top-left causality itself (``o3viz.hooks.blocks``). Same arguments as
    ``transformers.masking_utils.eager_mask``."""
    from transformers.masking_utils import sdpa_mask

    mask = sdpa_mask(*args, allow_is_causal_skip=allow_is_causal_skip, **kwargs)
    if mask is None or mask.dtype != torch.bool:
        return mask
    return torch.where(mask, torch.zeros((), device=mask.device, dtype=dtype), torch.finfo(dtype).min)


def register_attention(
    name: str = ATTN_NAME, fn: AttentionFunction | None = None, *, skip_causal_mask: bool = False
) -> None:
    """Register ``fn`` (default: ``o3viz_attention`` for ``"o3viz"``, else the function registered
    under ``name`` before) and its mask under ``name``: ``causal_skip_mask`` when
    ``skip_causal_mask`` (``fn`` treats a None mask as causal; always for ``"o3viz"``), else the
    eager mask. Idempotent."""
    from transformers import AttentionInterface, AttentionMaskInterface
    from transformers.masking_utils import eager_mask

    if fn is None:
        fn, skip_causal_mask = _FUNCTIONS.get(name) or (
            (o3viz_attention, True) if name == ATTN_NAME else (None, False)
        )
        if fn is None:
            raise UsageError(f"no attention function is registered as {name!r}")
    _FUNCTIONS[name] = (fn, skip_causal_mask)
    AttentionInterface.register(name, fn)
    AttentionMaskInterface.register(name, causal_skip_mask if skip_causal_mask else eager_mask)


_SWITCHES: dict[int, list] = {}  # id(model) -> [users, name, implementation to restore]
_RELEASED = threading.Condition(_LOCK)  # notified when a model's last user of a switch leaves
WAIT_FOR_SWITCH_S = 1800.0  # a run waits this long for another implementation's runs to end
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
    another name is a stack. Another run asking for a different implementation while one is
    active would change that run under its feet, so it waits until those runs end (a second
    tab's run queues behind the first tab's importance job), and raises ``UsageError`` only
    after ``WAIT_FOR_SWITCH_S``.
    """
    if id(model) in _HELD.get():
        with _nested_switch(model, name):
            yield
        return
    with _LOCK:
        busy = lambda: (e := _SWITCHES.get(id(model))) is not None and e[1] != name  # noqa: E731
        if busy() and not _RELEASED.wait_for(lambda: not busy(), timeout=WAIT_FOR_SWITCH_S):
            raise UsageError(
                f"the model was busy with attention implementation {_SWITCHES[id(model)][1]!r} for "
                f"{WAIT_FOR_SWITCH_S:.0f} s; try again when it ends"
            )
        entry = _SWITCHES.get(id(model))
        if entry is None:
            entry = _SWITCHES[id(model)] = [0, name, model.config._attn_implementation]
            if entry[2] != name:
                model.set_attn_implementation(name)
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
                _RELEASED.notify_all()


@contextmanager
def install(model, name: str, state: S) -> Iterator[S]:
    """Run ``model`` with the attention function registered as ``name``, ``state`` visible to it
    through ``active_state()`` in this context; the previous implementation is restored on exit.

    Runs on one model may overlap (threads): they share one switch of the implementation, and
    each sees only its own state through the ContextVar.
    """
    register_attention(name)
    with attention_implementation(model, name):
        token = _ACTIVE.set(state)
        try:
            yield state
        finally:
            _ACTIVE.reset(token)


def instrument(model, recorder: Recorder) -> Iterator[Recorder]:
    """``install(model, "o3viz", recorder)``: capture's recording and DAA bias."""
    return install(model, ATTN_NAME, recorder)
