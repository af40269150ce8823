"""Shared, ref-counted installation of forward hooks on a model (routing and the logit lens).

Hooks are global state on a model the app shares across sessions, so they are installed once
per (model, kind) however many runs overlap, read their per-run state from a ``ContextVar``, and
are removed in ``finally`` when the last run leaves. Building the hooks (``make``) is kept apart
from installing them, so the recording logic can be tested without a model.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_INSTALLED: dict[tuple[int, str], list] = {}  # (id(model), kind) -> [users, handles]


@contextmanager
def installed(model, kind: str, make: Callable[[], list]) -> Iterator[None]:
    """Install the hooks ``make()`` returns (a list of removable handles) unless a run already
    installed ``kind`` on ``model``; remove them when the last user leaves."""
    key = (id(model), kind)
    with _LOCK:
        entry = _INSTALLED.get(key)
        if entry is None:
            entry = _INSTALLED[key] = [0, make()]
        entry[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            entry[0] -= 1
            if entry[0] == 0:
                for handle in entry[1]:
                    handle.remove()
                del _INSTALLED[key]


def decoder_layers(model):
    """The model's ``ModuleList`` of decoder layers (the one as long as ``num_hidden_layers``)."""
    n = getattr(model.config, "num_hidden_layers", None)
    base = getattr(model, "model", model)
    layers = getattr(base, "layers", None)
    if layers is not None and len(layers) == n:
        return layers
    import torch

    for module in model.modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) == n:
            return module
    from o3viz.errors import UsageError

    raise UsageError(f"cannot find the decoder layers of {type(model).__name__}")
