"""The logit lens during generation: what each chosen layer would predict if it were the last.

Forward hooks on the chosen decoder layers keep the residual stream at the last position of
each forward; a hook on the whole model then projects all of them at once through the model's
final norm and unembedding (one ``(Y, D) @ (D, V)`` matmul per step, so the cost is about one
extra unembedding however many layers are chosen) and keeps the top-k, the entropy and the
logits needed for the rank. The rank of the token actually generated is filled in when the next
forward shows which token that was. The last layer's lens is the model's own output.

Per-run state is a ``LensRecorder`` in a ``ContextVar``; the hooks are installed once per model.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import numpy as np
import torch

from o3viz.errors import UsageError
from o3viz.hooks.hookset import decoder_layers, installed
from o3viz.trace.layer_records import LensRecord

_ACTIVE: ContextVar[LensRecorder | None] = ContextVar("o3viz_lens", default=None)
NORM_NAMES = ("norm", "final_layernorm", "ln_f", "final_norm")


def final_norm(model) -> torch.nn.Module:
    """The norm applied to the last layer's output before the unembedding."""
    base = getattr(model, "model", model)
    for name in NORM_NAMES:
        module = getattr(base, name, None)
        if isinstance(module, torch.nn.Module):
            return module
    raise UsageError(f"cannot find the final norm of {type(model).__name__}; the logit lens needs it")


@dataclass
class LensRecorder:
    """Per-run lens state read by the hooks."""

    layers: list[int]
    top_k: int = 5
    record: bool = True
    rows: list[tuple] = field(default_factory=list)  # per forward: (ids (Y,T), probs (Y,T), entropy (Y,))
    ranks: list[torch.Tensor] = field(default_factory=list)  # per resolved row: (Y,)
    _resid: dict = field(default_factory=dict)  # layer position -> (D,) residual of this forward
    _logits: torch.Tensor | None = None  # (Y, V) of the last forward, until its token is known

    def __post_init__(self) -> None:
        self._pos = {layer: i for i, layer in enumerate(self.layers)}

    def on_layer(self, layer: int, output) -> None:
        pos = self._pos.get(layer)
        if self.record and pos is not None:
            hidden = output[0] if isinstance(output, tuple) else output
            self._resid[pos] = hidden[0, -1]

    def on_input(self, input_ids: torch.Tensor | None) -> None:
        """A new forward starts: its first input token is the token the previous forward chose.
        A forward that is not a generation step (``record`` off: a KV-cache restore) leaves the
        pending row alone."""
        if not self.record:
            return
        if self._logits is not None and input_ids is not None:
            tok = int(input_ids[0, 0])
            logits = self._logits
            self.ranks.append((logits > logits[:, tok : tok + 1]).sum(-1).cpu())
        self._logits = None

    def end_forward(self, model) -> None:
        """Project this forward's residuals: one norm and one unembedding for all chosen layers."""
        resid, self._resid = self._resid, {}
        if not resid:
            return
        stack = torch.stack([resid[i] for i in range(len(self.layers))])  # (Y, D)
        logits = model.get_output_embeddings()(final_norm(model)(stack)).float()  # (Y, V)
        logp = torch.log_softmax(logits, dim=-1)
        entropy = -(logp.exp() * logp).sum(-1)  # (Y,)
        vals, ids = logp.topk(self.top_k, dim=-1)
        self.rows.append((ids.to("cpu", torch.int32), vals.exp().to("cpu", torch.float16), entropy.cpu()))
        self._logits = logits

    def to_record(self, num_generated: int, num_layers: int, decode) -> LensRecord:
        """Rows for generated tokens 0..G-1 (row g: the forward that chose token g)."""
        g = min(num_generated, len(self.rows), len(self.ranks))
        y, t = len(self.layers), self.top_k
        ids = np.stack([r[0].numpy() for r in self.rows[:g]]) if g else np.zeros((0, y, t), np.int32)
        probs = np.stack([r[1].numpy() for r in self.rows[:g]]) if g else np.zeros((0, y, t), np.float16)
        ent = (
            np.stack([r[2].numpy() for r in self.rows[:g]]).astype(np.float16)
            if g
            else np.zeros((0, y), np.float16)
        )
        rank = (
            np.stack([r.numpy() for r in self.ranks[:g]]).astype(np.int32)
            if g
            else np.zeros((0, y), np.int32)
        )
        texts = {str(i): decode(int(i)) for i in np.unique(ids)}
        return LensRecord(
            self.layers,
            num_layers,
            ids,
            probs,
            ent,
            rank,
            texts,
            info={"top_k": t, "norm": "final norm + unembedding"},
        )


def _make_hooks(model) -> list:
    """A hook on every decoder layer (each run picks its own layers), and two on the model."""
    blocks = decoder_layers(model)
    handles = [
        block.register_forward_hook(functools.partial(_layer_hook, i)) for i, block in enumerate(blocks)
    ]
    handles.append(model.register_forward_pre_hook(_start_hook, with_kwargs=True))
    handles.append(model.register_forward_hook(_end_hook))
    return handles


def _layer_hook(layer: int, module, args, output) -> None:
    rec = _ACTIVE.get()
    if rec is not None:
        rec.on_layer(layer, output)


def _start_hook(module, args, kwargs) -> None:
    rec = _ACTIVE.get()
    if rec is not None:
        rec.on_input(kwargs.get("input_ids", args[0] if args else None))


def _end_hook(module, args, output) -> None:
    rec = _ACTIVE.get()
    if rec is not None:
        rec.end_forward(module)


@contextmanager
def record_lens(model, layers: list[int], top_k: int = 5) -> Iterator[LensRecorder]:
    """Record the logit lens of ``layers`` for every forward of ``model`` in this context."""
    n = model.config.num_hidden_layers
    if not layers or any(not 0 <= i < n for i in layers):
        raise UsageError(f"logit-lens layers must lie in 0..{n - 1}, got {layers}")
    if top_k < 1:
        raise UsageError(f"the lens top-k must be at least 1, not {top_k}")
    final_norm(model)
    layers = sorted(set(layers))
    rec = LensRecorder(layers, top_k)
    with installed(model, "lens", lambda: _make_hooks(model)):
        token = _ACTIVE.set(rec)
        try:
            yield rec
        finally:
            _ACTIVE.reset(token)
