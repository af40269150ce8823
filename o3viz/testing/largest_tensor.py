"""A memory bound without a long run: ``LargestTensor`` is a torch dispatch mode that records the
most elements of any tensor an aten op returns while it is active (the capture and enrichment
memory tests use it to show their largest tensor grows with block × length, not length²)."""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode


class LargestTensor(TorchDispatchMode):
    """Records the most elements of any tensor an aten op returns (``numel``) and that op (``op``)."""

    def __init__(self) -> None:
        super().__init__()
        self.numel, self.op = 0, ""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(t, torch.Tensor) and t.numel() > self.numel:
                self.numel, self.op = t.numel(), str(func)
        return out
